"""Chapter 7: the iteration detector, a K = 5 signature matcher over schema hashes.

The first K schema hashes after a reset are the signature. Every later op advances a match
position; a full match of the signature is a boundary, except the first, which only confirms
the signature (a candidate). So in a stream of repeated iterations of length L the first
boundary is the K-th op of the third iteration, with last_completed_len = L.

Known blind spot (spec behaviour, not an erratum): the signature is whatever K ops follow a
reset, so a non-repeating warm-up of K or more ops becomes a signature that never matches again
and no boundary is ever found; callers reset the detector after their warm-up. Full matches
never overlap: after one, matching starts afresh, so a period shorter than K is reported as
the distance between non-overlapping matches (a period of 3 reads as 6).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...synthetic_bench import detector_bench
from ..core.errata import NO_ERRATA, erratum
from ..core.layout import Member, array, bool_, hash64, pad, struct, u8, u32
from ..core.registry import declare
from ..core.schema import BOOL, HASH64, U32, U64, Field, Json, List, record
from ..core.strategies import st

K = 5
"""Signature length: the first K schema hashes after a reset. Real code: `IterationDetector.h`,
`K`."""

E7_1 = "E7.1"

ITERATION_DETECTOR = struct("IterationDetector", [
    Member("expected_hash_", hash64),
    Member("signature", array(hash64, K)),
    Member("match_pos_", u8),
    Member("confirmed", bool_),
    Member("pad0_", pad(2)),
    Member("ops_since_boundary", u32),
    Member("signature_len", u32),
    Member("pad1_", pad(4)),
    Member("boundaries_detected", u32),
    Member("last_completed_len", u32),
    Member("pad2_", pad(56)),
], size=128, align=8, chapter=7, doc="Detector state: two cache lines, all zero at start.")


@dataclass
class Detector:
    """The detector's state (the fields of IterationDetector)."""

    signature: list[int] = field(default_factory=lambda: [0] * K)
    signature_len: int = 0
    expected_hash: int = 0
    match_pos: int = 0
    confirmed: bool = False
    ops_since_boundary: int = 0
    boundaries_detected: int = 0
    last_completed_len: int = 0


def restart(d: Detector, h: int, errata: frozenset[str]) -> int:
    """The match position after h broke a partial match: the longest prefix of the signature
    that ends with h (a KMP restart). The code only tries the signature's first hash (E7.1)."""
    if E7_1 in errata:
        return 1 if h == d.signature[0] else 0
    seen = [*d.signature[: d.match_pos], h]
    for length in range(min(d.match_pos, K - 1), 0, -1):
        if seen[-length:] == d.signature[:length]:
            return length
    return 0


def check(d: Detector, h: int, errata: frozenset[str] = NO_ERRATA) -> bool:
    """Feed one schema hash; True when it completes a confirmed iteration (a boundary)."""
    d.ops_since_boundary = (d.ops_since_boundary + 1) & 0xFFFFFFFF  # 1
    if d.signature_len < K:  # 2. build the signature
        d.signature[d.signature_len] = h
        d.signature_len += 1
        if d.signature_len == K:
            d.expected_hash, d.match_pos = d.signature[0], 0
        return False
    if h != d.expected_hash:  # 3. mismatch: restart the match
        if d.match_pos != 0:
            d.match_pos = restart(d, h, errata)
            d.expected_hash = d.signature[d.match_pos]
        return False
    if d.match_pos + 1 < K:  # 4. one more hash matched
        d.match_pos += 1
        d.expected_hash = d.signature[d.match_pos]
        return False
    d.match_pos, d.expected_hash = 0, d.signature[0]  # 5. a full match
    if not d.confirmed:
        d.confirmed, d.ops_since_boundary = True, K
        return False
    d.last_completed_len = max(d.ops_since_boundary - K, 0)
    d.ops_since_boundary = K
    d.boundaries_detected += 1
    return True


