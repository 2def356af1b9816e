"""Chapter 19 obligations of RingKernel's hybrid logical clock: z3 over the spec's own tick,
update, device_update, pack and unpack applied to 64-bit symbols (PO19.1-PO19.5, PO19.9), the
order as a property (PO19.6), concurrent ticks as a model (PO19.7), and the wire ops'
boundaries (PO19.8)."""

from __future__ import annotations

import itertools

import z3
from hypothesis import strategies as st

from ...spec.core.registry import Mutant
from ...spec.ringkernel.hlc.clock import (
    CLOCK_SKEW,
    E19_1,
    LOGICAL_OVERFLOW,
    OK,
    U64_MAX,
    HlcTimestamp,
    _bumped,
    compare,
    device_receive,
    device_update,
    pack,
    precedes,
    skewed,
    tick,
    unpack,
    update,
)
from ...spec.ringkernel.hlc.concurrency import packed_step, tick_machine
from ...spec.ringkernel.hlc.ops import (
    _update_result,
    compare_domain,
    compare_op,
    pack_domain,
    pack_op,
    unpack_op,
    update_op,
)
from ..core.obligation import Property, Query, model_obligation, property_obligation, z3_obligation


def _stamp(name: str) -> HlcTimestamp:
    return HlcTimestamp(*(z3.BitVec(f"{name}.{f}", 64) for f in ("physical", "logical",
                                                                  "node_id")))


def _same(a: HlcTimestamp, b: HlcTimestamp) -> z3.BoolRef:
    return z3.And(a.physical == b.physical, a.logical == b.logical, a.node_id == b.node_id)


NO_INCREMENT = Mutant.edit("no increment", "the logical counter is not incremented", _bumped,
                           "add(base, 1)", "base")
NO_OVERFLOW_CHECK = Mutant.edit("wraps at 2^64", "an increment past 2^64 - 1 wraps (E19.4)",
                                _bumped, "base == U64_MAX", "False")


@z3_obligation(
    "PO19.1",
    "tick, for every clock and 64-bit wall clock: an issued timestamp is after the clock (same "
    "node) and its physical is >= wall; the tick is refused (logical_overflow) exactly when "
    "wall <= P and L = 2^64 - 1, and a refusal leaves the clock as it was.",
    covers=("hlc.tick",),
    subject=tick,
    mutants=(NO_INCREMENT, NO_OVERFLOW_CHECK,
             Mutant.edit("advances on equal", "a wall clock equal to P resets logical to 0",
                         tick, "_ult(clock.physical, wall)", "ule(clock.physical, wall)")),
)
def tick_increases(f):
    c, wall = _stamp("clock"), z3.BitVec("wall", 64)
    r = f(c, wall)
    ok = r.outcome == OK
    refuse = z3.And(z3.ULE(wall, c.physical), c.logical == U64_MAX)
    return [Query("an issued timestamp is after the clock", z3.And(ok, z3.Not(precedes(c,
                                                                                      r.clock)))),
            Query("an issued physical is >= wall", z3.And(ok, z3.ULT(r.clock.physical, wall))),
            Query("refused exactly at L = 2^64 - 1 with wall <= P",
                  (r.outcome == LOGICAL_OVERFLOW) != refuse),
            Query("a refusal keeps the clock", z3.And(z3.Not(ok), z3.Not(_same(r.clock, c))))]


