"""Chapters 6-8 obligations pinning values the other obligations leave free: the scratch slot
sizing of build_trace (MIN_SCRATCH_SLOT_CAP 8192, cap floor 256), the u8 destination port of
an ALIAS edge, how a loaded trace's arrays become recorded ops, the detector's clamp of an
iteration length, and how many scalars the content hash requires.

Every expected value is worked out by hand from the formulas of the facts, never by the
function under test.
"""

from __future__ import annotations

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.crucible.build_trace import RecordedOp, build_trace, slot_cap, slot_cap_max, slot_caps
from ...spec.crucible.content_hash import check_op_for_hash
from ...spec.crucible.crtrace import LoadedTrace
from ...spec.crucible.iteration_detector import Detector, K, check
from ...spec.crucible.pipeline import recorded_of
from ...spec.crucible.trace_entry import TraceOp
from ...spec.crucible.trace_graph import EdgeKind
from ..core.obligation import Property, property_obligation

NONE32 = 0xFFFFFFFF

SLOT_CAPS = (
    ((0, 0, 0), (256, 8192)),
    ((3, 4, 0), (256, 8192)),
    ((200, 57, 0), (257, 8192)),
    ((5000, 5000, 0), (8192, 8192)),
    ((0, 8000, 0), (8000, 9024)),
    ((100, 8000, 0), (8100, 9024)),
    ((2, 2, 10000), (256, 10000)),
    ((9000, 9000, 8192), (10024, 10024)),
)
"""((inputs, outputs, previous), (cap, buffer)): buffer = max(previous, 8192, outputs + 1024),
cap = min(buffer, max(256, inputs + outputs))."""


def _slot_caps_case(case: tuple[tuple[int, int, int], tuple[int, int]]) -> None:
    (inputs, outputs, previous), want = case
    assert slot_caps(inputs, outputs, previous) == want, (case, slot_caps(*case[0]))
    ops = [RecordedOp(1, num_inputs=inputs, num_outputs=outputs)]
    assert slot_cap(ops, previous) == want[0], (case, slot_cap(ops, previous))
    assert slot_cap_max(ops, previous) == want[1], (case, slot_cap_max(ops, previous))


@property_obligation(
    "PO6.130",
    "The scratch slot buffer after an op list with O outputs is max(previous, 8192, O + 1024) "
    "and the slot cap (E6.5) is min(buffer, max(256, I + O)): slot_caps, slot_cap and "
    "slot_cap_max on hand-computed cases.",
    covers=("trace.build", "pipeline.run"),
    subject=slot_caps,
    mutants=(Mutant.edit("cap floor 257", "the cap's floor is one more than 256", slot_caps,
                         "max(256, inputs + outputs)", "max(257, inputs + outputs)"),
             Mutant.edit("minimum buffer 8194", "MIN_SCRATCH_SLOT_CAP is not 8192", slot_caps,
                         "MIN_SCRATCH_SLOT_CAP", "8194"),
             Mutant.edit("cap is the buffer", "slot_cap returns the buffer size, not the cap",
                         slot_cap, "previous)[0]", "previous)[1]")),
)
def scratch_slot_sizing(_subject):
    return [Property("(inputs, outputs, previous) -> (cap, buffer)", _slot_caps_case,
                     cases=lambda: SLOT_CAPS)]


def _meta(ptr: int) -> dict:
    """A 4-element f32 vector at `ptr` (ptr 0: no storage)."""
    return {"sizes": [4] + [0] * 7, "strides": [1] + [0] * 7, "data_ptr": ptr, "ndim": 1,
            "dtype": 6, "device_type": 0, "device_idx": -1, "layout": 0,
            "requires_grad": False, "flags": 0, "output_nr": 0, "storage_offset": 0,
            "version": 0, "storage_nbytes": 16, "grad_fn_hash": 0}


