"""The spec's free list (address-ordered, merged blocks) as a treap for the numba planner, so
that first fit, taking, freeing and merging each cost O(log F) expected for F free blocks.

The data structure:
1. A node is a free block: `val[v] = (offset, size, max size in v's subtree, priority)` and
   `link[v] = (left, right)` (-1: none). Nodes are ordered by offset (blocks never overlap and
   are never empty, so offsets are distinct keys) and heap-ordered by a pseudo-random priority,
   which keeps the depth O(log F) expected. `state = (root, next unused node, free nodes)`;
   `spare[:free nodes]` holds the nodes given back, reused first.
2. First fit descends from the root: into the left subtree while its max size fits, else the
   node itself if it fits, else the right subtree. It lands on the lowest-offset block that
   fits: the block the spec's scan in address order returns.
3. Taking part of a block moves its offset up by the size taken; this keeps the node between
   its neighbours, so only the max sizes on its path are recomputed. Taking a block whole
   removes the node: its two subtrees are merged (by priority) in its place.
4. Freeing [offset, end) looks up the block that ends at offset and the one that starts at
   end: both: the first grows over the second, which is removed; one: it grows (the one after
   takes the freed start as its offset); none: a node is inserted, splitting the subtree
   where its priority puts it.
5. Every change records the nodes it touched, deepest last, and recomputes their max sizes
   deepest first, then those of the path above them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

OFF, SIZE, MAX, PRI = 0, 1, 2, 3
ROOT, NEXT, SPARE = 0, 1, 2


def new_tree(cap: int) -> tuple[np.ndarray, ...]:
    """An empty tree for at most cap free blocks at once: (link, val, state, spare, path).
    Only state is filled: a node's entries are written when it is made, so the pages of a
    tree that stays small are never touched."""
    return (np.empty((cap, 2), dtype=np.int64), np.empty((cap, 4), dtype=np.uint64),
            np.array([-1, 0, 0], dtype=np.int64), np.empty(cap, dtype=np.int64),
            np.empty(cap + 1, dtype=np.int64))


@njit(cache=True, inline="always")
def _max_of(val, v):
    return val[v, MAX] if v >= 0 else np.uint64(0)


@njit(cache=True, inline="always")
def _pull(link, val, v):
    """Recompute v's subtree max from its size and its children's maxima."""
    val[v, MAX] = max(val[v, SIZE], _max_of(val, link[v, 0]), _max_of(val, link[v, 1]))


@njit(cache=True, inline="always")
def _pull_path(link, val, path, depth):
    for k in range(depth - 1, -1, -1):
        _pull(link, val, path[k])


@njit(cache=True, inline="always")
def _attach(link, state, parent, side, v):
    if parent < 0:
        state[ROOT] = v
    else:
        link[parent, side] = v


@njit(cache=True, inline="always")
def find(link, val, state, path, offset):
    """The path from the root to the node at offset (its last entry); returns its length."""
    depth = 0
    v = state[ROOT]
    while v >= 0:
        path[depth] = v
        depth += 1
        if val[v, OFF] == offset:
            return depth
        v = link[v, 0] if offset < val[v, OFF] else link[v, 1]
    return 0


@njit(cache=True, inline="always")
def first_fit(link, val, state, path, size):
    """Step 2: the path to the lowest-offset block of at least size bytes; 0 if none fits."""
    v = state[ROOT]
    if v < 0 or val[v, MAX] < size:
        return 0
    depth = 0
    while True:
        path[depth] = v
        depth += 1
        left = link[v, 0]
        if left >= 0 and val[left, MAX] >= size:
            v = left
        elif val[v, SIZE] >= size:
            return depth
        else:
            v = link[v, 1]


@njit(cache=True, inline="always")
def last(link, state):
    """The highest-offset block, -1 if none."""
    v = state[ROOT]
    while v >= 0 and link[v, 1] >= 0:
        v = link[v, 1]
    return v


@njit(cache=True, inline="always")
def _before(link, val, state, offset):
    """The block with the highest offset below offset, -1 if none."""
    best = -1
    v = state[ROOT]
    while v >= 0:
        if val[v, OFF] < offset:
            best = v
            v = link[v, 1]
        else:
            v = link[v, 0]
    return best


@njit(cache=True, inline="always")
def remove(link, val, state, spare, path, depth):
    """Step 3: remove the node path[depth - 1], merging its subtrees in its place."""
    v = path[depth - 1]
    parent = path[depth - 2] if depth > 1 else -1
    side = 0 if parent < 0 or link[parent, 0] == v else 1
    a, b = link[v, 0], link[v, 1]
    top = depth - 1  # the merge chain is recorded after the path above v
    while a >= 0 and b >= 0:
        if val[a, PRI] > val[b, PRI]:
            _attach(link, state, parent, side, a)
            parent, side, a = a, 1, link[a, 1]
        else:
            _attach(link, state, parent, side, b)
            parent, side, b = b, 0, link[b, 0]
        path[top] = parent
        top += 1
    _attach(link, state, parent, side, a if a >= 0 else b)
    _pull_path(link, val, path, top)
    link[v, 0] = link[v, 1] = -1
    spare[state[SPARE]] = v
    state[SPARE] += 1


@njit(cache=True, inline="always")
def _node(link, val, state, spare, offset, size):
    """A fresh leaf (a given-back node first) with a pseudo-random priority."""
    if state[SPARE] > 0:
        state[SPARE] -= 1
        v = spare[state[SPARE]]
    else:
        v = state[NEXT]
        state[NEXT] += 1
    x = np.uint64(v + 1) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(state[NEXT])
    x ^= x >> np.uint64(31)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    val[v, OFF], val[v, SIZE], val[v, MAX], val[v, PRI] = offset, size, size, x
    link[v, 0] = link[v, 1] = -1
    return v


@njit(cache=True, inline="always")
def insert(link, val, state, spare, path, offset, size):
    """Step 4's new block: descend while priorities outrank it, then split the rest by offset
    into its left (lower offsets) and right subtrees."""
    u = _node(link, val, state, spare, offset, size)
    depth = 0
    parent, side = -1, 0
    v = state[ROOT]
    while v >= 0 and val[v, PRI] > val[u, PRI]:
        path[depth] = v
        depth += 1
        parent, side = v, (0 if offset < val[v, OFF] else 1)
        v = link[v, side]
    _attach(link, state, parent, side, u)
    above = depth
    path[depth] = u
    depth += 1
    lp, ls, rp, rs = u, 0, u, 1
    while v >= 0:
        path[depth] = v
        depth += 1
        if val[v, OFF] < offset:
            link[lp, ls] = v
            lp, ls, v = v, 1, link[v, 1]
        else:
            link[rp, rs] = v
            rp, rs, v = v, 0, link[v, 0]
    link[lp, ls] = -1
    link[rp, rs] = -1
    for k in range(depth - 1, above, -1):  # the split chains, deepest first, then u and above
        _pull(link, val, path[k])
    _pull_path(link, val, path, above + 1)


@njit(cache=True, inline="always")
def free(link, val, state, spare, path, offset, size):
    """Step 4: give [offset, offset + size) back, merged with the blocks at both its ends;
    0 bytes free nothing."""
    if size == 0:
        return
    end = offset + size
    p = _before(link, val, state, offset)
    if p >= 0 and val[p, OFF] + val[p, SIZE] != offset:
        p = -1
    depth = find(link, val, state, path, end)
    if depth:
        s = path[depth - 1]
        if p >= 0:
            size += val[s, SIZE]
            remove(link, val, state, spare, path, depth)
        else:
            val[s, OFF] = offset
            val[s, SIZE] += size
            _pull_path(link, val, path, depth)
            return
    if p >= 0:
        depth = find(link, val, state, path, val[p, OFF])
        val[p, SIZE] += size
        _pull_path(link, val, path, depth)
        return
    insert(link, val, state, spare, path, offset, size)


@njit(cache=True, inline="always")
def take(link, val, state, spare, path, depth, size):
    """Step 3: the offset of the first size bytes of block path[depth - 1], taken from it."""
    v = path[depth - 1]
    offset = val[v, OFF]
    if val[v, SIZE] == size:
        remove(link, val, state, spare, path, depth)
    else:
        val[v, OFF] += size
        val[v, SIZE] -= size
        _pull_path(link, val, path, depth)
    return offset
