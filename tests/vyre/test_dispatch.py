"""vyre's tensor-train dispatch contract: the step's grid and sizes, its Program, its input
bytes and its output decode, through `serve` for every implementation and profile. Every
expected value below was answered by the real code (the seed's dispatch_buffers.rs,
tensor_train_chain_fusion.rs and tensor_train.rs at 86ba1ff1a and at v0.6.5, built standalone
with a recording dispatcher); the two versions answer alike."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.vyre.dispatch import decode_domain

load_all()

IMPLS = ("reference", "numba", "cupy")
PROFILES = ("crucible", "vyre@0.6.3", "vyre@0.6.5")
U32_MAX = 4294967295


def _ask(op: str, args: dict, impl: str = "reference", profile: str = "crucible") -> dict:
    i = Implementation(impl, profile_errata(profile))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), i, profile)


def _result(op: str, args: dict, impl: str = "reference", profile: str = "crucible") -> dict:
    reply = _ask(op, args, impl, profile)
    assert reply["ok"], reply
    return reply["result"]


def _refused(reply: dict) -> str:
    assert not reply["ok"] and reply["error"]["code"] == "invalid_input", reply
    return reply["error"]["message"]


# (r_prev, r_next, grid x, cells): the real ceil_div_u32(r_next, 256) and checked_cells
GRIDS = [(1, 0, 1, 0), (1, 1, 1, 1), (1, 255, 1, 255), (1, 256, 1, 256), (1, 257, 2, 257),
         (4, 8, 1, 32), (1024, 1024, 4, 1048576), (1, 1048576, 4096, 1048576),
         (0, U32_MAX, 16777216, 0), (0, 4294967041, 16777216, 0),
         (0, 4294967040, 16777215, 0), (0, 0, 1, 0)]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("profile", PROFILES)
def test_grid_vectors(impl, profile):
    for r_prev, r_next, gx, cells in GRIDS:
        got = _result("vyre.dispatch_grid", {"r_prev": r_prev, "r_next": r_next}, impl, profile)
        wg = [256, 1, 1] if r_prev and r_next else [1, 1, 1]  # the trap Program's
        assert got == {"workgroup_size": wg, "grid": [gx, 1, 1], "cells": cells,
                       "input_bytes": [4 * r_prev, 4 * cells, 4 * r_next],
                       "output_bytes": 4 * r_next}, (r_prev, r_next)


CAP = ("Fix: fusion_pressure_via refuses to allocate {} TT core cells for r_prev*r_next; "
       "max is 1048576. Shard the chain or lower ranks before dispatch.")
OVERFLOW = "Fix: fusion_pressure_via buffer size overflows r_prev*r_next: {} * {}."
GRID_REFUSALS = [((2048, 1024), CAP.format(2097152)), ((1, 1048577), CAP.format(1048577)),
                 ((U32_MAX, 1), CAP.format(U32_MAX)), ((1, U32_MAX), CAP.format(U32_MAX)),
                 ((65536, 65537), OVERFLOW.format(65536, 65537)),
                 ((U32_MAX, U32_MAX), OVERFLOW.format(U32_MAX, U32_MAX))]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(("shape", "text"), GRID_REFUSALS)
def test_grid_refusals_are_vyres_text(profile, shape, text):
    args = {"r_prev": shape[0], "r_next": shape[1]}
    assert _refused(_ask("vyre.dispatch_grid", args, "reference", profile)) == text


def _buf(name, binding, access, count, output=False):
    return {"name": name, "binding": binding, "access": access, "count": count, "output": output}


def _trap(text):
    return {"workgroup_size": [1, 1, 1], "buffers": [_buf("acc_out", 0, 1, 1, True)],
            "trap": text}


def _lanes(r_prev, cells, r_next):
    return {"workgroup_size": [256, 1, 1], "trap": None,
            "buffers": [_buf("acc_in", 0, 0, r_prev), _buf("core_slice", 1, 0, cells),
                        _buf("acc_out", 2, 1, r_next)]}


PROGRAMS = [
    ((4, 8), _lanes(4, 32, 8)), ((1, 1), _lanes(1, 1, 1)), ((2, 3), _lanes(2, 6, 3)),
    ((65535, 65537), _lanes(65535, U32_MAX, 65537)),
    ((U32_MAX, 1), _lanes(U32_MAX, U32_MAX, 1)), ((1, U32_MAX), _lanes(1, U32_MAX, U32_MAX)),
    ((0, 3), _trap("Fix: tt_contract_step requires r_prev > 0, got 0.")),
    ((0, 0), _trap("Fix: tt_contract_step requires r_prev > 0, got 0.")),
    ((1, 0), _trap("Fix: tt_contract_step requires r_next > 0, got 0.")),
    ((65536, 65537), _trap("Fix: tt_contract_step r_prev*r_next overflows u32: 65536*65537.")),
    ((U32_MAX, 2), _trap("Fix: tt_contract_step r_prev*r_next overflows u32: 4294967295*2.")),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("profile", PROFILES)
def test_program_vectors(impl, profile):
    for (r_prev, r_next), want in PROGRAMS:
        assert _result("vyre.tt_program", {"r_prev": r_prev, "r_next": r_next}, impl,
                       profile) == want, (r_prev, r_next)


# (acc_in, core, r_next, the real step's three input buffers)
INPUTS = [([1, 2], [65536, 131072, 196608, 262144, 327680, 393216], 3,
           ["0100000002000000", "000001000000020000000300000004000000050000000600",
            "000000000000000000000000"]),
          ([305419896], [65536], 1, ["78563412", "00000100", "00000000"]),
          ([U32_MAX, 2**31], [1, 2, 3, 4], 2,
           ["ffffffff00000080", "01000000020000000300000004000000", "0000000000000000"]),
          ([], [], 0, ["", "", ""])]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("profile", PROFILES)
def test_input_vectors(impl, profile):
    for acc, core, r_next, want in INPUTS:
        args = {"acc_in": acc, "core": core, "r_next": r_next}
        assert _result("vyre.dispatch_inputs", args, impl, profile) == {"inputs": want}, args


NONE = "Fix: fusion_pressure_via TT expected at least one output buffer, got 0."
BYTES = "Fix: fusion_pressure_via TT expected {} output bytes, got {}."
# (outputs, r_next, words or the real step's error text)
DECODES = [
    (["090000000c0000000f000000"], 3, [9, 12, 15]),
    (["78563412"], 1, [0x12345678]),
    (["ffffffff00000080", "ff"], 2, [U32_MAX, 2**31]),
    (["090000000c0000000f000000", "ff"], 3, [9, 12, 15]),
    ([""], 0, []),
    (["090000000c0000000f0000"], 3, BYTES.format(12, 11)),
    (["090000000c0000000f00000000"], 3, BYTES.format(12, 13)),
    (["00"], 0, BYTES.format(0, 1)),
    ([""], 1, BYTES.format(4, 0)),
    (["", "05000000"], 1, BYTES.format(4, 0)),
    ([], 3, NONE),
    ([], 1, NONE),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("profile", PROFILES)
def test_decode_vectors(impl, profile):
    for outputs, r_next, want in DECODES:
        reply = _ask("vyre.decode_output", {"outputs": outputs, "r_next": r_next}, impl, profile)
        if isinstance(want, str):
            assert _refused(reply) == want, (outputs, r_next)
        else:
            assert reply["result"] == {"words": want}, (outputs, r_next)


def test_decode_kernel_is_numba_and_cupy_falls_back():
    op = REGISTRY.ops["vyre.decode_output"]
    assert Implementation("numba").route(op).how == "kernel"
    assert Implementation("cupy").route(op).how == "reference"


def test_decode_kernel_on_one_batch():
    """Every answered vector in one batch: the kernel keeps each item's words apart."""
    op = REGISTRY.ops["vyre.decode_output"]
    cases = [(o, r, w) for o, r, w in DECODES if not isinstance(w, str)]
    items = [{"outputs": [bytes.fromhex(h) for h in o], "r_next": r} for o, r, _ in cases]
    got = Implementation("numba").run_batch(op, items)
    assert [g["words"] for g in got] == [w for _, _, w in cases]


