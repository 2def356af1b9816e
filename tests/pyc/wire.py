"""What the new PyC run-time tests share: one request answered as serve answers it, and a
float64 as the wire's bit pattern."""

from __future__ import annotations

import json
import struct

from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata

SEED = "pyc@fdf1563"


def ask(op: str, args: dict, profile: str = "crucible", impl: str = "reference") -> dict:
    """The result of one request, or its error."""
    out = answer(json.dumps({"id": 1, "op": op, "args": args}),
                 Implementation(impl, profile_errata(profile)), profile)
    return out["result"] if out["ok"] else out["error"]


def f64_hex(x: float) -> str:
    """A float64 as its bit pattern in hex, as the wire writes F64 fields."""
    return "0x" + struct.pack(">d", x).hex()
