"""Chapter 14 obligations of PyC's speculative plans: what each variant is, and which plan a
run takes."""

from __future__ import annotations

from ...spec.core.registry import Mutant
from ...spec.pyc.ir import OpKind, module_from_wire
from ...spec.pyc.kernels import MODE
from ...spec.pyc.speculative import (
    NONE,
    plan_count,
    plans_domain,
    plans_edges,
    plans_op,
    scaled,
    select,
    select_domain,
    select_edges,
    select_op,
    variants,
)
from ...spec.pyc.wire import f64
from ..core.obligation import Property, property_obligation

FACTORS = {1: 1.0, 2: 0.95, 4: 0.85}
"""Each scale's confidence factor, as the facts sheet states them."""


def _tokens(sig: str) -> list[tuple[str, list[int]]]:
    """A signature read back: (dtype:rank, dims) per input."""
    out = []
    for tok in sig.split(";") if sig else ():
        head, *dims = tok.split("x")
        out.append((head, [int(d) for d in dims]))
    return out


def _variants_hold(wire: dict) -> None:
    mode = wire["mode"]
    args = wire | {"mode": MODE.names.index(mode) if isinstance(mode, str) else mode}
    out = plans_op(**args)
    m = module_from_wire(args["module"])
    want = min(args["max_plans"] or args["report_plans"] or 3, 3)
    base = _tokens(out["plans"][0]["signature"]) if out["plans"] else []
    assert out["compiles"] and len(out["plans"]) <= want, out
    for p in out["plans"]:
        conf = f64(args["confidence"])
        assert f64(p["confidence"]) == (conf if p["scale"] == 1 else conf * FACTORS[p["scale"]])
        assert p["mode"] == args["mode"]
        assert _tokens(p["signature"]) == [(h, [d * p["scale"] for d in ds]) for h, ds in base]
    scales = [p["scale"] for p in out["plans"]]
    assert scales == sorted(scales) and len(set(scales)) == len(scales)
    assert scales[:1] == [1] and all(s in (1, 2, 4)[:want] for s in scales), out
    for s in (1, 2, 4)[:want]:
        assert (s in scales) == (scaled(m, s) is not None), (s, out)
    if any(op.kind == OpKind.CONST for op in m.ops) and want > 1:
        assert len(out["plans"]) < want, out


@property_obligation(
    "PO14.210",
    "pyc.speculative.plans gives, in order, the variants at scales 1, 2 and 4 up to the count "
    "(max_speculative_plans, else the report's, else 3; at most 3): each signature the base's "
    "with every dimension times its scale, each confidence the report's times 1, 0.95 or 0.85 "
    "(one float64 product), each in the compile's mode; a variant is missing only when it "
    "cannot be built (a matmul fed by an unscaled CONST), and the compile still goes on.",
    covers=("pyc.speculative.plans",),
    subject=variants,
    mutants=(
        Mutant.edit("compounded discount", "the third variant is discounted 0.95 x 0.85",
                    variants, "conf = confidence if DISCOUNTS[i] is None else confidence * "
                    "DISCOUNTS[i]", "conf = confidence * {0: 1.0, 1: 0.95, 2: 0.95 * 0.85}[i]"),
        Mutant.edit("report count ignored", "0 plans asked means 3 whatever the report says",
                    plan_count, "max_plans or report_plans or PLAN_MAX", "max_plans or PLAN_MAX"),
        Mutant.edit("failing variant fails all", "E14.20 always on", variants,
                    "if E14_20 in errata:", "if True:"),
        Mutant.edit("const scaled", "CONST dimensions are scaled too", scaled,
                    "if op.kind != OpKind.INPUT:", "if op.kind not in (OpKind.INPUT, "
                    "OpKind.CONST):"),
    ),
)
def variants_hold(_subject):
    return [Property("the edges", _variants_hold, cases=plans_edges),
            Property("generated modules", _variants_hold, strategy=plans_domain, examples=150)]


def _rank(p: dict, mode: str, sig: str, bucket: str) -> int:
    """Which selection step takes plan p (4: none), written from the facts sheet's order."""
    if sig and p["signature"] == sig:
        return 0 if p["mode"] == mode else 1
    if bucket and p["bucket"] == bucket:
        return 2 if p["mode"] == mode else 3
    return 4


def _selection_holds(args: dict) -> None:
    out = select_op(**args)["plan"]
    ranks = [_rank(p, args["mode"], args["signature"], args["bucket"]) for p in args["plans"]]
    best = min(ranks, default=4)
    assert out == (NONE if best == 4 else ranks.index(best)), (ranks, out)


@property_obligation(
    "PO14.211",
    "pyc.speculative.select takes the first plan of the best step: signature and mode, then "
    "signature, then bucket and mode, then bucket; an empty signature or bucket matches "
    "nothing, and no match is none.",
    covers=("pyc.speculative.select",),
    subject=select,
    mutants=(
        Mutant.edit("bucket before signature", "the bucket steps run first", select,
                    "    if signature:\n        rules +=", "    if False:\n        rules +="),
        Mutant.edit("empty signature matches", "an empty signature matches an empty plan's",
                    select, "if signature:", "if True:"),
        Mutant.edit("mode ignored", "the mode step is skipped", select,
                    'get(p, "signature") == signature and get(p, "mode") == mode',
                    'get(p, "signature") == signature'),
        Mutant.edit("last match", "the last plan of a step wins", select,
                    "for i, p in enumerate(plans):", "for i, p in reversed(list(enumerate("
                    "plans))):"),
    ),
)
def selection_holds(_subject):
    return [Property("the edges", _selection_holds, cases=select_edges),
            Property("generated plans", _selection_holds, strategy=select_domain, examples=300)]
