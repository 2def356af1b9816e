"""`synth`'s bulk writer: the same bytes as the spec's writer of the synthetic trace, for every
length (cut and whole iterations), shape, seed, storage mode and chunking; and the streamed
output file is written whole or not at all."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec import synthetic
from crucible_spec.cli import main
from crucible_spec.commands.common import write_chunks
from crucible_spec.spec.crucible.crtrace import parse_crtrace, write_crtrace
from crucible_spec.synthetic_file import file_chunks, meta_count, synthetic_file

LENGTHS = {"mlp": 51, "transformer": 408}
"""Ops in one iteration, as synth's help states them."""


def spec_file(num_ops: int, shape: str, seed: int, fresh: bool) -> bytes:
    return write_crtrace(synthetic.synthetic_trace(num_ops, shape, seed, fresh))


def joined(num_ops: int, shape: str, seed: int, fresh: bool, group_bytes: int) -> bytes:
    """The chunks copied as they come (a chunk may be overwritten by the next)."""
    return b"".join(bytes(c) for c in file_chunks(num_ops, shape, seed, fresh, group_bytes))


@pytest.mark.parametrize("fresh", [False, True])
@pytest.mark.parametrize("shape, seed", [("mlp", 0), ("mlp", 7), ("transformer", 3)])
@pytest.mark.parametrize("iterations, cut", [(0, 0), (0, 1), (0, -1), (1, 0), (1, 1), (3, 17)])
def test_the_same_bytes_as_the_spec_writer(shape, seed, fresh, iterations, cut):
    num_ops = iterations * LENGTHS[shape] + cut % LENGTHS[shape]
    want = spec_file(num_ops, shape, seed, fresh)
    assert synthetic_file(num_ops, shape, seed, fresh) == want
    assert joined(num_ops, shape, seed, fresh, 1) == want  # one iteration a chunk


@settings(max_examples=15, deadline=None)
@given(num_ops=st.integers(0, 900), shape=st.sampled_from(synthetic.SHAPES),
       seed=st.integers(0, 2**32), fresh=st.booleans(), group_bytes=st.integers(0, 1 << 20))
def test_any_chunking_gives_the_spec_writers_bytes(num_ops, shape, seed, fresh, group_bytes):
    want = spec_file(num_ops, shape, seed, fresh)
    assert joined(num_ops, shape, seed, fresh, group_bytes) == want
    assert meta_count(num_ops, shape, seed) == len(parse_crtrace(want).metas)


def test_fresh_storages_move_activations_by_one_span_an_iteration():
    length = LENGTHS["mlp"]
    t = parse_crtrace(synthetic_file(3 * length, "mlp", 0, fresh_storages=True))
    it = synthetic.iteration("mlp", 0)
    per = len(it.metas)
    for k in range(3):
        ptrs = [m["data_ptr"] for m in t.metas[k * per:(k + 1) * per]]
        assert ptrs == [m["data_ptr"] + (k * it.span if mv else 0)
                        for m, mv in zip(it.metas, it.moves, strict=True)]


def test_a_negative_length_is_refused():
    with pytest.raises(ValueError, match="num_ops must be >= 0"):
        synthetic_file(-1)


def test_synth_says_the_metas_and_bytes_it_wrote(tmp_path, capsys):
    out = tmp_path / "t.crtrace"
    assert main(["synth", "--ops", "130", "--fresh-storages", "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data == spec_file(130, "mlp", 0, True)
    metas = len(parse_crtrace(data).metas)
    assert (f"130 ops (2 iterations of 51 and one cut to 28), {metas} metas, {len(data)} bytes"
            in capsys.readouterr().out)


def test_write_chunks_writes_the_chunks_in_order(tmp_path):
    out = tmp_path / "f.bin"
    assert write_chunks(out, [b"ab", memoryview(b"cde"), b""], force=False) == 5
    assert out.read_bytes() == b"abcde"


def test_a_failing_stream_leaves_no_file(tmp_path):
    def chunks():
        yield b"part"
        raise RuntimeError("stop")

    out = tmp_path / "f.bin"
    with pytest.raises(RuntimeError, match="stop"):
        write_chunks(out, chunks(), force=False)
    assert list(tmp_path.iterdir()) == []
