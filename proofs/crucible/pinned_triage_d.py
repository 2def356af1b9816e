"""Small edges pinned by hand-worked cases: a z3 value's own width in `sub`, a TensorSlot's
field values, the pipeline's empty windows and MetaLog overflow, the pool's end in the plan
check, the SPSC checker's reports of an overwrite and of an early read, and the cipher log's
short lines. Every expected value is worked out by hand from the rule the case states."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

import z3

from ...spec.core.bits import sub
from ...spec.core.registry import Mutant
from ...spec.crucible.build_trace import RecordedOp, Slot
from ...spec.crucible.cipher import LogEntry, parse_log
from ...spec.crucible.memory_plan import Plan, PlanSlot
from ...spec.crucible.pipeline import Window, iteration_windows, metalog_overflow
from ...spec.crucible.plan_validity import plan_violations
from ...spec.crucible.ring_protocol import Spsc, SpscState
from ...spec.crucible.tensor_slot import TENSOR_SLOT
from ..core.obligation import Property, property_obligation

# ── ch. 1: a z3 value carries its own width ───────────────────────────────────────────────────


def _bv8(v: int) -> z3.BitVecRef:
    return z3.BitVecVal(v, 8)


# (a, b, width, the 8-bit result): a z3 operand's sort is the width; `width` is for ints.
SUB_CASES = (
    (_bv8(0), 1, 4, 0xFF),  # 0 - 1 mod 2^8, not mod 2^4
    (0, _bv8(1), 4, 0xFF),
    (_bv8(0x12), 0x20, 4, 0xF2),  # 0x12 - 0x20 = -0x0E = 0xF2 mod 2^8
    (_bv8(5), _bv8(3), 4, 2),
    (_bv8(3), 5, 64, 0xFE),
)


def _sub(case: tuple) -> None:
    a, b, width, want = case
    got = z3.simplify(sub(a, b, width))
    assert got.size() == 8 and got.as_long() == want, (got, want)
    assert sub(3, 5, 8) == 0xFE and sub(3, 5, 4) == 0xE and sub(7, 2) == 5


@property_obligation(
    "PO1.160",
    "sub on a z3 operand is modulo its own sort's width (the module's rule: a z3 value "
    "carries its width); the width argument only reduces Python ints.",
    covers=("bits.sub",),
    subject=sub,
    mutants=(Mutant.edit("width masks z3 terms", "a z3 operand is masked to `width` unless "
                         "both operands are z3", sub,
                         "if is_symbolic(a) or is_symbolic(b):",
                         "if is_symbolic(a) and is_symbolic(b):"),),
)
def sub_z3_width(_subject):
    return [Property("an 8-bit z3 operand and a narrower width", _sub, cases=lambda: SUB_CASES)]


# ── ch. 6: a slot's TensorSlot field values ───────────────────────────────────────────────────

SLOT_CASES = (
    (Slot(1024, 1, 3, True, {"dtype": 6, "device_type": 1, "device_idx": 2, "layout": 0}), 5,
     256),
    (Slot(4, 0, 0, False, {"dtype": 0, "device_type": 0, "device_idx": -1, "layout": 1}), 0, 0),
)


def _slot_values(case: tuple) -> None:
    slot, slot_id, offset = case
    values = slot.values(slot_id, offset)
    assert set(values) == {p.name for p in TENSOR_SLOT.all_placed()}, sorted(values)
    assert values["pad"] == bytes(3) and values["pad2"] == bytes(4), values
    assert TENSOR_SLOT.unpack(TENSOR_SLOT.pack(values)) == values
    raw = TENSOR_SLOT.pack(values)
    assert len(raw) == 40 and raw[29:32] == bytes(3) and raw[36:40] == bytes(4)
    assert int.from_bytes(raw[0:8], "little") == offset
    assert int.from_bytes(raw[32:36], "little") == slot_id


@property_obligation(
    "PO6.160",
    "A slot's TensorSlot values name every member of the 40-byte record, with the 3 and 4 "
    "zero padding bytes of its two pad members; packed and unpacked they come back unchanged, "
    "offset in bytes 0..7 and slot id in bytes 32..35.",
    covers=("trace.build",),
    subject=Slot.values,
    mutants=(Mutant.edit("pad of 2", "the first pad member is given two bytes", Slot.values,
                         '"pad": bytes(3)', '"pad": bytes(2)'),),
)
def slot_values(_subject):
    return [Property("a slot, its id and offset", _slot_values, cases=lambda: SLOT_CASES)]


# ── ch. 6: the pipeline's windows and MetaLog overflow (K = 5) ────────────────────────────────

WINDOW_CASES = (
    # index 4, nothing completed: total 5, warm-up 0, completed 0 -> no window; lo = 0.
    ([{"index": 4, "last_completed_len": 0}], 5, [], 5),
    # index 6, nothing completed: total 7, warm-up 2 (lo 2), completed 0 -> none; lo = 2.
    ([{"index": 6, "last_completed_len": 0}], 9, [], 7),
    # index 14, 10 completed: total 15, warm-up 0, Window(14, 0, 10); lo = 10.
    ([{"index": 14, "last_completed_len": 10}], 20, [Window(14, 0, 10)], 10),
    # index 16, 10 completed: total 17, warm-up 2, Window(16, 2, 10); lo = 12.
    ([{"index": 16, "last_completed_len": 10}], 20, [Window(16, 2, 10)], 8),
    # then index 21, 0 completed: total 10, warm-up 5 (lo 17), completed 0; lo = 17.
    ([{"index": 16, "last_completed_len": 10}, {"index": 21, "last_completed_len": 0}], 22,
     [Window(16, 2, 10)], 5),
)


def _windows(case: tuple) -> None:
    boundaries, n, windows, retained = case
    assert iteration_windows(boundaries, n) == (windows, retained), \
        iteration_windows(boundaries, n)


def _op(inputs: int, outputs: int, metas: list | None) -> RecordedOp:
    return RecordedOp(0x1, num_inputs=inputs, num_outputs=outputs, metas=metas)


OVERFLOW_CASES = (
    ([_op(0, 1, None)], True),
    ([_op(1, 0, None)], True),
    ([_op(2, 3, None)], True),
    ([_op(0, 0, None)], False),
    ([_op(1, 1, [{}, {}])], False),
    ([_op(0, 0, None), _op(1, 0, [{}]), _op(0, 1, None)], True),
    ([], False),
)


def _overflow(case: tuple) -> None:
    ops, want = case
    assert metalog_overflow(ops) is want, (ops, want)


@property_obligation(
    "PO6.161",
    "A boundary that completes no op makes no window (a window holds at least one op); and a "
    "window overflows the MetaLog exactly when one of its ops has a tensor (an input or an "
    "output) but no metas.",
    covers=("pipeline.run",),
    subject=iteration_windows,
    mutants=(
        Mutant.edit("empty windows", "a boundary completing no op makes an empty window",
                    iteration_windows, "if completed > 0:", "if completed >= 0:"),
        Mutant.edit("outputs subtract", "inputs - outputs counts the tensors",
                    metalog_overflow, "r.num_inputs + r.num_outputs > 0",
                    "r.num_inputs - r.num_outputs > 0"),
        Mutant.edit("two tensors", "an op needs two tensors to overflow", metalog_overflow,
                    "r.num_inputs + r.num_outputs > 0", "r.num_inputs + r.num_outputs > 1"),
    ),
)
def windows_and_overflow(_subject):
    return [Property("boundaries worked by hand", _windows, cases=lambda: WINDOW_CASES),
            Property("ops with and without metas", _overflow, cases=lambda: OVERFLOW_CASES)]


# ── ch. 10: the pool's end ────────────────────────────────────────────────────────────────────

PLAN_CASES = (
    ([PlanSlot(256, 0, 0)], Plan([256], 256),
     ["slot 0: [256, 512) ends past the pool (256 bytes)"]),
    ([PlanSlot(1, 0, 0)], Plan([0], 0), ["slot 0: [0, 256) ends past the pool (0 bytes)"]),
    ([PlanSlot(300, 0, 0)], Plan([0], 256), ["slot 0: [0, 512) ends past the pool (256 bytes)"]),
    ([PlanSlot(256, 0, 0)], Plan([0], 256), []),
    ([PlanSlot(256, 0, 0), PlanSlot(512, 1, 1)], Plan([0, 256], 768), []),
    ([PlanSlot(256, 0, 0), PlanSlot(512, 1, 1)], Plan([0, 512], 768),
     ["slot 1: [512, 1024) ends past the pool (768 bytes)"]),
)


def _plan(case: tuple) -> None:
    slots, plan, want = case
    assert plan_violations(slots, plan) == want, plan_violations(slots, plan)


@property_obligation(
    "PO10.160",
    "The plan check flags an internal slot whose aligned range [offset, offset + align256("
    "nbytes)) ends past pool_bytes, and only such a slot.",
    covers=("plan.compute",),
    subject=plan_violations,
    mutants=(Mutant.edit("end is offset - size", "the slot's end is taken as offset - size",
                         plan_violations, "if offset + size > plan.pool_bytes:",
                         "if offset - size > plan.pool_bytes:"),),
)
def plan_pool_end(_subject):
    return [Property("slots and a plan, worked by hand", _plan, cases=lambda: PLAN_CASES)]


# ── ch. 4: the SPSC checker reports what a faulty step does ───────────────────────────────────


@dataclass(frozen=True)
class _Step:
    """A step of a hand-written (faulty or sound) side: what it does is fixed by `do`."""

    do: str
    pc: str = "go"
    count: int = 0
    items: tuple = ()


def _thaw(s: SpscState) -> SimpleNamespace:
    return SimpleNamespace(head=s.head, tail=s.tail, cached_tail=s.cached_tail,
                           slots=list(s.slots))


def _append(obj: SimpleNamespace, a: _Step) -> _Step:
    """'overwrite': item 'c' into slot 0; 'free': item 'c' into slot 1; 'raise': fails."""
    if a.do == "raise":
        raise ValueError("boom")
    obj.slots[0 if a.do == "overwrite" else 1] = "c"
    return replace(a, pc="done")


def _drain(obj: SimpleNamespace, d: _Step) -> _Step:
    """Copies one item: slot 1 ('early', out of order) or slot 0 ('in order')."""
    return replace(d, pc="done", count=1, items=(obj.slots[1 if d.do == "early" else 0],))


def _spsc(do: str) -> Spsc:
    return Spsc("hand-written", 2, 1, thaw=_thaw, start=lambda k: _Step(do),
                append=_append, items=lambda a: ("c",), new_drain=lambda: _Step(do),
                drain=_drain)


# Item 'a' is published in slot 0 and not consumed; 'b' in slot 1 is published too.
_S = SpscState(head=2, tail=0, cached_tail=0, slots=("a", "b"), published=("a", "b"))
# Only 'a' is published; slot 1 is free.
_S1 = SpscState(head=1, tail=0, cached_tail=0, slots=("a", None), published=("a",))

SPSC_CASES = (
    ("producer", "overwrite", _S, "slot 0 overwritten before item a was consumed"),
    ("producer", "free", _S1, None),
    ("producer", "raise", _S1, "go raised ValueError: boom"),
    ("consumer", "early", _S,
     "copied ['b'] where ['a'] were published (read early or out of order)"),
    ("consumer", "in order", _S, None),
)


def _spsc_error(case: tuple) -> None:
    side, do, state, want = case
    m = _spsc(do)
    (label, after), = list(getattr(m, side)(state))
    assert after.error == want, (label, after.error, want)


@property_obligation(
    "PO4.160",
    "The SPSC machine's steps report a producer step that overwrites a published item not yet "
    "consumed, a step that raises, and a consumer step that copies an item other than the next "
    "published one; sound steps report nothing.",
    covers=("ring.simulate", "metalog.simulate"),
    subject=(Spsc.producer, Spsc.consumer),
    mutants=(
        Mutant.edit("overwrite unreported", "the overwrite check's report is dropped",
                    Spsc.producer, "error = error or self.overwritten(s, t)",
                    "error = error and self.overwritten(s, t)"),
        Mutant.edit("early read unreported", "an out-of-order copy is not reported",
                    Spsc.consumer, "error = error or f\"copied",
                    "error = error and f\"copied"),
    ),
)
def spsc_reports(_subject):
    return [Property("a hand-written step on a hand-made state", _spsc_error,
                     cases=lambda: SPSC_CASES)]


# ── ch. 18: the cipher log's lines ────────────────────────────────────────────────────────────

LOG_CASES = (
    ("1,ff,3", [LogEntry(1, 0xFF, 3)]),
    ("1,ff\n2,a,7", [LogEntry(2, 0xA, 7)]),  # one comma: skipped
    ("7\n\n3,10,5\n", [LogEntry(3, 0x10, 5)]),
    ("1,ff", []),
    ("", []),
)


def _log(case: tuple[str, Any]) -> None:
    text, want = case
    assert parse_log(text) == want, parse_log(text)


@property_obligation(
    "PO18.180",
    "parse_log reads step,hex hash,ts lines and skips empty lines and lines with fewer than "
    "two commas (one comma included).",
    covers=("cipher.simulate",),
    subject=parse_log,
    mutants=(Mutant.edit("one comma kept", "a line with one comma is parsed", parse_log,
                         "if len(parts) < 3:", "if len(parts) < 2:"),),
)
def cipher_log_lines(_subject):
    return [Property("log text worked by hand", _log, cases=lambda: LOG_CASES)]
