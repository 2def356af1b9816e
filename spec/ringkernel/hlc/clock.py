"""Chapter 19: RingKernel's hybrid logical clock (HLC): timestamps, their order and packing,
and the tick and receive rules.

A timestamp is (physical, logical, node_id), u64 each, physical in microseconds. A clock is
the timestamp it last issued (its node_id is the clock's own).

1. Order: lexicographic on (physical, logical, node_id), so node_id breaks ties.
2. tick(clock, wall): if wall > P the result is (wall, 0), else (P, L + 1); it carries the
   clock's node_id and becomes the clock.
3. update(clock, recv, wall, max_drift_us): a message with recv.physical > wall + max_drift_us
   (exact, no 64-bit wrap; RingKernel's release build wraps the sum, E19.6) is refused as
   clock_skew. Otherwise p = max(wall, P, recv.p) and L' = max(L, recv.l) + 1 if p == P ==
   recv.p; L + 1 if p == P only; recv.l + 1 if p == recv.p only; 0 if the wall clock alone
   wins. The result (p, L', own node_id) becomes the clock. A kernel receiving on the device
   follows the same rule (RingKernel's generated kernel has a rule of its own, E19.1).
4. A logical counter never wraps: a tick or update that would need L' = 2^64 is refused as
   logical_overflow. A refused call leaves the clock as it was and issues nothing.
5. pack: physical << 64 | logical << 16 | node_id into 128 bits, for logical < 2^48 and
   node_id < 2^16 (anything else is refused as invalid input: it would not round-trip, nor
   keep the order). unpack reads the three fields back, logical masked to 48 bits.

Every rule is written once for Python ints and z3 bit-vectors (spec/core/bits.py), so the proofs
call these very functions on symbols.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core.bits import (
    BitVal,
    add,
    is_symbolic,
    mask,
    select,
    shl,
    shr,
    trunc,
    ule,
    z3_module,
    zext,
)
from ...core.errata import NO_ERRATA, SEEDS
from ...core.layout import Member, struct, u64

RINGKERNEL = SEEDS["ringkernel"]
"""The seed whose structs these are."""

U64_MAX = mask(64)
LOGICAL_BITS = 48
"""Bits of the logical counter in a packed timestamp. Real code: hlc.rs, HlcTimestamp::pack."""
NODE_BITS = 16
"""Bits of node_id in a packed timestamp (RingKernel truncates node_id to them)."""
MAX_CLOCK_SKEW_MS = 60_000
"""RingKernel's default bound on how far ahead a message may be. Real code: hlc.rs."""
OK, CLOCK_SKEW, LOGICAL_OVERFLOW = range(3)
OUTCOMES = ("ok", "clock_skew", "logical_overflow")
"""What a tick or update reports: a timestamp issued, or why the call was refused."""

E19_1 = "E19.1"
"""The generated CUDA kernel's receive rule (ignores msg.logical and the wall clock)."""
E19_2 = "E19.2"
"""pack does not mask logical: logical >= 2^48 spills into the physical bits."""
E19_3 = "E19.3"
"""pack truncates node_id to 16 bits."""
E19_4 = "E19.4"
"""The logical counter wraps to 0 at 2^64 (release build)."""
E19_6 = "E19.6"
"""wall + max_drift_us wraps at 2^64 (release build)."""

HLC_TIMESTAMP = struct("HlcTimestamp", [
    Member("physical", u64, doc="microseconds since the UNIX epoch"),
    Member("logical", u64, doc="counter for events at one physical time"),
    Member("node_id", u64, doc="breaks ties between nodes"),
], size=24, align=8, chapter=19, seed=RINGKERNEL,
   doc="repr(C, align(8)): one HLC timestamp, 24 bytes.")

HLC_STATE = struct("HlcState", [
    Member("physical", u64, doc="microseconds"),
    Member("logical", u64, doc="logical counter"),
], size=16, align=16, alignas=16, chapter=19, seed=RINGKERNEL,
    doc="repr(C, align(16)): the GPU control block's HLC state, without node_id.")


@dataclass(frozen=True)
class HlcTimestamp:
    """(physical, logical, node_id): ints, or z3 bit-vectors of 64 bits."""

    physical: BitVal
    logical: BitVal
    node_id: BitVal


@dataclass(frozen=True)
class HlcOutcome:
    """The clock after a tick or update, and the outcome (OK, CLOCK_SKEW, LOGICAL_OVERFLOW).
    On a refusal the clock is the one before the call."""

    clock: HlcTimestamp
    outcome: Any


def _ult(a: BitVal, b: BitVal) -> Any:
    """Unsigned a < b."""
    if is_symbolic(a) or is_symbolic(b):
        return z3_module().ULT(a, b)
    return a < b


def _umax(a: BitVal, b: BitVal) -> BitVal:
    return select(ule(a, b), b, a)


def _and(*cs: Any) -> Any:
    if any(not isinstance(c, bool) for c in cs):
        return z3_module().And(*cs)
    return all(cs)


def _not(c: Any) -> Any:
    return not c if isinstance(c, bool) else z3_module().Not(c)


def _or(*cs: Any) -> Any:
    if any(not isinstance(c, bool) for c in cs):
        return z3_module().Or(*cs)
    return any(cs)


