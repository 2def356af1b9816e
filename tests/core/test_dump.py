"""`crucible-spec dump`: a .crtrace and a CDAG node listed by op, recognised by magic."""

from __future__ import annotations

import json

import pytest

from crucible_spec.cli import main
from crucible_spec.conformance.golden import golden
from crucible_spec.conformance.seed_runs import mlp_stream
from crucible_spec.spec.crucible.crtrace import write_crtrace
from crucible_spec.spec.crucible.pipeline import trace_of
from crucible_spec.spec.crucible.trace_build_ops import recorded_ops

REGION = {r["name"]: r for r in golden()["cdag"]["regions"]}["A_no_plan"]


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "seed.bin"  # no .crtrace suffix: the magic says what it is
    path.write_bytes(write_crtrace(trace_of(recorded_ops(mlp_stream()))))
    return str(path)


def test_a_trace_lists_each_op_with_hex_hashes_and_metas(trace, capsys):
    assert main(["dump", trace]) == 0
    lines = capsys.readouterr().out.splitlines()
    size = 16 + 25 * 80 + 70 * 168 + 4  # header, records, metas, an empty name table
    assert lines[0] == f"crtrace: 25 ops, 70 metas (168-byte records), 0 names, {size} bytes"
    assert lines[1].startswith("op 0 ?  schema 0x000000000000a001 shape 0x000000000000f001 ")
    assert lines[2] == "    in[0]   Float [4, 8] strides [8, 1] cpu:0 ptr 0x50000"


def test_an_op_range_is_half_open(trace, capsys):
    assert main(["dump", trace, "--ops", "3:5", "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert records[0]["num_ops"] == 25 and records[0]["ops_shown"] == [3, 5]
    assert [r["index"] for r in records[1:]] == [3, 4]
    assert [r["schema_hash"] for r in records[1:]] == ["0x000000000000a001",
                                                       "0x000000000000a002"]


def test_a_cdag_node_lists_its_fields_and_ops(tmp_path, capsys):
    path = tmp_path / "node"
    path.write_bytes(bytes.fromhex(REGION["hex"]))
    assert main(["dump", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"cdag region node: {len(REGION['hex']) // 2} bytes, 3 ops"
    assert sum(line.startswith("op ") for line in out) == 3


@pytest.mark.parametrize("content", [b"", b"garbage!", b"CRTR\x01\0\0\0\x09\0\0\0\0\0\0\0",
                                     b"GADC" + bytes(12)])
def test_garbage_exits_2_with_one_line(tmp_path, capsys, content):
    path = tmp_path / "bad"
    path.write_bytes(content)
    assert main(["dump", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("crucible-spec: ") and err.count("\n") == 1, err


def test_a_bad_range_is_refused_at_parse_time(trace):
    with pytest.raises(SystemExit) as exit_:
        main(["dump", trace, "--ops", "a:b"])
    assert exit_.value.code == 2


def test_a_cipher_store_lists_head_log_and_objects(tmp_path, capsys):
    """A store laid out by hand: objects/<2 hex>/<14 hex>, HEAD, and a log line per step."""
    content = REGION["content_hash"]
    digits = f"{int(content, 16):016x}"
    (tmp_path / "objects" / digits[:2]).mkdir(parents=True)
    (tmp_path / "objects" / digits[:2] / digits[2:]).write_bytes(bytes.fromhex(REGION["hex"]))
    (tmp_path / "objects" / "ff").mkdir()
    (tmp_path / "objects" / "ff" / "00000000000001").write_bytes(b"not a node")
    (tmp_path / "HEAD").write_text(digits + "\n")
    (tmp_path / "log").write_text(f"7,{digits},123\n")
    assert main(["dump", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"cipher store: head 0x{digits}, 1 log entries, 2 objects"
    assert out[1] == f"  step 7: 0x{digits} at 123"
    size = len(REGION["hex"]) // 2
    assert out[2] == (f"  objects/{digits[:2]}/{digits[2:]}: {size} bytes, region 0x{digits}, "
                      f"3 ops")
    assert out[3].startswith("  objects/ff/00000000000001: 10 bytes, ")


def test_a_directory_that_is_no_store_is_a_usage_error(tmp_path, capsys):
    assert main(["dump", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("crucible-spec: cannot read ")
