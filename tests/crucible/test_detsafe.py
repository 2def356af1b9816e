"""DetSafe: replaying a recorded program in its planned pool gives the recorded bytes, twice.

Expected values are numpy's own float32 arithmetic on fixed inputs (add, relu and a 2x2 matrix
product of exactly representable values are exact), never the spec's kernels."""

from __future__ import annotations

import numpy as np

from crucible_spec.spec.crucible.detsafe import (
    Program,
    ProgramOp,
    activate,
    compile_region,
    det_safe,
    record,
    replay,
    replay_pass,
)
from crucible_spec.spec.crucible.replay_region import ReplayPlan, ReplaySlot

A = np.array([[1.0, -2.0], [3.5, 0.25]], dtype=np.float32)
B = np.array([[0.5, 4.0], [-1.0, 2.0]], dtype=np.float32)
CHAIN = (ProgramOp("add", (0, 1)), ProgramOp("relu", (2,)), ProgramOp("mm", (3, 0)),
         ProgramOp("sub", (4, 3)), ProgramOp("mul", (5, 1)))


def chain() -> Program:
    return Program(2, (A.tobytes(), B.tobytes()), CHAIN)


def expected_chain() -> list[bytes]:
    s = A + B
    r = np.maximum(s, np.float32(0))
    m = r @ A
    d = m - r
    return [t.astype(np.float32).tobytes() for t in (s, r, m, d, d * B)]


def test_replay_twice_gives_numpy_bytes_in_a_reused_pool():
    recorded, passes = replay(chain(), b"\xde\xad\xbe\xef")
    assert recorded == expected_chain()
    assert passes == [expected_chain(), expected_chain()]
    region = compile_region(record(chain())[1])
    internal = [s for s in region.plan.slots if not s.is_external]
    assert len(internal) == 5 and region.plan.pool_bytes < 5 * 256  # slots share the pool


def test_a_plan_that_overlaps_two_live_slots_breaks_detsafe():
    """A planted plan bug: the relu output (read by mm and by sub) placed over the sum's
    slot, which the next op overwrites; the replay then departs from the recording."""
    recorded, ops = record(chain())
    region = compile_region(ops)
    slots = list(region.plan.slots)
    relu_sid = region.ops[1].output_slot_ids[0]
    mm_sid = region.ops[2].output_slot_ids[0]
    slots[mm_sid] = ReplaySlot(slots[relu_sid].offset_bytes, slots[mm_sid].nbytes, False)
    region.plan = ReplayPlan(region.plan.pool_bytes, slots)
    pool = bytearray(region.plan.pool_bytes)
    got = replay_pass(activate(region), pool, chain(), ops)
    assert got is not None and got[:3] == recorded[:3] and got[3:] != recorded[3:]


def test_every_op_of_a_long_program_matches_in_both_passes():
    rng = np.random.default_rng(7)
    inputs = tuple(rng.standard_normal((3, 3)).astype(np.float32).tobytes() for _ in range(3))
    ops = tuple(ProgramOp(k, o) for k, o in (
        ("mm", (0, 1)), ("softmax", (3,)), ("transpose_2d", (4,)), ("add", (5, 2)),
        ("sigmoid", (6,)), ("mul", (7, 3)), ("relu", (8,)), ("sub", (9, 0))))
    p = Program(3, inputs, ops)
    assert det_safe(p, b"\x7f\xc0\x00\x01")
    recorded, passes = replay(p, b"\x00")
    t = np.frombuffer(recorded[2], np.float32).reshape(3, 3)
    s = np.frombuffer(recorded[1], np.float32).reshape(3, 3)
    assert np.array_equal(t, s.T)  # transpose is a copy of bits
    assert all(out == recorded for out in passes)
