"""PyC's IR: verify's codes, the canonical text, the fingerprint and the cache key, with the
values measured by running PyC at fdf1563 (facts sheet §1.2, §1.6)."""

from __future__ import annotations

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.pyc.cache import SWAPPED
from crucible_spec.spec.pyc.fingerprint import GOLDEN_SOURCE
from crucible_spec.spec.pyc.ir import module_to_wire

load_all()

SOURCE = module_to_wire(GOLDEN_SOURCE)
AFTER = ("0:input:lhs:dtype=1:shape=2x3:inputs=\n1:input:rhs:dtype=1:shape=3x4:inputs=\n"
         "2:matmul:fused_op_2_op_3:dtype=1:shape=2x4:inputs=0,1\n"
         "3:output:op_4:dtype=1:shape=2x4:inputs=2\n")


def _op(kind, name="", shape=(2, 4), inputs=(), dtype=1):
    return {"kind": kind, "name": name, "dtype": dtype, "shape": list(shape),
            "inputs": list(inputs)}


def _ask(op: str, args: dict, profile: str = "crucible") -> dict:
    import json

    impl = Implementation("reference", profile_errata(profile))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), impl, profile)


def _after_module() -> dict:
    return {"ops": [_op("input", "lhs", (2, 3)), _op("input", "rhs", (3, 4)),
                    _op("matmul", "fused_op_2_op_3", inputs=(0, 1)),
                    _op("output", "op_4", inputs=(2,))]}


@pytest.mark.parametrize("profile", ["crucible", "pyc@fdf1563"])
def test_golden_text_and_fingerprints(profile):
    assert _ask("pyc.serialize", {"module": _after_module()}, profile)["result"]["text"] == AFTER
    fp = _ask("pyc.fingerprint", {"module": SOURCE}, profile)["result"]["out"]
    assert int(fp, 16) == 7367339300434097518
    fp = _ask("pyc.fingerprint", {"module": _after_module()}, profile)["result"]["out"]
    assert int(fp, 16) == 10484150177586984269
    no_fusion = {"ops": [*SOURCE["ops"][:2], _op("matmul", "op_2", inputs=(0, 1)),
                         _op("relu", "op_3", inputs=(2,)), _op("output", "op_4", inputs=(3,))]}
    fp = _ask("pyc.fingerprint", {"module": no_fusion}, profile)["result"]["out"]
    assert int(fp, 16) == 8971991241683528107


def test_fnv_of_the_empty_string_uses_pycs_basis():
    from crucible_spec.spec.pyc.fingerprint import fnv1a64

    assert fnv1a64(b"") == 1469598103934665603


@pytest.mark.parametrize("fusion,key", [(False, 10346072359797451416),
                                        (True, 17405130821193028594)])
def test_cache_key_with_default_options(fusion, key):
    got = _ask("pyc.cache_key", {"module": SOURCE, "options": {"enable_fusion": fusion}})
    assert int(got["result"]["out"], 16) == key


def test_swapped_strings_collide_only_in_the_seed():
    # PyC's pyc_compile_model at fdf1563 answered 0x84637cd1d9d86844 for both.
    a, b = ({"module": SOURCE, "options": o} for o in SWAPPED)
    seed = [_ask("pyc.cache_key", x, "pyc@fdf1563")["result"]["out"] for x in (a, b)]
    spec = [_ask("pyc.cache_key", x)["result"]["out"] for x in (a, b)]
    assert seed == ["0x84637cd1d9d86844"] * 2 and spec[0] != spec[1]


