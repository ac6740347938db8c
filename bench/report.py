"""Small statistics and table-printing helpers shared by the workloads.

Owns: medians and percentiles over raw samples, human-readable durations and sizes,
and a plain-text table printer.  Invariant: every figure printed is derived from the raw
samples kept in the results dict (which ``--json`` writes verbatim), so the table can
always be recomputed from the JSON.  Deliberately not here: anything engine- or
workload-specific.
"""
from __future__ import annotations

import math
import resource
import statistics
from typing import List, Optional, Sequence


def median(xs: Sequence[float]) -> Optional[float]:
    return statistics.median(xs) if xs else None


def percentile(xs: Sequence[float], p: float) -> Optional[float]:
    """Nearest-rank percentile (p in 0..100): the value below which p% of samples fall."""
    if not xs:
        return None
    s = sorted(xs)
    k = max(0, min(len(s) - 1, math.ceil(p / 100.0 * len(s)) - 1))
    return s[k]


def fmt_s(x: Optional[float]) -> str:
    """A duration in seconds, printed in a unit that keeps 3 significant digits."""
    if x is None:
        return "-"
    if x >= 1:
        return f"{x:.2f} s"
    if x >= 1e-3:
        ms = x * 1e3
        return f"{ms:.3g} ms" if ms < 100 else f"{ms:.0f} ms"
    return f"{x * 1e6:.3g} us"


def fmt_ratio(x: Optional[float]) -> str:
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}x"
    if x >= 10:
        return f"{x:.1f}x"
    return f"{x:.2f}x"


def fmt_mb(kb: Optional[float]) -> str:
    return "-" if kb is None else f"{kb / 1024:.0f} MB"


def ratio(peer: Optional[float], mine: Optional[float]) -> Optional[float]:
    if peer is None or mine is None or mine <= 0:
        return None
    return peer / mine


def table(headers: List[str], rows: List[List[str]], align_left: int = 1) -> str:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]

    def line(cells):
        out = []
        for i, c in enumerate(cells):
            c = str(c)
            out.append(c.ljust(widths[i]) if i < align_left else c.rjust(widths[i]))
        return "  ".join(out).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), sep] + [line(r) for r in rows])


def current_rss_kb() -> Optional[int]:
    try:
        with open("/proc/self/status") as f:
            for ln in f:
                if ln.startswith("VmRSS:"):
                    return int(ln.split()[1])
    except OSError:
        pass
    return None


def peak_rss_kb() -> int:
    """Peak resident set size of this process (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
