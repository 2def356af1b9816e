"""Chapter 14 obligation of PyC's run guards: what each contract_reason says about the module
and the descriptors holds of them."""

from __future__ import annotations

import math

from ...spec.core.registry import Mutant
from ...spec.pyc.fingerprint import fingerprint
from ...spec.pyc.guard import (
    NOT_REACHED,
    RAN,
    REASONS,
    SKIPPED,
    elements,
    guard_domain,
    guard_edges,
    guard_op,
    input_reason,
    repeats_last,
    run_guards,
)
from ...spec.pyc.ir import DTYPE_BYTES, OpKind, module_from_wire
from ..core.obligation import Property, property_obligation


def _fits(op, t: dict) -> bool:
    """A descriptor fits an INPUT op: its dtype, its shape, and at least the op's bytes."""
    need = math.prod(op.shape) * DTYPE_BYTES[op.dtype]
    return t["dtype"] == op.dtype and tuple(t["shape"]) == op.shape and \
        0 < need <= t["size_bytes"]


def _reason_holds(args: dict) -> None:
    out = guard_op(args["module"], args["fingerprint"], args["inputs"], args["last"],
                   args["enforce"])
    reason = REASONS[out["reason"]]
    m = module_from_wire(args["module"])
    mismatch = args["enforce"] and fingerprint(m) != args["fingerprint"]
    assert (reason == "fingerprint_mismatch") == mismatch, out
    if mismatch:
        assert out["input_guard"] == NOT_REACHED, out
    assert out["guard_miss"] == int(reason != "ok") and out["contract_ok"] == (reason == "ok")
    if out["input_guard"] == SKIPPED:
        assert args["inputs"] == args["last"] and reason == "ok", out
    if out["input_guard"] != RAN:
        return
    wanted = [op for op in m.ops if op.kind == OpKind.INPUT]
    given = args["inputs"] or []
    fits = [_fits(op, t) for op, t in zip(wanted, given, strict=False)]
    if reason == "ok":
        assert args["inputs"] is not None and len(given) == len(wanted) and all(fits), out
    elif reason == "input_count_mismatch":
        assert len(given) != len(wanted) and all(fits), out
    elif reason != "input_unavailable":
        first = fits.index(False)
        op, t = wanted[first], given[first]
        check = {"input_dtype_mismatch": t["dtype"] != op.dtype,
                 "input_shape_mismatch": tuple(t["shape"]) != op.shape}
        assert check.get(reason, True), (reason, first)


@property_obligation(
    "PO14.205",
    "pyc.guard's reason is true of what it names: ok means one fitting descriptor (dtype, "
    "shape, enough bytes; a scalar holds one element) per INPUT op in order and no more; a "
    "count mismatch means every paired descriptor fits but the counts differ; a dtype or shape "
    "mismatch names the first descriptor that does not fit; a skipped guard means the "
    "descriptors are the last successful run's. Any failure is one guard miss.",
    covers=("pyc.guard",),
    subject=run_guards,
    mutants=(
        Mutant.edit("no size check", "a buffer smaller than the input passes",
                    input_reason, "required == 0 or t.size_bytes < required",
                    "required == 0"),
        Mutant.edit("extra inputs pass", "inputs past the last INPUT op are not counted",
                    input_reason, 'return "ok" if seen == len(inputs) else', 'return "ok" if '
                    'True else'),
        Mutant.edit("hash repeat", "the skip compares shape hashes (E14.6 always on)",
                    repeats_last, "if E14_6 in errata:", "if True:"),
        Mutant.edit("scalar has no element", "rank 0 counts no element (E14.7 always on)",
                    elements, "if not shape and E14_7 in errata:", "if not shape:"),
        Mutant.edit("guard after a mismatch", "a fingerprint mismatch still runs the input "
                    "guard", run_guards, 'reason = "fingerprint_mismatch"',
                    'reason, stage = "fingerprint_mismatch", RAN'),
    ),
)
def guard_reasons(_subject):
    return [Property("the edges and both errata's witnesses", _reason_holds, cases=guard_edges),
            Property("generated modules and descriptors", _reason_holds, strategy=guard_domain,
                     examples=400)]
