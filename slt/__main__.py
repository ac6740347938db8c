"""``python -m slt``: the sqllogictest runner's command line (see ``slt.main``)."""
import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
