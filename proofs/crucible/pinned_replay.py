"""Chapter 11 pinned by hand-worked cases: the slots a region switch migrates (old ids against
new ids, none ids and externals skipped), the region wire form's defaults and bounds, the
engine's priming of an empty region, and what Vigil reads of a region (its externals' data
pointers, its CDAG header). Every expected value below is worked out from the spec's text."""

from __future__ import annotations

from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.crucible import context as ctx_
from ...spec.crucible import pool_allocator as pool_
from ...spec.crucible import replay_engine as engine_
from ...spec.crucible import replay_region as rr
from ...spec.crucible import vigil as vg
from ...spec.crucible.context import CrucibleContext, Migration
from ...spec.crucible.hashing import fmix64
from ...spec.crucible.pool_allocator import Handle, PoolAllocator
from ...spec.crucible.replay_region import Guard, ReplayOp, ReplayPlan, ReplayRegion, ReplaySlot
from ...spec.crucible.types import NONE32
from ..core.obligation import Property, property_obligation

M64 = (1 << 64) - 1


def _region(rid: int, outs: list[int], slots: list[ReplaySlot]) -> ReplayRegion:
    """Two ops: op 0 (schema 1) writes `outs`; op 1 has schema 2 + rid, so regions diverge."""
    return ReplayRegion(rid, [ReplayOp(Guard(1, 0), [], outs), ReplayOp(Guard(2 + rid, 0))],
                        ReplayPlan(4096, slots), rid + 1)


MIGRATION_CASES = (
    # old writes its slot 0 (512 bytes), the alternate its slot 1 (1024): 512 bytes move 0 -> 1.
    ("old id 0 to new id 1", _region(0, [0], [ReplaySlot(0, 512), ReplaySlot(512, 256)]),
     _region(1, [1], [ReplaySlot(0, 256), ReplaySlot(256, 1024)]), [Migration(0, 0, 1, 512)]),
    ("a none old id is skipped", _region(0, [NONE32, 1], [ReplaySlot(0, 256),
                                                          ReplaySlot(256, 256)]),
     _region(1, [0, 1], [ReplaySlot(0, 256), ReplaySlot(256, 128)]), [Migration(0, 1, 1, 128)]),
    ("a none new id is skipped", _region(0, [0, 1], [ReplaySlot(0, 256), ReplaySlot(256, 64)]),
     _region(1, [NONE32, 0], [ReplaySlot(0, 256)]), [Migration(0, 1, 0, 64)]),
    ("an external old slot is skipped",
     _region(0, [0, 1], [ReplaySlot(0, 256, True), ReplaySlot(0, 32)]),
     _region(1, [0, 1], [ReplaySlot(0, 256), ReplaySlot(256, 256)]), [Migration(0, 1, 1, 32)]),
    ("an external new slot is skipped",
     _region(0, [0, 1], [ReplaySlot(0, 256), ReplaySlot(256, 32)]),
     _region(1, [0, 1], [ReplaySlot(0, 256, True), ReplaySlot(0, 256)]),
     [Migration(0, 1, 1, 32)]),
)


def _check_migrate(case: tuple) -> None:
    _, old, alt, want = case
    assert ctx_.migrate_prefix_slots(old, alt, True, 1) == want


EDGE_CASES = (
    # (old op 0 outputs, old slot 0 nbytes, old buffer held, expected migrations)
    (None, 256, True, []),
    ([0], 0, True, []),
    ([0], 1, True, [Migration(0, 0, 0, 1)]),
    ([0], 256, False, []),
)


def _check_edges(case: tuple) -> None:
    """A null id array, a 0-byte copy and a pool without a buffer migrate nothing."""
    outs, nbytes, buffer, want = case
    old = _region(0, [0], [ReplaySlot(0, nbytes)])
    old.ops[0].output_slot_ids = outs
    alt = _region(1, [0], [ReplaySlot(0, 256)])
    assert ctx_.migrate_prefix_slots(old, alt, buffer, 1) == want


def _check_switch(case: tuple) -> None:
    _, old, alt, want = case
    c = CrucibleContext()
    assert ctx_.activate(c, old)
    ctx_.advance(c, old.ops[0].guard)
    switched, moved = ctx_.switch_region(c, alt, 1)
    assert switched and moved == want and c.active_region is alt and c.engine.cursor == 1


