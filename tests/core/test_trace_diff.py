"""`oracle trace` on the bundled MLP recording: a change planted in the file's bytes is named by
op index, op name and field on the first line, with its consequences; regions of one trace are
compared, and `analyze` explains a broken steady state.

Offsets come from the .crtrace format itself (16-byte header, 80-byte op records, 168-byte
TensorMeta records; sizes at 0, strides at 64, dtype at 137 of a meta: the compiler's own
offsetof), never from the code under test.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from crucible_spec.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RECORD, META = 80, 168


@pytest.fixture(scope="module")
def mlp(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("mlp") / "mlp.crtrace"
    assert main(["record", str(EXAMPLES / "mlp.py"), "--iterations", "5", "-o", str(path)]) == 0
    return path


def meta_offset(data: bytes, op: int, tensor: int) -> int:
    """Where op's tensor-th TensorMeta lies: metas follow the records, one per input and output
    of each op in order."""
    num_ops = struct.unpack_from("<I", data, 8)[0]
    before = sum(sum(struct.unpack_from("<HH", data, 16 + i * RECORD + 72)) for i in range(op))
    return 16 + num_ops * RECORD + (before + tensor) * META


def plant(data: bytes, at: int, fmt: str, change) -> bytes:
    out = bytearray(data)
    (value,) = struct.unpack_from(fmt, out, at)
    struct.pack_into(fmt, out, at, change(value))
    return bytes(out)


def first_line(capsys, a: Path, b: Path) -> str:
    capsys.readouterr()
    assert main(["oracle", "trace", str(a), str(b)]) == 1
    return capsys.readouterr().out.splitlines()[0]


CHANGES = {
    "schema hash": (lambda d: 16 + 40 * RECORD, "<Q", lambda v: v ^ 1,
                    "op 40 (aten::mse_loss): ops[40].schema_hash:"),
    "input size": (lambda d: meta_offset(d, 40, 1), "<q", lambda v: v + 1,
                   "op 40 (aten::mse_loss): ops[40].inputs[1].sizes[0]: expected 8, got 9"),
    "stride": (lambda d: meta_offset(d, 40, 0) + 64 + 8, "<q", lambda v: v + 2,
               "op 40 (aten::mse_loss): ops[40].inputs[0].strides[1]: expected 1, got 3"),
    "scalar": (lambda d: 16 + 40 * RECORD + 32, "<q", lambda v: v + 1,
               "op 40 (aten::mse_loss): ops[40].scalar_values[0]: expected 1, got 2"),
    "dtype": (lambda d: meta_offset(d, 40, 0) + 137, "<b", lambda v: v + 1,
              "op 40 (aten::mse_loss): ops[40].inputs[0].dtype: expected 6, got 7"),
    "outside every region": (lambda d: 16 + 12 * RECORD + 8, "<Q", lambda v: v ^ 0x100,
                             "op 12 (aten::mm): ops[12].shape_hash:"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_the_first_line_names_op_index_name_and_field(mlp, tmp_path, capsys, change):
    where, fmt, edit, expected = CHANGES[change]
    data = mlp.read_bytes()
    at = where(data)
    planted = tmp_path / "planted.crtrace"
    planted.write_bytes(plant(data, at, fmt, edit))
    line = first_line(capsys, mlp, planted)
    assert line.startswith(expected), line
    assert f"A byte {at}, B byte {at}" in line


def test_consequences_name_the_region_and_its_hashes_in_hex(mlp, tmp_path, capsys):
    planted = tmp_path / "planted.crtrace"
    planted.write_bytes(plant(mlp.read_bytes(), 16 + 40 * RECORD, "<Q", lambda v: v ^ 1))
    assert main(["oracle", "trace", str(mlp), str(planted)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "op 40 lies in region 0 (ops 34..67)"
    assert lines[2].startswith("region 0: content hash 0xd6fb626fb3f62fc4 -> 0x")
    assert "Merkle hash 0xd6fb626fb3f62fc4 -> 0x" in lines[2]


def test_outside_every_region_is_said_so_and_changes_no_region(mlp, tmp_path, capsys):
    planted = tmp_path / "planted.crtrace"
    planted.write_bytes(plant(mlp.read_bytes(), 16 + 12 * RECORD + 8, "<Q", lambda v: v ^ 1))
    assert main(["oracle", "trace", str(mlp), str(planted)]) == 1
    out = capsys.readouterr().out
    assert "op 12 lies outside every region" in out
    assert "no region, hash, slot or plan offset changes" in out


def test_identical_files_exit_0(mlp, capsys):
    assert main(["oracle", "trace", str(mlp), str(mlp)]) == 0
    assert capsys.readouterr().out.strip() == "identical traces"


def test_a_trailing_byte_is_a_difference(mlp, tmp_path, capsys):
    longer = tmp_path / "longer.crtrace"
    longer.write_bytes(mlp.read_bytes() + b"\0")
    line = first_line(capsys, mlp, longer)
    size = mlp.stat().st_size
    assert line.startswith(f"byte {size} (name table): expected end of file, got 00"), line


def test_json_names_the_same_facts(mlp, tmp_path, capsys):
    planted = tmp_path / "planted.crtrace"
    planted.write_bytes(plant(mlp.read_bytes(), 16 + 40 * RECORD + 32, "<q", lambda v: v + 1))
    capsys.readouterr()
    assert main(["oracle", "trace", str(mlp), str(planted), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["first"]["op"] == 40 and report["first"]["name"] == "aten::mse_loss"
    assert report["first"]["path"] == "ops[40].scalar_values[0]"
    assert report["first"]["offset_a"] == 16 + 40 * RECORD + 32
    assert report["divergent_ops"] == 1


@pytest.mark.parametrize("content", [b"", bytes(range(256)) * 40])
def test_an_invalid_file_exits_2_with_one_line(mlp, tmp_path, capsys, content):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(content)
    capsys.readouterr()
    assert main(["oracle", "trace", str(mlp), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("crucible-spec: ") and err.count("\n") == 1, err


@pytest.mark.parametrize("content,ends", [
    (b"CRTR", "ends at byte 4, inside the 16-byte header"),
    (b"CRTR\x01\0\0\0\xff\xff\0\0\0\0\0\0", "ends at byte 16, inside op record 0 of 65535"),
])
def test_a_trace_that_does_not_load_is_compared_as_far_as_it_goes(mlp, tmp_path, capsys,
                                                                   content, ends):
    bad = tmp_path / "bad.crtrace"
    bad.write_bytes(content)
    capsys.readouterr()
    assert main(["oracle", "trace", str(mlp), str(bad)]) == 1
    out = capsys.readouterr().out
    assert "B does not load (offset " in out and ends in out, out


def _last_region_changed(mlp: Path, tmp_path: Path) -> Path:
    """Op 110 (region 2's op 8, aten::mse_loss_backward) gets input 1's first size 8 -> 9."""
    data = mlp.read_bytes()
    planted = tmp_path / "unsteady.crtrace"
    planted.write_bytes(plant(data, meta_offset(data, 110, 1), "<q", lambda v: v + 1))
    return planted


def test_regions_of_one_trace_are_compared_op_by_op(mlp, tmp_path, capsys):
    planted = _last_region_changed(mlp, tmp_path)
    assert main(["oracle", "trace", str(planted), "--region", "1", "--against", "2"]) == 1
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("op 110 (aten::mse_loss_backward): ops[110].inputs[1].sizes[0]: "
                           "expected 8, got 9"), line
    assert "op 8 of region 2, against ops[76] of region 1" in line
    assert main(["oracle", "trace", str(mlp), "--region", "0", "--against", "2"]) == 0
    assert main(["oracle", "trace", str(mlp), "--region", "0", "--against", "9"]) == 2


def test_analyze_explains_a_missing_steady_state(mlp, tmp_path, capsys):
    planted = _last_region_changed(mlp, tmp_path)
    capsys.readouterr()
    assert main(["analyze", str(planted)]) == 0
    out = capsys.readouterr().out
    assert "steady state: no" in out
    assert ("regions 1 and 2 differ first at op 110 (aten::mse_loss_backward): "
            "ops[110].inputs[1].sizes[0]: expected 8, got 9") in out
    assert main(["analyze", str(planted), "--json"]) == 0
    why = json.loads(capsys.readouterr().out)["dag"]["steady_state_break"]
    assert why["regions"] == [1, 2] and why["path"] == "ops[110].inputs[1].sizes[0]"
