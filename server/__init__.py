"""``mzlite serve``: the PostgreSQL wire protocol (version 3) over adapter sessions.

Owns the server side of PostgreSQL's protocol, so psql, psycopg, asyncpg and other
PostgreSQL clients reach an mzlite database, several at once, each connection its own
session.  Modules: ``messages`` (the protocol's messages, the one protocol module),
``pgtypes`` (type OIDs and value formats), ``auth`` (SCRAM-SHA-256), ``session`` (one
connection's state machine), ``listener`` (sockets, limits, cancel keys, shutdown), ``cli``
(the command line).  Invariant: ``server`` is a client of the adapter: it imports
``mzlite`` (and ``repr``/``sql`` for value formats and errors), never the layers below, so
SQL semantics live in one place.  Deliberately not here: anything about SQL.
"""