def _ports(case: tuple[int, int, int]) -> None:
    """Op 0 writes storage 0x1000 from its last of n0 outputs, op 1 rewrites it from its last
    of n1 outputs, op 2 reads it as its last of n2 inputs: one ALIAS edge (0, 1) and one
    DATA_FLOW edge (1, 2), every port the index truncated to u8."""
    n0, n1, n2 = case
    ops = [RecordedOp(0x11, num_outputs=n0, metas=[_meta(0)] * (n0 - 1) + [_meta(0x1000)]),
           RecordedOp(0x22, num_outputs=n1, metas=[_meta(0)] * (n1 - 1) + [_meta(0x1000)]),
           RecordedOp(0x33, num_inputs=n2, metas=[_meta(0)] * (n2 - 1) + [_meta(0x1000)])]
    got = sorted((e.kind, e.src, e.dst, e.src_port, e.dst_port) for e in build_trace(ops).edges)
    want = sorted([(EdgeKind.ALIAS, 0, 1, (n0 - 1) % 256, (n1 - 1) % 256),
                   (EdgeKind.DATA_FLOW, 1, 2, (n1 - 1) % 256, (n2 - 1) % 256)])
    assert got == want, (case, got)


@property_obligation(
    "PO6.131",
    "Edge ports are the tensor index truncated to u8 (num_inputs and num_outputs are u16, the "
    "ports u8): when outputs or inputs 256 and 300 write, rewrite and read one storage, the "
    "ALIAS and DATA_FLOW edges carry ports 0 and 44.",
    covers=("trace.build",),
    subject=build_trace,
    mutants=(Mutant.edit("alias port unmasked", "the ALIAS edge keeps the full output index",
                         build_trace, "Edge(old[0], i, old[1], j & 0xFF, EdgeKind.ALIAS)",
                         "Edge(old[0], i, old[1], j, EdgeKind.ALIAS)"),
             Mutant.edit("data-flow port unmasked", "the DATA_FLOW edge keeps the full input "
                         "index", build_trace, "e.port, j & 0xFF, EdgeKind.DATA_FLOW",
                         "e.port, j, EdgeKind.DATA_FLOW"),
             Mutant.edit("source port unmasked", "a new storage's port keeps the full output "
                         "index", build_trace, "_PtrEntry(i, j & 0xFF, 0)", "_PtrEntry(i, j, 0)"),
             Mutant.edit("rewrite port unmasked", "a rewritten storage's port keeps the full "
                         "output index", build_trace, "e.op, e.port = i, j & 0xFF",
                         "e.op, e.port = i, j")),
)
def ports_are_bytes(_subject):
    return [Property("(outputs of op 0, outputs of op 1, inputs of op 2)", _ports,
                     cases=lambda: ((1, 2, 1), (257, 1, 1), (1, 257, 1), (1, 1, 257),
                                    (301, 257, 301)))]


def _loaded() -> LoadedTrace:
    """Two ops: op 0 with 1 input and 2 outputs (metas 0..2) and 7 scalars, op 1 without
    metas; every field distinct."""
    metas = [_meta(0x100), _meta(0x200), _meta(0x300)]
    entries = [
        {"schema_hash": 0xA1, "shape_hash": 0xB1, "num_inputs": 1, "num_outputs": 2,
         "num_scalar_args": 7, "scalar_values": [1, 2, 3, 4, 5, 6, 7, 8], "grad_enabled": True,
         "op_flags": 0x5},
        {"schema_hash": 0xA2, "shape_hash": 0xB2, "num_inputs": 0, "num_outputs": 0,
         "num_scalar_args": 2, "scalar_values": [9, 10, 11, 12, 13, 14, 15, 16],
         "grad_enabled": False, "op_flags": 0},
    ]
    return LoadedTrace(entries, [0, NONE32], [0xC1, 0xC2], [0xD1, 0xD2], metas)


def _recorded_fields(_case: None) -> None:
    t = _loaded()
    got = recorded_of(t)
    assert got[0] == RecordedOp(0xA1, 0xB1, 1, 2, [1, 2, 3, 4, 5], True, 0x5, t.metas, 0xC1,
                                0xD1), got[0]
    assert got[1] == RecordedOp(0xA2, 0xB2, 0, 0, [9, 10], False, 0, None, 0xC2, 0xD2), got[1]


def _recorded_bounds(case: int) -> None:
    """Op 0's three metas start at `case` in a log of 3 metas: only start 0 fits."""
    t = _loaded()
    t.meta_starts[0] = case
    try:
        recorded_of(t)
    except InvalidInput:
        assert case > 0, case
        return
    assert case == 0, case


