"""ExprPool's Swiss table (facts sheet §2, §5.2, §5.4): growth, triangular probing, lookups
and the group match, through `serve` for the reference and numba, and the spec's functions
directly. Expected values are worked out by hand from the facts sheet."""

from __future__ import annotations

import json

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.crucible import swiss_table as sw

load_all()

SEED = "crucible@8d2680a2"
TRUE, FALSE, INT0, INT1, INT_M1 = (0x0A974846F1C50877, 0x616790D2B5AEC352, 0x939D315FA2E5F673,
                                   0xE76A677BAA5F1A55, 0xFD0F1A8E3434AB0A)
ATOMS = [TRUE, FALSE, INT0, INT1, INT_M1]
TRIANGLE = [4 * i for i in range(33)]
EMPTY = [0x80] * 16


def _ask(op: str, args: dict, impl: str = "reference", profile: str = "crucible") -> dict:
    errata = profile_errata(profile)
    return answer(json.dumps({"id": 1, "op": op, "args": args}), Implementation(impl, errata),
                  profile)


def _hex(hs: list[int]) -> list[str]:
    return [hex(h) for h in hs]


def _build(hashes: list[int], capacity: int) -> dict:
    return _ask("swiss.build", {"hashes": _hex(hashes), "capacity": capacity})["result"]


def _lookup(hashes, capacity, queries, impl="reference") -> dict:
    args = {"hashes": _hex(hashes), "capacity": capacity, "queries": _hex(queries)}
    return _ask("swiss.lookup", args, impl)["result"]


def test_h2_is_the_top_seven_bits():
    assert [sw.h2_tag(h) for h in ATOMS] == [5, 48, 73, 115, 126]
    assert sw.h2_tag(0x02C753877BD74388) == 1


@pytest.mark.parametrize("requested,capacity", [(0, 16), (1, 16), (16, 16), (17, 32), (100, 128),
                                                (65536, 65536)])
def test_initial_capacity_is_g_doubled(requested, capacity):
    assert _build([], requested)["capacity"] == capacity


@pytest.mark.parametrize("requested,rehashes", [(100, 2), (1, 5), (65536, 0)])
def test_258_interns_end_at_capacity_512_as_expr_pool_does(requested, rehashes):
    out = _build(list(range(1, 259)), requested)
    assert (out["capacity"], out["count"], out["rehashes"]) == \
        (65536 if requested == 65536 else 512, 258, rehashes)


def test_the_grow_check_runs_before_the_insert():
    assert _build(list(range(14)), 16)["capacity"] == 16  # 13 * 8 < 112 before the 14th
    assert _build(list(range(15)), 16)["capacity"] == 32  # 14 * 8 >= 112 before the 15th
    assert _build([0] * 15 + [1] * 9, 16)["capacity"] == 16  # repeats take no slot


def test_one_group_fills_lowest_first_with_the_tags():
    out = _build([*ATOMS, TRUE], 16)
    assert out["ctrl"] == bytes([5, 48, 73, 115, 126] + [0x80] * 11).hex()
    assert out["slots"] == [0, 1, 2, 3, 4, 0]


def test_the_low_bits_pick_the_home_group():
    out = _build(ATOMS, 32)  # odd hashes: group 1 (slot 16), even: group 0
    assert out["slots"] == [16, 0, 17, 18, 1]
    ctrl = bytes.fromhex(out["ctrl"])
    assert ctrl[0:2] == bytes([48, 126]) and ctrl[16:19] == bytes([5, 73, 115])


def test_probing_is_triangular():
    out = _build(TRIANGLE, 64)
    assert out["slots"] == [*range(32), 48]  # groups 0, 1, then 3 (not 2)
    assert bytes.fromhex(out["ctrl"])[32:48] == bytes(EMPTY)


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_lookups_report_slot_and_groups_probed(impl):
    out = _lookup(TRIANGLE, 64, [0, 64, 128, 132, 1], impl)
    assert out == {"slots": [0, 16, 48, -1, -1], "probes": [1, 2, 3, 3, 2]}
    assert _lookup(ATOMS, 32, [*ATOMS, 0], impl) == {"slots": [16, 0, 17, 18, 1, -1],
                                                     "probes": [1] * 6}
    assert _lookup([], 16, [0], impl) == {"slots": [-1], "probes": [1]}


