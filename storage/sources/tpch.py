"""The TPCH load generator: TPC-H's eight tables at a scale factor, shaped as dbgen shapes them.

Owns the rows of ``supplier``, ``part``, ``partsupp``, ``customer``, ``orders``, ``lineitem``,
``nation`` and ``region`` (Materialize's columns and types; numeric values are ``Decimal``
with two decimal places) and the order churn of later ticks.  The data follows the TPC-H
specification's generation rules (clause 4.2.3): cardinalities ``SF * 10,000`` suppliers,
``SF * 200,000`` parts with four suppliers each (the spec's supplier formula), ``SF *
150,000`` customers, ``SF * 1,500,000`` orders with sparse keys (8 of every 32) and one to
seven line items, customers whose key is a multiple of three never ordering, the 25 nations
and 5 regions; retail prices, extended prices, order totals, statuses, return flags and the
date rules (ship 1-121 days after the order, commit 30-90, receipt 1-30 after shipping,
``CURRENTDATE`` 1995-06-17) as specified; comments drawn from a text pool built from the
specification's grammar and word lists.  The first tick writes every table.  With a ``TICK
INTERVAL`` every later tick replaces one order and its line items (the old rows retracted,
a regenerated order with the same key inserted), as Materialize's TPCH generator does.
Invariants: a row is a pure function of the seed, its key and (orders) how many times it
was replaced, so the resume state is only that count per replaced order; ``o_totalprice``
is the sum over its line items of ``extendedprice * (1 + tax) * (1 - discount)``, rounded
to cents.  Deliberately not here: the schedule and commits (``storage.sources.ingest``).
"""
from __future__ import annotations

import datetime as _dt
from decimal import ROUND_HALF_EVEN, Decimal
import random

from storage.sources.generators import Generator

_ID, _TEXT, _NUM, _INT, _DATE = "int8", "text", "numeric", "int4", "date"


def _cols(*spec):
    return tuple((name, t, False) for name, t in spec)


_OUTPUTS = (
    ("", ()),
    ("supplier", _cols(("s_suppkey", _ID), ("s_name", _TEXT), ("s_address", _TEXT), ("s_nationkey", _ID),
                       ("s_phone", _TEXT), ("s_acctbal", _NUM), ("s_comment", _TEXT))),
    ("part", _cols(("p_partkey", _ID), ("p_name", _TEXT), ("p_mfgr", _TEXT), ("p_brand", _TEXT), ("p_type", _TEXT),
                   ("p_size", _INT), ("p_container", _TEXT), ("p_retailprice", _NUM), ("p_comment", _TEXT))),
    ("partsupp", _cols(("ps_partkey", _ID), ("ps_suppkey", _ID), ("ps_availqty", _INT), ("ps_supplycost", _NUM),
                       ("ps_comment", _TEXT))),
    ("customer", _cols(("c_custkey", _ID), ("c_name", _TEXT), ("c_address", _TEXT), ("c_nationkey", _ID),
                       ("c_phone", _TEXT), ("c_acctbal", _NUM), ("c_mktsegment", _TEXT), ("c_comment", _TEXT))),
    ("orders", _cols(("o_orderkey", _ID), ("o_custkey", _ID), ("o_orderstatus", _TEXT), ("o_totalprice", _NUM),
                     ("o_orderdate", _DATE), ("o_orderpriority", _TEXT), ("o_clerk", _TEXT), ("o_shippriority", _INT),
                     ("o_comment", _TEXT))),
    ("lineitem", _cols(("l_orderkey", _ID), ("l_partkey", _ID), ("l_suppkey", _ID), ("l_linenumber", _INT),
                       ("l_quantity", _NUM), ("l_extendedprice", _NUM), ("l_discount", _NUM), ("l_tax", _NUM),
                       ("l_returnflag", _TEXT), ("l_linestatus", _TEXT), ("l_shipdate", _DATE),
                       ("l_commitdate", _DATE), ("l_receiptdate", _DATE), ("l_shipinstruct", _TEXT),
                       ("l_shipmode", _TEXT), ("l_comment", _TEXT))),
    ("nation", _cols(("n_nationkey", _ID), ("n_name", _TEXT), ("n_regionkey", _ID), ("n_comment", _TEXT))),
    ("region", _cols(("r_regionkey", _ID), ("r_name", _TEXT), ("r_comment", _TEXT))),
)

