"""CREATE/ALTER/DROP SECRET, CREATE/DROP/VALIDATE CONNECTION -> plans.

Owns evaluating a secret's value (a constant ``text`` or ``bytea`` expression, as
Materialize's ``AS 'value'`` or ``AS decode('...', 'base64')``), the connection types and
options mzlite accepts (``TO POSTGRES`` with ``HOST``, ``PORT``, ``USER``, ``PASSWORD
SECRET``, ``DATABASE``, ``SSL MODE``), the refusal of every other connection type and option
by name (0A000), and resolving the secrets a connection names (its dependencies).
Invariant: a secret's value appears only in its plan's ``value``, never in a plan's
``create_sql`` (the catalog keeps ``CREATE SECRET name AS '********'``).  Deliberately not
here: where secret values are kept (``mzlite.connections``), connecting anywhere.
"""
from __future__ import annotations

from expr.compile import compile_scalar
from planner import plans as P
from planner.bind_expr import ExprContext, Scope
from planner.bind_drop import drop_items
from planner.bind_query import UNIT
from repr.errors import EvalError
from sql import errors
from sql import mzconnections as mz

#: the catalog's text of a CREATE SECRET: the value is never kept in it
REDACTED = "'********'"
#: TO POSTGRES options and the Python type each value must have
_PG_OPTIONS = {"HOST": str, "PORT": int, "USER": str, "PASSWORD": mz.SecretRef, "DATABASE": str, "SSL MODE": str}
_SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")


def _quote(name: str) -> str:
    import re
    return name if re.fullmatch(r"[a-z_][a-z0-9_$]*", name) else '"' + name.replace('"', '""') + '"'


def _secret_value(b, node, loc) -> bytes:
    ctx = ExprContext(b, UNIT, [], Scope([]), clause="CREATE SECRET")
    e = ctx.bind(node)
    if ctx.rel is not UNIT:
        raise b.error(errors.FEATURE_NOT_SUPPORTED, "a secret's value cannot contain a subquery", loc)
    t = ctx.typeof(e)
    if t == "unknown":
        e = ctx.coerce(e, "text", "implicit", loc)
        t = "text"
    if t not in ("text", "bytea"):
        raise b.error(errors.DATATYPE_MISMATCH, f"a secret's value must be text or bytea, not {t}", loc)
    try:
        value = compile_scalar(e)(())
    except EvalError as ex:
        raise b.error(ex.sqlstate, ex.message, loc) from None
    if value is None:
        raise b.error(errors.INVALID_PARAMETER_VALUE, "a secret's value cannot be NULL", loc)
    return value.encode() if isinstance(value, str) else bytes(value)


def create_secret(b, stmt, node: mz.CreateSecret):
    name = b.catalog.key_for(node.name, b.pos(node.location))
    if b.catalog.try_resolve(name) is not None and not node.if_not_exists:
        raise b.error(errors.DUPLICATE_OBJECT, f"catalog item '{name}' already exists", node.location)
    value = _secret_value(b, node.value, node.value_location)
    create_sql = f"CREATE SECRET {'.'.join(_quote(p) for p in node.name)} AS {REDACTED}"
    return P.CreateSecretPlan(name, value, node.if_not_exists, create_sql)


def alter_secret(b, stmt, node: mz.AlterSecret):
    item = b.catalog.try_resolve(node.name)
    if item is None:
        if node.if_exists:
            return P.AlterSecretPlan(None, b"", ".".join(node.name))
        raise b.error(errors.UNDEFINED_OBJECT, f"unknown catalog item '{'.'.join(node.name)}'", node.location)
    if item.kind != "secret":
        raise b.error(errors.WRONG_OBJECT_TYPE, f'"{item.name}" is a {item.kind_word()} not a secret', node.location)
    return P.AlterSecretPlan(item.id, _secret_value(b, node.value, node.value_location), item.name)


def create_connection(b, stmt, node: mz.CreateConnection):
    loc = node.type_location
    if node.type != "POSTGRES":
        raise b.error(errors.FEATURE_NOT_SUPPORTED, f"CREATE CONNECTION ... TO {node.type} is not supported (mzlite "
                      f"has PostgreSQL connections only)", loc)
    name = b.catalog.key_for(node.name, b.pos(node.location))
    if b.catalog.try_resolve(name) is not None and not node.if_not_exists:
        raise b.error(errors.DUPLICATE_OBJECT, f"catalog item '{name}' already exists", node.location)
    options, depends = [], set()
    seen = set()
    for opt, value in node.options:
        want = _PG_OPTIONS.get(opt)
        if want is None:
            raise b.error(errors.FEATURE_NOT_SUPPORTED, f"POSTGRES connection option {opt} is not supported (mzlite "
                          f"accepts {', '.join(_PG_OPTIONS)})", loc)
        if opt in seen:
            raise b.error(errors.SYNTAX_ERROR, f"{opt} specified more than once", loc)
        seen.add(opt)
        if not isinstance(value, want) or isinstance(value, bool):
            form = "SECRET name" if want is mz.SecretRef else ("an integer" if want is int else "a string")
            raise b.error(errors.INVALID_PARAMETER_VALUE, f"{opt} must be {form}", loc)
        if isinstance(value, mz.SecretRef):
            secret = b.catalog.resolve(value.name, position=b.pos(loc))
            if secret.kind != "secret":
                raise b.error(errors.WRONG_OBJECT_TYPE, f'"{secret.name}" is not a secret', loc)
            depends.add(secret.id)
            value = secret.id
        if opt == "SSL MODE" and value.lower() not in _SSL_MODES:
            raise b.error(errors.INVALID_PARAMETER_VALUE, f"invalid SSL MODE '{value}' (one of {', '.join(_SSL_MODES)})",
                          loc)
        if opt == "PORT" and not 0 < value < 65536:
            raise b.error(errors.INVALID_PARAMETER_VALUE, f"invalid PORT {value}", loc)
        options.append((opt, value))
    if "HOST" not in seen:
        raise b.error(errors.INVALID_PARAMETER_VALUE, "a POSTGRES connection needs HOST", loc)
    if "USER" not in seen:
        raise b.error(errors.INVALID_PARAMETER_VALUE, "a POSTGRES connection needs USER", loc)
    validate = True  # as Materialize: a connection is checked as it is created unless told otherwise
    for opt, value in node.with_options:
        if opt != "VALIDATE" or not isinstance(value, bool):
            raise b.error(errors.FEATURE_NOT_SUPPORTED, f"CREATE CONNECTION ... WITH ({opt}) is not supported", loc)
        validate = value
    return P.CreateConnectionPlan(name, "postgres", tuple(options), frozenset(depends), node.if_not_exists,
                                  stmt.text, validate)


def validate_connection(b, stmt, node: mz.ValidateConnection):
    item = b.catalog.resolve(node.name, position=b.pos(node.location))
    if item.kind != "connection":
        raise b.error(errors.WRONG_OBJECT_TYPE, f'"{item.name}" is not a connection', node.location)
    return P.ValidateConnectionPlan(item.id)


def drop_objects(b, stmt, node: mz.DropObjects):
    return drop_items(b, stmt, node, node.kind, errors.UNDEFINED_OBJECT)
