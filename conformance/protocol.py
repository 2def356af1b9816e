"""The wire protocol's envelopes as JSON Schema (draft 2020-12), the part of the contract that
is the same for every op (design §4): a request, one args object or a batch of them; a
response, a result, an error or a batch's results; a batch item's answer; and the hello
result, with the protocol version. `crucible-spec ops --schemas` writes it to
conformance/schemas/protocol.json beside the ops' own schemas (contract.py)."""

from __future__ import annotations

from .. import PROTOCOL_VERSION
from ..spec.core.errors import ERROR_CODES
from ..spec.core.json_schema import DIALECT

PROTOCOL_FILE = "protocol.json"


def _ref(name: str) -> dict:
    return {"$ref": f"#/$defs/{name}"}


def _object(required: dict, optional: dict | None = None, closed: bool = True) -> dict:
    """A JSON object with these required (and optional) properties; `closed`: no others."""
    return {"type": "object", "required": list(required),
            "properties": required | (optional or {}),
            **({"additionalProperties": False} if closed else {})}


def _requests() -> dict:
    """The two forms of a request."""
    head = {"id": _ref("id"), "op": {"type": "string", "description": "the op's wire name"}}
    return {
        "request": {"description": "one request line", "oneOf": [_ref("single_request"),
                                                                  _ref("batch_request")]},
        "single_request": _object(head | {"args": {
            "type": "object", "description": "the op's args (conformance/schemas/<op>.json)"}},
            closed=False) | {"not": {"required": ["batch"]}},
        "batch_request": _object(head | {"batch": {
            "type": "array", "items": {"type": "object"},
            "description": "args objects, each answered as the request {id, op, args: item} "
                           "alone; only to an implementation whose hello declares batch"}},
            closed=False) | {"not": {"required": ["args"]}},
    }


def _responses() -> dict:
    """The answers: one request's, a batch's, and a batch item's."""
    rid = {"id": {"oneOf": [_ref("id"), {"type": "null"}],
                  "description": "the request's id; null where it had none that is valid"}}
    return {
        "response": {"description": "one response line", "oneOf": [
            _object(rid | {"ok": {"const": True}, "result": {"type": "object"}}),
            _object(rid | {"ok": {"const": False}, "error": _ref("error")}),
            _ref("batch_response")]},
        "batch_response": _object(rid | {"ok": {"const": True}, "results": {
            "type": "array", "items": _ref("answer"),
            "description": "one answer per item of the batch, in order"}}),
        "answer": {"description": "a batch item's answer: exactly the item's response alone, "
                                  "without its id", "oneOf": [
                       _object({"ok": {"const": True}, "result": {"type": "object"}}),
                       _object({"ok": {"const": False}, "error": _ref("error")})]},
        "error": _object({"code": {"enum": list(ERROR_CODES)}, "message": {"type": "string"}}),
    }


def _hello() -> dict:
    """The result of `hello`."""
    text = {"type": "string"}
    return {"hello_result": _object(
        {"impl": text, "profile": text, "spec_version": text,
         "protocol_version": {"const": PROTOCOL_VERSION},
         "ops": {"type": "array", "items": text}, "device": text},
        {"fallbacks": {"type": "object", "additionalProperties": text,
                       "description": "op -> why it is answered from the reference"},
         "batch": {"const": True, "description": "the implementation takes batch requests"}},
        closed=False)}


def protocol_schema() -> dict:
    """The protocol's JSON Schema: its envelopes under $defs."""
    return {"$schema": DIALECT,
            "title": f"crucible-spec wire protocol, version {PROTOCOL_VERSION}",
            "description": "One JSON request per line on stdin, exactly one JSON response "
                           "line per request on stdout, in order. Version 2 adds the batch "
                           "form, which an implementation declares with hello's "
                           "\"batch\": true.",
            "$defs": {"id": {"type": ["integer", "string"]}, **_requests(), **_responses(),
                      **_hello()}}