@z3_obligation(
    "PO19.2",
    "update, for every clock, received timestamp (any node), wall clock and drift bound: an "
    "issued timestamp is after the received one and after the clock, its physical is >= wall "
    "and >= recv.physical; a refusal leaves the clock as it was.",
    covers=("hlc.update",),
    subject=update,
    mutants=(NO_INCREMENT, NO_OVERFLOW_CHECK,
             Mutant.edit("local logical on a tie", "p == P == recv.p takes L + 1", update,
                         "_umax(clock.logical, recv.logical)", "clock.logical"),
             Mutant.edit("wall ignored", "p = max(P, recv.p)", update,
                         "_umax(_umax(wall, clock.physical), recv.physical)",
                         "_umax(clock.physical, recv.physical)"),
             Mutant.edit("reset when recv wins", "logical 0 unless the local physical wins",
                         update, "_and(_not(local), _not(remote))", "_not(local)"),
             Mutant.edit("device rule", "update is the device's receive (E19.1's rule)",
                         update, "p = _umax(_umax(wall, clock.physical), recv.physical)",
                         "return device_receive(clock, recv, errata)")),
)
def update_follows(f):
    c, m = _stamp("clock"), _stamp("recv")
    wall, drift = z3.BitVec("wall", 64), z3.BitVec("max_drift_us", 64)
    r = f(c, m, wall, drift)
    ok = r.outcome == OK
    p = r.clock.physical
    return [Query("issued after the received timestamp", z3.And(ok, z3.Not(precedes(m,
                                                                                   r.clock)))),
            Query("issued after the clock", z3.And(ok, z3.Not(precedes(c, r.clock)))),
            Query("physical >= wall and >= recv.physical",
                  z3.And(ok, z3.Or(z3.ULT(p, wall), z3.ULT(p, m.physical)))),
            Query("a refusal keeps the clock", z3.And(z3.Not(ok), z3.Not(_same(r.clock, c))))]


@z3_obligation(
    "PO19.3",
    "update refuses a message as clock_skew exactly when recv.physical > wall + max_drift_us "
    "as integers (the sum taken in 128 bits, so it never wraps), for every 64-bit clock, "
    "message, wall clock and bound.",
    covers=("hlc.update",),
    subject=update,
    mutants=(Mutant.edit("inclusive bound", "recv.physical >= wall + max_drift_us is refused",
                         skewed, "z3.UGT(wide[0], wide[1] + wide[2])",
                         "z3.UGE(wide[0], wide[1] + wide[2])"),
             Mutant.edit("64-bit sum", "wall + max_drift_us wraps at 2^64 (RingKernel's "
                         "release build)", skewed,
                         "z3.ZeroExt(1, x) if is_symbolic(x) else z3.BitVecVal(x, 65)", "x"),
             Mutant.edit("no skew check", "every message is accepted", update,
                         "select(skew, CLOCK_SKEW, bumped.outcome)", "bumped.outcome")),
)
def skew_boundary(f):
    c, m = _stamp("clock"), _stamp("recv")
    wall, drift = z3.BitVec("wall", 64), z3.BitVec("max_drift_us", 64)
    r = f(c, m, wall, drift)
    wide = [z3.ZeroExt(64, x) for x in (m.physical, wall, drift)]
    return [Query("clock_skew iff recv.physical > wall + max_drift_us",
                  (r.outcome == CLOCK_SKEW) != z3.UGT(wide[0], wide[1] + wide[2]))]


@z3_obligation(
    "PO19.4",
    "For timestamps with logical < 2^48 and node_id < 2^16: pack(a) < pack(b) as unsigned "
    "128-bit integers exactly when a is before b, and unpack(pack(a)) == a.",
    covers=("hlc.pack", "hlc.unpack", "hlc.compare"),
    subject=pack,
    mutants=(Mutant.edit("logical at bit 15", "logical is shifted by 15", pack,
                         "shl(zext(ts.logical, 128), 16, 128)",
                         "shl(zext(ts.logical, 128), 15, 128)"),
             Mutant.edit("physical at bit 63", "physical is shifted by 63", pack,
                         "shl(zext(ts.physical, 128), 64, 128)",
                         "shl(zext(ts.physical, 128), 63, 128)"),
             Mutant.edit("47-bit logical", "unpack keeps 47 bits of logical", unpack,
                         "mask(LOGICAL_BITS)", "mask(LOGICAL_BITS - 1)")),
)
def pack_keeps_order(f):
    a, b = _stamp("a"), _stamp("b")

    def fits(t: HlcTimestamp) -> z3.BoolRef:
        return z3.And(z3.ULT(t.logical, 2**48), z3.ULT(t.node_id, 2**16))

    return [Query("pack keeps the order", z3.And(fits(a), fits(b),
                                                 precedes(a, b) != z3.ULT(f(a), f(b)))),
            Query("unpack(pack(a)) == a", z3.And(fits(a), z3.Not(_same(unpack(f(a)), a))))]


