"""The replica: the runtimes that host dataflows, and what drives and connects them.

Owns the state machine both runtimes share (``core``) and the two runtimes over it
(``maintenance``: every non-peek dataflow, publishing its index exports; ``interactive``:
peek dataflows and peeks off published arrangements), the shared-arrangement registry
through which maintenance publishes to interactive (``registry``), the threads that drive a
runtime (``driver``), the process-wide interpreter settings their latency depends on
(``scheduling``), the graveyard that frees dropped dataflows a slice at a time
(``graveyard``), and the client the adapter talks to (``client``), which wires one database's
replica.  Deliberately not here: routing between the runtimes (``compute.multiplexer``) and
operators (``compute.render``).
"""
