"""The compute protocol: commands (controller -> replica) and responses (replica -> controller).

Owns the message vocabulary; every message is a frozen dataclass.  Each class says what
its sender must do and what its receiver must (and must not) do; the receiving side
checks each "must" at the boundary with ``ComputeProtocolError``.  The protocol does not
know that a replica may be split into two runtimes: the ``Multiplexer`` presents one
endpoint over both.  Deliberately not here: routing (``compute.multiplexer``) and
execution (``compute.replica``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union
import uuid as _uuid

from compute.dataflow import DataflowDescription
from expr.finishing import RowSetFinishing
from expr.mfp import MapFilterProject
from repr.ids import GlobalId
from repr.timestamp import Frontier

# ---------------------------------------------------------------- commands


@dataclass(frozen=True)
class Hello:
    """First command of a (re)connection.  Sender: must send it before anything else.
    Receiver: must forget nothing durable; resets per-connection state only."""
    nonce: str


@dataclass(frozen=True)
class CreateInstance:
    """Second command.  ``config`` carries instance-wide settings (e.g. logging).
    Receiver: must accept exactly one per connection."""
    config: tuple = ()


@dataclass(frozen=True)
class InitializationComplete:
    """The controller has replayed everything it wants to; the replica may reconcile."""


@dataclass(frozen=True)
class UpdateConfiguration:
    """New system parameters, as ``((name, value), ...)``.  Receiver: applies them in order."""
    params: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class CreateDataflow:
    """Build a dataflow.  Sender: must have chosen ``desc.as_of``, must hold read holds on
    every import at ``as_of`` until the dataflow reports its frontiers past it or is
    dropped, and must never reuse an export id.  Receiver: must build it in command
    arrival order and must refuse (loudly) an import whose since has passed ``as_of``."""
    desc: DataflowDescription


@dataclass(frozen=True)
class Schedule:
    """Start running the dataflow exporting ``id`` (dataflows are created suspended)."""
    id: GlobalId


@dataclass(frozen=True)
class AllowWrites:
    """The collection ``id`` may write to its storage output (a materialized view)."""
    id: GlobalId


@dataclass(frozen=True)
class AllowCompaction:
    """The controller will not read ``id`` below ``frontier``.  ``frontier=None`` (empty)
    drops the collection.  Sender: frontiers per id must never regress.  Receiver: must
    not advance the collection's since past ``frontier``; on the interactive runtime, for a
    published collection it becomes a *standing hold* bounding the publisher."""
    id: GlobalId
    frontier: Frontier


@dataclass(frozen=True)
class Peek:
    """Read ``target`` (an index) at ``timestamp``.

    ``literal_constraints``: ``None`` for a full scan, else a tuple of key tuples to look
    up.  ``map_filter_project`` is applied to each row (after the key lookup), then
    ``finishing``.  Sender: must hold a read hold on ``target`` at ``timestamp`` until the
    response arrives.  Receiver: must answer exactly once (rows, error or canceled); must
    wait while ``upper <= timestamp``; must answer with an error once ``since`` has
    passed ``timestamp``."""
    uuid: str
    target: GlobalId
    literal_constraints: Optional[tuple[tuple, ...]]
    timestamp: int
    finishing: "RowSetFinishing"
    map_filter_project: MapFilterProject


@dataclass(frozen=True)
class CancelPeek:
    """Cancel ``uuid``.  Receiver: if the peek is still pending, must answer it with
    ``canceled``; if already answered, must do nothing."""
    uuid: str


ComputeCommand = Union[Hello, CreateInstance, InitializationComplete, UpdateConfiguration,
                       CreateDataflow, Schedule, AllowWrites, AllowCompaction, Peek, CancelPeek]


# ---------------------------------------------------------------- responses


@dataclass(frozen=True)
class Frontiers:
    """Collection ``id``'s frontiers advanced.  Sender (the owning runtime): must never
    report a regression.  Receiver (controller): must keep one stream per collection.
    ``None`` components are the empty frontier; ``write_frontier`` is the upper."""
    id: GlobalId
    write_frontier: Frontier
    input_frontier: Frontier = None
    output_frontier: Frontier = None


@dataclass(frozen=True)
class PeekRows:
    """``rows``: a tuple of ``(row, count)`` with positive counts, finishing applied."""
    rows: tuple[tuple[tuple, int], ...]


@dataclass(frozen=True)
class PeekError:
    sqlstate: str
    message: str


@dataclass(frozen=True)
class PeekCanceled:
    pass


@dataclass(frozen=True)
class PeekResponse:
    """The one answer to peek ``uuid``.  Forwarded verbatim by the Multiplexer."""
    uuid: str
    result: Union[PeekRows, PeekError, PeekCanceled]
    #: which runtime answered ("maintenance" | "interactive") and how ("fast_path" | "dataflow"),
    #: for introspection only
    answered_by: str = ""
    kind: str = ""


@dataclass(frozen=True)
class SubscribeBatch:
    """Updates ``(row, time, diff)`` with ``lower <= time < upper``; ``upper=None`` ends the stream."""
    lower: int
    upper: Frontier
    updates: tuple[tuple[tuple, int, int], ...]
    error: Optional[tuple[str, str]] = None


@dataclass(frozen=True)
class SubscribeDropped:
    reason: str = ""


@dataclass(frozen=True)
class SubscribeResponse:
    id: GlobalId
    response: Union[SubscribeBatch, SubscribeDropped]


@dataclass(frozen=True)
class Status:
    message: str


ComputeResponse = Union[Frontiers, PeekResponse, SubscribeResponse, Status]


_UUID_PREFIX = _uuid.uuid4().hex[:12]
_uuid_counter = __import__("itertools").count(1)


def new_uuid() -> str:
    """A process-unique peek id (a random prefix and a counter: uuid4 costs a syscall)."""
    return f"{_UUID_PREFIX}-{next(_uuid_counter)}"
