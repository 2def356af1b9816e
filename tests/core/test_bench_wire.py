"""`crucible-spec bench --serve / --cmd / --reference-budget / --plot`: wire implementations are
timed on the bench's requests and checked, a broken one is caught, the reference's time budget
marks its row, and the plot has one bar per measured cell."""

from __future__ import annotations

import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from crucible_spec import bench, load_all
from crucible_spec.bench_plot import render_svg
from crucible_spec.bench_wire import (
    WireError,
    WireImpl,
    answers_agree,
    parse_cmd,
    serve_impl,
    time_wire,
)
from crucible_spec.engine import run_reference
from crucible_spec.spec.core.registry import REGISTRY

load_all()

FMIX = REGISTRY.ops["hash.fmix64"]
SERVE_REF = f"{sys.executable} -m crucible_spec serve --impl reference"
WRONG = ("import sys, json\n"
         "for line in sys.stdin:\n"
         "    rid = json.loads(line)['id']\n"
         "    print(json.dumps({'id': rid, 'ok': True, 'result': {'out': '0x0'}}), flush=True)\n")


def test_serve_and_cmd_rows_agree_with_the_reference():
    wires = [serve_impl("reference"), parse_cmd(f"ref={SERVE_REF}")]
    row = bench.bench_op(FMIX, 10, ["numba"], ref_max=100, repeat=1, seed=0, wires=wires)
    assert set(row.wire) == {"serve reference", "ref"}
    assert all(s > 0 for s in row.wire.values())
    assert row.mismatch == []
    text = bench.render([row], ["numba"])
    assert "serve reference" in text and "ref x ref e2e" in text


def test_a_wire_implementation_with_wrong_answers_is_a_mismatch():
    wrong = parse_cmd(f"wrong={sys.executable} -c {shlex.quote(WRONG)}")
    row = bench.bench_op(FMIX, 10, ["numba"], ref_max=100, repeat=1, seed=0, wires=[wrong])
    assert row.mismatch == ["wrong"]
    assert "MISMATCH: hash.fmix64 n=10 wrong" in bench.render([row], ["numba"])


FIRST_WRONG = ("import sys, json\n"
               "M = (1 << 64) - 1\n"
               "def fmix(k):\n"
               "    k ^= k >> 33\n"
               "    k = k * 0xff51afd7ed558ccd & M\n"
               "    k ^= k >> 33\n"
               "    k = k * 0xc4ceb9fe1a85ec53 & M\n"
               "    return k ^ (k >> 33)\n"
               "seen = 0\n"
               "for line in sys.stdin:\n"
               "    req = json.loads(line)\n"
               "    if req['op'] == 'hello':\n"
               "        print(json.dumps({'id': 0, 'ok': True, 'result': {}}), flush=True)\n"
               "        continue\n"
               "    out = fmix(int(req['args']['x'], 16)) if seen else 0\n"
               "    seen += 1\n"
               "    answer = {'id': req['id'], 'ok': True, 'result': {'out': '0x%016x' % out}}\n"
               "    print(json.dumps(answer), flush=True)\n")
"""A wire implementation whose first answer after hello is wrong (as a cold start might be)."""


def test_the_warm_up_takes_the_first_answer_before_the_timing():
    cold = parse_cmd(f"cold={sys.executable} -c {shlex.quote(FIRST_WRONG)}")
    row = bench.bench_op(FMIX, 10, ["numba"], ref_max=100, repeat=1, seed=0, wires=[cold])
    assert row.mismatch == []
    items = FMIX.bench(3, np.random.default_rng(0))
    assert not answers_agree(FMIX, [FMIX.result.encode(run_reference(FMIX, a)) for a in items],
                             time_wire(cold, FMIX, items).answers)


def test_cmd_names_default_to_the_program():
    assert parse_cmd(f"cpp={sys.executable} -V").name == "cpp"
    assert parse_cmd(f"{sys.executable} -V").name == sys.executable.rsplit("/", 1)[-1]
    assert parse_cmd(f"{sys.executable} -c 'a=1'").argv[-1] == "a=1"
    with pytest.raises(WireError, match="command not found"):
        parse_cmd("no-such-program-anywhere --flag")


@pytest.mark.parametrize("cmd", ["no-such-program-anywhere", "false"])
def test_a_command_that_cannot_serve_fails_with_one_line(cmd):
    proc = subprocess.run([sys.executable, "-m", "crucible_spec", "bench", "--ops",
                           "hash.fmix64", "--sizes", "10", "--impl", "numba", "--cmd", cmd],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_reference_budget_extrapolates_and_marks_the_row():
    row = bench.bench_op(FMIX, 50, ["numba"], ref_max=100, repeat=1, seed=0, budget=0.0)
    assert row.reference_from == 1
    assert any("extrapolated from its first 1 of 50 items" in n for n in row.notes)
    assert row.mismatch == []
    line = bench.render([row], ["numba"]).splitlines()[2]
    assert line.split()[2].startswith("~")
    whole = bench.bench_op(FMIX, 50, ["numba"], ref_max=100, repeat=1, seed=0)
    assert whole.reference_from is None and not any("extrapolated" in n for n in whole.notes)


def test_the_plot_is_an_svg_with_one_bar_per_measured_cell():
    rows = [bench.Row("a.op", 10, 1e-3, 2e-3, kernel={"numba": 1e-5},
                      end_to_end={"numba": 2e-4}, wire={"serve numba": 3e-3}),
            bench.Row("a.op", 1000, None, kernel={"numba": 4e-5}),
            bench.Row("b.op", 10, 5.0, reference_from=3, wire={"cpp": 0.25})]
    svg = render_svg(rows)
    assert svg == render_svg(rows)
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    bars = [e for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.get("class") == "bar"]
    assert len(bars) == 4 + 1 + 2
    titles = [b.find("{http://www.w3.org/2000/svg}title").text for b in bars]
    assert "b.op n=10 reference: 5 s (extrapolated)" in titles
    heights = {t: float(b.get("height")) for t, b in zip(titles, bars, strict=True)}
    assert heights["a.op n=10 numba kernel: 1e-05 s"] < heights["a.op n=10 reference: 0.001 s"]


@pytest.mark.slow
def test_a_profile_is_what_every_side_answers_under():
    """Under the seed's profile the reference, the kernel and serve under that profile agree
    on planner inputs where the seed's free list (E10.1) gives other offsets than the spec's;
    serve under the spec's profile is then a mismatch."""
    from crucible_spec.commands.common import profile_errata

    plan = REGISTRY.ops["plan.compute"]
    seed = profile_errata("crucible@8d2680a2")
    wires = [serve_impl("numba", "crucible@8d2680a2"),
             WireImpl("spec serve", serve_impl("reference").argv)]
    row = bench.bench_op(plan, 3000, ["numba"], ref_max=10_000, repeat=1, seed=0, wires=wires,
                         errata=seed)
    assert row.mismatch == ["spec serve"]
    spec_row = bench.bench_op(plan, 3000, ["numba"], ref_max=10_000, repeat=1, seed=0,
                              wires=wires[1:])
    assert spec_row.mismatch == []
