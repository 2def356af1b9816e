"""`oracle trace` and `oracle dag` on the files a user hands them: files recognised by their
magic and named when empty or of another kind, a trace cut short compared as far as both files
go, two .crtrace files (or what `analyze --json` prints) compared region by region, and every
further divergent op named.

Expected values come from the .crtrace format (16-byte header, 80-byte op records with the
shape hash at byte 8 of a record, 168-byte metas) and from the bundled MLP recording's shape,
read off `dump`: 170 ops, 410 metas, an iteration of 34 ops repeated from op 0, so the
detector (K = 5 signature ops) closes region 0 = ops 34..67 at op 72.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from crucible_spec.cli import main

MLP = Path(__file__).resolve().parents[2] / "examples" / "traces" / "mlp.crtrace"
HEADER, RECORD, META, OPS, METAS = 16, 80, 168, 170, 410


def shape_hash_flipped(data: bytes, *ops: int) -> bytes:
    """The trace with bit 0 of each op's shape hash flipped (a field no content hash reads)."""
    out = bytearray(data)
    for op in ops:
        at = HEADER + op * RECORD + 8
        struct.pack_into("<Q", out, at, struct.unpack_from("<Q", out, at)[0] ^ 1)
    return bytes(out)


def schema_hash_flipped(data: bytes, op: int) -> bytes:
    out = bytearray(data)
    at = HEADER + op * RECORD
    struct.pack_into("<Q", out, at, struct.unpack_from("<Q", out, at)[0] ^ 1)
    return bytes(out)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def write(tmp_path: Path, name: str, data: bytes) -> str:
    (tmp_path / name).write_bytes(data)
    return str(tmp_path / name)


@pytest.mark.parametrize("action", ["trace", "dag"])
@pytest.mark.parametrize("content,says", [
    (b"", "is empty"),
    (b"GADC" + bytes(60), "is a CDAG node (magic 'GADC')"),
    (bytes([0xC8, 0xFF, 0x00, 0x01]) * 8, "is binary data (its first bytes are c8ff0001)"),
])
def test_a_file_of_another_kind_is_named_for_what_it_is(tmp_path, capsys, action, content,
                                                         says):
    other = write(tmp_path, "other.crtrace", content)
    code, out, err = run(capsys, "oracle", action, str(MLP), other)
    assert code == 2 and out == ""
    assert err.startswith(f"crucible-spec: {other} {says}") and err.count("\n") == 1, err
    assert "not JSON:" not in err and "utf-8" not in err and ".crtrace (magic 'CRTR')" in err


def test_a_trace_cut_short_is_compared_as_far_as_both_go(tmp_path, capsys):
    cut = write(tmp_path, "cut.crtrace", MLP.read_bytes()[:3000])
    code, out, err = run(capsys, "oracle", "trace", str(MLP), cut)
    assert code == 1 and err == ""
    whole = (3000 - HEADER) // RECORD  # 37 op records, the 38th cut
    assert f"B does not load (offset 16 (op records): {OPS} records need {OPS * RECORD} " \
           f"bytes, {3000 - HEADER} follow the header)" in out
    assert f"ends at byte 3000, inside op record {whole} of {OPS} and holds {whole} whole " \
           f"op records" in out
    assert f"the {whole} ops both hold agree in every field both hold" in out
    assert out.splitlines()[0].startswith("byte 3000: expected ")
    assert "got end of file" in out.splitlines()[0]


def test_a_difference_inside_the_part_both_hold_is_named_by_op_and_field(tmp_path, capsys):
    data = shape_hash_flipped(MLP.read_bytes(), 5)
    records_end = HEADER + OPS * RECORD
    size = records_end + 10 * META + 50  # cut inside meta 10
    cut = write(tmp_path, "cut.crtrace", data[:size])
    code, out, _ = run(capsys, "oracle", "trace", str(MLP), cut)
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith("op 5 (aten::addmm): ops[5].shape_hash:"), first
    assert f"[A byte {HEADER + 5 * RECORD + 8}, B byte {HEADER + 5 * RECORD + 8}]" in first
    assert f"ends at byte {size}, inside meta 10 of {METAS} and holds {OPS} whole op " \
           f"records" in out


def test_two_files_that_do_not_load_are_a_usage_error(tmp_path, capsys):
    cut = write(tmp_path, "cut.crtrace", MLP.read_bytes()[:3000])
    code, out, err = run(capsys, "oracle", "trace", cut, cut)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"{cut} is not a valid .crtrace: offset 16 (op records)" in err
    assert "give one that loads to compare the other against" in err


@pytest.mark.parametrize("ops,tail", [
    ((40, 45), "1 more op differs: op 45"),
    ((40, 41, 42, 50), "3 more ops differ: ops 41-42, 50"),
])
def test_every_further_divergent_op_is_named(tmp_path, capsys, ops, tail):
    planted = write(tmp_path, "b.crtrace", shape_hash_flipped(MLP.read_bytes(), *ops))
    code, out, _ = run(capsys, "oracle", "trace", str(MLP), planted)
    assert code == 1
    assert out.splitlines()[0].startswith(f"op {ops[0]} ")
    assert out.splitlines()[-1] == tail


def test_dag_of_two_traces_names_the_region_and_op(tmp_path, capsys):
    planted = write(tmp_path, "b.crtrace", schema_hash_flipped(MLP.read_bytes(), 40))
    code, out, err = run(capsys, "oracle", "dag", str(MLP), planted)
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("region 0: Merkle hash"), out  # op 40 lies in ops 34..67
    assert lines[1].startswith("region 0: op 6 differs first: ops[6].schema_hash:"), out
    assert len(lines) == 2, out  # regions 1 and 2 are the same; both runs have 3
    assert run(capsys, "oracle", "dag", str(MLP), str(MLP))[:2] == (0, "identical regions\n")


@pytest.mark.slow
def test_dag_reads_what_analyze_json_prints(tmp_path, capsys):
    planted = write(tmp_path, "b.crtrace", schema_hash_flipped(MLP.read_bytes(), 40))
    reports = []
    for name, trace in (("a.json", str(MLP)), ("b.json", planted)):
        code, out, _ = run(capsys, "analyze", trace, "--json", "--impl", "reference")
        assert code == 0
        reports.append(write(tmp_path, name, out.encode()))
    code, out, _ = run(capsys, "oracle", "dag", *reports)
    assert code == 1 and out.startswith("region 0: Merkle hash"), out
    assert run(capsys, "oracle", "dag", reports[0], str(MLP))[:2] == (0, "identical regions\n")
    code, _, err = run(capsys, "oracle", "dag", reports[0], write(tmp_path, "d.json",
                                                                   b'{"dag": {"nodes": []}}'))
    assert code == 2 and "compare a run with a run, or a DAG with a DAG" in err


@pytest.mark.slow
def test_each_consequence_is_said_once(tmp_path, capsys):
    """Two MLP traces of other sizes (synth seeds 0 and 1) plan pools of other sizes: the
    pool is named once per region, not by both the graph and the plan diff."""
    paths = [str(tmp_path / f"s{seed}.crtrace") for seed in (0, 1)]
    for seed, path in enumerate(paths):
        assert main(["synth", "--ops", "200", "--seed", str(seed), "-o", path, "-q"]) == 0
    code, out, _ = run(capsys, "oracle", "trace", *paths)
    regions = [line for line in out.splitlines() if line.startswith("region ")]
    assert code == 1 and regions, out
    assert all(line.count("pool_bytes") == 1 for line in regions), regions
