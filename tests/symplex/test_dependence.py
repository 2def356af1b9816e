"""Dependence legality (SympleX facts sheet §2.4, §2.10 "polyhedral dependency check"): hand-worked
nests through `serve`, the z3 "unknown" outcome, bad input, and SympleX's own test against z3:
sound on uniform pairs, wrong on others (E14.406), blind to an access against itself (E14.405)."""

from __future__ import annotations

import json
import random

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.symplex.banerjee import pair_independent
from crucible_spec.spec.symplex.dependence import analyze, nest_from_wire

load_all()


def _ask(op: str, args: dict, profile: str = "crucible") -> dict:
    impl = Implementation("reference", profile_errata(profile))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), impl, profile)


def e(const: int = 0, **coeffs: int) -> dict:
    return {"coeffs": coeffs, "const": const}


def loop(var: str, lo, hi, step: int = 1) -> dict:
    return {"var": var, "lo": lo, "hi": hi, "step": step}


def w(array: str, *index: dict, stmt: int = 0) -> dict:
    return {"array": array, "kind": "write", "index": list(index), "stmt": stmt}


def r(array: str, *index: dict, stmt: int = 0) -> dict:
    return {"array": array, "kind": "read", "index": list(index), "stmt": stmt}


IJ = [loop("i", 1, 4), loop("j", 1, 4)]
INTERCHANGE = {"interchange": ["i", "j"]}


def _nest(loops: list, accesses: list):
    """The decoded nest (kinds as ordinals) of wire loops and accesses."""
    return nest_from_wire(loops, [{**a, "kind": ("read", "write").index(a["kind"])}
                                  for a in accesses])


def _deps(loops: list, accesses: list) -> list[tuple]:
    out = _ask("dep.analyze", {"loops": loops, "accesses": accesses})["result"]
    assert out["outcome"] == "exact" and out["undecided"] == []
    return [(d["source"], d["sink"], d["kind"], "".join(d["direction"]), tuple(d["distance"]))
            for d in out["dependences"]]


def test_skewed_raw_is_lt_gt_and_interchange_is_illegal():
    # A[i][j] = A[i-1][j+1]: written at (i, j), read at (i+1, j-1): distance (1, -1)
    acc = [w("A", e(i=1), e(j=1)), r("A", e(-1, i=1), e(1, j=1))]
    assert _deps(IJ, acc) == [(0, 1, "flow", "<>", (1, -1))]
    out = _ask("dep.legal", {"loops": IJ, "accesses": acc, "transform": INTERCHANGE})["result"]
    assert out["verdict"] == "illegal"
    assert (out["violated"]["direction"], out["violated"]["kind"]) == (["<", ">"], "flow")


def test_row_raw_is_lt_eq_and_interchange_is_legal():
    # A[i][j] = A[i-1][j]: distance (1, 0); swapped it is (0, 1), still positive
    acc = [w("A", e(i=1), e(j=1)), r("A", e(-1, i=1), e(j=1))]
    assert _deps(IJ, acc) == [(0, 1, "flow", "<=", (1, 0))]
    out = _ask("dep.legal", {"loops": IJ, "accesses": acc, "transform": INTERCHANGE})["result"]
    assert out == {"verdict": "legal", "violated": None}


def test_even_and_odd_elements_are_independent():
    # A[2i] = A[2i+1]: 2i = 2i' + 1 has no integer solution
    assert _deps([loop("i", 0, 7)], [w("A", e(i=2)), r("A", e(1, i=2))]) == []


def test_a_read_and_write_of_one_element_in_one_statement_is_an_anti_dependence():
    # A[i] = A[i] + 1: the read at i runs before the write at i
    assert _deps([loop("i", 0, 3)], [w("A", e(i=1)), r("A", e(i=1))]) == \
        [(1, 0, "anti", "=", (0,))]


def test_a_stepped_loop_misses_the_other_residue():
    # i = 0, 3, 6, 9: C[i] and C[i-2] never meet; C[i-3] is the last iteration's element
    loops = [loop("i", 0, 9, 3)]
    assert _deps(loops, [w("C", e(i=1)), r("C", e(-2, i=1))]) == []
    assert _deps(loops, [w("C", e(i=1)), r("C", e(-3, i=1))]) == [(0, 1, "flow", "<", (3,))]


def test_the_upper_bound_is_inclusive():
    # i in 0..1: A[i] written, A[i-1] read: only i=0 -> i=1
    assert _deps([loop("i", 0, 1)], [w("A", e(i=1)), r("A", e(-1, i=1))]) == \
        [(0, 1, "flow", "<", (1,))]
    assert _deps([loop("i", 0, 0)], [w("A", e(i=1)), r("A", e(-1, i=1))]) == []


