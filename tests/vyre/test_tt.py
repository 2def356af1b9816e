"""vyre's tensor-train step, fusion pressure and fusion decision (facts sheet §4 and §6): the
vectors through `serve` for reference, numba and cupy under the spec's profile and vyre
0.6.3's, vyre's exact "Fix:" texts, bad ranks, and the kernels bit-exact on generated lanes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.spec.vyre.tt import step_domain

load_all()

IMPLS = ("reference", "numba", "cupy")
PROFILES = ("crucible", "vyre@0.6.3", "vyre@0.6.5")
ONE = 0x10000
NEG_ONE = 0xFFFF0000
ONE_HALF = 0x18000
F16, F4, F1, F_HALF = (0x4030000000000000, 0x4010000000000000, 0x3FF0000000000000,
                       0x3FE0000000000000)
EDGE_SQRT24 = 0x4013988E1409212E
"""Just above sqrt(24): log 3 + log 8 rounds below 2 log thr, log 24 above it."""


def _ask(op: str, args: dict, impl: str = "reference", profile: str = "crucible") -> dict:
    i = Implementation(impl, profile_errata(profile))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), i, profile)


def _step(acc, core, r_prev, r_next) -> dict:
    return {"acc_in": acc, "core": core, "r_prev": r_prev, "r_next": r_next}


def _refused(reply: dict) -> str:
    assert not reply["ok"] and reply["error"]["code"] == "invalid_input", reply
    return reply["error"]["message"]


# (args, spec / 0.6.5 answer, 0.6.3 answer), worked out by hand
STEPS = [
    (_step([3, 5], [ONE, 0, 0, ONE], 2, 2), [3, 5], [3, 5]),
    (_step([1, 2], [ONE, 2 * ONE, 3 * ONE, 4 * ONE, 5 * ONE, 6 * ONE], 2, 3), [9, 12, 15],
     [9, 12, 15]),
    (_step([0xFFFFFFFF, 0xFFFFFFFF], [ONE, ONE], 2, 1), [0xFFFFFFFE], [0xFFFFFFFE]),
    # -1.0 x 1.5: -1.5 signed; unsigned reads -1.0 as 0xFFFF0000 and wraps to 0x7FFE8000
    (_step([NEG_ONE], [ONE_HALF], 1, 1), [0xFFFE8000], [0x7FFE8000]),
    # lane 0: -1.0 x 1.5 + 2.0 x 3.0; lane 1: -1.0 x -1.0 + 2.0 x -2^-16 (same in both)
    (_step([NEG_ONE, 2 * ONE], [ONE_HALF, NEG_ONE, 3 * ONE, 0xFFFFFFFF], 2, 2),
     [0x48000, 0xFFFE], [0x80048000, 0xFFFE]),
    # answered by the real code at 86ba1ff1a (0.6.3) and v0.6.5: -0.5 x -0.5 agrees (the two
    # corrections add to 2^32); -0.5 x -0.3125 does not
    (_step([0xFFFF8000], [0xFFFF8000], 1, 1), [0x4000], [0x4000]),
    (_step([0xFFFF8000], [0xFFFFB000], 1, 1), [0x2800], [0x30002800]),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("args,spec,seed", STEPS)
def test_step_vectors(impl, profile, args, spec, seed):
    want = seed if profile == "vyre@0.6.3" else spec
    assert _ask("vyre.tt_contract_step", args, impl, profile) == \
        {"id": 1, "ok": True, "result": {"acc_out": want}}


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("args,text", [
    (_step([], [], 0, 3), "Fix: tt_contract_step requires r_prev > 0, got 0."),
    (_step([], [], 0, 0), "Fix: tt_contract_step requires r_prev > 0, got 0."),
    (_step([1], [], 1, 0), "Fix: tt_contract_step requires r_next > 0, got 0."),
    (_step([1], [1], 65536, 65537),
     "Fix: tt_contract_step r_prev*r_next overflows u32: 65536*65537."),
])
def test_step_refusals_are_vyres_text(impl, args, text):
    for profile in PROFILES:
        assert _refused(_ask("vyre.tt_contract_step", args, impl, profile)) == text


def test_step_buffers_must_fit_the_shape():
    assert _refused(_ask("vyre.tt_contract_step", _step([1], [1, 2], 2, 1))).startswith(
        "args.acc_in:")
    assert _refused(_ask("vyre.tt_contract_step", _step([1], [1], 1, 2))).startswith(
        "args.core:")
    assert _refused(_ask("vyre.tt_contract_step", _step([-1], [1], 1, 1))).startswith(
        "args.acc_in[0]")


@pytest.mark.parametrize("impl", ("numba", "cupy"))
@pytest.mark.parametrize("profile", PROFILES)
def test_kernels_model_the_unsigned_multiply(impl, profile):
    op = REGISTRY.ops["vyre.tt_contract_step"]
    assert Implementation(impl, profile_errata(profile)).route(op).how == "kernel"


@pytest.mark.parametrize("impl", ("numba", "cupy"))
@pytest.mark.parametrize("profile", ("crucible", "vyre@0.6.3"))
def test_kernels_on_one_batch(impl, profile):
    """Every vector in one batch: the kernels keep each item's lanes apart."""
    op = REGISTRY.ops["vyre.tt_contract_step"]
    got = Implementation(impl, profile_errata(profile)).run_batch(op, [a for a, _, _ in STEPS])
    want = [seed if profile == "vyre@0.6.3" else spec for _, spec, seed in STEPS]
    assert [r["acc_out"] for r in got] == want


