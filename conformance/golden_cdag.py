"""Golden cases of the cdag group and the CDAG sizes of facts §27 (chapter 18)."""

from __future__ import annotations

from ..spec.crucible.trace_entry import trace_op_from_wire, trace_op_to_wire
from ..spec.crucible.types import NONE32
from .golden_case import Case

BRANCH_80 = ("47414443" "07000000" "01" "00000000000000" "0e3bca515586b5e1" "0000000000000000"
             "01000000" "00000000" "0000" "0000" "02000000"
             "0300000000000000" "4e0e1961c62d8659" "0500000000000000" "1106856a5d848c81")
"""The serialized branch of facts §27: guard {SCALAR_VALUE, op 0}, arms 3 -> region(0x5555)
and 5 -> region(0x4444) -> TERMINAL, no continuation."""
BRANCH_80_ARGS = {"guard": {"kind": 1, "op_index": 0, "arg_index": 0, "dim_index": 0},
                  "arms": [{"value": 3, "target_merkle": "0x59862dc661190e4e"},
                           {"value": 5, "target_merkle": "0x818c845d6a850611"}]}
BRANCH_80_MERKLE = "0xe1b5865551ca3b0e"

REGION_KEYS = ("ops", "has_plan", "measured_ms_bits", "variant_id")


def encode_args(region: dict) -> dict:
    """A golden region as cdag.encode args (design §4b form: hashes computed)."""
    return {"region": {k: region[k] for k in REGION_KEYS}}


def loaded_op(op: dict) -> dict:
    """What a reader gives back for a golden op: data_ptr 0, every array with a zero count
    null and every null array with a count written as zeros or none ids."""
    t = trace_op_from_wire(op, "golden op")
    for side in (t.inputs, t.outputs):
        for m in side:
            m["data_ptr"] = 0
    t.scalar_args = (t.scalar_args or [0] * t.num_scalar_args)[:t.num_scalar_args] or None
    for name, n in (("input_trace_indices", len(t.inputs)), ("input_slot_ids", len(t.inputs)),
                    ("output_slot_ids", len(t.outputs))):
        setattr(t, name, (getattr(t, name) or [NONE32] * n) if n else None)
    return trace_op_to_wire(t)


def decoded_region(region: dict) -> dict:
    """The cdag.decode result a golden region's file gives (header hashes as stored)."""
    ops = region["ops"]
    return {"region": {"ops": [loaded_op(op) for op in ops], "has_plan": region["has_plan"],
                       "measured_ms_bits": region["measured_ms_bits"],
                       "variant_id": region["variant_id"],
                       "content_hash": region["content_hash"],
                       "merkle_hash": region["merkle_hash"],
                       "first_op_schema": f"0x{int(ops[0]['schema_hash'], 16):016x}"}}


def cases(g: dict) -> list[Case]:
    """The golden file's values for these ops, as wire cases."""
    out = []
    for r in g["cdag"]["regions"]:
        out.append(Case("cdag.encode", encode_args(r), {"hex": r["hex"]}, r["name"]))
        out.append(Case("cdag.decode", {"hex": r["hex"]}, decoded_region(r), r["name"]))
    out.append(Case("cdag.encode_branch", BRANCH_80_ARGS, {"hex": BRANCH_80},
                    "facts §27: the 80-byte branch"))
    out.append(Case("cdag.decode_branch", {"hex": BRANCH_80},
                    BRANCH_80_ARGS | {"next_merkle": "0x0000000000000000",
                                      "merkle_hash": BRANCH_80_MERKLE},
                    "facts §27: the 80-byte branch"))
    return out
