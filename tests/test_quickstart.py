"""Materialize's quickstart (get-started/quickstart), typed as it is written, end to end.

The auction house source, the ``winning_bids`` view with its temporal filter, the index on
it, the flipper views and the known-flippers table, ``SUBSCRIBE`` to the flippers and to the
funds movement, and the clean-up; every statement is the quickstart's text (``AS OF 100000``
included: 15,000 auctions of history when the source is created).  Time is a ``ManualClock``;
every test runs with the interactive runtime on and off.  The results are checked against the quickstart's
definitions evaluated in Python over the subsources' rows.
"""
from __future__ import annotations

import datetime

import pytest

T0 = 1_721_931_000_000  # 2024-07-25 18:10:00 UTC

SOURCE = """CREATE SOURCE auction_house
    FROM LOAD GENERATOR AUCTION
    (TICK INTERVAL '1s', AS OF 100000)
    FOR ALL TABLES;"""

WINNING_BIDS = """CREATE VIEW winning_bids AS
   SELECT DISTINCT ON (a.id) b.*, a.item, a.seller
   FROM auctions AS a
    JOIN bids AS b
      ON a.id = b.auction_id
   WHERE b.bid_time < a.end_time
     AND mz_now() >= a.end_time
   ORDER BY a.id,
     b.amount DESC,
     b.bid_time,
     b.buyer;"""

FLIP_ACTIVITIES = """CREATE VIEW flip_activities AS
    SELECT w2.seller as flipper_id,
           w2.item AS item,
           w2.amount AS sold_amount,
           w1.amount AS purchased_amount,
           w2.amount - w1.amount AS diff_amount,
           datediff('days', w2.bid_time, w1.bid_time) AS timeframe_days
     FROM  winning_bids AS w1
       JOIN winning_bids AS w2
         ON w1.buyer = w2.seller   -- Buyer and seller are the same
            AND w1.item = w2.item  -- Item is the same
     WHERE w2.amount > w1.amount   -- But sold at a higher price
       AND datediff('days', w2.bid_time, w1.bid_time) < 8;"""

FLIPPERS = """CREATE VIEW flippers AS
    SELECT flipper_id
    FROM (
        SELECT flipper_id
        FROM flip_activities
        GROUP BY flipper_id
        HAVING count(*) >= 2

        UNION ALL

        SELECT flipper_id
        FROM known_flippers
    );"""

CREDITS = """CREATE VIEW seller_credits AS
    SELECT seller, SUM(amount) as credits
    FROM winning_bids
    GROUP BY seller;"""

DEBITS = """CREATE VIEW buyer_debits AS
    SELECT buyer, SUM(amount) as debits
    FROM winning_bids
    GROUP BY buyer;"""

FUNDS = """CREATE VIEW funds_movement AS
    SELECT SUM(credits) AS total_credits,
           SUM(debits) AS total_debits,
           SUM(credits) - SUM(debits) AS total_difference
    FROM (
      SELECT SUM(credits) AS credits, 0 AS debits
      FROM seller_credits

      UNION

      SELECT 0 AS credits, SUM(debits) AS debits
      FROM buyer_debits
    );
"""


@pytest.fixture
def clock_start():
    return T0


def expected_winning_bids(con, now_ms):
    """The quickstart's ``winning_bids``, evaluated in Python at time ``now_ms``."""
    now = datetime.datetime.fromtimestamp(now_ms / 1000, datetime.timezone.utc)
    auctions = {a: (seller, item, end) for a, seller, item, end in con.execute("SELECT * FROM auctions").fetchall()}
    best: dict = {}
    for bid in con.execute("SELECT * FROM bids").fetchall():
        bid_id, buyer, auction_id, amount, bid_time = bid
        seller, item, end = auctions[auction_id]
        if bid_time < end and now >= end:
            key = (-amount, bid_time, buyer)
            if auction_id not in best or key < best[auction_id][0]:
                best[auction_id] = (key, bid + (item, seller))
    return sorted(row for _, row in best.values())


def expected_flippers(wins):
    """The quickstart's ``flippers`` (without known flippers) over ``winning_bids`` rows."""
    by_buyer_item: dict = {}
    for w1 in wins:
        by_buyer_item.setdefault((w1[1], w1[5]), []).append(w1)
    count: dict = {}
    for w2 in wins:
        for w1 in by_buyer_item.get((w2[6], w2[5]), ()):
            if w2[3] > w1[3] and (w1[4].date() - w2[4].date()).days < 8:
                count[w2[6]] = count.get(w2[6], 0) + 1
    return sorted(f for f, n in count.items() if n >= 2)