@pytest.mark.parametrize("impl", ("numba", "cupy"))
@pytest.mark.parametrize("profile", ("crucible", "vyre@0.6.3"))
@settings(max_examples=150, deadline=None, database=None)
@given(args=step_domain())
def test_kernels_bit_exact(impl, profile, args):
    assert _ask("vyre.tt_contract_step", args, impl, profile) == \
        _ask("vyre.tt_contract_step", args, "reference", profile)


PRESSURES = [([64], 64), ([4, 8], 32), ([2, 3, 5, 7], 210), ([4, 0, 3], 12), ([], 0),
             ([0, 0], 1)]
CELL_CAP = ("Fix: fusion_pressure_via refuses to allocate {} TT core cells for r_prev*r_next; "
            "max is 1048576. Shard the chain or lower ranks before dispatch.")
PRESSURE_REFUSALS = [
    ([2048, 1024], CELL_CAP.format(2097152)),
    ([4294967295], CELL_CAP.format(4294967295)),
    ([65536, 65537], "Fix: fusion_pressure_via rank product would overflow u32 lanes; "
                     "product=4295032832, max=4294967295."),
    ([4, 0, 65536, 65536], "Fix: fusion_pressure_via rank product would overflow u32 lanes; "
                           "product=17179869184, max=4294967295."),
]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("profile", PROFILES)
def test_pressure_vectors(impl, profile):
    for ranks, want in PRESSURES:
        assert _ask("vyre.fusion_pressure", {"ranks": ranks}, impl, profile)["result"] == \
            {"pressure": want}, ranks
    for ranks, text in PRESSURE_REFUSALS:
        assert _refused(_ask("vyre.fusion_pressure", {"ranks": ranks}, impl, profile)) == text


def test_pressure_at_the_cell_cap():
    assert _ask("vyre.fusion_pressure", {"ranks": [1024, 1024]})["result"] == \
        {"pressure": 1048576}


@pytest.mark.parametrize("rank", [-1, 2.5, 4.0, 10**30, "x"])
def test_bad_ranks_are_invalid_input_naming_the_rank(rank):
    for op, extra in (("vyre.fusion_pressure", {}), ("vyre.should_fuse", {"threshold": F16})):
        text = _refused(_ask(op, {"ranks": [2, rank], **extra}))
        assert text.startswith("args.ranks[1]"), text


DECISIONS = [([8, 8, 8], F16, True), ([8, 8, 8], F4, False), ([], F16, False),
             ([8], 0, False), ([8], 0xC000000000000000, False), ([0, 0], F1, True),
             ([0, 0], F_HALF, False), ([3, 8], EDGE_SQRT24, True)]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("profile", PROFILES)
def test_should_fuse_vectors(impl, profile):
    for ranks, thr, want in DECISIONS:
        args = {"ranks": ranks, "threshold": f"0x{thr:016x}"}
        assert _ask("vyre.should_fuse", args, impl, profile)["result"] == {"fuse": want}, args


# Ranks whose logs, added left to right, fall on the other side of log(thr) than their exactly
# rounded sum (and Python 3.12's compensated sum()): answered by the real code at 86ba1ff1a
# and at v0.6.5 (should_fuse_chain, built standalone).
LEFT_FOLD = [([11, 27, 43, 5], 0x402FCAF4AD3AD672, True),
             ([58, 23, 48, 30, 20], 0x4040706CE701F7E8, False),
             ([47, 28, 24, 45], 0x4041439190C2C207, True)]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(("ranks", "thr", "want"), LEFT_FOLD)
def test_should_fuse_adds_logs_left_to_right(profile, ranks, thr, want):
    import math

    from crucible_spec.spec.pyc.wire import f64

    exact = math.fsum(math.log(r) for r in ranks) / len(ranks) <= math.log(f64(thr))
    assert exact is not want
    args = {"ranks": ranks, "threshold": f"0x{thr:016x}"}
    assert _ask("vyre.should_fuse", args, "reference", profile)["result"] == {"fuse": want}


def test_dispatched_decision_differs_on_the_witness():
    from crucible_spec.spec.pyc.wire import f64
    from crucible_spec.spec.vyre.fusion import should_fuse_via

    assert should_fuse_via([3, 8], f64(EDGE_SQRT24)) is False
    assert should_fuse_via([8, 8, 8], 16.0) is True
