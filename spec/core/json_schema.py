"""The machine-readable contract (design §4): each op's args and result as JSON Schema
(draft 2020-12), generated from the registry's wire types, and the check of a request's args
against it before anything decodes them.

A request that breaks the schema is `bad_request` (wrong JSON type, missing or unknown field,
malformed hex), or `invalid_input` where it is well formed but out of range (an integer past
its width, an unknown ordinal, a list over its limit); the message names the field path.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from .errors import BadRequest, InvalidInput, SpecError
from .registry import REGISTRY, Op
from .schema import Json, json_kind, shown

DIALECT = "https://json-schema.org/draft/2020-12/schema"
OUT_OF_RANGE = frozenset({"minimum", "maximum", "maxItems", "maxLength"})
"""Keywords whose failure means a well-formed value the spec rejects (`invalid_input`)."""


def arg_schema(op: Op) -> dict:
    """The JSON Schema of the op's `args` object."""
    rules = {"allOf": [op.arg_rules()]} if op.arg_rules else {}
    return {"$schema": DIALECT, "title": f"{op.name} args", **op.args.json_schema(), **rules}


def result_schema(op: Op) -> dict:
    """The JSON Schema of the op's `result` object."""
    return {"$schema": DIALECT, "title": f"{op.name} result", **op.result.json_schema(True)}


def op_schemas(op: Op) -> dict:
    """Everything a third party needs to call the op: name, chapter, summary, both schemas."""
    return {"op": op.name, "chapter": op.chapter, "summary": op.summary,
            "args": arg_schema(op), "result": result_schema(op)}


def all_schemas() -> list[dict]:
    """`op_schemas` of every registered op, in name order."""
    return [op_schemas(REGISTRY.ops[name]) for name in sorted(REGISTRY.ops)]


@cache
def _validator(name: str, result: bool) -> Draft202012Validator:
    op = REGISTRY.ops[name]
    return Draft202012Validator(result_schema(op) if result else arg_schema(op))


@cache
def _acceptor(name: str) -> jsonschema_rs.Draft202012Validator:
    return jsonschema_rs.Draft202012Validator(arg_schema(REGISTRY.ops[name]))


@cache
def _list_acceptor(name: str) -> jsonschema_rs.Draft202012Validator:
    """The compiled validator of a list of the op's args objects."""
    args = {k: v for k, v in arg_schema(REGISTRY.ops[name]).items() if k != "$schema"}
    return jsonschema_rs.Draft202012Validator({"type": "array", "items": args})


def all_valid(op: Op, items: list) -> bool:
    """True when every item meets the op's arg schema (one compiled check of the whole list,
    so `check_args` passes each); False when one may not, and `check_args` of each says."""
    try:
        return _list_acceptor(op.name).is_valid(items)
    except ValueError:
        return False


def check_args(op: Op, json_args: Any) -> None:
    """Raise the §4 error for the first way `json_args` breaks the op's arg schema. Inside a
    value the op decodes itself (a `Json` field: a DAG, trace ops, steps) every problem is
    `invalid_input`, as that decoder has always answered.

    A compiled validator accepts valid args in about a microsecond; anything it does not
    accept (or cannot read, such as a lone surrogate) goes to `jsonschema`, whose verdict and
    first error are the ones answered."""
    try:
        if _acceptor(op.name).is_valid(json_args):
            return
    except ValueError:
        pass
    error = best_match(_validator(op.name, False).iter_errors(json_args))
    if error is None:
        return
    own = {n for n, f in op.args.fields.items() if isinstance(f.type, Json)}
    if error.absolute_path and error.absolute_path[0] in own:
        raise InvalidInput(as_spec_error(error, "args").message)
    raise as_spec_error(error, "args")


def result_errors(op: Op, json_result: Any) -> list[str]:
    """Every way a result breaks the op's result schema, as 'path: problem' lines."""
    return [as_spec_error(e, "result").message
            for e in _validator(op.name, True).iter_errors(json_result)]


def as_spec_error(error: ValidationError, root: str) -> SpecError:
    """The error code and a message naming the field path of one schema failure."""
    path = root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}"
                          for p in error.absolute_path)
    keyword, allowed = error.validator, error.validator_value
    if keyword in ("minimum", "maximum") and isinstance(error.instance, float):
        # JSON Schema counts 1.0 as an integer, the decoders do not: a number, not a range
        return BadRequest(f"{path}: expected an integer, got a number")
    message = f"{path}: {_problem(error)}"
    ordinal = keyword == "enum" and all(type(v) is int for v in allowed)
    return InvalidInput(message) if keyword in OUT_OF_RANGE or ordinal else BadRequest(message)


def _problem(error: ValidationError) -> str:
    keyword, allowed, value = error.validator, error.validator_value, error.instance
    expected = error.schema.get("description") if isinstance(error.schema, dict) else None
    if keyword == "type":
        want = " or ".join([allowed] if isinstance(allowed, str) else allowed)
        return f"expected {want}, got {json_kind(value)}"
    if keyword == "required":
        return f"missing field {next(n for n in allowed if n not in value)!r}"
    if keyword == "additionalProperties":
        return f"unknown field {sorted(set(value) - set(error.schema['properties']))[0]!r}"
    if keyword in ("minimum", "maximum"):
        return f"{shown(value)} is {'below' if keyword == 'minimum' else 'above'} {allowed}"
    if keyword in ("maxItems", "minItems", "items"):
        limit = len(error.schema["prefixItems"]) if keyword == "items" else allowed
        bound = "at least" if keyword == "minItems" else "at most"
        return f"expected {bound} {limit} items, got {len(value)}"
    if keyword == "maxLength":
        return f"expected at most {allowed} characters, got {len(value)}"
    if keyword in ("enum", "const"):
        options = allowed if keyword == "enum" else [allowed]
        listed = ", ".join(map(repr, options[:12])) + (", ..." if len(options) > 12 else "")
        return f"{_brief(value)} is not one of {listed}"
    if keyword == "pattern":
        return f"expected {expected or 'a match of ' + allowed}, got {_brief(value)}"
    return f"{_brief(value)} does not satisfy {keyword!r}"


def _brief(value: Any) -> str:
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else f"a string of {len(value)} characters"
    if isinstance(value, int) and not isinstance(value, bool):
        return shown(value)
    return json_kind(value)
