"""`crucible-spec record`: real PyTorch programs recorded into .crtrace files the spec loads,
byte-identical run to run, with the hashes, phases, scopes and caps of the native recorder."""

from __future__ import annotations

import struct
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from crucible_spec.cli import main
from crucible_spec.engine import Implementation
from crucible_spec.recorder import MAX_METAS, Recorder
from crucible_spec.recorder_torch import Pointers, scalar_value
from crucible_spec.spec.crucible.crtrace import LoadedTrace, parse_crtrace, write_crtrace
from crucible_spec.spec.crucible.types import OP_FLAG_PHASE_SHIFT, OpFlag, TrainingPhase
from crucible_spec.spec.crucible.vessel import ROOT_SCOPE, schema_hash, scope_hash, shape_hash

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def record(tmp_path: Path, script: str, *extra: str) -> bytes:
    out = tmp_path / "out.crtrace"
    assert main(["record", script, "-o", str(out), "--force", *extra]) == 0
    return out.read_bytes()


@pytest.fixture(scope="module")
def mlp(tmp_path_factory) -> tuple[bytes, LoadedTrace]:
    data = record(tmp_path_factory.mktemp("mlp"), str(EXAMPLES / "mlp.py"))
    return data, parse_crtrace(data)


def phase(entry: dict) -> int:
    return (entry["op_flags"] & OpFlag.PHASE_MASK) >> OP_FLAG_PHASE_SHIFT


def test_the_mlp_recording_loads_and_round_trips(mlp):
    data, trace = mlp
    assert write_crtrace(trace) == data
    ref = Implementation("reference")
    decoded = ref.call("crtrace.decode", {"hex": data.hex()})
    assert decoded["num_ops"] == len(trace.entries) > 0
    assert ref.call("crtrace.encode", decoded)["hex"] == data.hex()


@pytest.mark.parametrize("example", ["mlp", "transformer", "cnn"])
def test_recording_twice_gives_identical_bytes(tmp_path, example):
    script = str(EXAMPLES / f"{example}.py")
    assert record(tmp_path, script) == record(tmp_path, script)


def test_raw_pointers_change_only_the_pointers(tmp_path, mlp):
    raw = parse_crtrace(record(tmp_path, str(EXAMPLES / "mlp.py"), "--raw-pointers"))
    assert raw.entries == mlp[1].entries
    strip = [{**m, "data_ptr": 0} for m in mlp[1].metas]
    assert [{**m, "data_ptr": 0} for m in raw.metas] == strip


def test_every_schema_hash_names_a_recorded_op(mlp):
    trace = mlp[1]
    names = set(trace.names.values())
    assert all(schema_hash(trace.names[e["schema_hash"]]) == e["schema_hash"]
               for e in trace.entries)
    assert names & {"aten::mm", "aten::addmm"}
    assert names & {"aten::relu", "aten::relu_"}


def test_shape_hashes_are_the_input_sizes(mlp):
    trace = mlp[1]
    for start, e in zip(trace.meta_starts, trace.entries, strict=True):
        inputs = trace.metas[start:start + e["num_inputs"]] if e["num_inputs"] else []
        assert e["shape_hash"] == shape_hash([m["sizes"][:m["ndim"]] for m in inputs])


def test_the_mlp_runs_forward_backward_and_optimizer_ops(mlp):
    trace = mlp[1]
    phases = {phase(e) for e in trace.entries}
    assert phases == {TrainingPhase.FORWARD, TrainingPhase.BACKWARD, TrainingPhase.OPTIMIZER}
    sgd = [e for e in trace.entries if phase(e) == TrainingPhase.OPTIMIZER]
    assert all(e["op_flags"] & OpFlag.IS_MUTABLE and not e["grad_enabled"] for e in sgd)
    alpha = struct.unpack("<q", struct.pack("<d", -0.1))[0]
    assert all(e["scalar_values"][0] == alpha for e in sgd)


def test_scopes_are_module_paths(mlp):
    trace = mlp[1]
    names = set(trace.names.values())
    assert {ROOT_SCOPE, "net", "net.0", "net.1", "net.2"} <= names
    assert {scope_hash("net.0"), scope_hash("net.2")} <= set(trace.scope_hashes)
    assert set(trace.callsite_hashes) == {0}


def test_in_place_outputs_carry_the_version_bump(mlp):
    trace = mlp[1]
    add_ = schema_hash("aten::add_.Tensor")
    for start, e in zip(trace.meta_starts, trace.entries, strict=True):
        if e["schema_hash"] == add_:
            param, _, out = trace.metas[start:start + 3]
            assert out["data_ptr"] == param["data_ptr"]
            assert out["version"] == param["version"] + 1


