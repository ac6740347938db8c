"""The replica's client: the one door from the adapter into ``compute.replica``.

``ReplicaClient.start`` wires one database's replica (a maintenance runtime and, when asked
for, an interactive one over one registry; a driver for each with its own policy; the
Multiplexer); the adapter reaches the replica through the client alone; shutdown stops the
threads and gives the scheduling baseline back.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from compute.protocol import CreateDataflow, Frontiers, Hello, Schedule
from compute.replica.client import ReplicaClient
from compute.replica.driver import INTERACTIVE_POLICY, MAINTENANCE_POLICY
from compute.replica.interactive import InteractiveRuntime
from compute.replica.maintenance import MaintenanceRuntime
from compute.replica.scheduling import BASELINE, SWITCH_INTERVAL
from tests.support.standins import index_desc, table, u

ROOT = Path(__file__).resolve().parent.parent
#: what of ``compute`` the adapter may import: the protocol's vocabulary and the client
ADAPTER_MAY_USE = ("compute.protocol", "compute.dataflow", "compute.errors", "compute.replica.client")
#: what of ``compute`` the adapter must reach only through the client
BEHIND_THE_CLIENT = ("compute.replica", "compute.multiplexer", "compute.arrangement")


def _imported(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, node.lineno
            for alias in node.names:
                yield f"{node.module}.{alias.name}", node.lineno


def test_the_adapter_reaches_the_replica_only_through_its_client():
    """Sabotage: ``from compute.replica.driver import defer_wakes`` back in
    ``mzlite/coordinator.py`` -> that line is listed."""
    wrong = []
    for path in sorted((ROOT / "mzlite").rglob("*.py")):
        for name, line in _imported(path):
            if any(name == m or name.startswith(m + ".") for m in ADAPTER_MAY_USE):
                continue
            if any(name == m or name.startswith(m + ".") for m in BEHIND_THE_CLIENT):
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert not wrong, "the adapter must use compute.replica.client.ReplicaClient: " + ", ".join(wrong)


@pytest.mark.parametrize("interactive", [True, False])
def test_start_wires_a_driver_per_runtime_and_shutdown_ends_them(interactive):
    """Sabotage: ``start`` building the interactive driver with ``for_maintenance`` -> its
    policy is maintenance's; ``shutdown`` not releasing the baseline -> still requested."""
    client = ReplicaClient.start({u(1): table(u(1), [(1, "a")])}, interactive=interactive)
    try:
        assert isinstance(client.maintenance, MaintenanceRuntime)
        assert client.maintenance_driver.runtime is client.maintenance
        assert client.maintenance_driver.policy == MAINTENANCE_POLICY
        if interactive:
            assert isinstance(client.interactive, InteractiveRuntime)
            assert client.interactive.registry is client.maintenance.registry
            assert client.interactive_driver.runtime is client.interactive
            assert client.interactive_driver.policy == INTERACTIVE_POLICY
            assert [role for role, _ in client.runtimes()] == ["maintenance", "interactive"]
        else:
            assert client.interactive is None and client.interactive_driver is None
            assert [role for role, _ in client.runtimes()] == ["maintenance"]
        assert SWITCH_INTERVAL.requested_by(client)
        client.send(Hello("n"))
        client.send(CreateDataflow(index_desc(u(1), u(2))))
        client.send(Schedule(u(2)))
        while True:  # the index hydrates on maintenance and reports through the one endpoint
            r = client.recv(timeout=10)
            assert r is not None
            if r == Frontiers(u(2), 1, 1, 1):
                break
        assert client.owner_of(u(2)) == "maintenance"
    finally:
        client.shutdown()
    assert not client.maintenance_driver.alive
    assert client.interactive_driver is None or not client.interactive_driver.alive
    assert not SWITCH_INTERVAL.requested_by(client)
    BASELINE.release(client)  # idempotent: nothing left to give back