REGIONS = ("AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST")
NATIONS = (("ALGERIA", 0), ("ARGENTINA", 1), ("BRAZIL", 1), ("CANADA", 1), ("EGYPT", 4), ("ETHIOPIA", 0),
           ("FRANCE", 3), ("GERMANY", 3), ("INDIA", 2), ("INDONESIA", 2), ("IRAN", 4), ("IRAQ", 4), ("JAPAN", 2),
           ("JORDAN", 4), ("KENYA", 0), ("MOROCCO", 0), ("MOZAMBIQUE", 0), ("PERU", 1), ("CHINA", 2),
           ("ROMANIA", 3), ("SAUDI ARABIA", 4), ("VIETNAM", 2), ("RUSSIA", 3), ("UNITED KINGDOM", 3),
           ("UNITED STATES", 1))
_COLORS = tuple("""almond antique aquamarine azure beige bisque black blanched blue blush brown burlywood burnished
chartreuse chiffon chocolate coral cornflower cornsilk cream cyan dark deep dim dodger drab firebrick floral forest
frosted gainsboro ghost goldenrod green grey honeydew hot indian ivory khaki lace lavender lawn lemon light lime linen
magenta maroon medium metallic midnight mint misty moccasin navajo navy olive orange orchid pale papaya peach peru
pink plum powder puff purple red rose rosy royal saddle salmon sandy seashell sienna sky slate smoke snow spring
steel tan thistle tomato turquoise violet wheat white yellow""".split())
_TYPES = (("STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"),
          ("ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"), ("TIN", "NICKEL", "BRASS", "STEEL", "COPPER"))
_CONTAINERS = (("SM", "LG", "MED", "JUMBO", "WRAP"), ("CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"))
_SEGMENTS = ("AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD")
_PRIORITIES = ("1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW")
_INSTRUCTIONS = ("DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN")
_MODES = ("REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB")

# the text grammar's word classes (TPC-H clause 4.2.2.10)
_NOUNS = ("foxes ideas theodolites pinto_beans instructions dependencies excuses platelets asymptotes courts "
          "dolphins multipliers sauternes warthogs frets dinos attainments somas Tiresias' patterns forges braids "
          "hockey_players frays warhorses dugouts notornis epitaphs pearls tithes waters orbits gifts sheaves depths "
          "sentiments decoys realms pains grouches escapades").split()
_VERBS = ("sleep wake are cajole haggle nag use boost affix detect integrate maintain nod was lose sublate solve "
          "thrash promise engage hinder print x-ray breach eat grow impress mold poach serve run dazzle snooze doze "
          "unwind kindle play hang believe doubt").split()
_ADJECTIVES = ("furious sly careful blithe quick fluffy slow quiet ruthless thin close dogged daring brave stealthy "
               "permanent enticing idle busy regular final ironic even bold silent").split()
_ADVERBS = ("sometimes always never furiously slyly carefully blithely quickly fluffily slowly quietly ruthlessly "
            "thinly closely doggedly daringly bravely stealthily permanently enticingly idly busily regularly finally "
            "ironically evenly boldly silently").split()
_PREPOSITIONS = ("about above according_to across after against along alongside_of among around at atop before "
                 "behind beneath beside besides between beyond by despite during except for from in_place_of inside "
                 "instead_of into near of on outside over past since through throughout to toward under until up "
                 "upon without with within").split()
_AUXILIARIES = ("do may might shall will would can could should ought_to must will_have_to shall_have_to "
                "could_have_to should_have_to must_have_to need_to try_to").split()
_TERMINATORS = (".", ";", ":", "?", "!", "--")

START_DATE = _dt.date(1992, 1, 1)
CURRENT_DATE = _dt.date(1995, 6, 17)
END_DATE = _dt.date(1998, 12, 31)
_ORDER_DAYS = (END_DATE - START_DATE).days - 151
_CENT = Decimal("0.01")
_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,."
#: characters in the comment pool (the specification's pool is 300 MB; a smaller one keeps
#: small scale factors fast, and comments are random substrings of it all the same)
POOL_CHARS = 1 << 18


def _w(word: str) -> str:
    return word.replace("_", " ")


