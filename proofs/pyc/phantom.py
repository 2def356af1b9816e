"""Chapter 12 obligation of PyC's phantom graph: each run's score, counts and confidence follow
the rules, and the average is PyC's float64 one, bit for bit."""

from __future__ import annotations

from ...spec.core.registry import Mutant
from ...spec.pyc.phantom import (
    B_2,
    B_4,
    SIG_2,
    SIG_4,
    blend,
    obs,
    observe,
    track_args,
    track_domain,
    track_edges,
    track_op,
)
from ...spec.pyc.wire import f64
from ..core.obligation import Property, property_obligation

REAL = [
    (track_args([obs(B_2, SIG_2)] * 40, 1, 0.3), ["0x3feff7629cb5e403"]),
    (track_args([obs(B_4, SIG_4)] * 5 + [obs(B_2, SIG_2)] * 3, 3, 0.3),
     ["0x3fd23d70a3d70a3d", "0x3fd1916872b020c4", "0x3fd0f0d844d013a9", "0x3fd7ffeb074a771c",
      "0x3fddffee2c98e53e", "0x3fd9ccc0526b06de", "0x3fd6dc2039b1519b", "0x3fd41dacef6a642a"]),
]
"""Confidences PyC's own build (gcc 12.2, -O3) gives after the last run, or after each."""


def _score(es: str, os: str, eb: str, ob: str) -> float:
    """The facts sheet's score, written again."""
    return 1.0 if es and es == os else 0.75 if eb and eb == ob else 0.25 if es or os else 0.0


def _steps_hold(args: dict) -> None:
    out = track_op(**args)
    eb, es, c = args["expected_bucket"], args["expected_signature"], f64(args["confidence"])
    h, mism = max(args["horizon"], 1), 0
    for o, step in zip(args["observations"], out["steps"], strict=True):
        s = _score(es, o["signature"], eb, o["bucket"])
        assert f64(step["score"]) == s and step["match"] == (s >= 0.999), (o, step)
        mism += not step["match"]
        drift = (o["signature"] and o["signature"] != es) or (o["bucket"] and o["bucket"] != eb)
        if o["runtime_error"]:
            assert not step["reshaped"] and f64(step["confidence"]) == c, step
            continue
        if not drift:
            c = c * 0.85 + s * 0.15
        elif h > 1 and mism % h:
            c = c * 0.7 + s * 0.3
        else:
            eb, es, c = o["bucket"] or eb, o["signature"] or es, c * 0.6 + s * 0.4
        assert step["reshaped"] == bool(drift and not (h > 1 and mism % h)), (o, step)
        assert f64(step["confidence"]) == c, (o, step, c)
    assert out["mismatch_count"] == mism and out["match_count"] == len(out["steps"]) - mism
    assert out["reshape_count"] == sum(s["reshaped"] for s in out["steps"])
    assert (out["expected_bucket"], out["expected_signature"]) == (eb, es), out


def _real_holds(case: tuple[dict, list[str]]) -> None:
    args, want = case
    got = [f"0x{s['confidence']:016x}" for s in track_op(**args)["steps"]]
    assert got[-len(want):] == want, (got, want)


@property_obligation(
    "PO12.210",
    "pyc.phantom.track follows the facts sheet: the score (1, 0.75, 0.25, 0), a match at "
    "0.999, one count per run, no change after a failed run, the 0.85/0.15 average without "
    "drift, 0.7/0.3 on drift inside the horizon, and a reshape taking the run's set parts "
    "with 0.6/0.4; the float64 averages are PyC's own build's, bit for bit.",
    covers=("pyc.phantom.track",),
    subject=observe,
    mutants=(
        Mutant.edit("float32 average", "the average is kept in float32", blend,
                    "return c * w_old + s * w_score",
                    "return float(__import__('numpy').float32(c * w_old + s * w_score))"),
        Mutant.edit("fused multiply-add", "the sum is rounded once, as an FMA would",
                    blend, "return c * w_old + s * w_score",
                    "fr = __import__('fractions').Fraction\n    "
                    "return float(fr(c) * fr(w_old) + fr(s) * fr(w_score))"),
        Mutant.edit("failed runs adapt", "a failed run moves the average", observe,
                    "if not failed:  # 3", "if True:  # 3"),
        Mutant.edit("horizon on matches", "the horizon counts matches", observe,
                    "ph.mismatches % ph.horizon", "ph.matches % ph.horizon"),
        Mutant.edit("empty parts reshape", "a reshape copies an empty bucket", observe,
                    "ph.bucket = bucket or ph.bucket", "ph.bucket = bucket"),
    ),
)
def phantom_holds(_subject):
    return [Property("the edges", _steps_hold, cases=track_edges),
            Property("PyC's own confidences", _real_holds, cases=lambda: REAL),
            Property("generated runs", _steps_hold, strategy=track_domain, examples=200)]
