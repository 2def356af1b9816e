"""Chapter 19 wire ops of RingKernel's hybrid logical clock: hlc.tick, hlc.update (the host's
HlcClock::update), hlc.device_update (a kernel receiving on the device), hlc.pack, hlc.unpack
and hlc.compare, with the errata of RingKernel 1.1.0 against spec/ringkernel/hlc/clock.py.

A clock or timestamp on the wire is {physical, logical, node_id}, u64 integers, microseconds.
A tick or update answers the clock after the call: ok with the issued timestamp, or ok false
with the outcome (clock_skew, logical_overflow) and the clock unchanged.
"""

from __future__ import annotations

from ...core.errata import NO_ERRATA, SEEDS, erratum
from ...core.errors import InvalidInput
from ...core.registry import InvalidCase, declare
from ...core.schema import BOOL, I8, U64, Field, Int, record
from ...core.strategies import st
from ...pyc.wire import Named
from .clock import (
    CLOCK_SKEW,
    E19_1,
    E19_2,
    E19_3,
    E19_4,
    E19_6,
    LOGICAL_BITS,
    MAX_CLOCK_SKEW_MS,
    NODE_BITS,
    OK,
    OUTCOMES,
    U64_MAX,
    HlcOutcome,
    HlcTimestamp,
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

SEED = SEEDS["ringkernel"]
WHERE = "crates/ringkernel-core/src/hlc.rs"
HEX128 = Int(128, hex=True)
TIMESTAMP = record(physical=Field(U64, "microseconds since the UNIX epoch"),
                   logical=Field(U64, "logical counter"),
                   node_id=Field(U64, "node identifier (tie-breaker)"))
OUTCOME = Named(OUTCOMES, "hlc outcome")
CLOCK_RESULT = dict(ok=Field(BOOL, "a timestamp was issued"),
                    outcome=Field(OUTCOME, "ok, or why the call was refused"),
                    physical=Field(U64, "the clock after the call (the issued timestamp)"),
                    logical=U64, node_id=Field(U64, "the clock's own node_id"))
DEFAULT_DRIFT_US = MAX_CLOCK_SKEW_MS * 1000


def ts(w: dict) -> HlcTimestamp:
    return HlcTimestamp(w["physical"], w["logical"], w["node_id"])


def _clock_result(r: HlcOutcome) -> dict:
    c = r.clock
    return {"ok": r.outcome == OK, "outcome": r.outcome, "physical": c.physical,
            "logical": c.logical, "node_id": c.node_id}


def tick_op(clock: dict, wall: int, errata: frozenset[str] = NO_ERRATA) -> dict:
    return _clock_result(tick(ts(clock), wall, errata))


def _update_result(r: HlcOutcome, recv: dict, wall: int, max_drift_us: int) -> dict:
    """The clock, and on clock_skew RingKernel's ClockSkew: recv.physical - wall (mod 2^64:
    with E19.6 a message behind the wall clock can be refused) in us and floored ms."""
    skew_us = (recv["physical"] - wall) % 2**64 if r.outcome == CLOCK_SKEW else 0
    return _clock_result(r) | {"skew_us": skew_us, "skew_ms": skew_us // 1000,
                               "max_ms": max_drift_us // 1000 if r.outcome == CLOCK_SKEW else 0}


def update_op(clock: dict, recv: dict, wall: int, max_drift_us: int,
              errata: frozenset[str] = NO_ERRATA) -> dict:
    r = update(ts(clock), ts(recv), wall, max_drift_us, errata)
    return _update_result(r, recv, wall, max_drift_us)


def device_update_op(clock: dict, recv: dict, wall: int, max_drift_us: int,
                     errata: frozenset[str] = NO_ERRATA) -> dict:
    r = device_update(ts(clock), ts(recv), wall, max_drift_us, errata)
    return _update_result(r, recv, wall, max_drift_us)


def pack_op(physical: int, logical: int, node_id: int,
            errata: frozenset[str] = NO_ERRATA) -> dict:
    if logical >> LOGICAL_BITS and E19_2 not in errata:
        raise InvalidInput(f"args.logical: {logical} does not fit the 48 bits a packed "
                           f"timestamp holds")
    if node_id >> NODE_BITS and E19_3 not in errata:
        raise InvalidInput(f"args.node_id: {node_id} does not fit the 16 bits a packed "
                           f"timestamp holds")
    return {"packed": pack(HlcTimestamp(physical, logical, node_id))}


def unpack_op(packed: int) -> dict:
    return vars(unpack(packed))


def compare_op(a: dict, b: dict) -> dict:
    return {"order": compare(ts(a), ts(b))}


def _t(physical: int, logical: int, node_id: int = 1) -> dict:
    return {"physical": physical, "logical": logical, "node_id": node_id}


def _u64s() -> st.SearchStrategy:
    """Small values (so fields collide and every branch is taken), the ends, and any u64."""
    return st.integers(0, 6) | st.sampled_from([U64_MAX - 1, U64_MAX]) | st.integers(0, U64_MAX)


def _stamps(node: st.SearchStrategy | None = None) -> st.SearchStrategy:
    return st.builds(_t, _u64s(), _u64s(), node or st.integers(0, 3) | st.integers(0, U64_MAX))


def tick_domain() -> st.SearchStrategy:
    return st.fixed_dictionaries({"clock": _stamps(), "wall": _u64s()})


def update_domain() -> st.SearchStrategy:
    return st.fixed_dictionaries({"clock": _stamps(), "recv": _stamps(), "wall": _u64s(),
                                  "max_drift_us": st.integers(0, 6) | _u64s()})


def pack_domain() -> st.SearchStrategy:
    return st.fixed_dictionaries({"physical": _u64s(),
                                  "logical": st.integers(0, 6) | st.integers(0, 2**48 - 1),
                                  "node_id": st.integers(0, 3) | st.integers(0, 2**16 - 1)})


def compare_domain() -> st.SearchStrategy:
    small = st.builds(_t, st.integers(0, 2), st.integers(0, 2), st.integers(0, 2))
    return st.fixed_dictionaries({"a": small | _stamps(), "b": small | _stamps()})


HOST_ORDER = (_t(100, 0), _t(100, 1), _t(101, 0))
"""The facts sheet's host vectors: (100,0,1) < (100,1,1) < (101,0,1)."""
SKEW = {"clock": _t(1_000_000_000, 0), "recv": _t(1_200_000_000, 0, 2), "wall": 1_000_000_000,
        "max_drift_us": 100_000}
"""A message 200 s ahead of a wall clock, 100 ms allowed: ClockSkew."""
GPU = {"clock": _t(5, 0), "recv": _t(5, 7, 2), "wall": 5, "max_drift_us": DEFAULT_DRIFT_US}
"""Local (5, 0), message (5, 7): the host rule gives (5, 8), the device rule (5, 1)."""
OVERFLOW_TICK = {"clock": _t(5, U64_MAX), "wall": 5}
OVERFLOW_UPDATE = {"clock": _t(5, U64_MAX), "recv": _t(5, 0, 2), "wall": 5,
                   "max_drift_us": DEFAULT_DRIFT_US}
WRAP = {"clock": _t(1, 0), "recv": _t(U64_MAX, 0, 2), "wall": 5, "max_drift_us": U64_MAX}
"""wall + max_drift_us = 2^64 + 4: RingKernel's release build sums to 4 and refuses."""
BEHIND = {"clock": _t(1, 0), "recv": _t(7, 0, 2), "wall": 10, "max_drift_us": U64_MAX - 4}
"""A message behind the wall clock, refused when the sum wraps to 5."""


def tick_edges() -> list[dict]:
    return [{"clock": _t(100, 0), "wall": 101}, {"clock": _t(100, 0), "wall": 100},
            {"clock": _t(100, 4), "wall": 99}, {"clock": _t(0, 0, 0), "wall": 0},
            {"clock": _t(U64_MAX, 3), "wall": U64_MAX}, OVERFLOW_TICK,
            {"clock": _t(5, U64_MAX), "wall": 6}]


def _up(clock: dict, recv: dict, wall: int, drift: int = DEFAULT_DRIFT_US) -> dict:
    return {"clock": clock, "recv": recv, "wall": wall, "max_drift_us": drift}


def update_edges() -> list[dict]:
    up = _up
    return [GPU, SKEW, OVERFLOW_UPDATE, WRAP, BEHIND,
            up(_t(10, 3), _t(10, 5, 2), 10), up(_t(10, 6), _t(10, 5, 2), 9),
            up(_t(10, 3), _t(8, 9, 2), 9), up(_t(8, 3), _t(10, 5, 2), 9),
            up(_t(8, 3), _t(9, 5, 2), 12), up(_t(8, 3), _t(110, 5, 2), 10, 100),
            up(_t(8, 3), _t(111, 5, 2), 10, 100), up(_t(1, 0), _t(U64_MAX, 0, 2), 5, U64_MAX),
            up(_t(1, 0), _t(5, U64_MAX, 2), 5), up(_t(1, 0), _t(3, 0, 2), 2, 0)]


def device_update_edges() -> list[dict]:
    return [GPU, SKEW, OVERFLOW_UPDATE, _up(_t(10, 3), _t(12, 5, 2), 9),
            _up(_t(12, 3), _t(10, 5, 2), 15), _up(_t(7, U64_MAX), _t(9, 0, 2), 1)]


def pack_edges() -> list[dict]:
    return [_t(100, 5, 1), _t(0, 0, 0), _t(U64_MAX, 2**48 - 1, 2**16 - 1), _t(1, 2**47, 7)]


def unpack_edges() -> list[dict]:
    return [{"packed": 0}, {"packed": 2**128 - 1}, {"packed": (100 << 64) | (5 << 16) | 1}]


def compare_edges() -> list[dict]:
    lo, mid, hi = HOST_ORDER
    return [{"a": lo, "b": mid}, {"a": mid, "b": hi}, {"a": hi, "b": lo}, {"a": lo, "b": lo},
            {"a": _t(100, 5, 1), "b": _t(100, 5, 2)}, {"a": _t(0, 0, 9), "b": _t(0, 0, 0)}]


_TICK_INVALID = (
    InvalidCase("a string for clock.physical", lambda: st.just(
        {"clock": {**_t(1, 0), "physical": "soon"}, "wall": 1}), "bad_request"),
    InvalidCase("a negative wall clock", lambda: st.just({"clock": _t(1, 0), "wall": -1})),
    InvalidCase("a logical counter of 2^64", lambda: st.just(
        {"clock": _t(1, 2**64), "wall": 1})),
)

declare(
    "hlc.tick", chapter=19,
    summary="HlcClock::tick: (wall, 0) if the wall clock is past the clock, else (P, L + 1); "
            "a logical counter at 2^64 - 1 is refused, not wrapped.",
    args=record(clock=Field(TIMESTAMP, "the clock: the timestamp it last issued"),
                wall=Field(U64, "the wall clock now, microseconds")),
    result=record(**CLOCK_RESULT),
    spec=(tick,), errata=(E19_4,), domain=tick_domain, edges=tick_edges, invalid=_TICK_INVALID,
    not_applicable={"numba": "one clock step per call, state carried from call to call",
                    "cupy": "one clock step per call: nothing to spread over a device"},
)
UPDATE_ARGS = record(clock=Field(TIMESTAMP, "the receiver's clock"),
                     recv=Field(TIMESTAMP, "the received timestamp"),
                     wall=Field(U64, "the wall clock now, microseconds"),
                     max_drift_us=Field(U64, "how far ahead of the wall clock a message may be",
                                        DEFAULT_DRIFT_US))
UPDATE_RESULT = record(**CLOCK_RESULT,
                       skew_us=Field(U64, "on clock_skew: recv.physical - wall; else 0"),
                       skew_ms=Field(U64, "ClockSkew.skew_ms: skew_us / 1000, floored"),
                       max_ms=Field(U64, "ClockSkew.max_ms: max_drift_us / 1000, floored"))
"""The arguments and result of a receive, on the host (hlc.update) and on the device."""
declare(
    "hlc.update", chapter=19,
    summary="HlcClock::update on receiving a timestamp (the host): refuse a message more "
            "than max_drift_us ahead of the wall clock, else max of wall, local and received "
            "physical with the logical rule of §3.2.",
    args=UPDATE_ARGS, result=UPDATE_RESULT,
    spec=(update, skewed), errata=(E19_4, E19_6), domain=update_domain,
    edges=update_edges,
    invalid=(InvalidCase("a string for recv.logical", lambda: st.just(
                 {**GPU, "recv": {**_t(5, 0), "logical": "seven"}}), "bad_request"),
             InvalidCase("a negative max_drift_us", lambda: st.just({**GPU, "max_drift_us": -5})),
             InvalidCase("a received physical of 2^64", lambda: st.just(
                 {**GPU, "recv": _t(2**64, 0)}))),
    not_applicable={"numba": "one clock step per call, state carried from call to call",
                    "cupy": "one clock step per call: nothing to spread over a device"},
)
declare(
    "hlc.device_update", chapter=19,
    summary="A kernel receiving a timestamp on the device: the host's receive rule, "
            "hlc.update's (RingKernel's generated kernel ignores the message's logical counter "
            "and the wall clock, E19.1).",
    args=UPDATE_ARGS, result=UPDATE_RESULT,
    spec=(device_update, device_receive), errata=(E19_1,), domain=update_domain,
    edges=device_update_edges,
    invalid=(InvalidCase("a string for recv.physical", lambda: st.just(
                 {**GPU, "recv": {**_t(5, 0), "physical": "five"}}), "bad_request"),
             InvalidCase("a logical counter of 2^64", lambda: st.just(
                 {**GPU, "clock": _t(5, 2**64)}))),
    not_applicable={"numba": "one clock step per call, state carried from call to call",
                    "cupy": "one clock step per call: nothing to spread over a device"},
)
declare(
    "hlc.pack", chapter=19,
    summary="HlcTimestamp::pack: physical << 64 | logical << 16 | node_id into 128 bits, for "
            "logical < 2^48 and node_id < 2^16 (others refused).",
    args=TIMESTAMP, result=record(packed=Field(HEX128, "the packed timestamp, 128 bits")),
    spec=(pack,), errata=(E19_2, E19_3), domain=pack_domain, edges=pack_edges,
    invalid=(InvalidCase("a logical counter of 2^48", lambda: st.just(_t(1, 2**48))),
             InvalidCase("a node_id of 2^16", lambda: st.just(_t(1, 0, 2**16))),
             InvalidCase("a string for physical", lambda: st.just(
                 {**_t(1, 0), "physical": "now"}), "bad_request")),
    not_applicable={"numba": "three shifts and two ors: no numeric core to batch",
                    "cupy": "three shifts and two ors: nothing to spread over a device"},
)
declare(
    "hlc.unpack", chapter=19,
    summary="HlcTimestamp::unpack: the high 64 bits, 48 bits from bit 16, the low 16 bits.",
    args=record(packed=Field(HEX128, "a packed timestamp, 128 bits")), result=TIMESTAMP,
    spec=(unpack,), edges=unpack_edges,
    invalid=(InvalidCase("a packed value of 129 bits",
                         lambda: st.just({"packed": "0x1" + "0" * 32})),),
    not_applicable={"numba": "three shifts and masks: no numeric core to batch",
                    "cupy": "three shifts and masks: nothing to spread over a device"},
)
declare(
    "hlc.compare", chapter=19,
    summary="The HLC total order: lexicographic on (physical, logical, node_id); -1, 0, 1.",
    args=record(a=TIMESTAMP, b=TIMESTAMP),
    result=record(order=Field(I8, "-1: a before b, 0: equal, 1: a after b")),
    spec=(compare, precedes), domain=compare_domain, edges=compare_edges,
    invalid=(InvalidCase("a negative node_id", lambda: st.just(
        {"a": _t(1, 0, -1), "b": _t(1, 0)})),),
    not_applicable={"numba": "three comparisons: no numeric core to batch",
                    "cupy": "three comparisons: nothing to spread over a device"},
)

erratum(
    E19_1, "The generated kernel's receive ignores the message's logical counter and the wall "
           "clock",
    seed=SEED, location="crates/ringkernel-cuda-codegen/src/ring_kernel.rs, the message loop's "
                        "HLC update", ops=("hlc.device_update",),
    witness={"args": GPU, "spec": {"ok": True, "physical": 5, "logical": 8},
             "seed": {"ok": True, "physical": 5, "logical": 1}},
    also=({"op": "hlc.device_update", "args": SKEW,
           "spec": {"ok": False, "outcome": "clock_skew"},
           "seed": {"ok": True, "physical": 1_200_000_000, "logical": 1}},),
    flag="result",
    detail="On the device a received message does: if msg.p > p then p = msg.p, l = 0; then "
           "l++ (and one more l++ when the message completes). msg.logical is never read, so "
           "local (5, 0) receiving (5, 7) becomes (5, 1), before the message it received: "
           "causality is broken. The wall clock and the drift bound are not read either, so "
           "nothing is refused. The seed profile's hlc.device_update is this device rule; its "
           "hlc.update is the host's HlcClock::update, which agrees with the spec but for "
           "E19.4 and E19.6. The spec requires the host rule on both sides. The device's "
           "tick (l++) ignores the wall clock as well, but it still increases, so hlc.tick "
           "keeps the host rule. hlc.tla states the host rule "
           "only; with the device's, the chapter's hlc model breaks CausalOrdering after "
           "Tick(n1) and n2 receiving (0, 1).",
)
erratum(
    E19_2, "pack does not mask the logical counter: logical >= 2^48 spills into physical",
    seed=SEED, location=f"{WHERE}, HlcTimestamp::pack", ops=("hlc.pack",),
    witness={"args": _t(2, 2**48), "spec": {"error": "invalid_input"},
             "seed": {"packed": f"0x{3 << 64 | 1:032x}"}},
    flag="result",
    detail="pack shifts the whole u64 logical left by 16, so bits 48 and up land in the "
           "physical half (ored in): (2, 2^48, 1) packs as (3, 0, 1), and unpack reads (3, 0, 1). "
           "The spec refuses a logical counter that does not fit 48 bits.",
)
erratum(
    E19_3, "pack truncates node_id to 16 bits, so two nodes can pack alike",
    seed=SEED, location=f"{WHERE}, HlcTimestamp::pack", ops=("hlc.pack",),
    witness={"args": _t(100, 5, 65537), "spec": {"error": "invalid_input"},
             "seed": {"packed": f"0x{100 << 64 | 5 << 16 | 1:032x}"}},
    flag="result",
    detail="node_id is a u64 but pack keeps node & 0xFFFF: nodes 1 and 65537 pack to the same "
           "value, and (100, 5, 65537) packs below (100, 5, 2) though it is after it. The spec "
           "refuses a node_id that does not fit 16 bits.",
)
erratum(
    E19_4, "The logical counter wraps to 0 at 2^64 and the clock goes back",
    seed=SEED, location=f"{WHERE}, HlcClock::tick and HlcClock::update",
    ops=("hlc.tick", "hlc.update"),
    witness={"args": OVERFLOW_TICK,
             "spec": {"ok": False, "outcome": "logical_overflow", "logical": U64_MAX},
             "seed": {"ok": True, "physical": 5, "logical": 0}},
    also=({"op": "hlc.update", "args": OVERFLOW_UPDATE,
           "spec": {"ok": False, "outcome": "logical_overflow"},
           "seed": {"ok": True, "physical": 5, "logical": 0}},),
    flag="result",
    detail="old_logical + 1 is not checked: the release build (no overflow checks) wraps "
           "2^64 - 1 to 0, so the clock issues (P, 0), before every timestamp it issued at P "
           "(a debug build panics). A received logical of 2^64 - 1 reaches it directly. The "
           "spec refuses the call as logical_overflow and leaves the clock as it was.",
)
erratum(
    E19_6, "The skew bound wall + max_drift_us wraps at 2^64, so a message is refused by a sum "
           "that went round",
    seed=SEED, location=f"{WHERE}, HlcClock::update", ops=("hlc.update",),
    witness={"args": WRAP, "spec": {"ok": True, "physical": U64_MAX, "logical": 1},
             "seed": {"ok": False, "outcome": "clock_skew", "physical": 1, "logical": 0,
                      "skew_us": U64_MAX - 5, "skew_ms": (U64_MAX - 5) // 1000,
                      "max_ms": U64_MAX // 1000}},
    also=({"op": "hlc.update", "args": BEHIND, "spec": {"ok": True, "physical": 10, "logical": 0},
           "seed": {"ok": False, "outcome": "clock_skew", "skew_us": U64_MAX - 2,
                    "skew_ms": (U64_MAX - 2) // 1000}},),
    flag="result",
    detail="received.physical > wall + self.max_drift_us is computed in u64: the release build "
           "(rustc -O, no overflow checks) wraps the sum, so with wall + max_drift_us >= 2^64 a "
           "message is compared with the sum minus 2^64 and refused as ClockSkew, even one "
           "behind the wall clock, whose skew_ms is then (received.physical - wall) wrapped "
           "(a debug build panics on the overflow instead). The spec takes the sum exactly and "
           "accepts both.",
)