def _text_pool(rng: random.Random) -> str:
    """Sentences of the specification's grammar, joined, ``POOL_CHARS`` long."""
    out, n = [], 0

    def noun_phrase():
        form = rng.randrange(4)
        if form == 0:
            return _w(rng.choice(_NOUNS))
        if form == 1:
            return f"{rng.choice(_ADJECTIVES)} {_w(rng.choice(_NOUNS))}"
        if form == 2:
            return f"{rng.choice(_ADJECTIVES)}, {rng.choice(_ADJECTIVES)} {_w(rng.choice(_NOUNS))}"
        return f"{rng.choice(_ADVERBS)} {rng.choice(_ADJECTIVES)} {_w(rng.choice(_NOUNS))}"

    def verb_phrase():
        form = rng.randrange(4)
        if form == 0:
            return rng.choice(_VERBS)
        if form == 1:
            return f"{_w(rng.choice(_AUXILIARIES))} {rng.choice(_VERBS)}"
        if form == 2:
            return f"{rng.choice(_VERBS)} {rng.choice(_ADVERBS)}"
        return f"{_w(rng.choice(_AUXILIARIES))} {rng.choice(_VERBS)} {rng.choice(_ADVERBS)}"

    while n < POOL_CHARS:
        form = rng.randrange(5)
        prep = f"{_w(rng.choice(_PREPOSITIONS))} the {noun_phrase()}"
        if form == 0:
            s = f"{noun_phrase()} {verb_phrase()}"
        elif form == 1:
            s = f"{noun_phrase()} {verb_phrase()} {prep}"
        elif form == 2:
            s = f"{noun_phrase()} {verb_phrase()} {noun_phrase()}"
        elif form == 3:
            s = f"{noun_phrase()} {prep} {verb_phrase()} {noun_phrase()}"
        else:
            s = f"{noun_phrase()} {prep} {verb_phrase()} {prep}"
        s += rng.choice(_TERMINATORS) + " "
        out.append(s)
        n += len(s)
    return "".join(out)[:POOL_CHARS]