def test_rehash_reinserts_in_slot_order():
    hashes = [0x10 * i + 1 for i in range(14)] + [2]  # odd: group 1 of 32 after the rehash
    out = _build(hashes, 16)
    assert out["capacity"] == 32 and out["slots"] == [*list(range(16, 30)), 0]


@pytest.mark.parametrize("impl", ["reference", "numba"])
def test_spec_reference_and_numba_agree_on_crowded_tables(impl):
    hashes = [(i % 3) << 57 | 64 * i for i in range(120)] + [5, 7]
    queries = [*hashes[::-7], 3, 64 * 121]
    t = sw.build(hashes, 16)
    expected = [sw.lookup(t, q) for q in queries]
    out = _lookup(hashes, 16, queries, impl)
    assert list(zip(out["slots"], out["probes"], strict=True)) == expected


def _match(ctrl: list[int], h2: int, path: str, profile: str = "crucible") -> dict:
    args = {"ctrl": bytes(ctrl).hex(), "h2": h2, "path": path}
    return _ask("swiss.match", args, profile=profile)["result"]


@pytest.mark.parametrize("ctrl,h2,simd,swar", [
    ([5, 4, 4, *EMPTY[3:]], 5, 0b1, 0b111),  # borrow runs through tag ^ 1 bytes
    ([5, 128, 4, *EMPTY[3:]], 5, 0b1, 0b1),  # an empty byte stops the borrow
    ([*EMPTY[:7], 5, 4, *EMPTY[9:]], 5, 0x80, 0x80),  # no borrow across the two words
    ([1] * 16, 0, 0, 0),
    ([0, 1, 1, 0, 1, *EMPTY[5:]], 0, 0b1001, 0b11111),
    (list(range(16)), 3, 1 << 3, 1 << 3),  # 3 ^ 1 = 2 sits below, not above
])
def test_swar_reports_exact_matches_and_the_borrow_case(ctrl, h2, simd, swar):
    assert _match(ctrl, h2, "simd")["match"] == simd
    assert _match(ctrl, h2, "swar")["match"] == swar


@pytest.mark.parametrize("profile,match,empty", [("crucible", 0x80, 0xFF7F),
                                                 (SEED, 0, 0x7F7F)])
def test_the_seed_swar_path_loses_bytes_7_and_15(profile, match, empty):
    out = _match([*EMPTY[:7], 5, *EMPTY[8:]], 5, "swar", profile)
    assert (out["match"], out["empty"]) == (match, empty)
    assert _match([*EMPTY[:7], 5, *EMPTY[8:]], 5, "simd", profile) == {"match": 0x80,
                                                                         "empty": 0xFF7F}


@pytest.mark.parametrize("op,args,field", [
    ("swiss.build", {"hashes": [], "capacity": 1 << 17}, "args.capacity"),
    ("swiss.build", {"hashes": ["0x10000000000000000"]}, "args.hashes[0]"),
    ("swiss.build", {"hashes": [-1]}, "args.hashes[0]"),
    ("swiss.lookup", {"hashes": [], "capacity": 1 << 20, "queries": []}, "args.capacity"),
    ("swiss.match", {"ctrl": "80" * 15, "h2": 0}, "args.ctrl"),
    ("swiss.match", {"ctrl": "80" * 16, "h2": 128}, "args.h2"),
    ("swiss.match", {"ctrl": "80" * 16, "h2": 0, "path": "avx"}, "args.path"),
])
def test_bad_input_names_the_field(op, args, field):
    error = _ask(op, args)["error"]
    assert error["code"] in ("invalid_input", "bad_request") and field in error["message"]
