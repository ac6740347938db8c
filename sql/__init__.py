"""SQL front end: text -> statements -> resolved, typed statements.

pglast parses PostgreSQL's grammar; a thin layer handles Materialize-only syntax.
Name resolution and typing happen against a catalog interface; the types
(``sql.types``) and the signatures of functions, operators and aggregates
(``sql.functions``) are one module per type family, paired with ``expr.functions``.
Errors carry a PostgreSQL SQLSTATE and, where there is one, the 1-based character
position of the offending token.  Of this project ``sql`` imports only ``repr``: a
literal is read by the same parser a run-time cast calls.
"""
