"""numba kernel for the memory planner: the same sweep over ops, with the direct-reuse windows
and the buckets kept in arrays. The free list is the spec's (every block, address-ordered,
merged with its neighbours), kept as the treap of `free_tree` so each first fit, take and free
costs O(log F); or, under E10.1, the seed's (unordered, capped, never merged) in two arrays,
scanned in list order as the seed does."""

from __future__ import annotations

import numpy as np
from numba import njit

from ...spec.errata import NO_ERRATA
from ...spec.memory_plan import DIRECT_REUSE_WINDOW, E10_1, FREE_LIST_CAP, plan_slots
from ...spec.registry import kernel
from . import free_tree

W = DIRECT_REUSE_WINDOW


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
def _lowest_fit(link, val, state, spare, path, size, pool):
    """(offset, pool): the lowest free block that fits, split at its start; else the free
    block that ends the pool, grown past it; else the end of the pool."""
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


@njit(cache=True)
def _release(free_off, free_size, count, tree, offset, size, seed):
    """Give [offset, offset + size) back: pushed (E10.1) or merged into the tree."""
    if seed:
        return _push(free_off, free_size, count, offset, size)
    link, val, state, spare, path = tree
    free_tree.free(link, val, state, spare, path, offset, size)
    return count


@njit(cache=True)
def _fit(free_off, free_size, count, tree, size, pool, seed):
    """(offset, count, pool) of a newborn that reuses no dying slot."""
    if seed:
        return _seed_fit(free_off, free_size, count, size, pool)
    link, val, state, spare, path = tree
    offset, pool = _lowest_fit(link, val, state, spare, path, size, pool)
    return offset, count, pool


@njit(cache=True)
def plan_into(nbytes, birth, death, internal, offsets, seed, tree):
    """Offsets of every internal slot (externals untouched); returns the pool size."""
    idx = np.nonzero(internal)[0]
    if idx.size == 0:
        return np.uint64(0)
    by_birth = idx[np.argsort(birth[idx], kind="mergesort")]
    by_free = idx[np.argsort(death[idx] + 1, kind="mergesort")]
    cap = FREE_LIST_CAP if seed else 0
    free_off = np.zeros(cap, dtype=np.uint64)
    free_size = np.zeros(cap, dtype=np.uint64)
    count = 0
    pool = np.uint64(0)
    used = np.full(nbytes.size, -1, dtype=np.int64)  # the step that used a slot
    step = 0
    i = j = 0
    n = idx.size
    while i < n or j < n:
        step += 1
        op = min(birth[by_birth[i]] if i < n else np.int64(2**62),
                 death[by_free[j]] + 1 if j < n else np.int64(2**62))
        b0 = i
        while i < n and birth[by_birth[i]] == op:
            i += 1
        d0 = j
        while j < n and death[by_free[j]] + 1 == op:
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
    """nbytes, birth, death and is_external of wire slots, as arrays."""
    parsed = plan_slots(slots)
    return [np.array([getattr(s, f) for s in parsed], dtype=t) for f, t in
            (("nbytes", np.uint64), ("birth_op", np.int64), ("death_op", np.int64),
             ("is_external", np.bool_))]


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
