"""numba kernel for the memory planner: the same sweep over ops, with the direct-reuse windows
and the buckets kept in arrays. The free list is the spec's (every block, address-ordered,
merged with its neighbours), kept in two sorted arrays while it is short, then moved into the
treap of `free_tree`, where each first fit, take and free costs O(log F); or, under E10.1,
the seed's (unordered, capped, never merged) in two arrays, scanned in list order as the seed
does."""

from __future__ import annotations

from operator import itemgetter

import numpy as np
from numba import njit

from ....spec.core.errata import NO_ERRATA
from ....spec.core.registry import kernel
from ....spec.crucible.memory_plan import (
    DIRECT_REUSE_WINDOW,
    E10_1,
    FREE_LIST_CAP,
    MAX_DEATH,
    SLOT_FIELDS,
    plan_slots,
)
from ...core.wire_structs import scalar_column
from . import free_tree

W = DIRECT_REUSE_WINDOW
SHORT_LIST = 64
"""The spec's free list lives in two sorted arrays (shifted on each change, cheap while short)
until it holds this many blocks, then in the tree for the rest of the sweep."""


@njit(cache=True)
def _a256(n):
    return (n + np.uint64(255)) & ~np.uint64(255)


@njit(cache=True)
def _push(free_off, free_size, count, offset, size):
    """E10.1: append unless the list is full."""
    if count < free_off.size:
        free_off[count] = offset
        free_size[count] = size
        return count + 1
    return count


@njit(cache=True)
def _seed_fit(free_off, free_size, count, size, pool):
    """E10.1: (offset, count, pool): first fit in list order, an entry taken whole replaced by
    the last (swap-remove); else the end of the pool."""
    for k in range(count):
        if free_size[k] >= size:
            offset = free_off[k]
            if free_size[k] != size:
                free_off[k] += size
                free_size[k] -= size
            else:
                count -= 1
                free_off[k] = free_off[count]
                free_size[k] = free_size[count]
            return offset, count, pool
    return pool, count, pool + size


@njit(cache=True)
def _coalesce(free_off, free_size, count, offset, size):
    """Free [offset, offset + size) into the short address-ordered list, merged with its free
    neighbours; returns the new count."""
    k = np.searchsorted(free_off[:count], offset)
    end = offset + size
    after = k < count and free_off[k] == end
    before = k > 0 and free_off[k - 1] + free_size[k - 1] == offset
    if before and after:
        free_size[k - 1] = free_off[k] + free_size[k] - free_off[k - 1]
        free_off[k:count - 1] = free_off[k + 1:count].copy()
        free_size[k:count - 1] = free_size[k + 1:count].copy()
        return count - 1
    if before:
        free_size[k - 1] += size
        return count
    if after:
        free_off[k] = offset
        free_size[k] += size
        return count
    free_off[k + 1:count + 1] = free_off[k:count].copy()
    free_size[k + 1:count + 1] = free_size[k:count].copy()
    free_off[k] = offset
    free_size[k] = size
    return count + 1


@njit(cache=True)
def _list_lowest_fit(free_off, free_size, count, size, pool):
    """(offset, count, pool) from the short list: the lowest block that fits, split at its
    start; else the block that ends the pool, grown past it; else the end of the pool."""
    for k in range(count):
        if free_size[k] >= size:
            offset = free_off[k]
            if free_size[k] != size:
                free_off[k] += size
                free_size[k] -= size
            else:
                free_off[k:count - 1] = free_off[k + 1:count].copy()
                free_size[k:count - 1] = free_size[k + 1:count].copy()
                count -= 1
            return offset, count, pool
    if count > 0 and free_off[count - 1] + free_size[count - 1] == pool:
        offset = free_off[count - 1]
        return offset, count - 1, offset + size
    return pool, count, pool + size


@njit(cache=True)
def _tree_lowest_fit(link, val, state, spare, path, size, pool):
    """(offset, pool) from the tree, as _list_lowest_fit."""
    depth = free_tree.first_fit(link, val, state, path, size)
    if depth:
        return free_tree.take(link, val, state, spare, path, depth, size), pool
    v = free_tree.last(link, state)
    if v >= 0 and val[v, free_tree.OFF] + val[v, free_tree.SIZE] == pool:
        offset = val[v, free_tree.OFF]
        depth = free_tree.find(link, val, state, path, offset)
        free_tree.remove(link, val, state, spare, path, depth)
        return offset, offset + size
    return pool, pool + size