def test_a_triangular_nest_bounds_the_inner_loop_by_the_outer():
    # for i in 0..2, j in 0..i-1: A[i] = A[j]. Iterations (1,0), (2,0), (2,1). A[1] is written
    # at (1,0) and read at (2,1): flow (<,<) distance (1,1). A[2] is written at (2,0) and (2,1):
    # output (=,<) distance (0,1). A[0] is read, never written.
    loops = [loop("i", 0, 2), loop("j", 0, e(-1, i=1))]
    assert sorted(_deps(loops, [w("A", e(i=1)), r("A", e(j=1))])) == \
        [(0, 0, "output", "=<", (0, 1)), (0, 1, "flow", "<<", (1, 1))]


@pytest.mark.parametrize("read_index,verdict", [(-1, "legal"), (0, "legal"), (1, "illegal")])
def test_fusion_is_legal_unless_a_read_would_run_before_its_write(read_index, verdict):
    # for i: A[i] = ...  then  for i: ... = A[i + read_index]
    acc = [w("A", e(i=1), stmt=0), r("A", e(read_index, i=1), stmt=1)]
    out = _ask("dep.legal", {"loops": [loop("i", 0, 5)], "accesses": acc,
                             "transform": {"fuse": 1}})["result"]
    assert out["verdict"] == verdict
    if verdict == "illegal":
        assert out["violated"]["direction"] == [">"] and out["violated"]["distance"] == [-1]


def test_fusion_ignores_pairs_inside_one_nest():
    # the second nest's own recurrence B[i] = B[i-1] stays in order when fused
    acc = [w("A", e(i=1), stmt=0), r("A", e(i=1), stmt=1), w("B", e(i=1), stmt=1),
           r("B", e(-1, i=1), stmt=1)]
    out = _ask("dep.legal", {"loops": [loop("i", 0, 5)], "accesses": acc,
                             "transform": {"fuse": 1}})["result"]
    assert out["verdict"] == "legal"


def test_an_exhausted_z3_budget_answers_unknown_not_a_guess():
    nest = _nest(IJ, [w("A", e(i=1), e(j=1)), r("A", e(-1, i=1), e(1, j=1))])
    out = analyze(nest, rlimit=1)
    assert out.outcome == "unknown" and (0, 1) in out.undecided


def test_a_spent_query_budget_answers_unknown():
    # a scalar written in a 4-deep nest: 40 lexicographically positive vectors, 50 queries
    nest = _nest([loop(f"v{k}", 0, 2) for k in range(4)], [w("A", e())])
    assert analyze(nest).outcome == "exact" and len(analyze(nest).dependences) == 40
    out = analyze(nest, queries=50)
    assert (out.outcome, out.undecided) == ("unknown", ((0, 0),))


@pytest.mark.parametrize("args,field", [
    ({"loops": [loop(f"v{k}", 0, 1) for k in range(9)], "accesses": []}, "args.loops"),
    ({"loops": [loop("i", 0, 3)], "accesses": [r("A", e(i=2**31 + 1))]},
     "args.accesses[0].index[0].coeffs.i"),
    ({"loops": [loop("i", 0, 3)], "accesses": [r("A", e(-2**31 - 1, i=1))]},
     "args.accesses[0].index[0].const"),
    ({"loops": [loop("i", 0, e(j=1)), loop("j", 0, 3)], "accesses": []}, "args.loops[0].hi"),
    ({"loops": [loop("i", 0, 3), loop("i", 0, 3)], "accesses": []}, "args.loops[1].var"),
    ({"loops": [loop("i", 0, 3, 0)], "accesses": []}, "args.loops[0].step"),
    ({"loops": [loop("i", 0, 3)], "accesses": [r("A", e(k=1))]},
     "args.accesses[0].index[0].coeffs"),
    ({"loops": [loop("i", 0, 3)], "accesses": [r("A", e(i=1)), r("A", e(i=1), e(i=1))]},
     "args.accesses[1].index"),
    ({"loops": [loop("i", 0, 3)], "accesses": [r("A", *[e(i=1)] * 9)]},
     "args.accesses[0].index"),
])
def test_bad_nests_are_refused_naming_the_field(args, field):
    error = _ask("dep.analyze", args)["error"]
    assert error["code"] == "invalid_input" and field in error["message"], error