@pytest.mark.parametrize("profile", ["crucible", "pyc@fdf1563"])
def test_distributed_options_left_off_do_not_enter_the_key(profile):
    # With distribution off compile drops its path, config and ranks: PyC's pyc_compile_model
    # at fdf1563 answered 0x452f5ffad033d270 for both option sets under the seed's key.
    quiet = {"autotune_db_path": "a.db"}
    noisy = quiet | {"dist_config_json": "{}", "dist_backend_path": "x.so", "world_size": 4,
                     "rank": 2}
    keys = [_ask("pyc.cache_key", {"module": SOURCE, "options": o}, profile)["result"]["out"]
            for o in (quiet, noisy)]
    assert keys[0] == keys[1]
    if profile == "pyc@fdf1563":
        assert keys[0] == "0x452f5ffad033d270"


@pytest.mark.parametrize("ops,code", [
    ([], 2),
    ([_op("input", shape=(2,)), _op("add", shape=(2,), inputs=(0,) * 9)], 3),
    ([_op("input", shape=(1,) * 9)], 4),
    ([_op("input", shape=(2, 0))], 4),
    ([_op("input", shape=())], 0),
    ([_op("input", shape=(2,)), _op("relu", shape=(2,), inputs=(1,))], 5),
    ([_op("matmul", shape=(2,), inputs=())], 0),
    ([_op("input", shape=(2, 0)), _op("add", shape=(2,), inputs=(0,) * 9)], 4),
])
def test_verify_codes_in_pycs_order(ops, code):
    assert _ask("pyc.verify", {"module": {"ops": ops}})["result"]["code"] == code


def test_names_that_fake_lines_collide_only_in_the_seed():
    one = {"ops": [_op("input", "a:dtype=1:shape=1:inputs=\n1:input:b", (1,))]}
    two = {"ops": [_op("input", "a", (1,)), _op("input", "b", (1,))]}
    seed = [_ask("pyc.fingerprint", {"module": m}, "pyc@fdf1563")["result"]["out"]
            for m in (one, two)]
    spec = [_ask("pyc.fingerprint", {"module": m})["result"]["out"] for m in (one, two)]
    assert seed[0] == seed[1] and spec[0] != spec[1]


@pytest.mark.parametrize("module,field", [
    ({"ops": [_op("input", "x", (1,))] * 2000}, "args.module.ops"),
    ({"ops": [_op("input", "x", (2**63,))]}, "args.module.ops[0].shape[0]"),
    ({"ops": [_op("input", "x", ("2",))]}, "args.module.ops[0].shape[0]"),
    ({"ops": [_op("conv", "x", (1,))]}, "args.module.ops[0].kind"),
    ({"ops": [_op("input", "n" * 64, (1,))]}, "args.module.ops[0].name"),
    ({"ops": [_op("input", "x", (1,), (), 9)]}, "args.module.ops[0].dtype"),
])
def test_bad_modules_are_refused_naming_the_field(module, field):
    for op in ("pyc.verify", "pyc.fingerprint"):
        error = _ask(op, {"module": module})["error"]
        assert error["code"] in ("invalid_input", "bad_request") and field in error["message"]


def test_a_cycle_is_verify_code_5_and_has_no_fingerprint():
    cyc = {"ops": [_op("input", shape=(2,)), _op("add", shape=(2,), inputs=(2,)),
                   _op("relu", shape=(2,), inputs=(1,))]}
    assert _ask("pyc.verify", {"module": cyc})["result"]["code"] == 5
    assert _ask("pyc.fingerprint", {"module": cyc})["error"]["code"] == "invalid_input"
    # PyC's pyc_ir_serialize at fdf1563 writes it anyway (E14.8), and fingerprints that text.
    seed = _ask("pyc.fingerprint", {"module": cyc}, "pyc@fdf1563")["result"]["out"]
    assert seed == "0x28027a9685900c48"


@pytest.mark.parametrize("op,seed", [("pyc.serialize", {"text": ""}),
                                     ("pyc.fingerprint", {"out": "0x14650fb0739d0383"})])
def test_the_empty_module_has_a_text_only_in_the_seed(op, seed):
    # PyC at fdf1563 answered "" and the FNV basis itself for a module with no ops.
    assert _ask(op, {"module": {"ops": []}})["error"]["code"] == "invalid_input"
    assert _ask(op, {"module": {"ops": []}}, "pyc@fdf1563")["result"] == seed


