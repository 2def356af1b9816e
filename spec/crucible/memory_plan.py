"""Chapter 10: the memory plan, one pool of 256-byte-aligned slot offsets per iteration."""

from __future__ import annotations

import random
from bisect import bisect_left
from dataclasses import dataclass

from ..core.errata import NO_ERRATA
from ..core.errors import InvalidInput
from ..core.layout import Member, bool_, enum_of, i8, i32, id32, pad, ptr, struct, u32, u64
from ..core.layout_ops import scalar_from_wire
from ..core.strategies import st
from .types import DeviceType

ALIGNMENT = 256
"""Every pool offset and the pool size are multiples of 256 bytes. Real code:
`BackgroundThread.h`, `compute_memory_plan`."""

MEMORY_PLAN = struct("MemoryPlan", [
    Member("slots", ptr, doc="TensorSlot array"),
    Member("pool_bytes", u64),
    Member("num_slots", u32),
    Member("num_external", u32),
    Member("device_type", enum_of(DeviceType, i8), default=DeviceType.CPU),
    Member("device_idx", i8, default=-1),
    Member("pad0", pad(2)),
    Member("device_capability", u64, doc="SM version or equivalent"),
    Member("rank", i32, default=-1, doc="-1 = not distributed"),
    Member("world_size", i32),
], size=48, align=8, chapter=10, doc="Bytes 28..31 are implicit padding, never serialized.")

E10_1 = "E10.1"

FREE_LIST_CAP = 4096
"""Under E10.1, free-list entries beyond this are dropped (their space is lost). Real code:
`BackgroundThread.h`, `compute_memory_plan`'s free list."""
DIRECT_REUSE_WINDOW = 64
"""Direct reuse looks at the first 64 slots dying and the first 64 born at an op. Real code:
`BackgroundThread.h`, `compute_memory_plan`."""


def align256(n: int) -> int:
    return (n + ALIGNMENT - 1) & ~(ALIGNMENT - 1)


@dataclass(frozen=True)
class PlanSlot:
    """What the planner reads of a TensorSlot."""

    nbytes: int
    birth_op: int
    death_op: int
    is_external: bool = False
    device_type: int = DeviceType.CPU
    device_idx: int = -1


@dataclass
class Plan:
    """The planner's output: an offset per slot (externals stay 0) and the pool."""

    offsets: list[int]
    pool_bytes: int = 0
    num_external: int = 0
    device_type: int = DeviceType.CPU
    device_idx: int = -1


def compute_memory_plan(slots: list[PlanSlot], errata: frozenset[str] = NO_ERRATA) -> Plan:
    """Sweep the ops in order, placing each internal slot when it is born and freeing it the
    op after it dies: best-fit reuse of a slot dying at that op, then first fit over the free
    list, then the end of the pool. Every size is rounded up to 256 bytes. The free list keeps
    every freed block, merged with its free neighbours (E10.1: the seed's list)."""
    plan = Plan([0] * len(slots))  # 1
    internal = []
    for i, s in enumerate(slots):  # 2. count externals; the first non-CPU slot sets the device
        if s.is_external:
            plan.num_external += 1
            continue
        internal.append(i)
        if plan.device_type == DeviceType.CPU and s.device_type != DeviceType.CPU:
            plan.device_type, plan.device_idx = s.device_type, s.device_idx
    if not internal:  # 3
        return plan
    sweep(slots, plan, internal, E10_1 in errata)  # 4-6
    return plan  # 7. pool_bytes is the end of the pool


def _push(free: list[list[int]], offset: int, size: int) -> None:
    """E10.1: append to the unordered list, unless it already holds FREE_LIST_CAP entries."""
    if len(free) < FREE_LIST_CAP:
        free.append([offset, size])


def _coalesce(free: list[list[int]], offset: int, size: int) -> None:
    """Free [offset, offset + size) into the address-ordered list, merged with the free block
    that ends where it starts and the one that starts where it ends; 0 bytes free nothing."""
    if not size:
        return
    k = bisect_left(free, [offset, 0])
    start, end = offset, offset + size
    if k < len(free) and free[k][0] == end:
        end += free.pop(k)[1]
    if k and free[k - 1][0] + free[k - 1][1] == start:
        k -= 1
        start = free.pop(k)[0]
    free.insert(k, [start, end - start])


