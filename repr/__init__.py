"""repr: values and types, the leaf every other layer stands on (Materialize's ``mz_repr``).

Owns the representation of SQL values that are not plain Python values and their text I/O:
timestamps and frontiers, collection ids, dates, times and intervals (with infinities and
type modifiers), ``to_char`` templates, jsonb, arrays and lists, and the data error
``EvalError``.  Invariant: a leaf; it imports nothing of ours, so ``sql`` (literal parsing),
``expr`` (evaluation) and ``storage`` (the row codec) can all use the same parsers.
Deliberately not here: functions over values (``expr.functions``) and SQL typing rules
(``sql.types``).  Import its modules as ``from repr.x import y``, never ``import repr.x``,
which would shadow the builtin ``repr`` in the importing module.
"""
