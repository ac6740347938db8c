"""The load generators COUNTER, AUCTION and MARKETING, in the shape of Materialize's.

Owns what each generator writes at each offset (``Generator.step(offset, now_ms)``: the
updates of one tick, by output name), the outputs it writes (``Generator.outputs``: names
and columns as Materialize's load generators declare them; the name ``""`` is the source's
own collection) and its resume state (``state``/``restore``: small plain values the
ingestion persists with each tick, so a reopened data directory continues where it
stopped).  Invariants: ``step`` is called with consecutive offsets; the rows of a tick
depend only on the generator's seed, the offset, the tick's time and the resume state, so a
restored generator continues exactly as the original would have (only the wall-clock times
of later ticks differ); the data shapes are Materialize's:

* COUNTER: offset ``k`` inserts ``k + 1`` into ``counter``; with ``MAX CARDINALITY n`` it
  also retracts ``k + 1 - n`` once ``k >= n``.
* AUCTION: the first tick writes ``organizations`` (75), ``users`` (4000, ``org_id`` round
  robin) and ``accounts`` (one per organization, id ``org_id + 42``, balance 10000); every
  later tick writes one row: an auction (``end_time`` ten seconds after the tick that wrote
  it), then its 2 to 9 bids one tick each (bid ``i`` of auction ``a`` has id ``10 a + i``,
  ``bid_time`` ``i`` seconds after the auction's tick, an amount of 1 to 99).
* MARKETING: the first tick writes 50 ``customers``; every later tick one impression, one
  lead with its conversion prediction, a coupon for some experiment-bucket leads, and the
  clicks and lead conversions scheduled by earlier ticks whose time has come (a conversion
  retracts the lead's row and inserts it with ``converted_at`` and ``conversion_amount``).

Randomness is ``random.Random`` seeded per auction (AUCTION) or per tick (MARKETING) from
the source's seed, so no random-number state needs persisting.  Deliberately not here:
when ticks are due and how they are committed (``storage.sources.ingest``), TPCH
(``storage.sources.tpch``), SQL.
"""
from __future__ import annotations

import datetime as _dt
import random
from typing import Optional

from storage.sources.names import AUCTION_ITEMS, CUSTOMER_EMAILS, ORGANIZATIONS, USERS

_UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_UTC)


def timestamptz(ms: int) -> _dt.datetime:
    """The engine's ``timestamptz`` value of epoch milliseconds ``ms``."""
    return _EPOCH + _dt.timedelta(milliseconds=ms)


def _rng(seed: int, *parts: int) -> random.Random:
    x = seed & 0xFFFFFFFFFFFFFFFF
    for p in parts:
        x = (x * 1_000_003 + p) & 0xFFFFFFFFFFFFFFFF
    return random.Random(x)


class Generator:
    """One load generator's data; see the module docstring."""

    #: the generator's name as SQL spells it (``LOAD GENERATOR <name>``)
    name = ""
    #: ``(output name, ((column, type, nullable), ...))``; ``""`` is the source's own collection
    outputs: tuple = ()
    #: a multi-output generator needs ``FOR ALL TABLES`` (or ``FOR TABLES (...)``)
    multi_output = True
    #: the default tick interval (ms); None: the source writes its first tick only
    default_tick_ms: Optional[int] = 1000

    def step(self, offset: int, now_ms: int) -> dict:
        raise NotImplementedError

    def state(self) -> dict:
        return {}

    def restore(self, state: dict) -> None:
        pass


class Counter(Generator):
    name = "counter"
    outputs = (("", (("counter", "int8", False),)),)
    multi_output = False

    def __init__(self, max_cardinality: Optional[int] = None):
        self.max_cardinality = max_cardinality

    def step(self, offset: int, now_ms: int) -> dict:
        ups = [((offset + 1,), 1)]
        m = self.max_cardinality
        if m is not None and offset >= m:
            ups.append(((offset - m + 1,), -1))
        return {"": ups}


_AUCTION_OUTPUTS = (
    ("", ()),
    ("organizations", (("id", "int8", False), ("name", "text", False))),
    ("users", (("id", "int8", False), ("org_id", "int8", False), ("name", "text", False))),
    ("accounts", (("id", "int8", False), ("org_id", "int8", False), ("balance", "int8", False))),
    ("auctions", (("id", "int8", False), ("seller", "int8", False), ("item", "text", False),
                  ("end_time", "timestamptz", False))),
    ("bids", (("id", "int8", False), ("buyer", "int8", False), ("auction_id", "int8", False),
              ("amount", "int4", False), ("bid_time", "timestamptz", False))),
)