def test_more_than_eight_dimensions_have_no_text_in_either_profile():
    wide = {"ops": [_op("input", shape=(1,) * 9)]}
    for profile in ("crucible", "pyc@fdf1563"):
        assert _ask("pyc.serialize", {"module": wide}, profile)["error"]["code"] == \
            "invalid_input"


ALL = {p: True for p in ("canonicalize", "shape_inference", "layout_propagation", "fusion",
                         "liveness", "allocation", "lowering")}


def test_the_seed_pipeline_gives_pycs_golden_text():
    got = _ask("pyc.passes", {"module": SOURCE, "passes": ALL}, "pyc@fdf1563")["result"]
    text = _ask("pyc.serialize", {"module": got["module"]}, "pyc@fdf1563")["result"]["text"]
    assert text == AFTER
    assert got["fused_patterns"] == 1 and got["passes_run"] == 7
    assert got["shape_bucket"] == "tiny:i2:b72" and got["signature"] == "1:r2x2x3;1:r2x3x4"
    assert got["summary"] == "breaks=0 first=none@-1 c=0 g=0 r=0 l=0 u=0"
    assert got["plan_count"] == 3 and got["first_break_name"] == "none"


def test_the_spec_pipeline_keeps_the_relu():
    got = _ask("pyc.passes", {"module": SOURCE, "passes": ALL})["result"]
    assert [op["kind"] for op in got["module"]["ops"]] == [
        "input", "input", "matmul", "relu", "output"]
    assert [op["name"] for op in got["module"]["ops"]] == ["lhs", "rhs", "op_2", "op_3", "op_4"]
    assert got["fused_patterns"] == 0 and got["transformed_ops"] == 3


def _hx(x: float) -> str:
    import struct

    return f"0x{struct.unpack('<I', struct.pack('<f', x))[0]:08x}"


def test_matmul_relu_after_the_passes_clamps_only_in_the_spec():
    """x = [[1, 2], [-3, -4]] times w = [[-3, -2, -1, 0], [10.5, 11, 11.5, 12]], then relu: the
    facts sheet's 18 20 22 24 -33 -38 -43 -48 before the relu."""
    module = {"ops": [_op("input", "x", (2, 2)), _op("input", "w", (2, 4)),
                      _op("matmul", inputs=(0, 1)), _op("relu", inputs=(2,)),
                      _op("output", inputs=(3,))]}
    inputs = [[_hx(v) for v in (1, 2, -3, -4)],
              [_hx(v) for v in (-3, -2, -1, 0, 10.5, 11, 11.5, 12)]]
    args = {"module": module, "inputs": inputs, "passes": True}
    spec = _ask("pyc.run", args)["result"]["outputs"]
    seed = _ask("pyc.run", args, "pyc@fdf1563")["result"]["outputs"]
    assert spec == [[_hx(v) for v in (18, 20, 22, 24, 0, 0, 0, 0)]]
    assert seed == [[_hx(v) for v in (18, 20, 22, 24, -33, -38, -43, -48)]]


def test_liveness_of_the_unfused_golden_graph():
    passes = ALL | {"fusion": False}
    seed = _ask("pyc.passes", {"module": SOURCE, "passes": passes}, "pyc@fdf1563")["result"]
    spec = _ask("pyc.passes", {"module": SOURCE, "passes": passes})["result"]
    assert seed["peak_live_values"] == 5 and spec["peak_live_values"] == 3


def test_graph_breaks_are_counted_by_kind():
    module = {"ops": [_op("input", "x", (4,)), _op("gelu", shape=(4,), inputs=(0,)),
                      _op("const", "c", (4,)), _op("output", shape=(4,), inputs=(1,))]}
    got = _ask("pyc.passes", {"module": module, "passes": ALL})["result"]
    assert got["summary"] == "breaks=2 first=gelu@1 c=1 g=1 r=0 l=0 u=0"
    assert got["first_break_name"] == "op_1" and got["plan_count"] == 1
    assert got["shape_bucket"] == "tiny:i1:b16"