@z3_obligation(
    "PO19.5",
    "The device's receive rule (E19.1) can issue a timestamp that is not after the message it "
    "received: z3 finds a clock and message for it (sat), which the host rule never allows "
    "(PO19.2).",
    covers=("hlc.device_update",),
    subject=device_receive,
    mutants=(Mutant.edit("device reads msg.logical", "the device takes max(L, msg.l) on a tie "
                         "and msg.l when the message is ahead", device_receive,
                         "select(ahead, 0, clock.logical)",
                         "select(ahead, recv.logical, _umax(clock.logical, recv.logical))"),
             Mutant.edit("host rule", "device_update ignores E19.1", device_update,
                         "if E19_1 in errata:", "if False:")),
)
def device_breaks_causality(_subject):
    c, m = _stamp("clock"), _stamp("recv")
    wall, drift = z3.BitVec("wall", 64), z3.BitVec("max_drift_us", 64)
    r = device_update(c, m, wall, drift, frozenset({E19_1}))
    return [Query("a device timestamp not after its message",
                  z3.And(r.outcome == OK, z3.Not(precedes(m, r.clock))), expect="sat")]


@z3_obligation(
    "PO19.9",
    "device_update without errata is the host rule: for every 64-bit clock, message, wall "
    "clock and drift bound it issues what update issues (or refuses as update refuses), so a "
    "kernel receiving on the device keeps PO19.2's causality.",
    covers=("hlc.device_update",),
    subject=device_update,
    mutants=(Mutant.edit("device rule always", "the device's receive whatever the profile",
                         device_update, "if E19_1 in errata:", "if True:"),
             Mutant.edit("no skew check on the device", "the device ignores the drift "
                         "bound: update's rule with max_drift_us = 2^64 - 1", device_update,
                         "return update(clock, recv, wall, max_drift_us, errata)",
                         "return update(clock, recv, wall, U64_MAX, errata)")),
)
def device_is_host_rule(f):
    c, m = _stamp("clock"), _stamp("recv")
    wall, drift = z3.BitVec("wall", 64), z3.BitVec("max_drift_us", 64)
    dev, host = f(c, m, wall, drift), update(c, m, wall, drift)
    return [Query("device_update differs from update",
                  z3.Or(dev.outcome != host.outcome, z3.Not(_same(dev.clock, host.clock))))]


SMALL = [HlcTimestamp(*t) for t in itertools.product((0, 1, 2**64 - 1), repeat=3)]


def _order(pair: tuple[HlcTimestamp, HlcTimestamp]) -> None:
    a, b = pair
    ka, kb = (a.physical, a.logical, a.node_id), (b.physical, b.logical, b.node_id)
    assert compare(a, b) == (ka > kb) - (ka < kb), (ka, kb)
    assert compare(a, b) == -compare(b, a)


def _transitive(triple: tuple[HlcTimestamp, ...]) -> None:
    a, b, c = triple
    if compare(a, b) <= 0 and compare(b, c) <= 0:
        assert compare(a, c) <= 0, triple


def _wire_order(args: dict) -> None:
    ka, kb = (tuple(args[s][f] for f in ("physical", "logical", "node_id")) for s in "ab")
    assert compare_op(args["a"], args["b"])["order"] == (ka > kb) - (ka < kb)


