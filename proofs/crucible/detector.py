"""Chapter 7 obligation: the iteration detector against a brute-force definition of where its
boundaries fall, over every small stream.

The definition restates the documented semantics without the detector's state machine: the
first K hashes are the signature; the rest of the stream is searched left to right for whole
occurrences of the signature that do not overlap (after one, the search resumes past its end).
The first occurrence only confirms the signature; every later one is a boundary at its last
op, and the iteration it completes is the distance from the occurrence before. After a failed
attempt at a start position the spec retries from the next position (every start is tried);
under E7.1 it retries from where the attempt failed (only the signature's first hash restarts).

Hashes are only compared for equality, so a stream is enumerated once per renaming of its
symbols: symbol i first appears after symbols 0..i-1. The detector is written over its module
constant K, so besides the spec's K = 5 the check also runs it with K = 2 and K = 3, with the
constant set for the duration of each case.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator

from ...spec.core.errata import NO_ERRATA, SEEDS, profile_errata
from ...spec.core.registry import Mutant
from ...spec.crucible import iteration_detector as detector
from ...spec.crucible.iteration_detector import E7_1, Detector, check, restart, run_detector
from ..core.obligation import Property, property_obligation

SYMBOLS = (0x0, 0xFFFFFFFFFFFFFFFF, 0x9E3779B97F4A7C15, 0x0000000100000000, 0x8000000000000001,
           0x00000000FFFFFFFF)
"""Distinct 64-bit hashes that stand for the symbols 0, 1, 2, ... of a stream."""


def canonical_streams(max_len: int, symbols: int) -> Iterator[tuple[int, ...]]:
    """Every stream of length <= max_len over `symbols` symbols, one per renaming: each new
    symbol is the least one not used yet."""
    stack: list[tuple[int, ...]] = [()]
    while stack:
        s = stack.pop()
        yield s
        if len(s) < max_len:
            fresh = min(max(s, default=-1) + 2, symbols)
            stack.extend((*s, x) for x in range(fresh))


def common_prefix(a: list[int], b: list[int]) -> int:
    """How many leading items a and b share."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def occurrences(tail: list[int], sig: list[int], retry_next: bool) -> tuple[list[int], int]:
    """Where (last index in `tail`) the successive non-overlapping occurrences of `sig` end, and
    how much of `sig` the unfinished attempt at the end of `tail` has matched."""
    ends, p = [], 0
    while p < len(tail):
        m = common_prefix(tail[p:p + len(sig)], sig)
        if m == len(sig):
            ends.append(p + m - 1)
            p += m
        elif p + m == len(tail):
            return ends, m
        else:
            p += 1 if retry_next or m == 0 else m
    return ends, 0


def by_definition(stream: list[int], k: int, errata: frozenset[str]
                  ) -> tuple[list[dict], Detector]:
    """The boundaries and the final state that the documented semantics give `stream`."""
    sig = stream[:k]
    found, partial = occurrences(stream[k:], sig, retry_next=E7_1 not in errata)
    ends = [k + e for e in found]
    boundaries = [{"index": e, "last_completed_len": e - before, "boundaries_detected": i}
                  for i, (before, e) in enumerate(itertools.pairwise(ends), start=1)]
    state = Detector(
        signature=sig + [0] * (k - len(sig)), signature_len=len(sig),
        expected_hash=sig[partial] if len(sig) == k else 0, match_pos=partial,
        confirmed=bool(ends),
        ops_since_boundary=len(stream) - 1 - ends[-1] + k if ends else len(stream),
        boundaries_detected=len(boundaries),
        last_completed_len=boundaries[-1]["last_completed_len"] if boundaries else 0)
    return boundaries, state


@contextlib.contextmanager
def signature_length(k: int) -> Iterator[None]:
    """Run the detector with K = k, then put the spec's K back."""
    spec_k = detector.K
    detector.K = k
    try:
        yield
    finally:
        detector.K = spec_k


def _agrees(k: int, errata: frozenset[str]):
    def check_stream(symbols: tuple[int, ...]) -> None:
        stream = [SYMBOLS[x] for x in symbols]
        with signature_length(k):
            got = run_detector(stream, errata)
        assert got == by_definition(stream, k, errata), \
            f"detector {got} != definition {by_definition(stream, k, errata)}"

    return check_stream


DOMAINS = ((5, 2, 16), (5, 3, 10), (2, 3, 11), (3, 4, 10))
"""(K, symbols, longest stream): the spec's K over two symbols, long enough for two
boundaries with the signature A A A A B, and over three; K = 2 and K = 3 over K + 1."""

PROFILES = {"default": NO_ERRATA, SEEDS["crucible"]: profile_errata(SEEDS["crucible"])}


@property_obligation(
    "PO7.20",
    "On every stream of at most 16 hashes over 2 symbols and 10 over 3 (K = 5), 11 over 3 "
    "(K = 2) and 10 over 4 (K = 3), up to renaming, the detector's boundaries, iteration "
    "lengths and final state are those of the definition: non-overlapping occurrences of the "
    "signature found left to right, the first one confirming; in the default profile and in "
    "the seed's (E7.1: a failed attempt retries where it failed).",
    covers=("detector.run",),
    subject=check,
    mutants=(
        Mutant.edit("restart bound K - 2", "the longest restart tried is K - 2 hashes: with "
                    "signature A A A A B the occurrence after A A A A A is missed", restart,
                    "K - 1", "K - 2"),
        Mutant.edit("restart never to 1", "a restart keeps a matched prefix of 2 or more "
                    "only", restart, "K - 1), 0, -1)", "K - 1), 1, -1)"),
        Mutant.edit("E7.1 restart to 0", "under E7.1 a broken match always restarts from 0",
                    restart, "return 1 if h == d.signature[0] else 0", "return 0"),
        Mutant.edit("confirmation counts from 0", "the candidate match resets the op count to "
                    "0, not K", check, "d.confirmed, d.ops_since_boundary = True, K",
                    "d.confirmed, d.ops_since_boundary = True, 0"),
        Mutant.edit("length off by one", "last_completed_len counts the boundary op twice",
                    check, "max(d.ops_since_boundary - K, 0)",
                    "max(d.ops_since_boundary - K + 1, 0)"),
    ),
)
def detector_matches_definition(_check):
    return [Property(f"K = {k}, {n} symbols, length <= {length}, profile {name}",
                     _agrees(k, errata), cases=lambda n=n, length=length:
                     canonical_streams(length, n))
            for k, n, length in DOMAINS for name, errata in PROFILES.items()]
