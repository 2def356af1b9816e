"""The synthetic trace generator and `crucible-spec synth`: deterministic, loadable, shaped
like a training loop (iterations the detector finds, externals for parameters, internal slots
for activations, views and in-place updates), and bench inputs the references accept."""

from __future__ import annotations

import numpy as np
import pytest

from crucible_spec import load_all, synthetic, synthetic_bench
from crucible_spec.cli import main
from crucible_spec.engine import run_reference
from crucible_spec.spec.core.layout_ops import to_wire
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.crucible.build_trace import build_trace
from crucible_spec.spec.crucible.crtrace import parse_crtrace, write_crtrace
from crucible_spec.spec.crucible.iteration_detector import K, run_detector
from crucible_spec.spec.crucible.pipeline import recorded_of
from crucible_spec.spec.crucible.tensor_meta import TENSOR_META
from crucible_spec.spec.crucible.types import DeviceType

load_all()

EXTERNALS = {"mlp": 6 + 6 + 2, "transformer": 28 + 2 * 28 + 2}
"""Parameters, their optimizer state (momentum; Adam's two moments) and the 2 host batches."""


@pytest.mark.parametrize("shape", synthetic.SHAPES)
def test_same_arguments_same_bytes(shape):
    data = write_crtrace(synthetic.synthetic_trace(700, shape, seed=3))
    assert write_crtrace(synthetic.synthetic_trace(700, shape, seed=3)) == data
    assert write_crtrace(synthetic.synthetic_trace(700, shape, seed=4)) != data


@pytest.mark.parametrize("fresh", [False, True])
@pytest.mark.parametrize("shape", synthetic.SHAPES)
def test_the_file_loads_back_as_the_trace(shape, fresh):
    t = synthetic.synthetic_trace(500, shape, seed=1, fresh_storages=fresh)
    assert len(t.entries) == 500
    assert parse_crtrace(write_crtrace(t)) == t


@pytest.mark.parametrize("shape", synthetic.SHAPES)
@pytest.mark.parametrize("num_ops", [0, 4, 130, 1000, 2345])
def test_the_detector_finds_every_iteration(shape, num_ops):
    length = synthetic.iteration_length(shape)
    stream = [e["schema_hash"] for e in synthetic.synthetic_trace(num_ops, shape).entries]
    assert stream == synthetic.schema_stream(num_ops, shape)
    found, _ = run_detector(stream)
    starts = (num_ops - K) // length + 1 if num_ops >= K else 0
    assert len(found) == max(starts - 2, 0)
    assert [b["index"] for b in found] == [k * length + K - 1 for k in range(2, starts)]
    assert all(b["last_completed_len"] == length for b in found)


@pytest.mark.parametrize("shape", synthetic.SHAPES)
def test_the_signature_occurs_once_per_iteration(shape):
    hashes = [e["schema_hash"] for e in synthetic.iteration(shape, 0).entries]
    cyclic = hashes + hashes[:K - 1]
    at = [i for i in range(len(hashes)) if cyclic[i:i + K] == hashes[:K]]
    assert at == [0]


@pytest.mark.parametrize("shape", synthetic.SHAPES)
def test_one_iteration_builds_externals_for_parameters_and_slots_for_activations(shape):
    length = synthetic.iteration_length(shape)
    g = build_trace(recorded_of(synthetic.synthetic_trace(length, shape)))
    external = [s for s in g.slots if s.is_external]
    internal = [s for s in g.slots if not s.is_external]
    assert len(external) == EXTERNALS[shape]
    assert all(s.meta["data_ptr"] >= synthetic.PARAM_BASE for s in external)
    assert internal and all(s.meta["data_ptr"] < synthetic.PARAM_BASE for s in internal)
    assert all(s.birth_op <= s.death_op < length for s in internal)


@pytest.mark.parametrize("shape", synthetic.SHAPES)
def test_views_in_place_updates_devices_and_a_tensorless_op(shape):
    it = synthetic.iteration(shape, 0)
    t = synthetic.synthetic_trace(len(it.entries), shape)
    ops = recorded_of(t)
    views = [r for r in ops if r.metas and r.num_outputs and r.metas[0]["data_ptr"] ==
             r.metas[r.num_inputs]["data_ptr"] and r.metas[0]["sizes"] !=
             r.metas[r.num_inputs]["sizes"]]
    in_place = [r for r in ops if r.op_flags & 2]
    assert views and in_place
    assert all(r.metas[0]["data_ptr"] == r.metas[r.num_inputs]["data_ptr"] for r in in_place)
    assert {m["device_type"] for m in t.metas} == {DeviceType.CPU, DeviceType.CUDA}
    tensorless = [r for r in ops if r.metas is None]
    assert tensorless and all(r.scalars for r in tensorless)
    assert {r.schema_hash for r in ops} <= set(t.names)


def test_fresh_storages_move_activations_only():
    length = synthetic.iteration_length("mlp")
    cached = synthetic.synthetic_trace(2 * length, "mlp")
    fresh = synthetic.synthetic_trace(2 * length, "mlp", fresh_storages=True)
    half = len(cached.metas) // 2
    assert [m["data_ptr"] for m in cached.metas[:half]] == \
        [m["data_ptr"] for m in cached.metas[half:]]
    moved = [a["data_ptr"] != b["data_ptr"] for a, b in zip(fresh.metas[:half],
                                                             fresh.metas[half:], strict=True)]
    params = [m["data_ptr"] >= synthetic.PARAM_BASE for m in fresh.metas[:half]]
    assert moved == [not p for p in params]


def test_meta_wire_is_the_layout_wire_form():
    t = synthetic.synthetic_trace(60, "transformer")
    assert all(synthetic_bench.meta_wire(m) == to_wire(TENSOR_META, m) for m in t.metas)


@pytest.mark.parametrize("name", ["detector.run", "trace.build", "dag.content_hash",
                                  "plan.compute"])
def test_bench_items_are_one_trace_the_reference_accepts(name):
    op = REGISTRY.ops[name]
    items = op.bench(450, np.random.default_rng(0))
    assert len(items) == 1
    assert op.bench(450, np.random.default_rng(0)) == items
    op.result.encode(run_reference(op, items[0]))


def test_synth_writes_the_trace_and_says_so(tmp_path, capsys):
    out = tmp_path / "t.crtrace"
    assert main(["synth", "--ops", "1e3", "--shape", "transformer", "--seed", "2", "-o",
                 str(out)]) == 0
    assert out.read_bytes() == write_crtrace(synthetic.synthetic_trace(1000, "transformer", 2))
    said = capsys.readouterr().out
    assert "1000 ops (2 iterations of 408 and one cut to 184)" in said and str(out) in said


@pytest.mark.parametrize("argv", [["--ops", "0"], ["--ops", "1.5"], ["--ops", "x"],
                                  ["--ops", "9", "--seed", "-1"]])
def test_synth_numbers_are_checked_at_parse_time(tmp_path, capsys, argv):
    with pytest.raises(SystemExit) as exit_:
        main(["synth", *argv, "-o", str(tmp_path / "t.crtrace")])
    assert exit_.value.code == 2
    assert "expected an integer >= " in capsys.readouterr().err
    assert not (tmp_path / "t.crtrace").exists()


def test_an_unknown_shape_is_a_one_line_usage_error(tmp_path, capsys):
    assert main(["synth", "--ops", "9", "--shape", "cnn", "-o", str(tmp_path / "t.crtrace")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("crucible-spec: ") and err.count("\n") == 1
    assert not (tmp_path / "t.crtrace").exists()
