"""SQL front end: text -> statements -> resolved, typed statements.

pglast parses PostgreSQL's grammar; a thin layer handles Materialize-only syntax.
Name resolution and typing happen against a catalog interface.  Errors carry a
PostgreSQL SQLSTATE and, where there is one, the 1-based character position of the
offending token.  ``sql`` imports nothing else from this project.
"""