@property_obligation(
    "PO11.140",
    "A region switch at position 1 copies each prefix output from the old region's slot to the "
    "alternate's slot at the same output index, min(old, new) bytes, skipping a none id or an "
    "external slot on either side, and nothing for a null id array, a 0-byte copy or an old "
    "pool without a buffer (hand-worked cases, direct and through switch_region)",
    covers=("context.simulate",), subject=ctx_.migrate_prefix_slots,
    mutants=(
        Mutant.edit("ids-swapped", "the new region's output ids are read as the old ones",
                    ctx_.migrate_prefix_slots,
                    "old_ids, new_ids = old.ops[i].output_slot_ids, alt.ops[i].output_slot_ids",
                    "new_ids, old_ids = old.ops[i].output_slot_ids, alt.ops[i].output_slot_ids"),
        Mutant.edit("pair-swapped", "output j pairs new id with old slot",
                    ctx_.migrate_prefix_slots, "o, n = old_ids[j], new_ids[j]",
                    "n, o = old_ids[j], new_ids[j]"),
        Mutant.edit("none-and", "a pair is skipped only when both ids are none",
                    ctx_.migrate_prefix_slots, "if o == NONE32 or n == NONE32:",
                    "if o == NONE32 and n == NONE32:"),
        Mutant.edit("external-and", "a pair is skipped only when both slots are external",
                    ctx_.migrate_prefix_slots,
                    "old.plan.slots[o].is_external or alt.plan.slots[n].is_external",
                    "old.plan.slots[o].is_external and alt.plan.slots[n].is_external"),
        Mutant.edit("null-ids-and", "an op is skipped only when both id arrays are null",
                    ctx_.migrate_prefix_slots, "if old_ids is None or new_ids is None:",
                    "if old_ids is None and new_ids is None:"),
        Mutant.edit("zero-byte-copy", "a 0-byte copy is listed", ctx_.migrate_prefix_slots,
                    "if nbytes > 0 and old_buffer:", "if nbytes >= 0 and old_buffer:"),
        Mutant.edit("no-buffer-copy", "a copy is listed without an old buffer",
                    ctx_.migrate_prefix_slots, "if nbytes > 0 and old_buffer:",
                    "if nbytes > 0 or old_buffer:"),
        Mutant.edit("one-byte-skipped", "a 1-byte copy is skipped", ctx_.migrate_prefix_slots,
                    "if nbytes > 0 and old_buffer:", "if nbytes > 1 and old_buffer:"),
        Mutant.edit("switch-regions-swapped", "switch_region migrates from alt into old",
                    ctx_.switch_region,
                    "migrate_prefix_slots(old, alt, had_buffer, div_pos, errata)",
                    "migrate_prefix_slots(alt, old, had_buffer, div_pos, errata)"),
    ))
def migration_pinned(subject) -> list[Property]:
    return [Property("migrate_prefix_slots", _check_migrate, cases=lambda: MIGRATION_CASES),
            Property("nothing to copy", _check_edges, cases=lambda: EDGE_CASES),
            Property("switch_region", _check_switch, cases=lambda: MIGRATION_CASES)]


def _rejects(obj: dict, path_part: str) -> None:
    try:
        rr.region_from_wire(obj, 0, "r")
    except InvalidInput as e:
        assert path_part in e.message, e.message
        return
    raise AssertionError(f"accepted {obj}")


WIRE_PLANS = (
    ({"slots": [{"nbytes": 256}]}, ReplayPlan(256, [ReplaySlot(0, 256)])),
    ({"slots": [{"offset_bytes": 512}]}, ReplayPlan(512, [ReplaySlot(512, 0)])),
    ({"slots": [{"offset_bytes": 256, "nbytes": 100}]}, ReplayPlan(356, [ReplaySlot(256, 100)])),
    ({"slots": [{"offset_bytes": 0, "nbytes": 256},
                {"offset_bytes": 8192, "nbytes": 8, "is_external": True}]},
     ReplayPlan(256, [ReplaySlot(0, 256), ReplaySlot(8192, 8, True)])),
    ({"slots": []}, ReplayPlan(0, [])),
    ({"slots": [{"offset_bytes": 8, "nbytes": 8, "is_external": True}]},
     ReplayPlan(0, [ReplaySlot(8, 8, True)])),
)


