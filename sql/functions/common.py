"""What the families of ``sql.functions`` build with: signatures, resolutions, operator names.

Owns ``Sig`` (one signature: parameter types, result type, func id), the two results of
resolution, ``Resolution`` (a function or operator: the func id, the type each argument must
be cast to first, the result type) and ``AggResolution`` (an aggregate), the operator-name
tables several families use (``CMP``: ``=`` -> ``eq`` ...; ``ARITH``: ``+`` -> ``add`` ...)
and the errors of a failed resolution (``no_function``, ``no_operator``: 42883 with
PostgreSQL's hint).
Invariant: imports no family and not the assembler (``sql.functions``), so the families form
no import circle; a ``Resolution``'s func id is a key of ``expr.functions.FUNCTIONS``.
Deliberately not here: any family's signatures and the resolution algorithm
(``sql.functions``).
"""
from __future__ import annotations

from dataclasses import dataclass

from sql.errors import ProgrammingError
from sql.types import display_name

__all__ = ["Sig", "Resolution", "AggResolution", "CMP", "ARITH", "err", "type_list", "no_function", "no_operator",
           "sigs"]


@dataclass(frozen=True)
class Sig:
    params: tuple[str, ...]
    ret: str
    func_id: str


@dataclass(frozen=True)
class Resolution:
    func_id: str
    #: the type each argument must be converted to (equal to the input type when none is needed)
    arg_types: tuple[str, ...]
    return_type: str


@dataclass(frozen=True)
class AggResolution:
    #: one of the names in ``expr.relation.AggregateExpr``'s docstring
    func: str
    #: the type the argument must be converted to before aggregation
    input_type: str
    output_type: str


#: comparison operator -> the func id of its generic implementation (``expr.functions.generic``)
CMP = {"=": "eq", "<>": "neq", "!=": "neq", "<": "lt", "<=": "lte", ">": "gt", ">=": "gte"}
#: arithmetic operator -> the func id prefix of its per-type implementations (``add_int4``)
ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod"}

FUNCTION_HINT = "No function matches the given name and argument types. You might need to add explicit type casts."
OPERATOR_HINT = "No operator matches the given name and argument types. You might need to add explicit type casts."


def err(msg: str, code: str, hint: str | None = None) -> ProgrammingError:
    return ProgrammingError(msg, sqlstate=code, hint=hint)


def type_list(types) -> str:
    return ", ".join(display_name(t) for t in types)


def no_function(name: str, args) -> ProgrammingError:
    return err(f"function {name}({type_list(args)}) does not exist", "42883", FUNCTION_HINT)


def no_operator(op: str, left: str, right: str) -> ProgrammingError:
    return err(f"operator does not exist: {display_name(left)} {op} {display_name(right)}", "42883", OPERATOR_HINT)


def sigs(*entries) -> dict[str, tuple[Sig, ...]]:
    """A signature table from ``(name, params, ret, func_id)`` entries, in order."""
    out: dict[str, list[Sig]] = {}
    for name, params, ret, fid in entries:
        out.setdefault(name, []).append(Sig(tuple(params), ret, fid))
    return {k: tuple(v) for k, v in out.items()}
