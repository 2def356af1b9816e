"""Chapter 10's memory plan pinned at its edges: which slot sets the plan's device, the seed's
4096-entry free-list cap (E10.1; the spec has none) and the 64-slot direct reuse window. Each
case's answer is worked out by hand from the planner's rules."""

from __future__ import annotations

from ...spec.core.registry import Mutant
from ...spec.crucible.memory_plan import (
    E10_1,
    PlanSlot,
    _coalesce,
    _direct_reuse,
    _push,
    compute_memory_plan,
)
from ...spec.crucible.types import DeviceType
from ..core.obligation import Property, property_obligation

CPU, CUDA = DeviceType.CPU, DeviceType.CUDA

DEVICE_CASES = (
    ([PlanSlot(256, 0, 0)], (CPU, -1)),
    ([PlanSlot(256, 0, 0), PlanSlot(256, 0, 1, device_type=CUDA, device_idx=3),
      PlanSlot(256, 1, 1, device_type=CUDA, device_idx=5)], (CUDA, 3)),
    ([PlanSlot(256, 0, 0, is_external=True, device_type=CUDA, device_idx=7),
      PlanSlot(256, 0, 0, device_idx=2)], (CPU, -1)),
    ([PlanSlot(256, 0, 0, device_type=CUDA, device_idx=0)], (CUDA, 0)),
)


def _device(case: tuple[list[PlanSlot], tuple[int, int]]) -> None:
    slots, want = case
    plan = compute_memory_plan(slots)
    assert (plan.device_type, plan.device_idx) == want, (plan.device_type, plan.device_idx)


@property_obligation(
    "PO10.150",
    "The plan's device is that of its first internal non-CPU slot (type and index), else CPU "
    "with index -1; external slots never set it.",
    covers=("plan.compute",),
    subject=compute_memory_plan,
    mutants=(
        Mutant.edit("device never set", "the plan's device is set only when it is not CPU",
                    compute_memory_plan, "if plan.device_type == DeviceType.CPU and",
                    "if plan.device_type != DeviceType.CPU and"),
        Mutant.edit("CPU slot sets device", "a CPU slot sets the device",
                    compute_memory_plan, "s.device_type != DeviceType.CPU:",
                    "s.device_type == DeviceType.CPU:"),
        Mutant.edit("type and index swapped", "the slot's index is stored as the type",
                    compute_memory_plan, "= s.device_type, s.device_idx",
                    "= s.device_idx, s.device_type"),
    ),
)
def plan_device(_subject):
    return [Property("slots and the device they give", _device, cases=lambda: DEVICE_CASES)]


def _free_list_cap(n: int) -> None:
    """n slots of 256 bytes die at op 0, each followed by one alive until op 3, so the n holes
    never touch; n more are born at op 2. The seed keeps the first 4096 holes and loses the
    rest, so its pool grows by the excess; the spec keeps every hole and its pool does not
    grow."""
    slots = [PlanSlot(256, 0, 0), PlanSlot(256, 0, 3)] * n + [PlanSlot(256, 2, 2)] * n
    seed = compute_memory_plan(slots, frozenset({E10_1})).pool_bytes
    assert seed == 256 * (2 * n + max(0, n - 4096)), seed
    assert compute_memory_plan(slots).pool_bytes == 256 * 2 * n


def _window(n: int) -> None:
    """A free slot X (dead at op 0) and n slots dying at op 1; n born at op 2. The first 64
    newborns take the dying slots in order; the others first-fit X."""
    slots = [PlanSlot(256, 0, 0)] + [PlanSlot(256, 0, 1)] * n + [PlanSlot(256, 2, 2)] * n
    offsets = compute_memory_plan(slots).offsets
    for k in range(n):
        want = offsets[1 + k] if k < 64 else offsets[0]
        assert offsets[1 + n + k] == want, (k, offsets[1 + n + k], want)


@property_obligation(
    "PO10.151",
    "The seed's free list (E10.1) keeps 4096 entries and drops the rest, the spec's keeps "
    "every freed block; direct reuse pairs the first 64 newborn with the first 64 dying slots "
    "of an op, and no more.",
    covers=("plan.compute",),
    subject=compute_memory_plan,
    mutants=(
        Mutant.edit("cap 4098", "the free list keeps two more entries", _push,
                    "len(free) < FREE_LIST_CAP", "len(free) < 4098"),
        Mutant.edit("window 63", "direct reuse looks at 63 newborns", _direct_reuse,
                    "newborn[:DIRECT_REUSE_WINDOW]", "newborn[:63]"),
        Mutant.edit("dying window 63", "direct reuse looks at 63 dying slots",
                    _direct_reuse, "dying[:DIRECT_REUSE_WINDOW]", "dying[:63]"),
        Mutant.edit("spec capped too", "the spec's free list drops blocks past 4096 entries",
                    _coalesce, "    if not size:\n", "    if not size or len(free) >= 4096:\n"),
    ),
)
def plan_limits(_subject):
    return [Property("n slots freed at once", _free_list_cap,
                     cases=lambda: (4095, 4096, 4097, 4098)),
            Property("n slots dying and n born at one op", _window, cases=lambda: (63, 64, 65))]