def _check_plan(case: tuple) -> None:
    obj, want = case
    assert rr.plan_from_wire(obj, "p") == want


def _check_wire_bounds(case: str) -> None:
    if case == "slot id at the plan's size":
        _rejects({"ops": [{"output_slot_ids": [1]}], "plan": {"slots": [{"nbytes": 8}]}},
                 "output_slot_ids[0]")
    elif case == "slot with an unknown field":
        _rejects({"ops": [], "plan": {"slots": [{"nbytes": 8, "dtype": 1}]}}, "slots[0]")
    elif case == "slots not a list":
        _rejects({"ops": [], "plan": {"slots": 5}}, "r.plan")
    elif case == "ops not a list":
        _rejects({"ops": 5}, "expected a region")
    elif case == "exactly MAX_REGION_OPS ops":  # the length passes; op 0 is the first error
        _rejects({"ops": [0] * rr.MAX_REGION_OPS}, "r.ops[0]")
    else:
        _rejects({"ops": [0] * (rr.MAX_REGION_OPS + 1)}, "more than")


def _check_fold(case: tuple) -> None:
    guards, want = case
    assert rr.guard_fold(guards) == want


@property_obligation(
    "PO11.141",
    "Region wire form: a slot's offset and size default to 0, pool_bytes to the end of the last "
    "internal slot (0 if none); only internal slots must be aligned; non-list slots or ops, a "
    "slot with an unknown field, a slot id equal to the plan's size and more "
    "than 2^20 ops are rejected (exactly 2^20 pass the length check); the default content hash "
    "xors each guard hash into the running fmix64",
    covers=("context.simulate", "vigil.dispatch"), subject=rr.region_from_wire,
    mutants=(
        Mutant.edit("slot-id-bound", "a slot id equal to the slot count is accepted",
                    rr._check_slot_ids, "sid >= n", "sid > n"),
        Mutant.edit("fold-or", "the fold ors instead of xoring", rr.guard_fold,
                    "fmix64(h ^ v)", "fmix64(h | v)"),
        Mutant.edit("slot-fields-and", "a slot dict with an unknown field is accepted",
                    rr.plan_from_wire, "if not isinstance(s, dict) or sorted(",
                    "if not isinstance(s, dict) and sorted("),
        Mutant.edit("offset-default", "offset_bytes defaults to 1", rr.plan_from_wire,
                    '("offset_bytes", u64, 0)', '("offset_bytes", u64, 1)'),
        Mutant.edit("nbytes-default", "nbytes defaults to 1", rr.plan_from_wire,
                    '("nbytes", u64, 0)', '("nbytes", u64, 1)'),
        Mutant.edit("end-minus", "a slot ends at offset - nbytes", rr.plan_from_wire,
                    "s.offset_bytes + s.nbytes for s", "s.offset_bytes - s.nbytes for s"),
        Mutant.edit("end-externals", "pool_bytes defaults to the end of the externals",
                    rr.plan_from_wire, "if not s.is_external), default=0)",
                    "if s.is_external), default=0)"),
        Mutant.edit("slots-list-and", "a plan whose slots are not a list passes the first "
                    "check", rr.plan_from_wire,
                    'if not isinstance(obj, dict) or not isinstance(obj.get("slots", []), list)',
                    'if not isinstance(obj, dict) and not isinstance(obj.get("slots", []), list)'),
        Mutant.edit("external-aligned", "the alignment check applies to externals instead",
                    rr.plan_from_wire, 'if not get["is_external"] and get["offset_bytes"]',
                    'if get["is_external"] and get["offset_bytes"]'),
        Mutant.edit("empty-pool-one", "a plan without internal slots defaults to 1 byte",
                    rr.plan_from_wire, "if not s.is_external), default=0)",
                    "if not s.is_external), default=1)"),
        Mutant.edit("ops-list-and", "a region whose ops are not a list passes the first check",
                    rr.region_from_wire,
                    'if not isinstance(obj, dict) or not isinstance(obj.get("ops"), list)',
                    'if not isinstance(obj, dict) and not isinstance(obj.get("ops"), list)'),
        Mutant.edit("ops-bound", "exactly 2^20 ops are rejected", rr.region_from_wire,
                    'len(obj["ops"]) > MAX_REGION_OPS', 'len(obj["ops"]) >= MAX_REGION_OPS'),
    ))
