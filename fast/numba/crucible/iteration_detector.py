"""numba kernel for the iteration detector: one pass per stream, with the KMP restart (or the
seed's first-hash-only restart under E7.1)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ....spec.crucible.iteration_detector import E7_1, Detector, K, state_wire


@njit(cache=True)
def _restart(sig, pos, h):
    """Longest prefix of sig that ends the matched prefix followed by h."""
    for length in range(min(pos, K - 1), 0, -1):
        ok = sig[length - 1] == h
        for k in range(length - 1):
            if sig[k] != sig[pos - length + 1 + k]:
                ok = False
                break
        if ok:
            return length
    return 0


@njit(cache=True)
def detect(stream, sig, hashes, state, out_index, out_len, out_count, kmp):
    """hashes = [expected]; state = [signature_len, pos, confirmed, since, detected, last];
    returns the number of boundaries written to the out arrays."""
    expected = hashes[0]
    sig_len, pos, confirmed, since, detected, last = state
    found = 0
    for i in range(stream.size):
        h = stream[i]
        since = (since + 1) & 0xFFFFFFFF
        if sig_len < K:
            sig[sig_len] = h
            sig_len += 1
            if sig_len == K:
                expected = sig[0]
                pos = 0
            continue
        if h != expected:
            if pos != 0:
                pos = _restart(sig, pos, h) if kmp else (1 if h == sig[0] else 0)
                expected = sig[pos]
            continue
        if pos + 1 < K:
            pos += 1
            expected = sig[pos]
            continue
        pos = 0
        expected = sig[0]
        if confirmed == 0:
            confirmed = 1
            since = K
            continue
        last = max(since - K, 0)
        since = K
        detected += 1
        out_index[found] = i
        out_len[found] = last
        out_count[found] = detected
        found += 1
    hashes[0] = expected
    state[0], state[1], state[2], state[3], state[4], state[5] = (
        sig_len, pos, confirmed, since, detected, last)
    return found


def boundaries_of(s: np.ndarray, errata: frozenset[str] = frozenset()
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Detector]:
    """Index, last completed length and count of every boundary, and the final state."""
    sig = np.zeros(K, dtype=np.uint64)
    hashes = np.zeros(1, dtype=np.uint64)
    state = np.zeros(6, dtype=np.int64)
    idx = np.zeros(s.size, dtype=np.int64)
    lens = np.zeros(s.size, dtype=np.int64)
    counts = np.zeros(s.size, dtype=np.int64)
    found = detect(s, sig, hashes, state, idx, lens, counts, E7_1 not in errata)
    sig_len, pos, confirmed, since, detected, last = (int(x) for x in state)
    d = Detector([int(x) for x in sig], sig_len, int(hashes[0]), pos, bool(confirmed), since,
                 detected, last)
    return idx[:found], lens[:found], counts[:found], d


def run_one(stream: list[int], errata: frozenset[str]) -> dict:
    idx, lens, counts, d = boundaries_of(np.array(stream, dtype=np.uint64), errata)
    return {"boundaries": [{"index": a, "last_completed_len": b, "boundaries_detected": c}
                           for a, b, c in zip(idx.tolist(), lens.tolist(), counts.tolist(),
                                              strict=True)],
            "final_state": state_wire(d)}


@kernel("detector.run", "numba", models=(E7_1,))
def detector_batch(stream, errata: frozenset[str] = frozenset()):
    rows = [run_one(s, errata) for s in _rows(stream)]
    return {"boundaries": [r["boundaries"] for r in rows],
            "final_state": [r["final_state"] for r in rows]}


def _rows(column) -> list[list[int]]:
    values = column.values.tolist()
    offs = column.offsets.tolist()
    return [values[offs[i]:offs[i + 1]] for i in range(len(offs) - 1)]
