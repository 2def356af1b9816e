"""The error taxonomy shared by the spec, every implementation and the wire protocol (§4)."""

from __future__ import annotations

BAD_REQUEST = "bad_request"
UNKNOWN_OP = "unknown_op"
INVALID_INPUT = "invalid_input"
UNSUPPORTED = "unsupported"
INTERNAL = "internal"
# an input the spec answers with a result, beyond what this implementation can hold (memory,
# sizes): the conformance runner counts it apart, never as a pass
RESOURCE_LIMIT = "resource_limit"

ERROR_CODES = (BAD_REQUEST, UNKNOWN_OP, INVALID_INPUT, UNSUPPORTED, INTERNAL, RESOURCE_LIMIT)


class SpecError(Exception):
    """A request the spec answers with an error code instead of a result."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class BadRequest(SpecError):
    """The request is malformed: not JSON, a missing or unknown field, a value of the wrong type."""

    def __init__(self, message: str):
        super().__init__(BAD_REQUEST, message)


class InvalidInput(SpecError):
    """The request is well formed but outside the op's domain: the spec rejects it."""

    def __init__(self, message: str):
        super().__init__(INVALID_INPUT, message)


def at_offset(offset: int, what: str, problem: str) -> InvalidInput:
    """A byte format's rejection, naming the offset and the field that lies there."""
    return InvalidInput(f"offset {offset} ({what}): {problem}")