def test_the_quickstart_end_to_end(clocked_con):
    con = clocked_con
    other = con.database.connect()
    con.execute(SOURCE)
    assert sorted(con.execute("SHOW SOURCES;").fetchall()) == [
        ("accounts", "subsource", "quickstart", ""), ("auction_house", "load-generator", "quickstart", ""),
        ("auction_house_progress", "progress", None, ""), ("auctions", "subsource", "quickstart", ""),
        ("bids", "subsource", "quickstart", ""), ("organizations", "subsource", "quickstart", ""),
        ("users", "subsource", "quickstart", "")]
    [auction] = con.execute("SELECT * FROM auctions LIMIT 1;").fetchall()
    [bid] = con.execute("SELECT * FROM bids LIMIT 1;").fetchall()
    assert len(auction) == 4 and len(bid) == 5
    joined = con.execute("""SELECT a.*, b.*
      FROM auctions AS a
      JOIN bids AS b
        ON a.id = b.auction_id
      LIMIT 3;""").fetchall()
    assert len(joined) == 3 and all(r[0] == r[6] for r in joined)
    # the 100,000 ticks of history were written at once: their auctions end ten seconds later
    con.execute(WINNING_BIDS)
    assert con.execute("SELECT * FROM winning_bids\n   ORDER BY bid_time DESC\n   LIMIT 10;").fetchall() == []
    con.clock.advance(10_000)
    wins = expected_winning_bids(con, T0 + 10_000)
    assert len(wins) > 200
    got = con.execute("SELECT * FROM winning_bids").fetchall()
    assert sorted(got) == wins
    top = con.execute("SELECT * FROM winning_bids\n   ORDER BY bid_time DESC\n   LIMIT 10;").fetchall()
    pizza = con.execute("""SELECT * FROM winning_bids
   WHERE item = 'Best Pizza in Town'
   ORDER BY bid_time DESC
   LIMIT 10;""").fetchall()
    assert len(top) == 10 and pizza and all(r[5] == "Best Pizza in Town" for r in pizza)
    con.execute("CREATE INDEX wins_by_item ON winning_bids (item);")
    assert sorted(con.execute("SELECT * FROM winning_bids").fetchall()) == wins  # now served by the index
    assert con.execute("SELECT * FROM winning_bids\n    ORDER BY bid_time DESC\n    LIMIT 10;").fetchall() == top
    con.execute(FLIP_ACTIVITIES)
    activities = con.execute("SELECT * FROM flip_activities LIMIT 10;").fetchall()
    assert all(r[2] > r[3] and r[4] == r[2] - r[3] for r in activities)
    con.execute("CREATE TABLE known_flippers (flipper_id bigint);")
    con.execute(FLIPPERS)
    assert sorted(r[0] for r in con.execute("SELECT * FROM flippers").fetchall()) == expected_flippers(wins)
    # SUBSCRIBE to the flippers: a flipper entered into known_flippers appears at once
    cur = con.cursor()
    cur.execute("""SUBSCRIBE TO (
      SELECT *
      FROM flippers
   ) WITH (snapshot = false)
   ;""")
    other.execute("INSERT INTO known_flippers VALUES (450)")
    ts, diff, flipper = cur.fetchone()
    assert (diff, flipper) == (1, 450)
    cur.close()
    # the funds always balance, also while auctions complete
    for sql in (CREDITS, DEBITS, FUNDS):
        con.execute(sql)
    cur = con.cursor()
    cur.execute("""SUBSCRIBE TO (
      SELECT *
      FROM funds_movement
   );""")
    first = cur.fetchone()
    assert first[1] == 1 and first[4] == 0 and first[2] == first[3] == sum(w[3] for w in wins)
    con.clock.advance(60_000)
    other.execute("SELECT 1 FROM bids LIMIT 1")  # a read: the minute's ticks are ingested
    later = expected_winning_bids(other, T0 + 70_000)
    final = sum(w[3] for w in later)
    assert len(later) > len(wins)
    inserted = []
    while not inserted or inserted[-1][2] != final:  # the subscription delivers every change
        row = cur.fetchone()
        if row[1] > 0:
            inserted.append(row)
    assert len(inserted) > 1 and all(r[4] == 0 and r[2] == r[3] for r in inserted)
    cur.close()
    # clean up
    con.execute("DROP SOURCE auction_house CASCADE;")
    con.execute("DROP TABLE known_flippers;")
    assert con.execute("SHOW SOURCES").fetchall() == [] and con.execute("SHOW VIEWS").fetchall() == []
    assert con.execute("SHOW INDEXES").fetchall() == []
