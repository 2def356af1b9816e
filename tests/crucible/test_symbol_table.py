"""SymbolTable (facts sheet §6): default entries by kind, hints, narrowing, queries and the
32-byte SymbolEntry, through `serve`, and E14.701 under each profile. Expected values are
written by hand from the facts sheet."""

from __future__ import annotations

import json

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.crucible.symbol_ops import table_op
from crucible_spec.spec.crucible.symbol_table import SymKind

load_all()

SEED = "crucible@8d2680a2"
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
NEG_INF, POS_INF = 0xFFF0000000000000 - 2**64, 0x7FF0000000000000
MINUS_ONE = 0xBFF0000000000000 - 2**64


def _run(calls: list[dict], profile: str = "crucible") -> dict:
    impl = Implementation("reference", profile_errata(profile))
    return answer(json.dumps({"id": 1, "op": "symbol.table", "args": {"calls": calls}}), impl,
                  profile)


def _c(name: str, **kw) -> dict:
    return {"call": name} | kw


def _entries(calls: list[dict], profile: str = "crucible") -> list[dict]:
    return _run(calls, profile)["result"]["entries"]


@pytest.mark.parametrize("kind,lower,upper", [(0, 2, I64_MAX), (1, NEG_INF, POS_INF),
                                              (2, I64_MIN + 1, I64_MAX),
                                              (3, NEG_INF, POS_INF)])
def test_add_sets_the_default_range_of_its_kind(kind, lower, upper):
    (e,) = _entries([_c("add", kind=kind, expr_flags=0x1234)])
    assert (e["range_lower"], e["range_upper"], e["kind"]) == (lower, upper, kind)
    assert (e["hint"], e["sym_flags"], e["expr_flags"]) == (I64_MIN, 4, 0x1234)
    assert (e["has_hint"], e["is_backed"], e["is_size_like"]) == (False, True, False)


def test_ids_count_up_and_unbacked_symbols_have_no_flags():
    out = _run([_c("add"), _c("add", kind=2, backed=False), _c("add", kind=1)])["result"]
    assert out["returned"] == [0, 1, 2]
    assert [e["sym_flags"] for e in out["entries"]] == [4, 0, 4]


def test_entry_bytes_follow_the_layout():
    calls = [_c("add", expr_flags=0x0421), _c("set_hint", id=0, value=64),
             _c("set_size_like", id=0)]
    (e,) = _entries(calls)
    # hint 64 @0, lower 2 @8, upper INT64_MAX @16, kind 0 @24, flags 7 @25, 0x0421 @26, pad
    assert e["bytes"] == ("4000000000000000" "0200000000000000" "ffffffffffffff7f"
                          "00" "07" "2104" "00000000")


def test_a_float_hint_is_stored_as_its_bits():
    (e,) = _entries([_c("add", kind=1), _c("set_hint_float", id=0, value="0x3ff8000000000000")])
    assert (e["hint"], e["has_hint"]) == (0x3FF8000000000000, True)


def test_tighten_only_narrows_and_the_queries_read_the_lower_bound():
    calls = [_c("add", kind=2), _c("tighten_range", id=0, lo=-5, hi=10),
             _c("tighten_range", id=0, lo=-9, hi=20), _c("range_contains", id=0, lo=-5, hi=10),
             _c("range_contains", id=0, lo=-4, hi=10), _c("tighten_range", id=0, lo=0, hi=99)]
    out = _run(calls)["result"]
    assert out["returned"] == [0, -1, -1, 1, 0, -1]
    e = out["entries"][0]
    assert (e["range_lower"], e["range_upper"]) == (0, 10)
    assert (e["is_positive"], e["is_nonnegative"]) == (False, True)
    (size,) = _entries([_c("add")])
    assert (size["is_positive"], size["is_nonnegative"]) == (True, True)


@pytest.mark.parametrize("profile,lower", [("crucible", MINUS_ONE), (SEED, NEG_INF)])
def test_a_float_range_narrows_as_doubles_only_in_the_spec(profile, lower):
    calls = [_c("add", kind=1), _c("tighten_range", id=0, lo=hex(MINUS_ONE + 2**64),
                                   hi=hex(POS_INF))]
    assert _entries(calls, profile)[0]["range_lower"] == lower


def test_the_seed_never_narrows_a_float_lower_bound_to_a_negative_number():
    minus_two = hex(0xC000000000000000)
    calls = [_c("add", kind=3), _c("tighten_range", id=0, lo=minus_two, hi=0),
             _c("tighten_range", id=0, lo=hex(MINUS_ONE + 2**64), hi=0)]
    # spec: [-2.0, 0.0] then [-1.0, 0.0]; the seed: every negative pattern is below -inf's
    assert _entries(calls)[0]["range_lower"] == MINUS_ONE
    assert _entries(calls, SEED)[0]["range_lower"] == NEG_INF
    assert _entries(calls, SEED)[0]["range_upper"] == 0


def test_spec_and_reference_agree():
    calls = [{"call": i % 6, "id": i % 2, "kind": i % 4, "expr_flags": i, "backed": i % 3 == 0,
              "value": i * 7, "lo": i - 9, "hi": 40 - i} for i in range(1, 30)]
    calls = [{"call": 0, "id": 0, "kind": k, "expr_flags": 0, "backed": True, "value": 0,
              "lo": 0, "hi": 0} for k in (SymKind.SIZE, SymKind.FLOAT)] + calls
    names = ("add", "set_hint", "set_hint_float", "tighten_range", "set_size_like",
             "range_contains")
    wire = [dict(c, call=names[c["call"]], kind=int(c["kind"])) for c in calls]
    spec = table_op([dict(c, kind=SymKind(c["kind"])) for c in calls])
    ref = _run(wire)["result"]
    assert ref["returned"] == spec["returned"]
    assert [e["bytes"] for e in ref["entries"]] == [e["bytes"].hex() for e in spec["entries"]]


@pytest.mark.parametrize("calls,field", [
    ([_c("set_hint", id=0, value=1)], "args.calls[0].id"),
    ([_c("add"), _c("tighten_range", id=1)], "args.calls[1].id"),
    ([_c("add", kind=4)], "args.calls[0].kind"),
    ([{"call": "remove"}], "args.calls[0].call"),
    ([_c("add", expr_flags=1 << 16)], "args.calls[0].expr_flags"),
])
def test_bad_calls_name_the_field(calls, field):
    error = _run(calls)["error"]
    assert error["code"] in ("invalid_input", "bad_request") and field in error["message"]
