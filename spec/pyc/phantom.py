"""Chapter 12: PyC's phantom graph (compiler_api.c): the input shape a model expects, how
each run's shape scores against it, and the confidence PyC keeps as a moving average.

State: an expected bucket and signature (at compile, the module's INPUT ops'), a confidence
(the pass report's), a horizon h (0 counts as 1), and match, mismatch and reshape counts.
For each run, with the run's bucket and signature:
1. Score: 1.0 if both signatures are set and equal; else 0.75 if both buckets are set and
   equal; else 0.25 if either signature is set; else 0.
2. A score of at least 0.999 is a match (match count + 1), any other a mismatch (mismatch
   count + 1). This happens on every run, a failed one too.
3. A failed run stops here. Otherwise the run drifts when its signature is set and differs
   from the expected one, or its bucket is set and differs from the expected one.
4. No drift: confidence := 0.85 c + 0.15 s.
5. Drift while h > 1 and the mismatch count is not a multiple of h: confidence :=
   0.7 c + 0.3 s.
6. Otherwise a reshape: reshape count + 1; the run's bucket and signature, those that are
   set, become the expected ones; confidence := 0.6 c + 0.4 s.
Every product and sum is one IEEE-754 float64 operation, in that order (two products, then
their sum): PyC's doubles, which the C compiler does not contract to a fused multiply-add on
x86-64 without FMA in its target. A float32 average drifts from it within a few steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, Field, Int, List, Utf8, record
from ..core.strategies import st
from .passes import SIGNATURE_MAX
from .speculative import BUCKET_MAX
from .wire import F64, bits, f64, f64_strategy, finite

MATCH_AT = 0.999
"""The least score that is a match."""
WEIGHTS = {"steady": (0.85, 0.15), "drift": (0.7, 0.3), "reshape": (0.6, 0.4)}
"""(weight of the old confidence, weight of the score) of steps 4, 5 and 6."""
MAX_OBSERVATIONS = 1 << 16
"""The spec's own bound on the runs one call tracks."""


@dataclass
class Phantom:
    """pyc_phantom_graph_state, the parts a run reads and writes."""

    bucket: str
    signature: str
    confidence: float
    horizon: int = 1
    matches: int = 0
    mismatches: int = 0
    reshapes: int = 0


@dataclass(frozen=True)
class Step:
    score: float
    match: bool
    confidence: float
    reshaped: bool


def match_score(expected_sig: str, observed_sig: str, expected_bucket: str,
                observed_bucket: str) -> float:
    """Step 1."""
    if expected_sig and observed_sig and expected_sig == observed_sig:
        return 1.0
    if expected_bucket and observed_bucket and expected_bucket == observed_bucket:
        return 0.75
    if expected_sig or observed_sig:
        return 0.25
    return 0.0


def blend(c: float, s: float, kind: str) -> float:
    """c * w_old + s * w_score in float64."""
    w_old, w_score = WEIGHTS[kind]
    return c * w_old + s * w_score


def observe(ph: Phantom, bucket: str, signature: str, failed: bool) -> Step:
    """Steps 1-6 for one run."""
    s = match_score(ph.signature, signature, ph.bucket, bucket)  # 1
    matched = s >= MATCH_AT  # 2
    if matched:
        ph.matches += 1
    else:
        ph.mismatches += 1
    reshaped = False
    if not failed:  # 3
        drift = (bool(signature) and signature != ph.signature) or \
            (bool(bucket) and bucket != ph.bucket)
        if not drift:
            ph.confidence = blend(ph.confidence, s, "steady")  # 4
        elif max(ph.horizon, 1) > 1 and ph.mismatches % ph.horizon:
            ph.confidence = blend(ph.confidence, s, "drift")  # 5
        else:
            ph.reshapes += 1  # 6
            reshaped = True
            ph.bucket = bucket or ph.bucket
            ph.signature = signature or ph.signature
            ph.confidence = blend(ph.confidence, s, "reshape")
    return Step(s, matched, ph.confidence, reshaped)


def track(ph: Phantom, observations: list[tuple[str, str, bool]]) -> list[Step]:
    """Each run in order."""
    return [observe(ph, b, s, failed) for b, s, failed in observations]


# ── pyc.phantom.track ─────────────────────────────────────────────────────────────────────────

_TEXT = Utf8(c_string=True)


def check_track(args: dict) -> None:
    """Buckets of at most 63 and signatures of at most 127 bytes (PyC's arrays); a finite
    confidence."""
    finite(args["confidence"], "args.confidence")
    items = [("args.expected", {"bucket": args["expected_bucket"],
                                "signature": args["expected_signature"]})]
    items += [(f"args.observations[{i}]", o) for i, o in enumerate(args["observations"])]
    for where, item in items:
        for key, most in (("bucket", BUCKET_MAX), ("signature", SIGNATURE_MAX)):
            if len(item[key].encode()) > most:
                raise InvalidInput(f"{where}.{key}: longer than {most} bytes")


