"""The readers of client input under mutation: the .crtrace meta checks shared by the spec and
fast loaders (regressions of a fast loader that skipped them and a reference pipeline that
crashed on what the spec accepted), and bounded runs of `crucible-spec fuzz`'s readers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from crucible_spec.cli import main
from crucible_spec.fast.core.trace_file import META, load_arrays, suspects
from crucible_spec.fuzz import (
    BOUNDARY,
    crtrace_bases,
    fuzz_wire,
    mutate,
    run_reader,
)
from crucible_spec.spec.core.errors import InvalidInput
from crucible_spec.spec.core.layout import leaves
from crucible_spec.spec.crucible.crtrace import frame, parse_crtrace, read_meta
from crucible_spec.spec.crucible.tensor_meta import TENSOR_META

SEED = "crucible@8d2680a2"
OFFSET = {leaf.path: leaf.offset for leaf in leaves(TENSOR_META)}


def _mlp() -> bytes:
    return crtrace_bases()[0].data


def _with_meta(data: bytes, k: int, **values: int) -> bytes:
    """The file with fields of meta k set (a name, or (name, index) for an array item)."""
    f = frame(data)
    out = bytearray(data)
    for name, value in values.items():
        key = (name[:-1], int(name[-1])) if name[-1].isdigit() else (name,)
        size = 8 if key[0] in ("sizes", "strides") else 1
        at = f.meta_start + k * f.meta_size + OFFSET[key]
        out[at:at + size] = (value & ((1 << 8 * size) - 1)).to_bytes(size, "little")
    return bytes(out)


def _both_reject(data: bytes, profile_errata=frozenset()) -> str:
    """Both loaders reject the file with the same message, which is returned."""
    with pytest.raises(InvalidInput) as spec:
        parse_crtrace(data, profile_errata)
    with pytest.raises(InvalidInput) as fast:
        load_arrays(data, profile_errata)
    assert fast.value.message == spec.value.message
    return spec.value.message


def _analyze_fails_in_one_line(tmp_path, capsys, data: bytes, *argv: str) -> str:
    path = tmp_path / "bad.crtrace"
    path.write_bytes(data)
    for impl in ("numba", "reference"):
        capsys.readouterr()
        assert main(["analyze", str(path), "--impl", impl, *argv]) == 2
        err = capsys.readouterr().err
        assert "not a valid .crtrace" in err and len(err.strip().splitlines()) == 1
    return err


def test_nine_dimensions_are_rejected_by_both_loaders_and_analyze(tmp_path, capsys):
    """Was: the fast loader accepted ndim 9 and the reference pipeline raised IndexError."""
    data = _with_meta(_mlp(), 3, ndim=9)
    assert "meta 3): ndim 9 > 8" in _both_reject(data)
    _analyze_fails_in_one_line(tmp_path, capsys, data)


def test_a_span_past_int64_is_rejected_by_both_loaders_and_analyze(tmp_path, capsys):
    """Was: a size of 2^62 (float, so 2^64 bytes) made the reference raise OverflowError."""
    data = _with_meta(_mlp(), 5, ndim=1, sizes0=1 << 62, strides0=1)
    assert "storage span does not fit 64 bits" in _both_reject(data)
    _analyze_fails_in_one_line(tmp_path, capsys, data)


@pytest.mark.parametrize("values,problem", [
    ({"requires_grad": 2}, "0x02 is not a bool"),
    ({"dtype": 99}, "dtype 99 is not a ScalarType ordinal"),
    ({"ndim": 1, "sizes0": -5}, "a size is negative"),
])
def test_the_fast_loader_makes_the_spec_checks(values, problem):
    """Was: the fast loader read bad bools, dtypes and sizes without a word."""
    assert problem in _both_reject(_with_meta(_mlp(), 7, **values))


def test_metas_past_the_file_are_rejected_not_read_under_the_seed_profile(tmp_path, capsys):
    """E18.4 lets a seed-profile file's ops use more metas than it holds: the reference
    rejected it when draining, the numba pipeline read past its arrays."""
    from crucible_spec.spec.core.errata import profile_errata

    data = bytearray(_mlp())
    f = frame(bytes(data))
    del data[f.meta_end - f.meta_size:f.meta_end]
    data[12:16] = (f.num_metas - 1).to_bytes(4, "little")
    trace = parse_crtrace(bytes(data), profile_errata(SEED))
    assert len(trace.metas) == f.num_metas - 1
    with pytest.raises(InvalidInput, match="run past the") as fast:
        load_arrays(bytes(data), profile_errata(SEED))
    assert fast.value.message.startswith("op ")
    _analyze_fails_in_one_line(tmp_path, capsys, bytes(data), "--profile", SEED)


def test_a_pool_past_u64_is_rejected_by_both_pipelines(tmp_path, capsys):
    """Spans just under 2^63 pass the loader; three of them live at once would need a pool
    past 2^64, which numba wrapped and the reference did not."""
    f = frame(_mlp())
    data = _mlp()
    for k in range(f.num_metas):
        data = _with_meta(data, k, ndim=1, sizes0=(1 << 63) - 1, strides0=1, dtype=0)
    assert "a pool holds less than 2^64" in _analyze_fails_in_one_line(tmp_path, capsys, data)


def test_the_screen_flags_every_meta_the_spec_rejects():
    """An 8-d float meta with every field, and every dimension's size and stride together,
    set to every boundary value: read_meta rejects only rows that `suspects` flags, so the
    fast loader's check is the spec's."""
    base = TENSOR_META.pack(TENSOR_META.default_values() | {
        "ndim": 8, "sizes": [2] * 8, "strides": [3] * 8, "dtype": 6})
    spots = [[(leaf.offset, leaf.size)] for leaf in leaves(TENSOR_META)]
    spots += [[(OFFSET[("sizes", d)], 8), (OFFSET[("strides", d)], 8)] for d in range(8)]
    rows = []
    for spot, value in itertools.product(spots, BOUNDARY):
        row = bytearray(base)
        for at, size in spot:
            row[at:at + size] = (value & ((1 << 8 * size) - 1)).to_bytes(size, "little")
        rows.append(bytes(row))
    flagged = suspects(np.frombuffer(b"".join(rows), np.uint8).view(META))
    rejected = []
    for k, row in enumerate(rows):
        try:
            read_meta(row, 0, k)
        except InvalidInput:
            rejected.append(k)
    assert len(rejected) > 100
    assert set(rejected) <= set(np.flatnonzero(flagged).tolist())


def test_mutations_are_the_same_for_a_seed():
    def inputs(seed: int) -> list[bytes]:
        rng = np.random.default_rng(seed)
        return [mutate(crtrace_bases()[0], rng)[0] for _ in range(20)]

    assert inputs(3) == inputs(3) != inputs(4)


@pytest.mark.parametrize("reader,count", [("crtrace", 120), ("cdag", 1500),
                                          ("checkpoint", 5000)])
@pytest.mark.slow
def test_a_bounded_fuzz_run_finds_nothing(reader, count):
    run = run_reader(reader, seconds=600, seed=7, max_inputs=count)
    assert run.tried == count
    assert run.findings == []


@pytest.mark.slow
def test_mutated_requests_of_every_op_get_no_internal_answer():
    rng = np.random.default_rng(7)
    found = [f for batch in itertools.islice(fuzz_wire(rng), 1500) for f in batch]
    assert found == []


def test_the_checkpoint_check_catches_a_file_that_does_not_round_trip(monkeypatch):
    """A decoder that forgets the flags word accepts a file the encoder would write otherwise:
    the check reports it; the spec's decoder passes the same file."""
    from crucible_spec.fuzz import check_checkpoint, checkpoint_bases
    from crucible_spec.spec.ringkernel import checkpoint_ops as checkpoint

    data = checkpoint_bases()[1].data
    assert check_checkpoint(data, "crucible") == []
    flagged = data[:36] + b"\x07" + data[37:]
    assert check_checkpoint(flagged, "crucible") == []
    real = checkpoint.decode

    def lax(data: bytes, errata=frozenset()):
        return real(data[:36] + b"\x02" + data[37:], errata)

    monkeypatch.setattr(checkpoint, "decode", lax)
    assert [k for k, _ in check_checkpoint(flagged, "crucible")] == ["round trip"]


def test_the_fuzz_command_reports_and_rejects_unknown_readers(tmp_path, capsys):
    report = tmp_path / "fuzz.json"
    assert main(["fuzz", "--reader", "cdag", "--seconds", "1", "--report", str(report)]) == 0
    assert "cdag:" in capsys.readouterr().out and '"tried"' in report.read_text()
    assert main(["fuzz", "--reader", "nope"]) == 2
    assert "no reader 'nope'" in capsys.readouterr().err