def order_key(i: int) -> int:
    """The key of the ``i``-th order (1-based): keys are sparse, 8 of every 32 (dbgen's rule)."""
    return ((i - 1) // 8) * 32 + (i - 1) % 8 + 1


def retail_price(partkey: int) -> Decimal:
    return (Decimal(90000 + (partkey // 10) % 20001 + 100 * (partkey % 1000)) / 100).quantize(_CENT)


class Tpch(Generator):
    name = "tpch"
    outputs = _OUTPUTS
    default_tick_ms = None

    def __init__(self, scale_factor: float = 0.01, seed: int = 0):
        self.sf = scale_factor
        self.seed = seed
        self.suppliers = max(1, int(round(10_000 * scale_factor)))
        self.parts = max(1, int(round(200_000 * scale_factor)))
        self.customers = max(1, int(round(150_000 * scale_factor)))
        self.orders = max(1, int(round(1_500_000 * scale_factor)))
        self.clerks = max(1, int(round(1_000 * scale_factor)))
        self.started = False
        #: order number (1-based) -> how many times a tick has replaced it
        self.versions: dict = {}
        self._pool = None

    # ---------------------------------------------------------------- helpers
    def _rng(self, *parts: int) -> random.Random:
        x = self.seed
        for p in parts:
            x = (x * 1_000_003 + p) & 0xFFFFFFFFFFFFFFFF
        return random.Random(x)

    def _text(self, rng: random.Random, lo: int, hi: int) -> str:
        if self._pool is None:
            self._pool = _text_pool(self._rng(99))
        n = rng.randint(lo, hi)
        at = rng.randrange(len(self._pool) - n)
        return self._pool[at:at + n]

    @staticmethod
    def _v_string(rng: random.Random, lo: int, hi: int) -> str:
        return "".join(rng.choice(_ALNUM) for _ in range(rng.randint(lo, hi)))

    @staticmethod
    def _phone(rng: random.Random, nation: int) -> str:
        return f"{nation + 10}-{rng.randint(100, 999)}-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"

    @staticmethod
    def _money(rng: random.Random, lo_cents: int, hi_cents: int) -> Decimal:
        return Decimal(rng.randint(lo_cents, hi_cents)) / 100

    def part_supplier(self, partkey: int, i: int) -> int:
        """The ``i``-th (0..3) supplier of part ``partkey`` (the specification's formula)."""
        s = self.suppliers
        return (partkey + i * (s // 4 + (partkey - 1) // s)) % s + 1

    # ---------------------------------------------------------------- tables
    def _supplier(self, key: int):
        rng = self._rng(1, key)
        nation = rng.randrange(25)
        return (key, f"Supplier#{key:09d}", self._v_string(rng, 10, 40), nation, self._phone(rng, nation),
                self._money(rng, -99_999, 999_999), self._text(rng, 25, 100))

    def _part(self, key: int):
        rng = self._rng(2, key)
        m, n = rng.randint(1, 5), rng.randint(1, 5)
        part = (key, " ".join(rng.sample(_COLORS, 5)), f"Manufacturer#{m}", f"Brand#{m}{n}",
                " ".join(rng.choice(s) for s in _TYPES), rng.randint(1, 50),
                " ".join(rng.choice(s) for s in _CONTAINERS), retail_price(key), self._text(rng, 5, 22))
        partsupp = [(key, self.part_supplier(key, i), rng.randint(1, 9999), self._money(rng, 100, 100_000),
                     self._text(rng, 49, 198)) for i in range(4)]
        return part, partsupp

    def _customer(self, key: int):
        rng = self._rng(3, key)
        nation = rng.randrange(25)
        return (key, f"Customer#{key:09d}", self._v_string(rng, 10, 40), nation, self._phone(rng, nation),
                self._money(rng, -99_999, 999_999), rng.choice(_SEGMENTS), self._text(rng, 29, 116))

    def _order(self, i: int):
        """The ``i``-th order (1-based) and its line items, at its current version."""
        rng = self._rng(4, i, self.versions.get(i, 0))
        key = order_key(i)
        while True:
            custkey = rng.randint(1, self.customers)
            if custkey % 3 != 0 or self.customers < 3:
                break
        orderdate = START_DATE + _dt.timedelta(days=rng.randint(0, _ORDER_DAYS))
        total = Decimal(0)
        statuses = set()
        lines = []
        for line in range(1, rng.randint(1, 7) + 1):
            partkey = rng.randint(1, self.parts)
            suppkey = self.part_supplier(partkey, rng.randrange(4))
            quantity = Decimal(rng.randint(1, 50))
            extended = quantity * retail_price(partkey)
            discount = Decimal(rng.randint(0, 10)) / 100
            tax = Decimal(rng.randint(0, 8)) / 100
            ship = orderdate + _dt.timedelta(days=rng.randint(1, 121))
            commit = orderdate + _dt.timedelta(days=rng.randint(30, 90))
            receipt = ship + _dt.timedelta(days=rng.randint(1, 30))
            returnflag = rng.choice("RA") if receipt <= CURRENT_DATE else "N"
            linestatus = "O" if ship > CURRENT_DATE else "F"
            statuses.add(linestatus)
            total += extended * (1 + tax) * (1 - discount)
            lines.append((key, partkey, suppkey, line, quantity.quantize(_CENT), extended.quantize(_CENT), discount,
                          tax, returnflag, linestatus, ship, commit, receipt, rng.choice(_INSTRUCTIONS),
                          rng.choice(_MODES), self._text(rng, 10, 43)))
        status = statuses.pop() if len(statuses) == 1 else "P"
        order = (key, custkey, status, total.quantize(_CENT, ROUND_HALF_EVEN), orderdate, rng.choice(_PRIORITIES),
                 f"Clerk#{rng.randint(1, self.clerks):09d}", 0, self._text(rng, 19, 78))
        return order, lines

    def step(self, offset: int, now_ms: int) -> dict:
        if not self.started:
            self.started = True
            out: dict = {"supplier": [(self._supplier(k), 1) for k in range(1, self.suppliers + 1)],
                         "part": [], "partsupp": [], "orders": [], "lineitem": []}
            for k in range(1, self.parts + 1):
                part, partsupp = self._part(k)
                out["part"].append((part, 1))
                out["partsupp"].extend((r, 1) for r in partsupp)
            out["customer"] = [(self._customer(k), 1) for k in range(1, self.customers + 1)]
            for i in range(1, self.orders + 1):
                order, lines = self._order(i)
                out["orders"].append((order, 1))
                out["lineitem"].extend((r, 1) for r in lines)
            rng = self._rng(5)
            out["nation"] = [((k, name, region, self._text(rng, 31, 114)), 1) for k, (name, region) in enumerate(NATIONS)]
            out["region"] = [((k, name, self._text(rng, 31, 115)), 1) for k, name in enumerate(REGIONS)]
            return out
        i = self._rng(6, offset).randint(1, self.orders)
        old, old_lines = self._order(i)
        self.versions[i] = self.versions.get(i, 0) + 1
        new, new_lines = self._order(i)
        return {"orders": [(old, -1), (new, 1)],
                "lineitem": [(r, -1) for r in old_lines] + [(r, 1) for r in new_lines]}

    def state(self) -> dict:
        return {"started": self.started, "versions": [[i, v] for i, v in self.versions.items()]}

    def restore(self, state: dict) -> None:
        self.started = bool(state.get("started"))
        self.versions = {int(i): int(v) for i, v in state.get("versions", ())}