def test_an_access_without_subscripts_is_malformed():
    args = {"loops": [loop("i", 0, 3)], "accesses": [r("A")]}
    error = _ask("dep.analyze", args)["error"]
    assert error["code"] == "bad_request" and "args.accesses[0].index" in error["message"]


@pytest.mark.parametrize("transform,field", [
    ({"interchange": ["i", "q"]}, "args.transform.interchange"),
    ({"interchange": ["i", "i"]}, "args.transform.interchange"),
    ({"fuse": 0}, "args.transform.fuse"),
    ({"fuse": 1, "interchange": ["i", "j"]}, "args.transform"),
])
def test_bad_transforms_are_refused_naming_the_field(transform, field):
    acc = [w("A", e(i=1), e(j=1))]
    error = _ask("dep.legal", {"loops": IJ, "accesses": acc, "transform": transform})["error"]
    assert error["code"] in ("invalid_input", "bad_request") and field in error["message"]


def _random_nest(rng: random.Random) -> tuple[list, list]:
    """Decoded args (kind 0 read, 1 write) of a random small nest."""
    names = ["i", "j", "k"][:rng.randint(1, 3)]
    loops = [loop(v, rng.choice([0, 1, e(rng.randint(-1, 1), **{names[n - 1]: 1}) if n else 0]),
                  rng.randint(0, 4), rng.choice([1, 1, 2])) for n, v in enumerate(names)]
    accs = [{"array": "A", "kind": rng.choice([0, 1]), "stmt": rng.randint(0, 1),
             "index": [e(rng.randint(-3, 3), **{v: rng.randint(-2, 2) for v in names})]}
            for _ in range(rng.randint(2, 3))]
    return loops, accs


def _uniform(nest, s: int, t: int) -> bool:
    a, b = nest.accesses[s], nest.accesses[t]
    return all(dict(x.coeffs) == dict(y.coeffs) for x, y in zip(a.index, b.index, strict=True))


def test_symplex_keeps_every_uniform_dependence_and_misses_others():
    """The comparison E14.406 rests on: over 300 seeded nests, SympleX's test keeps every z3
    dependence between two accesses with one coefficient vector, and calls some other
    dependent pairs independent."""
    rng = random.Random(0x5E9)
    missed = 0
    for _ in range(300):
        nest = nest_from_wire(*_random_nest(rng))
        for d in analyze(nest).dependences:
            if d.source == d.sink:
                continue
            if _uniform(nest, d.source, d.sink):
                assert not pair_independent(nest, d.source, d.sink), (nest, d)
            else:
                missed += pair_independent(nest, d.source, d.sink)
    assert missed > 0


@pytest.mark.parametrize("write,read,independent", [
    (e(i=2), e(1, i=2), True),    # uniform, gcd 2 does not divide 1: right
    (e(i=1), e(-1, i=1), False),  # uniform: dependent, right
    (e(i=1), e(9, i=1), False),   # uniform, the box 0..1024 not 0..3: dependent, conservative
    (e(1, i=2), e(i=1), True),    # 2i + 1 = i' at i = 0, i' = 1: wrong (E14.406)
    (e(i=1), e(0), False),        # A[i] against A[0]: dependent, right
    (e(i=1), e(3, i=-1), True),   # i = 3 - i' at i = 0, i' = 3: wrong
    (e(i=3), e(3, i=1), True),    # 3i = i' + 3 at i = 1, i' = 0: wrong
])
def test_symplex_test_answers_as_the_shipped_code(write, read, independent):
    """Expected values: what symplex@1.0.0's analyze_dependency_multivariate (compiled from the
    simplex-tensor 1.0.0 sdist, called as its stage 3 calls it) answered on these pairs."""
    nest = _nest([loop("i", 0, 3)], [w("A", write), r("A", read)])
    assert pair_independent(nest, 0, 1) is independent


@pytest.mark.parametrize("accesses,loops", [
    ([w("A", e(1, i=2)), r("A", e(i=1))], [loop("i", 0, 3)]),
    ([w("A", e(0))], [loop("i", 0, 3)]),
    ([w("A", e(i=3)), r("A", e(3, i=1))], [loop("i", 0, 3)]),
])
def test_symplex_profile_answers_no_dependence_as_the_shipped_code(accesses, loops):
    """symplex@1.0.0 answered these nests with no dependence (its test calls the pair
    independent, or never tests an access against itself); z3 finds one in each."""
    args = {"loops": loops, "accesses": accesses}
    assert _ask("dep.analyze", args, "symplex@1.0.0")["result"]["dependences"] == []
    assert _ask("dep.analyze", args)["result"]["dependences"] != []