@property_obligation(
    "PO6.132",
    "recorded_of maps a loaded trace's entry i to RecordedOp(schema, shape, num_inputs, "
    "num_outputs, the first min(num_scalar_args, 5) scalar values, grad_enabled, op_flags, the "
    "num_inputs + num_outputs metas from its meta start (None without one), scope hash, "
    "callsite hash), and rejects a meta start whose metas run past the log.",
    covers=("pipeline.run",),
    subject=recorded_of,
    mutants=(Mutant.edit("schema and shape swapped", "the two hashes are exchanged",
                         recorded_of, 'e["schema_hash"], e["shape_hash"]',
                         'e["shape_hash"], e["schema_hash"]'),
             Mutant.edit("metas and scope swapped", "the metas and the scope hash exchange "
                         "places", recorded_of, "metas,\n            trace.scope_hashes[i]",
                         "trace.scope_hashes[i],\n            metas"),
             Mutant.edit("exact fit rejected", "metas ending exactly at the log's end are "
                         "rejected", recorded_of, "if len(metas) < n:", "if len(metas) <= n:")),
)
def recorded_ops_of_a_trace(_subject):
    return [Property("a two-op trace", _recorded_fields, cases=lambda: (None,)),
            Property("op 0's meta start", _recorded_bounds, cases=lambda: (0, 1, 2, 3))]


def _clamped_length(case: int) -> None:
    """A confirmed detector one hash from a full match, with ops_since_boundary = `case`
    before the increment: last_completed_len = max(ops - K, 0) after it (u32 wrap)."""
    sig = [0x10 + k for k in range(K)]
    d = Detector(signature=list(sig), signature_len=K, expected_hash=sig[K - 1],
                 match_pos=K - 1, confirmed=True, ops_since_boundary=case)
    assert check(d, sig[K - 1]) is True
    ops = (case + 1) & 0xFFFFFFFF
    assert d.last_completed_len == max(ops - K, 0), (case, d.last_completed_len)
    assert d.ops_since_boundary == K and d.boundaries_detected == 1


@property_obligation(
    "PO7.130",
    "At a boundary the detector sets last_completed_len = max(ops_since_boundary - K, 0), "
    "clamped at 0 when the u32 op counter has wrapped below K, and resets the counter to K.",
    covers=("detector.run",),
    subject=check,
    mutants=(Mutant.edit("clamp at 1", "the length is clamped at 1, not 0", check,
                         "max(d.ops_since_boundary - K, 0)", "max(d.ops_since_boundary - K, 1)"),),
)
def detector_length_clamp(_subject):
    return [Property("ops_since_boundary before the boundary's op", _clamped_length,
                     cases=lambda: (2 * K - 1, 100, 0xFFFFFFFF, 0, 1, K - 2, K - 1))]


def _scalar_demand(case: tuple[int, int, bool]) -> None:
    """(scalars given, num_scalar_args, accepted): the hash reads min(num_scalar_args, 5)."""
    given, declared, accepted = case
    op = TraceOp(0x1, scalar_args=list(range(1, given + 1)), num_scalar_args=declared)
    try:
        check_op_for_hash(op, "op")
    except InvalidInput:
        assert not accepted, case
        return
    assert accepted, case


@property_obligation(
    "PO8.130",
    "check_op_for_hash asks for min(num_scalar_args, 5) scalars: 5 given suffice for any "
    "num_scalar_args, fewer than min(num_scalar_args, 5) are rejected.",
    covers=("dag.content_hash",),
    subject=check_op_for_hash,
    mutants=(Mutant.edit("six scalars demanded", "the check asks for up to 6 scalars",
                         check_op_for_hash, "min(op.num_scalar_args, 5)",
                         "min(op.num_scalar_args, 6)"),),
)
def scalars_the_hash_reads(_subject):
    return [Property("(given, num_scalar_args, accepted)", _scalar_demand,
                     cases=lambda: ((5, 6, True), (5, 255, True), (4, 6, False),
                                    (4, 4, True), (3, 4, False), (5, 5, True)))]