@property_obligation(
    "PO19.6",
    "compare is the lexicographic order on (physical, logical, node_id): antisymmetric, "
    "transitive, total, over every pair and triple of timestamps with fields 0, 1 and "
    "2^64 - 1, and generated wire pairs.",
    covers=("hlc.compare",),
    subject=compare,
    mutants=(Mutant.edit("node ignored", "node_id does not break ties", precedes,
                         "_ult(a.node_id, b.node_id)", "False"),
             Mutant.edit("logical reversed", "a larger logical sorts first", precedes,
                         "_ult(a.logical, b.logical)", "_ult(b.logical, a.logical)"),
             Mutant.edit("logical first", "logical is compared before physical", precedes,
                         "_ult(a.physical, b.physical),", "_ult(a.logical, b.logical),")),
)
def order_is_lexicographic(_subject):
    return [Property("pairs of small timestamps", _order,
                     cases=lambda: itertools.product(SMALL, repeat=2)),
            Property("triples of small timestamps", _transitive,
                     cases=lambda: itertools.product(SMALL, repeat=3)),
            Property("generated wire pairs", _wire_order, strategy=compare_domain,
                     examples=500)]


@model_obligation(
    "PO19.7",
    "The spec's single-word tick keeps 'no two ticks return one timestamp' over every "
    "interleaving of two threads ticking twice from (5, 0), each tick reading a wall clock of "
    "5 or 6 (and of three threads ticking once).",
    covers=("hlc.tick",),
    subject=tick_machine,
    mutants=(Mutant.edit("CAS on physical only", "the swap compares physical alone (RingKernel)",
                         packed_step, "if (s.physical, s.logical) == t.seen:",
                         "if s.physical == t.seen[0]:"),
             Mutant.edit("plain store", "the word is written without comparing", packed_step,
                         "if (s.physical, s.logical) == t.seen:", "if True:"),
             Mutant.edit("no re-read", "a failed swap returns what it computed", packed_step,
                         "return s, replace(t, pc=READ_P)", "return s, replace(t, pc=RETURN)")),
)
def ticks_are_unique(machine):
    return [machine(), machine(threads=3, ticks=1)]


def _boundary(args: dict) -> None:
    wall, drift = args["wall"], args["drift"]
    clock, recv = {"physical": 0, "logical": 0, "node_id": 1}, args["recv"]
    at = update_op(clock, {**recv, "physical": wall + drift}, wall, drift) \
        if wall + drift <= U64_MAX else None
    assert at is None or at["outcome"] != CLOCK_SKEW, at
    past = wall + drift + 1
    if past <= U64_MAX:
        out = update_op(clock, {**recv, "physical": past}, wall, drift)
        assert out["outcome"] == CLOCK_SKEW and out["skew_us"] == drift + 1, out
        assert out["skew_ms"] == (drift + 1) // 1000 and out["max_ms"] == drift // 1000, out


def _round_trip(args: dict) -> None:
    assert unpack_op(pack_op(**args)["packed"]) == args


def _u64() -> st.SearchStrategy:
    return st.integers(0, 5) | st.integers(0, U64_MAX)


@property_obligation(
    "PO19.8",
    "On the wire: a message exactly max_drift_us ahead is accepted and one microsecond more is "
    "refused as clock_skew with skew_us = max_drift_us + 1 and RingKernel's floored skew_ms "
    "and max_ms; pack then unpack gives a timestamp back (logical < 2^48, node_id < 2^16).",
    covers=("hlc.update", "hlc.pack", "hlc.unpack"),
    subject=update_op,
    mutants=(Mutant.edit("inclusive bound", "a message exactly at the bound is refused",
                         skewed, "return recv_physical > wall + max_drift_us",
                         "return recv_physical >= wall + max_drift_us"),
             Mutant.edit("skew in ms", "skew_ms is not floored from microseconds",
                         _update_result, '"skew_ms": skew_us // 1000',
                         '"skew_ms": skew_us // 1000 + 1')),
)
def wire_boundaries(_subject):
    stamp = st.fixed_dictionaries({"physical": _u64(), "logical": _u64(), "node_id": _u64()})
    cases = st.fixed_dictionaries({"wall": _u64(), "drift": _u64(), "recv": stamp})
    return [Property("the skew boundary", _boundary, strategy=lambda: cases, examples=400),
            Property("pack then unpack", _round_trip, strategy=pack_domain, examples=400)]