def run_detector(stream: list[int], errata: frozenset[str] = NO_ERRATA,
                 d: Detector | None = None) -> tuple[list[dict], Detector]:
    """Feed a whole stream (continuing from `d` if given); the boundaries and the state."""
    d = d or Detector()
    boundaries = []
    for i, h in enumerate(stream):
        if check(d, h, errata):
            boundaries.append({"index": i, "last_completed_len": d.last_completed_len,
                               "boundaries_detected": d.boundaries_detected})
    return boundaries, d


def state_wire(d: Detector) -> dict:
    return {"confirmed": d.confirmed, "match_pos": d.match_pos,
            "ops_since_boundary": d.ops_since_boundary, "signature_len": d.signature_len,
            "boundaries_detected": d.boundaries_detected,
            "last_completed_len": d.last_completed_len,
            "expected_hash": HASH64.encode(d.expected_hash),
            "signature": [HASH64.encode(h) for h in d.signature]}


def detector_run(stream: list[int], errata: frozenset[str] = NO_ERRATA) -> dict:
    boundaries, d = run_detector(stream, errata)
    return {"boundaries": boundaries, "final_state": state_wire(d)}


def periodic_streams() -> st.SearchStrategy:
    """Streams built from a few distinct hashes, often periodic (where boundaries happen)."""
    alphabet = st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=9, unique=True)

    def stream(hashes: list[int]) -> st.SearchStrategy:
        pick = st.integers(0, len(hashes) - 1).map(lambda i: hashes[i])
        periodic = st.tuples(st.lists(pick, min_size=1, max_size=12), st.integers(1, 8),
                             st.lists(pick, max_size=8)).map(lambda t: t[0] * t[1] + t[2])
        return periodic | st.lists(pick, max_size=60)

    return alphabet.flatmap(stream).map(lambda s: {"stream": s})


_WITNESS = [f"0x{x:016x}" for x in (0xA, 0xA, 0xB, 0xC, 0xD)]

erratum(
    E7_1, "A broken partial match restarts from the signature's first hash only (no KMP)",
    seed="crucible@8d2680a2", location="include/crucible/IterationDetector.h check",
    ops=("detector.run",),
    witness={"args": {"stream": _WITNESS + _WITNESS[:1] + _WITNESS * 3},
             "spec": {"boundaries": [
                 {"index": 15, "last_completed_len": 5, "boundaries_detected": 1},
                 {"index": 20, "last_completed_len": 5, "boundaries_detected": 2}]},
             "seed": {"boundaries": [
                 {"index": 20, "last_completed_len": 5, "boundaries_detected": 1}]}},
    flag="result",
    detail="With signature A A B C D, the stream A A A B C D matches A A, fails on the third "
           "A and restarts at position 1 (the first hash), so the occurrence that starts at "
           "the second A is missed and the boundaries come one iteration late (never, if "
           "every iteration is preceded that way). The spec restarts at the longest prefix "
           "of the signature that ends the hashes seen (KMP).",
)

declare(
    "detector.run", chapter=7,
    summary="Feed schema hashes to a fresh iteration detector: the boundaries, the state.",
    args=record(stream=Field(List(HASH64), "schema hashes in op order")),
    result=record(boundaries=Json("[{index, last_completed_len, boundaries_detected}]", List(
                      record(index=U64, last_completed_len=U32, boundaries_detected=U32))),
                  final_state=Json("{confirmed, match_pos, ...}", record(
                      confirmed=BOOL, match_pos=U32, ops_since_boundary=U32, signature_len=U32,
                      boundaries_detected=U32, last_completed_len=U32, expected_hash=HASH64,
                      signature=List(HASH64)))),
    spec=(check,), errata=(E7_1,), domain=periodic_streams, bench=detector_bench,
    not_applicable={"cupy": "each hash moves the state the next one is matched against"},
    edges=lambda: [{"stream": []}, {"stream": _WITNESS * 4},
                   {"stream": ["0x1"] * 20}, {"stream": _WITNESS[:3] * 2}],
)