def track_op(expected_bucket: str, expected_signature: str, confidence: int, horizon: int,
             observations: list[dict]) -> dict:
    ph = Phantom(expected_bucket, expected_signature, f64(confidence), horizon)
    steps = track(ph, [(o["bucket"], o["signature"], o["runtime_error"]) for o in observations])
    return {"steps": [{"score": bits(s.score), "match": s.match, "confidence": bits(s.confidence),
                       "reshaped": s.reshaped} for s in steps],
            "match_count": ph.matches, "mismatch_count": ph.mismatches,
            "reshape_count": ph.reshapes, "expected_bucket": ph.bucket,
            "expected_signature": ph.signature, "confidence": bits(ph.confidence)}


SIG_2, SIG_4, SIG_3 = "1:r2x2x2;1:r2x2x2", "1:r2x4x4;1:r2x4x4", "1:r2x3x3;1:r2x3x3"
B_2, B_4, B_3 = "tiny:i2:b32", "tiny:i2:b128", "tiny:i2:b72"
"""PyC's own speculative-plan test: two f32 square inputs of side 2, 4 and 3."""


def obs(bucket: str, signature: str, runtime_error: bool = False) -> dict:
    return {"bucket": bucket, "signature": signature, "runtime_error": runtime_error}


def track_args(observations: list[dict], horizon: int = 1, confidence: float = 1.0,
               bucket: str = B_2, signature: str = SIG_2) -> dict:
    return {"expected_bucket": bucket, "expected_signature": signature,
            "confidence": bits(confidence), "horizon": horizon, "observations": observations}


def track_edges() -> list[dict]:
    """PyC's own test sequence, every score, the horizon, failed runs, empty parts."""
    pyc_test = [obs(B_2, SIG_2), obs(B_4, SIG_4), obs(B_3, SIG_3, True)]
    drift = [obs(B_4, SIG_4)] * 5 + [obs(B_2, SIG_2)] * 3
    return [track_args(pyc_test), track_args(drift, 3, 0.3), track_args(drift, 0, 0.3),
            track_args([obs(B_2, "")] * 3 + [obs("", "")] * 2),
            track_args([obs(B_2, SIG_4), obs(B_4, SIG_4, True), obs("", SIG_2)], 2, 0.5),
            track_args([obs(B_2, SIG_2)] * 40, 1, 0.3),
            track_args([obs(B_3, ""), obs("", "")], 1, 0.9, "", ""),
            track_args([], 5, 0.25)]


def track_domain() -> st.SearchStrategy:
    one = st.builds(obs, st.sampled_from(("", B_2, B_4, B_3)),
                    st.sampled_from(("", SIG_2, SIG_4, SIG_3)), st.booleans())
    return st.builds(track_args, st.lists(one, max_size=40), st.integers(0, 5),
                     f64_strategy(0.0, 1.0).map(f64), st.sampled_from(("", B_2, B_4)),
                     st.sampled_from(("", SIG_2, SIG_3)))


def track_bench(n: int, rng) -> list[dict]:
    """One long run of n observations drawn from three shapes, 10% of them failing."""
    shapes = [(B_2, SIG_2), (B_4, SIG_4), (B_3, SIG_3)]
    picks = rng.integers(0, 3, n)
    fails = rng.random(n) < 0.1
    return [track_args([obs(*shapes[int(k)], bool(f)) for k, f in zip(picks, fails,
                                                                      strict=True)], 4, 0.5)]


_STEP = record(score=Field(F64, "step 1's score (float64 bits)"), match=BOOL,
               confidence=Field(F64, "the confidence after the run (float64 bits)"),
               reshaped=Field(BOOL, "step 6 ran"))
declare(
    "pyc.phantom.track", chapter=12,
    summary="PyC's phantom graph over a sequence of runs: each run's match score, the match, "
            "mismatch and reshape counts, and the confidence's moving average in float64.",
    args=record(expected_bucket=Field(_TEXT, "the expected shape bucket; empty: none"),
                expected_signature=Field(_TEXT, "the expected shape signature; empty: none"),
                confidence=Field(F64, "the starting confidence (float64 bits)"),
                horizon=Field(Int(64), "phantom_horizon_steps; 0 counts as 1", 1),
                observations=Field(List(record(bucket=_TEXT, signature=_TEXT,
                                               runtime_error=BOOL), MAX_OBSERVATIONS),
                                   "each run's bucket and signature, and whether it failed")),
    result=record(steps=Field(List(_STEP), "one per observation"), match_count=Int(64),
                  mismatch_count=Int(64), reshape_count=Int(64),
                  expected_bucket=Utf8(), expected_signature=Utf8(),
                  confidence=Field(F64, "the final confidence (float64 bits)")),
    spec=(observe, match_score, blend, track), check=check_track, domain=track_domain,
    edges=track_edges, bench=track_bench,
    invalid=(InvalidCase("a NaN confidence", lambda: st.just(
                 {**track_args([]), "confidence": bits(float("nan"))})),
             InvalidCase("an observed bucket past 63 bytes", lambda: st.just(
                 track_args([obs("b" * 64, "")]))),
             InvalidCase("an expected signature past 127 bytes", lambda: st.just(
                 track_args([], signature="s" * 128)))),
    not_applicable={"cupy": "each run's average reads the one before: one sequential chain"},
)
