"""The freshness workload's data, its change stream and its oracle.

Owns: the deterministic generation of ``customers`` and ``orders`` from a seed, the
sequence of change batches (inserts, updates, deletes of orders), and a reference model
(``Oracle``) that keeps the view ``region -> (n, total)`` up to date in plain Python so
every engine's answer can be checked against it after every batch.

Invariant: for a given ``(n_orders, seed)`` every process that builds a ``Workload`` sees
exactly the same rows and the same batches in the same order (engines run in separate
processes and are compared afterwards).  Ids touched by one batch are distinct, so a batch
has one meaning whether an engine applies it row by row or as a set.

Deliberately not here: timing, engines, SQL text beyond the shared constants below.  The
oracle stores columns in ``array('i')`` so that the harness's own footprint stays small
beside the engines' (peak memory is measured per process).
"""
from __future__ import annotations

import random
from array import array
from dataclasses import dataclass
from decimal import Decimal
from typing import Iterator, List, Sequence, Tuple

N_CUSTOMERS = 10_000
N_REGIONS = 10
POINT_REGION = "r3"

VIEW_QUERY = ("SELECT c.region, count(*) AS n, sum(o.amount) AS total "
              "FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region")
READ_VIEW = "SELECT region, n, total FROM sales"
POINT_READ = f"SELECT n, total FROM sales WHERE region = '{POINT_REGION}'"

INSERT_SQL = "INSERT INTO orders VALUES (?, ?, ?)"           # (id, customer_id, amount)
UPDATE_SQL = "UPDATE orders SET amount = ? WHERE id = ?"      # (amount, id)
DELETE_SQL = "DELETE FROM orders WHERE id = ?"                # (id,)
CHANGE_SQL = {"insert": INSERT_SQL, "update": UPDATE_SQL, "delete": DELETE_SQL}
KINDS = ("insert", "update", "delete")


@dataclass(frozen=True)
class Batch:
    kind: str                      # "insert" | "update" | "delete"
    params: List[tuple]            # parameter tuples for CHANGE_SQL[kind]

    @property
    def sql(self) -> str:
        return CHANGE_SQL[self.kind]


def normalize_value(v):
    """Decimal sums from mzlite and ints from the peers compare equal after this."""
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else v
    if isinstance(v, bool):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def normalize_rows(rows) -> List[tuple]:
    out = [tuple(normalize_value(v) for v in r) for r in rows]
    out.sort(key=lambda r: tuple((v is None, type(v).__name__, 0 if v is None else v) for v in r))
    return out


class Oracle:
    """The view maintained by hand: per-region count and sum, plus the live orders."""

    def __init__(self, customer_region: Sequence[int], cust: array, amount: array, n_orders: int):
        self.customer_region = customer_region      # customer id -> region number
        self.cust = cust                            # order id -> customer id
        self.amount = amount                        # order id -> amount
        self.live = array("i", range(n_orders))     # live order ids (swap-remove)
        self.pos = array("i", range(n_orders))      # order id -> index in live, -1 if gone
        self.n = [0] * N_REGIONS
        self.total = [0] * N_REGIONS
        region = customer_region
        n, total = self.n, self.total
        for c, a in zip(cust, amount):
            r = region[c]
            n[r] += 1
            total[r] += a

    def view(self) -> List[tuple]:
        return normalize_rows((f"r{r}", self.n[r], self.total[r]) for r in range(N_REGIONS) if self.n[r])

    def point(self, region: str = POINT_REGION) -> List[tuple]:
        r = int(region[1:])
        return [(self.n[r], self.total[r])] if self.n[r] else []

    def apply(self, batch: Batch) -> None:
        region, n, total, cust, amount = self.customer_region, self.n, self.total, self.cust, self.amount
        if batch.kind == "insert":
            for oid, c, a in batch.params:
                assert oid == len(cust)
                cust.append(c)
                amount.append(a)
                self.pos.append(len(self.live))
                self.live.append(oid)
                r = region[c]
                n[r] += 1
                total[r] += a
        elif batch.kind == "update":
            for a, oid in batch.params:
                r = region[cust[oid]]
                total[r] += a - amount[oid]
                amount[oid] = a
        else:
            live, pos = self.live, self.pos
            for (oid,) in batch.params:
                r = region[cust[oid]]
                n[r] -= 1
                total[r] -= amount[oid]
                i = pos[oid]
                last = live[-1]
                live[i] = last
                pos[last] = i
                live.pop()
                pos[oid] = -1


class Workload:
    """Deterministic data and change batches for ``n_orders`` orders."""

    def __init__(self, n_orders: int, seed: int = 42):
        self.n_orders = n_orders
        self.seed = seed
        rng = random.Random(seed)
        self.customer_region = [rng.randrange(N_REGIONS) for _ in range(N_CUSTOMERS)]
        rr = rng.randrange
        cust = array("i", [rr(N_CUSTOMERS) for _ in range(n_orders)])
        amount = array("i", [rr(1, 1001) for _ in range(n_orders)])
        self.oracle = Oracle(self.customer_region, cust, amount, n_orders)
        self._rng = random.Random(seed + 1)

    def customers_rows(self) -> List[Tuple[int, str]]:
        return [(i, f"r{r}") for i, r in enumerate(self.customer_region)]

    def orders_rows(self) -> List[Tuple[int, int, int]]:
        """The initial orders as a list of tuples (built on demand; callers drop it after loading)."""
        o = self.oracle
        return list(zip(range(self.n_orders), o.cust[:self.n_orders], o.amount[:self.n_orders]))

    def next_batch(self, kind: str, k: int) -> Batch:
        """The next batch of ``k`` distinct-id changes of ``kind``; the oracle has already applied it."""
        rng, o = self._rng, self.oracle
        if kind == "insert":
            base = len(o.cust)
            params = [(base + i, rng.randrange(N_CUSTOMERS), rng.randrange(1, 1001)) for i in range(k)]
        elif kind == "update":
            idx = rng.sample(range(len(o.live)), min(k, len(o.live)))
            params = [(rng.randrange(1, 1001), o.live[i]) for i in idx]
        elif kind == "delete":
            idx = rng.sample(range(len(o.live)), min(k, len(o.live)))
            params = [(o.live[i],) for i in idx]
        else:
            raise ValueError(kind)
        batch = Batch(kind, params)
        o.apply(batch)
        return batch

    def batches(self, k: int, reps: int) -> Iterator[Batch]:
        """``reps`` batches of size ``k``, kinds rotating insert, update, delete."""
        for i in range(reps):
            yield self.next_batch(KINDS[i % 3], k)