def test_convolution_keeps_five_of_its_scalars(tmp_path):
    trace = parse_crtrace(record(tmp_path, str(EXAMPLES / "cnn.py"), "--iterations", "1"))
    conv = [e for e in trace.entries if e["schema_hash"] == schema_hash("aten::convolution")]
    assert conv and all(e["num_scalar_args"] == 5 for e in conv)
    assert conv[0]["scalar_values"] == [1, 1, 1, 1, 1]  # stride 1,1; padding 1,1; dilation 1


def test_metas_are_capped_at_32_inputs_first():
    xs = [torch.ones(2) for _ in range(40)]
    with Recorder() as r:
        torch.cat(xs)
        torch._foreach_add(xs[:20], 1.0)
    cat, foreach = r.trace().entries
    assert (cat["num_inputs"], cat["num_outputs"]) == (MAX_METAS, 0)
    assert (foreach["num_inputs"], foreach["num_outputs"]) == (20, MAX_METAS - 20)


def test_inference_tensors_are_recorded_with_version_0():
    with torch.inference_mode():
        x = torch.ones(2)
        with Recorder() as r:
            x.add_(1)
    assert x.is_inference()
    (entry,) = r.trace().entries
    assert entry["op_flags"] & OpFlag.INFERENCE_MODE
    assert [m["version"] for m in r.trace().metas] == [0, 0]


class FakeStorage:
    """A storage at a fixed address (weakly referenceable, like UntypedStorage)."""

    def __init__(self, address: int) -> None:
        self.address = address

    def data_ptr(self) -> int:
        return self.address


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 255)), max_size=30))
def test_remapped_pointers_keep_identity_and_offset(uses):
    storages = [FakeStorage(0x7F00_0000_0000 + 0x1_0000 * k) for k in range(4)]
    remap, first_seen = Pointers(raw=False), []
    for k, offset in uses:
        if k not in first_seen:
            first_seen.append(k)
        ptr = remap(storages[k].address + offset, storages[k])
        assert ptr == ((first_seen.index(k) + 1) << 32) + offset


def test_a_reused_address_is_a_new_storage():
    remap = Pointers(raw=False)
    a = FakeStorage(0x5000)
    assert remap(0x5000, a) == 1 << 32
    ref = weakref.ref(a)
    del a
    assert ref() is None
    assert remap(0x5008, FakeStorage(0x5000)) == (2 << 32) + 8
    assert Pointers(raw=True)(0x5008, FakeStorage(0x5000)) == 0x5008


@given(st.floats(allow_nan=False) | st.integers(-(2**63), 2**63 - 1) | st.booleans())
def test_scalars_are_bit_cast_to_int64(value):
    bits = scalar_value(value)
    if isinstance(value, float):
        assert struct.unpack("<d", struct.pack("<q", bits))[0] == value
    else:
        assert bits == int(value)


def test_dtype_and_memory_format_arguments_are_their_ordinals():
    assert scalar_value(torch.float32) == 6
    assert scalar_value(torch.preserve_format) == 1
    assert scalar_value("mean") is None


def test_a_module_name_with_setup_and_a_dict_of_modules(tmp_path, monkeypatch, capsys):
    (tmp_path / "crucible_record_probe.py").write_text(
        "import torch\n"
        "model = {'enc': torch.nn.Linear(2, 2)}\n"
        "ready = []\n"
        "def setup():\n    ready.append(True)\n"
        "def step():\n    assert ready == [True]\n    model['enc'](torch.ones(1, 2))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    trace = parse_crtrace(record(tmp_path, "crucible_record_probe", "--iterations", "2"))
    assert "enc" in trace.names.values()
    assert "2 iterations" in capsys.readouterr().out


def usage_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1
    return err


@pytest.mark.parametrize(("source", "message"), [
    (None, "no such file"),
    ("import torch\nmodel = torch.nn.Linear(2, 2)\n", "defines no step()"),
    ("import torch\nstep = print\n", "defines no `model`"),
    ("import torch\nmodel = torch.nn.Linear(2, 2)\ndef step():\n    raise ValueError('boom')\n",
     "step() raised ValueError: boom"),
    ("raise ImportError('nope')\n", "importing it raised ImportError: nope"),
])
def test_script_mistakes_are_one_line_usage_errors(tmp_path, capsys, source, message):
    script = tmp_path / "script.py"
    if source is not None:
        script.write_text(source)
    err = usage_error(capsys, ["record", str(script), "-o", str(tmp_path / "x.crtrace")])
    assert err.startswith("crucible-spec: ") and message in err


def test_without_torch_it_says_how_to_install_it(tmp_path):
    code = ("import sys; sys.modules['torch'] = None; from crucible_spec.cli import main; "
            f"sys.exit(main(['record', 'examples/mlp.py', '-o', {str(tmp_path / 'x')!r}]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2
    assert "pip install" in done.stderr and "Traceback" not in done.stderr