def test_decode_batch_answers_each_refusal_alone():
    impl = Implementation("numba")
    batch = [{"outputs": o, "r_next": r} for o, r, _ in DECODES]
    got = impl.call_many("vyre.decode_output", batch)
    for (outputs, r_next, want), reply in zip(DECODES, got, strict=True):
        if isinstance(want, str):
            assert reply.message == want, (outputs, r_next)
        else:
            assert reply == {"words": want}, (outputs, r_next)


@settings(max_examples=150, deadline=None, database=None)
@given(args=decode_domain())
def test_decode_kernel_bit_exact(args):
    wire = {"outputs": [b.hex() for b in args["outputs"]], "r_next": args["r_next"]}
    assert _ask("vyre.decode_output", wire, "numba") == _ask("vyre.decode_output", wire)


@settings(max_examples=100, deadline=None, database=None)
@given(words=st.lists(st.integers(0, U32_MAX), max_size=20))
def test_inputs_decode_back(words):
    inputs = _result("vyre.dispatch_inputs", {"acc_in": words, "core": [], "r_next": 0})
    got = _result("vyre.decode_output", {"outputs": inputs["inputs"], "r_next": len(words)})
    assert got == {"words": words}


def test_bounds_are_invalid_input():
    assert _refused(_ask("vyre.dispatch_grid", {"r_prev": 1, "r_next": 2**32})).startswith(
        "args.r_next")
    assert _refused(_ask("vyre.dispatch_inputs", {"acc_in": [], "core": [],
                                                  "r_next": 1048577})).startswith("args.r_next")
    assert _refused(_ask("vyre.tt_program", {"r_prev": -1, "r_next": 1})).startswith(
        "args.r_prev")


def test_scratch_erratum_witness_is_the_spec_answer():
    """E14.311: the spec refuses [4294967295] by the cell cap, never by a reservation."""
    witness = REGISTRY.errata["E14.311"].witness
    for profile in PROFILES:
        assert _refused(_ask("vyre.fusion_pressure", witness["args"], "reference", profile)) \
            == witness["spec"] == CAP.format(U32_MAX)
    assert _refused(_ask("vyre.fusion_pressure", {"ranks": [8, 1073741824]})) == (
        "Fix: fusion_pressure_via rank product would overflow u32 lanes; product=8589934592, "
        "max=4294967295.")


@pytest.mark.parametrize("profile", ("vyre@0.6.3", "vyre@0.6.5"))
def test_seed_profiles_turn_on_the_dispatch_errata(profile):
    assert {"E14.310", "E14.311"} <= profile_errata(profile)