def _pick(cond: Any, a: HlcTimestamp, b: HlcTimestamp) -> HlcTimestamp:
    """a if cond else b, field by field."""
    return HlcTimestamp(select(cond, a.physical, b.physical), select(cond, a.logical, b.logical),
                        select(cond, a.node_id, b.node_id))


def precedes(a: HlcTimestamp, b: HlcTimestamp) -> Any:
    """Step 1: a < b, lexicographic on (physical, logical, node_id)."""
    return _or(_ult(a.physical, b.physical),
               _and(a.physical == b.physical,
                    _or(_ult(a.logical, b.logical),
                        _and(a.logical == b.logical, _ult(a.node_id, b.node_id)))))


def compare(a: HlcTimestamp, b: HlcTimestamp) -> Any:
    """-1, 0 or 1 as a is before, equal to or after b."""
    return select(precedes(a, b), -1, select(precedes(b, a), 1, 0))


def _bumped(clock: HlcTimestamp, fresh: Any, p: BitVal, base: BitVal,
            errata: frozenset[str]) -> HlcOutcome:
    """Step 4: the clock becomes (p, base + 1), or (p, 0) when `fresh`; an increment past
    2^64 - 1 is refused (E19.4: it wraps to 0)."""
    overflow = _and(_not(fresh), base == U64_MAX)
    new = HlcTimestamp(p, select(fresh, 0, add(base, 1)), clock.node_id)
    if E19_4 in errata:
        return HlcOutcome(new, OK)
    return HlcOutcome(_pick(overflow, clock, new), select(overflow, LOGICAL_OVERFLOW, OK))


def tick(clock: HlcTimestamp, wall: BitVal, errata: frozenset[str] = NO_ERRATA) -> HlcOutcome:
    """Step 2: (wall, 0) if wall > P, else (P, L + 1)."""
    advance = _ult(clock.physical, wall)
    return _bumped(clock, advance, select(advance, wall, clock.physical), clock.logical, errata)


def skewed(recv_physical: BitVal, wall: BitVal, max_drift_us: BitVal,
           errata: frozenset[str] = NO_ERRATA) -> Any:
    """Step 3's refusal: recv.physical > wall + max_drift_us, the sum taken exactly (E19.6:
    mod 2^64)."""
    if E19_6 in errata:
        return _ult(add(wall, max_drift_us), recv_physical)
    if not (is_symbolic(recv_physical) or is_symbolic(wall) or is_symbolic(max_drift_us)):
        return recv_physical > wall + max_drift_us
    z3 = z3_module()
    wide = [z3.ZeroExt(1, x) if is_symbolic(x) else z3.BitVecVal(x, 65)
            for x in (recv_physical, wall, max_drift_us)]
    return z3.UGT(wide[0], wide[1] + wide[2])


def device_receive(clock: HlcTimestamp, recv: HlcTimestamp,
                   errata: frozenset[str] = NO_ERRATA) -> HlcOutcome:
    """E19.1: the generated kernel's receive: if recv.p > P then (recv.p, 0); then L + 1."""
    ahead = _ult(clock.physical, recv.physical)
    return _bumped(clock, False, select(ahead, recv.physical, clock.physical),
                   select(ahead, 0, clock.logical), errata)


def update(clock: HlcTimestamp, recv: HlcTimestamp, wall: BitVal, max_drift_us: BitVal,
           errata: frozenset[str] = NO_ERRATA) -> HlcOutcome:
    """Step 3, the host's HlcClock::update."""
    p = _umax(_umax(wall, clock.physical), recv.physical)
    local, remote = p == clock.physical, p == recv.physical
    base = select(_and(local, remote), _umax(clock.logical, recv.logical),
                  select(local, clock.logical, recv.logical))
    bumped = _bumped(clock, _and(_not(local), _not(remote)), p, base, errata)
    skew = skewed(recv.physical, wall, max_drift_us, errata)
    return HlcOutcome(_pick(skew, clock, bumped.clock), select(skew, CLOCK_SKEW, bumped.outcome))


def device_update(clock: HlcTimestamp, recv: HlcTimestamp, wall: BitVal, max_drift_us: BitVal,
                  errata: frozenset[str] = NO_ERRATA) -> HlcOutcome:
    """Step 3 on the device: the host rule (E19.1: the generated kernel's receive, which reads
    neither the wall clock nor recv.l)."""
    if E19_1 in errata:
        return device_receive(clock, recv, errata)
    return update(clock, recv, wall, max_drift_us, errata)


def pack(ts: HlcTimestamp) -> BitVal:
    """Step 5: physical << 64 | logical << 16 | node_id & 0xFFFF, 128 bits (the caller checks
    the field ranges; the node mask is RingKernel's)."""
    return (shl(zext(ts.physical, 128), 64, 128) | shl(zext(ts.logical, 128), 16, 128)
            | zext(ts.node_id, 128) & mask(NODE_BITS))


def unpack(packed: BitVal) -> HlcTimestamp:
    """Step 5's inverse: physical = the high 64 bits, logical = 48 bits from bit 16, node_id =
    the low 16 bits."""
    return HlcTimestamp(trunc(shr(packed, 64), 64),
                        trunc(shr(packed, NODE_BITS) & mask(LOGICAL_BITS), 64),
                        trunc(packed & mask(NODE_BITS), 64))