def test_a_gelu_cannot_run():
    module = {"ops": [_op("input", "x", (1,)), _op("gelu", shape=(1,), inputs=(0,)),
                      _op("output", shape=(1,), inputs=(1,))]}
    error = _ask("pyc.run", {"module": module, "inputs": [[_hx(1)]]})["error"]
    assert error["code"] == "invalid_input" and "args.module.ops[1]" in error["message"]


@pytest.mark.parametrize("profile,same", [("crucible", True), ("pyc@fdf1563", False)])
def test_fusion_differential(profile, same):
    """Running a module before and after the passes: equal under the spec, not under PyC."""
    from hypothesis import HealthCheck, given, settings

    from crucible_spec.spec.pyc.pass_ops import modules_with_inputs

    differs = []

    @settings(max_examples=60, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(modules_with_inputs())
    def check(a):
        wire = {"module": a["module"], "inputs": [[f"0x{w:08x}" for w in x]
                                                   for x in a["inputs"]]}
        before = _ask("pyc.run", wire | {"passes": False}, profile)["result"]
        after = _ask("pyc.run", wire | {"passes": True}, profile)["result"]
        if before != after:
            differs.append(a)

    check()
    assert (not differs) == same


# ── the compile cache (facts sheet §1.6) ──────────────────────────────────────────────────────

RELU = {"ops": [_op("input", "x", (2, 3)), _op("relu", "F/nxUs7AOgH", (2, 3), (0,))]}
GELU = {"ops": [_op("input", "x", (2, 3)), _op("gelu", "Q4vK836kmzC", (2, 3), (0,))]}


def _results(steps: list[dict], profile: str = "crucible") -> list[tuple]:
    got = _ask("pyc.cache.simulate", {"steps": steps}, profile)["result"]["results"]
    return [(int(r["key"], 16), r["hit"], r["slot"], r["plan_of"]) for r in got]


@pytest.mark.parametrize("profile", ["crucible", "pyc@fdf1563"])
def test_the_golden_module_hits_under_pycs_keys(profile):
    steps = [{"module": SOURCE}, {"module": SOURCE},
             {"module": SOURCE, "options": {"enable_fusion": False}}]
    assert _results(steps, profile) == [(17405130821193028594, False, 0, 0),
                                        (17405130821193028594, True, 0, 0),
                                        (10346072359797451416, False, 1, 2)]


def test_a_disabled_cache_neither_looks_nor_stores():
    steps = [{"module": SOURCE, "options": {"cache_mode": 0}}] * 2 + [{"module": SOURCE}]
    assert [r[1:] for r in _results(steps)] == [(False, -1, 0), (False, -1, 1), (False, 0, 2)]


def test_the_33rd_store_evicts_slot_0():
    steps = [{"module": SOURCE, "options": {"memory_budget_bytes": b}} for b in range(33)]
    got = _results([*steps, steps[0], steps[32]])
    assert [r[2] for r in got[:33]] == [*range(32), 0]
    assert got[33][1:] == (False, 1, 33) and got[34][1:] == (True, 0, 32)


def test_the_rho_twins_share_a_fingerprint():
    """The search's own record: both texts reach FNV state 0x748e65d50b7dfeba at the end of
    the name (checked with an FNV-1a written here), and the rest of the texts is equal."""
    def fnv(text: str) -> int:
        h = 1469598103934665603
        for b in text.encode():
            h = ((h ^ b) * 1099511628211) % 2**64
        return h

    head = "0:input:x:dtype=1:shape=2x3:inputs=\n1:"
    assert fnv(head + "relu:F/nxUs7AOgH") == fnv(head + "gelu:Q4vK836kmzC") == 0x748E65D50B7DFEBA
    fps = {_ask("pyc.fingerprint", {"module": m})["result"]["out"] for m in (RELU, GELU)}
    assert fps == {"0x4e588cf1ac1aae27"}


@pytest.mark.parametrize("profile,second", [("crucible", (False, 1, 1)),
                                            ("pyc@fdf1563", (True, 0, 0))])
def test_a_key_collision_is_a_miss_only_in_the_spec(profile, second):
    got = _results([{"module": RELU}, {"module": GELU}], profile)
    assert [r[0] for r in got] == [0x514E415340EF8C9C] * 2
    assert got[0][1:] == (False, 0, 0) and got[1][1:] == second


def test_swapped_strings_hit_only_in_the_seed():
    steps = [{"module": SOURCE, "options": o} for o in SWAPPED]
    assert [r[1] for r in _results(steps)] == [False, False]
    assert [r[1] for r in _results(steps, "pyc@fdf1563")] == [False, True]


@pytest.mark.parametrize("profile", ["crucible", "pyc@fdf1563"])
def test_a_module_whose_shapes_do_not_infer_stops_the_simulation(profile):
    # PyC's pyc_compile_model at fdf1563 answered COMPILE_FAILED, and stored nothing.
    bad = {"ops": [_op("input", shape=(2, 3)), _op("input", shape=(4, 5)),
                   _op("matmul", shape=(2, 5), inputs=(0, 1))]}
    got = _ask("pyc.cache.simulate", {"steps": [{"module": SOURCE}, {"module": bad}]}, profile)
    assert got["error"]["code"] == "invalid_input"
    assert "args.steps[1].module" in got["error"]["message"]


@pytest.mark.parametrize("steps,code,field", [
    ([{"module": {"ops": []}}], "invalid_input", "args.steps[0].module"),
    ([{"module": SOURCE}, {"module": {"ops": [_op("relu", shape=(2,), inputs=(1,))]}}],
     "invalid_input", "args.steps[1].module"),
    ([{"module": SOURCE, "backend": "0"}], "bad_request", "args.steps[0].backend"),
    ([{"module": {"ops": [_op("conv", "x", (1,))]}}], "invalid_input",
     "args.steps[0].module.ops[0].kind"),
    ([{"module": SOURCE}] * 257, "invalid_input", "args.steps"),
    ([{"module": SOURCE, "options": {"dist_enabled": True}}], "invalid_input",
     "args.steps[0].options.dist_backend_path"),
])
def test_bad_compiles_are_refused_naming_the_field(steps, code, field):
    error = _ask("pyc.cache.simulate", {"steps": steps})["error"]
    assert error["code"] == code and field in error["message"], error


def test_verify_accepts_exactly_the_well_formed_modules():
    from hypothesis import HealthCheck, given, settings

    from crucible_spec.spec.pyc.fingerprint import modules
    from crucible_spec.spec.pyc.ir import module_from_wire, verify, well_formed

    @settings(max_examples=300, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(modules())
    def check(a):
        m = module_from_wire(a["module"])
        assert (verify(m) == 0) == well_formed(m)
        assert (_ask("pyc.verify", a)["result"]["code"] == 0) == well_formed(m)

    check()


@pytest.mark.parametrize("profile", ["crucible", "pyc@fdf1563"])
def test_a_hit_always_carries_a_plan_of_an_earlier_compile_with_the_same_key(profile):
    from hypothesis import HealthCheck, given, settings

    from crucible_spec.spec.pyc.compile_cache import _steps

    @settings(max_examples=40, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(_steps())
    def check(a):
        got = _ask("pyc.cache.simulate", a, profile)["result"]["results"]
        for s, r in enumerate(got):
            assert r["plan_of"] <= s and got[r["plan_of"]]["key"] == r["key"]
            assert r["hit"] == (r["plan_of"] != s)
            if profile == "crucible":
                assert a["steps"][r["plan_of"]]["module"] == a["steps"][s]["module"]

    check()
