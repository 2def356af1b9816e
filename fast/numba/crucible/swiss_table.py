"""numba kernel for swiss.lookup: per request, the table of swiss.build (intern with the grow
check, rehash in slot order) is built in a control-byte array and a key array, then every
query walks the triangular probe sequence. A group's 16 control bytes are compared one by
one, as the SIMD match does (the default build), lowest position first."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.errors import InvalidInput
from ....spec.core.registry import kernel
from ....spec.core.schema import Ragged
from ....spec.crucible.swiss_table import GROUP_WIDTH, K_EMPTY, MAX_CAPACITY

G = GROUP_WIDTH


@njit(cache=True)
def probe_slot(ctrl, keys, h, insert):
    """(slot or -1, groups probed); with `insert`, an absent h takes the lowest empty byte of
    the first group with one (no equality check: rehash's reinsert)."""
    cap = ctrl.size
    tag = np.uint8(h >> np.uint64(57))
    base = (h * np.uint64(G)) & np.uint64(cap - 1)
    groups = cap // G
    for p in range(groups):
        b = np.int64(base)
        empty = -1
        for i in range(G):
            c = ctrl[b + i]
            if not insert and c == tag and keys[b + i] == h:
                return b + i, p + 1
            if c == K_EMPTY and empty < 0:
                empty = b + i
        if empty >= 0:
            if insert:
                ctrl[empty] = tag
                keys[empty] = h
                return empty, p + 1
            return -1, p + 1
        base = (base + np.uint64((p + 1) * G)) & np.uint64(cap - 1)
    return -1, groups


@njit(cache=True)
def build_into(hashes, capacity):
    """The table of swiss.build: (control bytes, keys)."""
    ctrl = np.full(capacity, K_EMPTY, dtype=np.uint8)
    keys = np.zeros(capacity, dtype=np.uint64)
    count = 0
    for h in hashes:
        if count * 8 >= ctrl.size * 7:
            old_ctrl, old_keys = ctrl, keys
            ctrl = np.full(2 * old_ctrl.size, K_EMPTY, dtype=np.uint8)
            keys = np.zeros(2 * old_ctrl.size, dtype=np.uint64)
            for i in range(old_ctrl.size):
                if old_ctrl[i] != K_EMPTY:
                    probe_slot(ctrl, keys, old_keys[i], True)
        if probe_slot(ctrl, keys, h, False)[0] < 0:
            probe_slot(ctrl, keys, h, True)
            count += 1
    return ctrl, keys


@njit(cache=True)
def lookup_into(hashes, capacity, queries, slots, probes):
    ctrl, keys = build_into(hashes, capacity)
    for q in range(queries.size):
        slots[q], probes[q] = probe_slot(ctrl, keys, queries[q], False)


def initial(requested: int) -> int:
    if requested > MAX_CAPACITY:
        raise InvalidInput(f"args.capacity: {requested} exceeds the limit of {MAX_CAPACITY}")
    cap = G
    while cap < requested:
        cap *= 2
    return cap


@kernel("swiss.lookup", "numba")
def lookup_batch(hashes, capacity, queries):
    hv, ho = np.asarray(hashes.values, dtype=np.uint64), np.asarray(hashes.offsets)
    qv, qo = np.asarray(queries.values, dtype=np.uint64), np.asarray(queries.offsets)
    slots = np.empty(qv.size, dtype=np.int64)
    probes = np.empty(qv.size, dtype=np.uint32)
    for r in range(len(ho) - 1):
        lookup_into(hv[ho[r]:ho[r + 1]], initial(int(capacity[r])), qv[qo[r]:qo[r + 1]],
                    slots[qo[r]:qo[r + 1]], probes[qo[r]:qo[r + 1]])
    return {"slots": Ragged(slots, qo), "probes": Ragged(probes, qo)}