def _release(free: list[list[int]], offset: int, size: int, seed: bool) -> None:
    """Give [offset, offset + size) back: coalesced, or (E10.1) pushed as the seed does."""
    if seed:
        _push(free, offset, size)
    else:
        _coalesce(free, offset, size)


def _direct_reuse(slots: list[PlanSlot], plan: Plan, dying: list[int], newborn: list[int],
                  free: list[list[int]], seed: bool) -> set[int]:
    """Each newborn (of the first 64) takes the dying slot (of the first 64) that wastes the
    least, the earliest on a tie; the waste goes to the free list. Returns both sides used."""
    used: set[int] = set()
    if not dying or not newborn:
        return used
    for b in newborn[:DIRECT_REUSE_WINDOW]:
        size = align256(slots[b].nbytes)
        best = None
        for d in dying[:DIRECT_REUSE_WINDOW]:
            room = align256(slots[d].nbytes)
            if d not in used and room >= size and (best is None or room - size < best[1]):
                best = (d, room - size)
        if best is not None:
            d, waste = best
            plan.offsets[b] = plan.offsets[d]
            used |= {b, d}
            if waste:
                _release(free, plan.offsets[d] + size, waste, seed)
    return used


def _first_fit(free: list[list[int]], size: int, pool_end: int) -> tuple[int, int]:
    """E10.1: (offset, new pool end): the first entry in list order that fits, else the end of
    the pool. An entry used whole is replaced by the last entry (swap-remove)."""
    for k, entry in enumerate(free):
        if entry[1] >= size:
            offset = entry[0]
            if entry[1] == size:
                free[k] = free[-1]
                free.pop()
            else:
                entry[0] += size
                entry[1] -= size
            return offset, pool_end
    return pool_end, pool_end + size


def _lowest_fit(free: list[list[int]], size: int, pool_end: int) -> tuple[int, int]:
    """(offset, new pool end): the lowest free block that fits, split at its start; else the
    free block that ends the pool, grown past it; else the end of the pool."""
    for k, entry in enumerate(free):
        if entry[1] >= size:
            offset = entry[0]
            if entry[1] == size:
                free.pop(k)
            else:
                entry[0] += size
                entry[1] -= size
            return offset, pool_end
    if free and free[-1][0] + free[-1][1] == pool_end:
        offset = free.pop()[0]
        return offset, offset + size
    return pool_end, pool_end + size


def sweep(slots: list[PlanSlot], plan: Plan, internal: list[int], seed: bool = False) -> None:
    """Steps 4-6 of compute_memory_plan: place the internal slots into plan; a slot is freed
    the op after its death, and a newborn not reusing a dying slot goes to first fit. `seed`
    (E10.1) keeps the seed's capped, unordered, unmerged free list."""
    born: dict[int, list[int]] = {}
    freed: dict[int, list[int]] = {}
    for i in internal:  # 4. buckets by op, in slot order
        born.setdefault(slots[i].birth_op, []).append(i)
        freed.setdefault(slots[i].death_op + 1, []).append(i)
    free: list[list[int]] = []  # 5. (offset, size) entries
    fit = _first_fit if seed else _lowest_fit
    for op in sorted(born.keys() | freed.keys()):  # 6. the ops where something happens
        dying, newborn = freed.get(op, []), born.get(op, [])
        placed = _direct_reuse(slots, plan, dying, newborn, free, seed)  # a
        for d in dying:  # b
            if d not in placed:
                _release(free, plan.offsets[d], align256(slots[d].nbytes), seed)
        for b in newborn:  # c
            if b not in placed:
                plan.offsets[b], plan.pool_bytes = fit(free, align256(slots[b].nbytes),
                                                       plan.pool_bytes)


def live_lower_bound(slots: list[PlanSlot]) -> int:
    """The most bytes (rounded to 256) of internal slots alive at any one op: no planner can
    make a pool smaller than this."""
    delta: dict[int, int] = {}
    for s in slots:
        if not s.is_external:
            delta[s.birth_op] = delta.get(s.birth_op, 0) + align256(s.nbytes)
            delta[s.death_op + 1] = delta.get(s.death_op + 1, 0) - align256(s.nbytes)
    live = best = 0
    for op in sorted(delta):
        live += delta[op]
        best = max(best, live)
    return best


