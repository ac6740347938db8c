"""The replica: the runtimes that host dataflows, and what drives and connects them.

Owns the runtime state machines (``runtime``), the shared-arrangement registry through
which maintenance publishes arrangements to interactive (``registry``), the threads that
drive a runtime (``driver``) and the graveyard that frees dropped dataflows a slice at a
time (``graveyard``).  Deliberately not here: routing between the runtimes
(``compute.multiplexer``) and operators (``compute.render``).
"""
