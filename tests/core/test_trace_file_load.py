"""The fast .crtrace loader (record-array views and one meta kernel pass) against the spec's
loader, and analyze's pool check and report against the reference pipeline, on synthetic
traces and adversarial meta rows."""

from __future__ import annotations

import random
from dataclasses import asdict

import numpy as np
import pytest

from crucible_spec.analysis import analyze, internal_total
from crucible_spec.commands.analyze import render
from crucible_spec.fast.core.trace_arrays import arrays_of, storage_nbytes
from crucible_spec.fast.core.trace_file import META, load_arrays, meta_columns, suspects
from crucible_spec.spec.crucible.crtrace import parse_crtrace
from crucible_spec.spec.crucible.memory_plan import align256
from crucible_spec.spec.crucible.pipeline import recorded_of
from crucible_spec.spec.crucible.tensor_meta import MAX_DIMS
from crucible_spec.synthetic_file import synthetic_file

SYNTHETIC = [(n, shape, seed, fresh) for n, shape, seed, fresh in (
    (1, "mlp", 0, False), (300, "mlp", 1, True), (900, "transformer", 0, False),
    (1300, "transformer", 3, True))]


def _same_arrays(fast, spec) -> None:
    for name in fast.__dataclass_fields__:
        x, y = getattr(fast, name), getattr(spec, name)
        assert x.shape == y.shape, name
        assert np.array_equal(x.astype(np.uint64), y.astype(np.uint64)), name


@pytest.mark.parametrize(("num_ops", "shape", "seed", "fresh"), SYNTHETIC)
def test_the_fast_loader_reads_synthetic_traces_as_the_spec_does(num_ops, shape, seed, fresh):
    data = synthetic_file(num_ops, shape, seed, fresh)
    fast, scope, callsite, names = load_arrays(data)
    spec = parse_crtrace(data)
    _same_arrays(fast, arrays_of(recorded_of(spec)))
    assert scope.tolist() == spec.scope_hashes and callsite.tolist() == spec.callsite_hashes
    assert names == spec.names


@pytest.mark.parametrize(("num_ops", "shape", "seed", "fresh"), SYNTHETIC)
def test_analyze_reports_synthetic_traces_as_the_reference_does(num_ops, shape, seed, fresh):
    data = synthetic_file(num_ops, shape, seed, fresh)
    runs = [analyze(data, file="t", profile="crucible", errata=frozenset(), impl=impl)
            for impl in ("numba", "reference")]
    for a in runs:
        a.impl = "-"
    assert asdict(runs[0]) == asdict(runs[1])
    assert render(runs[0]) == render(runs[1])


def _adversarial_rows(count: int, seed: int) -> np.ndarray:
    """Random meta rows, most with small dims and a known dtype, some with fields at the
    edges of the screen (2^27, negative sizes, ndim past 8, odd bool and dtype bytes)."""
    rng = random.Random(seed)
    rows = np.frombuffer(rng.randbytes(count * META.itemsize), np.uint8).reshape(
        count, META.itemsize).copy()
    m = rows.view(META).reshape(count)
    edges = [0, 1, 2, (1 << 27) - 1, 1 << 27, -(1 << 27), -(1 << 27) + 1, -1, (1 << 63) - 1,
             -(1 << 63)]
    for i in range(count):
        if rng.random() < 0.7:
            m["ndim"][i] = rng.choice([0, 1, 3, 8, 9, 255])
            m["dtype"][i] = rng.choice([0, 5, 6, 7, 11, 15, -1, 100])
            m["requires_grad"][i] = rng.choice([0, 1, 2])
            m["sizes"][i] = [rng.choice(edges) if rng.random() < 0.2 else rng.randrange(0, 9)
                             for _ in range(MAX_DIMS)]
            m["strides"][i] = [rng.choice(edges) if rng.random() < 0.2
                               else rng.randrange(-9, 9) for _ in range(MAX_DIMS)]
    return rows


@pytest.mark.parametrize("seed", range(4))
def test_the_meta_kernel_flags_and_sizes_as_the_numpy_screen_does(seed):
    rows = _adversarial_rows(3000, seed)
    m = rows.view(META).reshape(rows.shape[0])
    c = meta_columns(rows)
    assert np.array_equal(c.suspect, suspects(m))
    assert c.suspect.any() and not c.suspect.all()
    clear = ~c.suspect
    for name in ("ndim", "dtype", "device_type", "device_idx"):
        assert np.array_equal(getattr(c, name), m[name].astype(np.int64)), name
    assert np.array_equal(c.ptr, m["data_ptr"])
    want = storage_nbytes(m["ndim"][clear].astype(np.int64), m["sizes"][clear].astype(np.uint64),
                          m["strides"][clear].astype(np.uint64),
                          m["dtype"][clear].astype(np.int64))
    assert np.array_equal(c.nbytes[clear], want)


@pytest.mark.parametrize("seed", range(3))
def test_the_internal_slot_total_is_the_exact_sum_of_rounded_sizes(seed):
    rng = random.Random(seed)
    edges = [0, 1, 255, 256, 257, (1 << 63) - 1, (1 << 63) - 256, (1 << 63) - 255, -(1 << 63),
             -1, -255, -256]
    for _ in range(200):
        k = rng.randrange(0, 30)
        rows = [[rng.choice(edges) if rng.random() < 0.5 else rng.randrange(-(1 << 63), 1 << 63),
                 0, 0, rng.randrange(2)] for _ in range(k)]
        want = sum(align256(n) for n, _, _, ext in rows if not ext)
        assert internal_total(np.array(rows, dtype=np.int64).reshape(k, 4)) == want