def greedy_by_size(slots: list[PlanSlot]) -> Plan:
    """An extension, NOT the spec's planner: place internal slots largest first, each at the
    lowest offset clear of every placed slot whose lifetime overlaps its own."""
    plan = Plan([0] * len(slots), num_external=sum(s.is_external for s in slots))
    placed: list[tuple[int, int, int, int]] = []
    order = sorted((i for i, s in enumerate(slots) if not s.is_external),
                   key=lambda i: (-align256(slots[i].nbytes), i))
    for i in order:
        s, size = slots[i], align256(slots[i].nbytes)
        offset = 0
        for start, end, birth, death in sorted(placed):
            if birth <= s.death_op and s.birth_op <= death and offset + size > start:
                offset = max(offset, end)
        plan.offsets[i] = offset
        placed.append((offset, offset + size, s.birth_op, s.death_op))
        plan.pool_bytes = max(plan.pool_bytes, offset + size)
    return plan


MAX_DEATH = 0xFFFFFFFD
"""The sweep runs to death + 1 ops, counted in u32: deaths stop short of the wrap. Real code:
`BackgroundThread.h`, `compute_memory_plan`'s u32 op counter."""


def plan_slots(slots: object) -> list[PlanSlot]:
    """Planner input from the wire: {nbytes, birth_op, death_op, is_external, device_type?,
    device_idx?}; an internal slot needs birth <= death <= 0xFFFFFFFD."""
    if not isinstance(slots, list):
        raise InvalidInput("args.slots: expected a list of slots")
    out = []
    for i, s in enumerate(slots):
        path = f"args.slots[{i}]"
        if not isinstance(s, dict) or set(s) - set(SLOT_FIELDS) or \
                not {"nbytes", "birth_op", "death_op"} <= set(s):
            raise InvalidInput(f"{path}: expected {{nbytes, birth_op, death_op, is_external, "
                               f"device_type, device_idx}}")
        values = {k: scalar_from_wire(t, s[k], f"{path}.{k}") for k, t in SLOT_FIELDS.items()
                  if k in s}
        slot = PlanSlot(**values)
        if not slot.is_external and not slot.birth_op <= slot.death_op <= MAX_DEATH:
            raise InvalidInput(f"{path}: an internal slot needs birth_op <= death_op <= "
                               f"{MAX_DEATH}")
        out.append(slot)
    return out


SLOT_FIELDS = {"nbytes": u64, "birth_op": id32, "death_op": id32, "is_external": bool_,
                "device_type": i8, "device_idx": i8}


def plan_compute(slots: object, errata: frozenset[str] = NO_ERRATA) -> dict:
    p = compute_memory_plan(plan_slots(slots), errata)
    return {"offsets": p.offsets, "pool_bytes": p.pool_bytes, "num_slots": len(p.offsets),
            "num_external": p.num_external}


def plan_greedy(slots: object) -> dict:
    parsed = plan_slots(slots)
    p = greedy_by_size(parsed)
    return {"offsets": p.offsets, "pool_bytes": p.pool_bytes,
            "lower_bound": live_lower_bound(parsed)}


def scattered_slots(n: int, seed: int, max_nbytes: int = 1 << 20, max_span: int = 64
                    ) -> list[PlanSlot]:
    """n internal slots drawn by random.Random(seed): for each, nbytes in [1, max_nbytes), birth
    in [0, n), death = birth + a span in [0, max_span); the erratum E10.1 witness's inputs."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        nbytes, birth = rng.randrange(1, max_nbytes), rng.randrange(n)
        out.append(PlanSlot(nbytes, birth, birth + rng.randrange(max_span)))
    return out


@st.composite
def slot_sets(draw, max_slots: int = 40, max_op: int = 30) -> dict:
    """Random slots: mostly internal with lifetimes inside max_op ops, some external."""
    out = []
    for _ in range(draw(st.integers(0, max_slots))):
        birth = draw(st.integers(0, max_op))
        out.append({"nbytes": draw(st.integers(0, 5000) | st.sampled_from([0, 256, 257])),
                    "birth_op": birth, "death_op": draw(st.integers(birth, max_op)),
                    "is_external": draw(st.integers(0, 4)) == 0})
    return {"slots": out}