@njit(cache=True, inline="always")
def _release(free_off, free_size, count, tree, offset, size, seed):
    """The count once [offset, offset + size) is given back: pushed (E10.1); merged into the
    short list, which moves into the tree (count -1 from then on) once it holds SHORT_LIST
    blocks; or merged into the tree. 0 bytes free nothing."""
    if seed:
        return _push(free_off, free_size, count, offset, size)
    if size == 0:
        return count
    if count < 0:
        link, val, state, spare, path = tree
        free_tree.free(link, val, state, spare, path, offset, size)
        return count
    count = _coalesce(free_off, free_size, count, offset, size)
    if count < SHORT_LIST:
        return count
    link, val, state, spare, path = tree
    for k in range(count):
        free_tree.free(link, val, state, spare, path, free_off[k], free_size[k])
    return -1


@njit(cache=True, inline="always")
def _fit(free_off, free_size, count, tree, size, pool, seed):
    """(offset, count, pool) of a newborn that reuses no dying slot."""
    if seed:
        return _seed_fit(free_off, free_size, count, size, pool)
    if count >= 0:
        return _list_lowest_fit(free_off, free_size, count, size, pool)
    link, val, state, spare, path = tree
    offset, pool = _tree_lowest_fit(link, val, state, spare, path, size, pool)
    return offset, count, pool


@njit(cache=True)
def _stable_order(key, idx):
    """idx stably sorted by key[idx] (as a mergesort): a counting sort when the keys span at
    most a few times as many values as there are slots, so the cost per slot stays flat."""
    lo, hi = key[idx[0]], key[idx[0]]
    for k in idx:
        lo, hi = min(lo, key[k]), max(hi, key[k])
    if hi - lo > 4 * idx.size + 1024:
        return idx[np.argsort(key[idx], kind="mergesort")]
    start = np.zeros(hi - lo + 2, dtype=np.int64)
    for k in idx:
        start[key[k] - lo + 1] += 1
    for v in range(1, start.size):
        start[v] += start[v - 1]
    out = np.empty_like(idx)
    for k in idx:
        out[start[key[k] - lo]] = k
        start[key[k] - lo] += 1
    return out


@njit(cache=True)
def plan_into(nbytes, birth, death, internal, offsets, seed, tree):
    """Offsets of every internal slot (externals untouched); returns the pool size."""
    idx = np.nonzero(internal)[0]
    if idx.size == 0:
        return np.uint64(0)
    by_birth = _stable_order(birth, idx)
    by_free = _stable_order(death, idx)
    born, freed = birth[by_birth], death[by_free] + 1  # in sweep order: read in sequence
    cap = FREE_LIST_CAP if seed else SHORT_LIST
    free_off = np.zeros(cap, dtype=np.uint64)
    free_size = np.zeros(cap, dtype=np.uint64)
    count = np.int64(0)  # not the literal 0: helpers would compile for Literal[int](0) too
    pool = np.uint64(0)
    used = np.full(nbytes.size, -1, dtype=np.int64)  # the step that used a slot
    step = 0
    i = j = 0
    n = idx.size
    while i < n or j < n:
        step += 1
        op = min(born[i] if i < n else np.int64(2**62), freed[j] if j < n else np.int64(2**62))
        b0 = i
        while i < n and born[i] == op:
            i += 1
        d0 = j
        while j < n and freed[j] == op:
            j += 1
        if i > b0 and j > d0:  # a. direct reuse among the first 64 on each side
            for bk in range(b0, min(i, b0 + W)):
                b = by_birth[bk]
                size = _a256(nbytes[b])
                best = -1
                waste = np.uint64(0)
                for dk in range(d0, min(j, d0 + W)):
                    d = by_free[dk]
                    room = _a256(nbytes[d])
                    if used[d] != step and room >= size and (best < 0 or room - size < waste):
                        best = d
                        waste = room - size
                if best >= 0:
                    offsets[b] = offsets[best]
                    used[b] = step
                    used[best] = step
                    if waste > 0:
                        count = _release(free_off, free_size, count, tree,
                                         offsets[best] + size, waste, seed)
        for dk in range(d0, j):  # b. free the rest of the dying slots
            d = by_free[dk]
            if used[d] != step:
                count = _release(free_off, free_size, count, tree, offsets[d],
                                 _a256(nbytes[d]), seed)
        for bk in range(b0, i):  # c. first fit, else the end of the pool
            b = by_birth[bk]
            if used[b] != step:
                offsets[b], count, pool = _fit(free_off, free_size, count, tree,
                                               _a256(nbytes[b]), pool, seed)
    return pool


