"""repr: values and types, the leaf every other layer stands on (Materialize's ``mz_repr``).

Owns the representation of SQL values and their text I/O, one module per type as
``mz_repr`` cuts them: the scalars' parsers and printers and ``to_text`` of any value
(``strconv``: booleans, integers, floats and reals, ``mz_timestamp``, bytea, uuid),
``numeric`` (context, scale, I/O, ``numeric(p,s)``), ``char`` (``char(n)``/``varchar(n)``),
dates, times and intervals (with infinities and type modifiers), ``to_char`` templates,
jsonb, arrays and lists; timestamps and frontiers, collection ids, and the data error
``EvalError``.  Invariant: a leaf; it imports nothing of ours, so ``sql`` (literal parsing),
``expr`` (evaluation) and ``storage`` (the row codec) all use the same parsers.
Deliberately not here: functions over values (``expr.functions``) and SQL typing rules
(``sql.types``).  Import its modules as ``from repr.x import y``, never ``import repr.x``,
which would shadow the builtin ``repr`` in the importing module.
"""
