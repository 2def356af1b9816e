"""numba kernel for PyC's phantom graph. The strings matter only by equality and by being
empty, so each call's buckets and signatures become integers (0: empty, equal strings: equal
ids) and the moving average runs as one loop over integer columns, in the spec's float64
order."""

from __future__ import annotations

import numpy as np
from numba import njit

from ....spec.core.registry import REGISTRY, kernel
from ....spec.pyc.phantom import MATCH_AT
from ....spec.pyc.wire import bits, f64

OP = "pyc.phantom.track"


@njit(cache=True)
def score_of(es, os, eb, ob):
    """The spec's match_score on ids (0: empty)."""
    if es != 0 and os != 0 and es == os:
        return 1.0
    if eb != 0 and ob != 0 and eb == ob:
        return 0.75
    if es != 0 or os != 0:
        return 0.25
    return 0.0


@njit(cache=True)
def track_into(state, conf0, ob, os, failed, scores, matched, confs, reshaped):
    """state = [expected bucket id, expected signature id, horizon, matches, mismatches,
    reshapes] in and out; the confidence after each run goes to confs."""
    c = conf0
    for i in range(ob.size):
        s = score_of(state[1], os[i], state[0], ob[i])  # 1
        matched[i] = s >= MATCH_AT  # 2
        if matched[i]:
            state[3] += 1
        else:
            state[4] += 1
        reshaped[i] = False
        if not failed[i]:  # 3
            drift = (os[i] != 0 and os[i] != state[1]) or (ob[i] != 0 and ob[i] != state[0])
            if not drift:
                c = c * 0.85 + s * 0.15  # 4
            elif state[2] > 1 and state[4] % state[2] != 0:
                c = c * 0.7 + s * 0.3  # 5
            else:
                state[5] += 1  # 6
                reshaped[i] = True
                if ob[i] != 0:
                    state[0] = ob[i]
                if os[i] != 0:
                    state[1] = os[i]
                c = c * 0.6 + s * 0.4
        scores[i] = s
        confs[i] = c
    return c


def track_one(args: dict) -> dict:
    """Intern one call's strings, run the loop, and give the spec's result back."""
    names = {"": 0}

    def ident(text: str) -> int:
        return names.setdefault(text, len(names))

    observations = args["observations"]
    n = len(observations)
    ob = np.array([ident(o["bucket"]) for o in observations], dtype=np.int64)
    os = np.array([ident(o["signature"]) for o in observations], dtype=np.int64)
    failed = np.array([o["runtime_error"] for o in observations], dtype=np.bool_)
    state = np.array([ident(args["expected_bucket"]), ident(args["expected_signature"]),
                      min(max(args["horizon"], 1), 1 << 62), 0, 0, 0], dtype=np.int64)
    scores, confs = np.empty(n), np.empty(n)
    matched, reshaped = np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.bool_)
    c = track_into(state, f64(args["confidence"]), ob, os, failed, scores, matched, confs,
                   reshaped)
    text = {v: k for k, v in names.items()}
    return {"steps": [{"score": bits(s), "match": bool(m), "confidence": bits(x),
                       "reshaped": bool(r)}
                      for s, m, x, r in zip(scores.tolist(), matched.tolist(), confs.tolist(),
                                            reshaped.tolist(), strict=True)],
            "match_count": int(state[3]), "mismatch_count": int(state[4]),
            "reshape_count": int(state[5]), "expected_bucket": text[int(state[0])],
            "expected_signature": text[int(state[1])], "confidence": bits(c)}


@kernel(OP, "numba")
def track_batch(**columns):
    op = REGISTRY.ops[OP]
    rows = op.args.rows(columns, len(columns["confidence"]))
    return op.result.columns([track_one(r) for r in rows])