def plan_arrays(nbytes, birth, death, external, errata=NO_ERRATA):
    """(offsets, pool bytes) of slots given as arrays."""
    offsets = np.zeros(nbytes.size, dtype=np.uint64)
    seed = E10_1 in errata
    tree = free_tree.new_tree(1 if seed else nbytes.size + 2)
    pool = plan_into(nbytes.astype(np.uint64), birth.astype(np.int64), death.astype(np.int64),
                     ~external.astype(np.bool_), offsets, seed, tree)
    return offsets, int(pool)


def slot_arrays(slots) -> list[np.ndarray]:
    """nbytes, birth, death and is_external of wire slots, as arrays: a column at a time where
    `slot_columns` accepts them, else through `plan_slots` (whose errors are the answer)."""
    columns = slot_columns(slots)
    if columns is not None:
        return columns
    parsed = plan_slots(slots)
    return [np.array([getattr(s, f) for s in parsed], dtype=t) for f, t in
            (("nbytes", np.uint64), ("birth_op", np.int64), ("death_op", np.int64),
             ("is_external", np.bool_))]


def slot_columns(slots) -> list[np.ndarray] | None:
    """The arrays of `slot_arrays`, or None unless every slot is an object of known fields,
    the required ones present, the values of each field accepted by the sound vectorised check
    of `scalar_column`, and every internal slot's lifetime valid."""
    if not isinstance(slots, list) or not slots or set(map(type, slots)) != {dict}:
        return None
    keys = set(map(frozenset, slots))
    if not all(_REQUIRED <= k <= SLOT_FIELDS.keys() for k in keys):
        return None
    columns = {}
    for name, ctype in SLOT_FIELDS.items():
        if not any(name in k for k in keys):
            continue
        if all(name in k for k in keys):  # every slot gives it: no mask to build
            columns[name] = scalar_column(ctype, list(map(itemgetter(name), slots)))
            if columns[name] is None:
                return None
            continue
        present = np.array([name in s for s in slots], dtype=np.bool_)
        column = scalar_column(ctype, [s[name] for s in slots if name in s])
        if column is None:
            return None
        columns[name] = np.zeros(len(slots), dtype=column.dtype)
        columns[name][present] = column
    external = columns.get("is_external", np.zeros(len(slots), dtype=np.bool_))
    birth, death = (columns[n].astype(np.int64) for n in ("birth_op", "death_op"))
    if np.any(~external & ((birth > death) | (death > MAX_DEATH))):
        return None
    return [columns["nbytes"].astype(np.uint64), birth, death, external]


_REQUIRED = frozenset({"nbytes", "birth_op", "death_op"})


def plan_one(slots, errata=NO_ERRATA) -> dict:
    arrays = slot_arrays(slots)
    offsets, pool = plan_arrays(*arrays, errata)
    return {"offsets": offsets.tolist(), "pool_bytes": pool, "num_slots": len(arrays[0]),
            "num_external": int(arrays[3].sum())}


@kernel("plan.compute", "numba", models=(E10_1,))
def plan_batch(slots, errata=NO_ERRATA):
    rows = [plan_one(s, errata) for s in slots]
    return {"offsets": [r["offsets"] for r in rows]} | {
        k: np.array([r[k] for r in rows], dtype=np.uint64)
        for k in ("pool_bytes", "num_slots", "num_external")}


def plan_core(prepared: list[tuple[list[np.ndarray], frozenset[str]]]
              ) -> list[tuple[np.ndarray, int]]:
    """The planner over each slot set's arrays."""
    return [plan_arrays(*a, errata) for a, errata in prepared]


plan_batch.prepare = lambda slots, errata=NO_ERRATA: [(slot_arrays(s), errata) for s in slots]
plan_batch.core = plan_core