def wire_pinned(subject) -> list[Property]:
    folds = (([Guard(1, M64)], fmix64(fmix64(fmix64(fmix64(1) ^ M64)))),
             ([Guard(3, 3, 3, 3)], fmix64(fmix64(fmix64(fmix64(3) ^ 3) ^ 3) ^ 3)))
    return [Property("plan defaults", _check_plan, cases=lambda: WIRE_PLANS),
            Property("bounds", _check_wire_bounds, cases=lambda: (
                "slot id at the plan's size", "slot with an unknown field", "slots not a list",
                "ops not a list",
                "exactly MAX_REGION_OPS ops", "MAX_REGION_OPS + 1 ops")),
            Property("guard_fold", _check_fold, cases=lambda: folds)]


def _check_empty_prime(case: int) -> None:
    p = PoolAllocator()
    pool_.init(p, ReplayPlan(0, []))
    e = engine_.ReplayEngine(cursor=case, expected=Guard(7, 7))
    engine_.init(e, [], p)
    assert e.expected == engine_.NO_GUARD and e.cursor == 0 and e.current is None


@property_obligation(
    "PO11.142",
    "The engine of an empty region expects NO_GUARD (0, 0) after init, whatever it held before",
    covers=("replay.engine", "context.simulate"), subject=engine_.prime,
    mutants=(Mutant.edit("prime-bound", "prime reads op cursor when cursor == end",
                         engine_.prime, "e.cursor < len(e.ops)", "e.cursor <= len(e.ops)"),))
def empty_prime_pinned(subject) -> list[Property]:
    return [Property("empty region", _check_empty_prime, cases=lambda: (0, 3))]


def _externals_region() -> ReplayRegion:
    """Slot 0 internal; slots 1 and 2 external, read by op 0 (inputs 1, 2 with pointers 0x10
    and 0x20); slot 3 external and never read."""
    slots = [ReplaySlot(0, 256), ReplaySlot(0, 8, True), ReplaySlot(0, 8, True),
             ReplaySlot(0, 8, True)]
    ops = [ReplayOp(Guard(5, 0), [1, 2], [0], [0x10, 0x20])]
    return ReplayRegion(0, ops, ReplayPlan(256, slots), 9)


def _check_externals(case: str) -> None:
    r = _externals_region()
    v = vg.Vigil()
    assert ctx_.activate(v.ctx, r)
    vg.register_externals_from_region(v, r)
    assert v.ctx.pool.table == [Handle("pool", 0), Handle("external", 0x10),
                                Handle("external", 0x20), None]


def _check_cdag(case: tuple) -> None:
    ops, want = case
    assert vg.cdag_of(ReplayRegion(0, ops, None, 4)).first_op_schema == want


@property_obligation(
    "PO11.143",
    "Vigil registers each external slot with the data pointer of the op input that reads it, "
    "at that slot id; a region's CDAG header names its op 0's schema (0 for an empty region)",
    covers=("vigil.dispatch",), subject=vg.register_externals_from_region,
    mutants=(
        Mutant.edit("external-args-swapped", "the pointer is passed as the slot id",
                    vg.register_externals_from_region,
                    "register_external(v.ctx, target, ptr)",
                    "register_external(v.ctx, ptr, target)"),
        Mutant.edit("empty-first-schema", "an empty region's header names schema 1", vg.cdag_of,
                    "r.ops[0].guard.schema if r.ops else 0",
                    "r.ops[0].guard.schema if r.ops else 1"),
    ))
def vigil_reads_pinned(subject) -> list[Property]:
    return [Property("externals", _check_externals, cases=lambda: ("region",)),
            Property("cdag header", _check_cdag, cases=lambda: (
                ([], 0), ([ReplayOp(Guard(0x33, 1)), ReplayOp(Guard(0x44, 2))], 0x33)))]
