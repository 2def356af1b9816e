"""numba kernel for replay.engine: the engine's cursor walk over a long stream, guards held as
an (n, 4) array of u64 hashes (schema, shape, scope, callsite)."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.registry import kernel
from ....spec.crucible.replay_ops import engine_region, engine_result, stream_from_wire
from ....spec.crucible.replay_region import E11_1, GUARD_KEYS, STREAM_FIELDS, Guard, checked_levels


@njit(cache=True)
def engine_run(region, stream, levels, statuses, positions, counts):
    """statuses[i], positions[i] per stream op; counts = [passes, divergences]. A pass that
    completes resets the cursor; a divergence leaves it."""
    n = region.shape[0]
    cursor = 0
    passes = 0
    diverged = 0
    for i in range(stream.shape[0]):
        positions[i] = cursor
        same = True
        for k in range(levels):
            if stream[i, k] != region[cursor, k]:
                same = False
                break
        if not same:
            statuses[i] = 1
            diverged += 1
            continue
        cursor += 1
        if cursor == n:
            statuses[i] = 2
            passes += 1
            cursor = 0
        else:
            statuses[i] = 0
    counts[0] = passes
    counts[1] = diverged


def _guards(guards) -> np.ndarray:
    out = np.zeros((len(guards), 4), dtype=np.uint64)
    if guards:
        out[:] = np.array(guards, dtype=np.uint64)
    return out


_ALLOWED = frozenset(GUARD_KEYS) | STREAM_FIELDS


def _column(stream: list, key: str) -> np.ndarray:
    """One hash of every op, from "0x" hex strings, through one bytes.fromhex."""
    col = [o.get(key, "0x0") for o in stream]
    if not all(v.startswith("0x") and len(v) > 2 for v in col):
        raise ValueError(key)
    joined = "".join([v[2:].rjust(16, "0") for v in col])
    if len(joined) != 16 * len(col):
        raise ValueError(key)
    return np.frombuffer(bytes.fromhex(joined), dtype=">u8").astype(np.uint64)


def guard_array(ops) -> np.ndarray:
    """The ops' guards as an (n, 4) array, for plain input only (objects of "0x" hex hashes);
    raises ValueError (or AttributeError, TypeError) on anything else."""
    if not isinstance(ops, list) or any(o.keys() - _ALLOWED for o in ops):
        raise ValueError(ops)
    out = np.zeros((len(ops), 4), dtype=np.uint64)
    for k, key in enumerate(GUARD_KEYS):
        out[:, k] = _column(ops, key)
    return out


def fast_stream(stream) -> np.ndarray:
    """guard_array, or the spec's parser (which also words the errors) for other input."""
    try:
        return guard_array(stream)
    except (ValueError, AttributeError, TypeError):
        return _guards(stream_from_wire(stream))


def engine_one(region, stream, errata: frozenset[str]) -> dict:
    guards, ops = engine_region(region), fast_stream(stream)
    m = ops.shape[0]
    statuses = np.zeros(m, dtype=np.uint8)
    positions = np.zeros(m, dtype=np.uint32)
    counts = np.zeros(2, dtype=np.int64)
    engine_run(_guards(guards), ops, len(checked_levels(errata)), statuses, positions, counts)
    statuses_, positions_ = statuses.tolist(), positions.tolist()
    first = statuses_.index(1) if counts[1] else None
    got = Guard(*map(int, ops[first])) if first is not None else None
    return engine_result(guards, got, statuses_, positions_, int(counts[0]), int(counts[1]),
                         errata, first)


@kernel("replay.engine", "numba", models=(E11_1,))
def replay_engine_batch(region, stream, errata=frozenset()):
    rows = [engine_one(r, s, errata) for r, s in zip(region, stream, strict=True)]
    out = {k: [row[k] for row in rows] for k in ("statuses", "positions", "first_divergence")}
    return out | {k: np.array([row[k] for row in rows], dtype=np.uint32)
                  for k in ("completed", "diverged")}