class Auction(Generator):
    name = "auction"
    outputs = _AUCTION_OUTPUTS

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.started = False
        self.auction = 0        #: the auction being written (0: none yet)
        self.first = 0          #: the offset of its auction row
        self.now_ms = 0         #: the time of the tick that wrote its auction row
        self._rows: list = []   #: (output, row) of the auction and its bids

    def step(self, offset: int, now_ms: int) -> dict:
        if not self.started:
            self.started = True
            n_orgs = len(ORGANIZATIONS)
            return {
                "organizations": [((i + 1, name), 1) for i, name in enumerate(ORGANIZATIONS)],
                "users": [((i + 1, i % n_orgs + 1, name), 1) for i, name in enumerate(USERS)],
                "accounts": [((org + 42, org, 10000), 1) for org in range(1, n_orgs + 1)],
            }
        if self.auction == 0 or offset - self.first >= len(self._rows):
            self.auction += 1
            self.first, self.now_ms = offset, now_ms
            self._rows = self._auction_rows()
        output, row = self._rows[offset - self.first]
        return {output: [(row, 1)]}

    def _auction_rows(self) -> list:
        a, now = self.auction, self.now_ms
        rng = _rng(self.seed, 1, a)
        n_users = len(USERS)
        rows = [("auctions", (a, rng.randint(1, n_users), rng.choice(AUCTION_ITEMS), timestamptz(now + 10_000)))]
        for i in range(rng.randint(2, 9)):
            rows.append(("bids", (a * 10 + i, rng.randint(1, n_users), a, rng.randint(1, 99),
                                  timestamptz(now + 1000 * i))))
        return rows

    def state(self) -> dict:
        return {"started": self.started, "auction": self.auction, "first": self.first, "now": self.now_ms}

    def restore(self, state: dict) -> None:
        self.started = bool(state.get("started"))
        self.auction, self.first, self.now_ms = state.get("auction", 0), state.get("first", 0), state.get("now", 0)
        self._rows = self._auction_rows() if self.auction else []


_MARKETING_OUTPUTS = (
    ("", ()),
    ("customers", (("id", "int8", False), ("email", "text", False), ("income", "int8", False))),
    ("impressions", (("id", "int8", False), ("customer_id", "int8", False), ("campaign_id", "int8", False),
                     ("impression_time", "timestamptz", False))),
    ("clicks", (("impression_id", "int8", False), ("click_time", "timestamptz", False))),
    ("leads", (("id", "int8", False), ("customer_id", "int8", False), ("created_at", "timestamptz", False),
               ("converted_at", "timestamptz", True), ("conversion_amount", "int8", True))),
    ("coupons", (("id", "int8", False), ("lead_id", "int8", False), ("created_at", "timestamptz", False),
                 ("amount", "int8", False))),
    ("conversion_predictions", (("lead_id", "int8", False), ("experiment_bucket", "text", False),
                                ("predicted_at", "timestamptz", False), ("score", "float8", False))),
)


class Marketing(Generator):
    name = "marketing"
    outputs = _MARKETING_OUTPUTS

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.started = False
        self.counter = 0
        #: updates scheduled for later ticks: ``[time_ms, output, row, diff]``, in schedule order
        self.future: list = []

    def step(self, offset: int, now_ms: int) -> dict:
        out: dict = {}

        def emit(output, row, diff=1):
            out.setdefault(output, []).append((row, diff))
        if not self.started:
            self.started = True
            rng = _rng(self.seed, 2, 0)
            for i, email in enumerate(CUSTOMER_EMAILS):
                emit("customers", (i, email, rng.randrange(5_000_000, 10_000_000)))
            return out
        rng = _rng(self.seed, 2, offset)
        now = timestamptz(now_ms)
        impression = self._next_id()
        emit("impressions", (impression, rng.randrange(len(CUSTOMER_EMAILS)), rng.randrange(20), now))
        if rng.randrange(10) == 1:
            at = now_ms + rng.randrange(20_000, 40_000)
            self.future.append([at, "clicks", (impression, timestamptz(at)), 1])
        due = [f for f in self.future if f[0] <= now_ms]
        self.future = [f for f in self.future if f[0] > now_ms]
        for _, output, row, diff in due:
            emit(output, tuple(row), diff)
        lead = self._next_id()
        customer = rng.randrange(len(CUSTOMER_EMAILS))
        lead_row = (lead, customer, now, None, None)
        emit("leads", lead_row)
        score = rng.random()
        bucket = "control" if lead % 10 <= 1 else "experiment"
        emit("conversion_predictions", (lead, bucket, now, score))
        coupon = False
        if score <= 0.5 and bucket == "experiment":
            coupon = True
            emit("coupons", (self._next_id(), lead, now, rng.randrange(500, 5000)))
        converted = rng.random() < score
        if coupon and not converted:
            converted = rng.random() < score
        if converted:
            at = now_ms + rng.randrange(1, 30)
            self.future.append([at, "leads", lead_row, -1])
            self.future.append([at, "leads", (lead, customer, now, timestamptz(at), rng.randrange(1000, 25000)), 1])
        return out

    def _next_id(self) -> int:
        n = self.counter
        self.counter += 1
        return n

    def state(self) -> dict:
        return {"started": self.started, "counter": self.counter,
                "future": [[t, o, list(r), d] for t, o, r, d in self.future]}

    def restore(self, state: dict) -> None:
        self.started = bool(state.get("started"))
        self.counter = state.get("counter", 0)
        self.future = [[t, o, tuple(r), d] for t, o, r, d in state.get("future", ())]
