"""Chapter 12: PyC's decision log (compiler_api.c): the `key=value` text a compile and each
run leave in a 2048-byte buffer, and how it reads back.

A log is `mode=<v>` followed by ` key=value` for each further key of its kind, in a fixed
order: the compile log's keys, or the run log's. Every key is always written. The buffer keeps
at most 2047 bytes and cuts silently, so a log of that length may have lost its tail (its last
value may be cut short, and later keys are missing). Values are written as they are (a CUDA
reason may hold spaces), so a value ends where the next key of the order begins. An empty log
is what PYC_ENABLE_RUNTIME_DECISION_LOG=0 leaves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, Field, List, Utf8, record
from ..core.strategies import st
from .wire import Named

LOG_MAX = 2047
"""Bytes a decision log keeps (a 2048-byte buffer and its NUL). Real code: compiler_api.c."""
COMPILE_KEYS = (
    "mode", "budget", "pressure", "kernel", "score", "util", "alloc_penalty", "reuse_bonus",
    "kernel_candidates", "det", "cache_hit", "compile_ms", "budget_ms", "budget_exceeded",
    "graph_breaks", "break_first", "break_counts", "compilability", "autotune_loaded",
    "spec_plans", "spec_bucket", "spec_conf")
"""The compile log's keys in order. Real code: compiler_api.c pyc_compile_model."""
RUN_KEYS = (
    "mode", "shadow_mode", "shadow_reason", "rollback", "rollback_count", "pressure", "kernel",
    "score", "util", "alloc_penalty", "reuse_bonus", "kernel_candidates", "workload", "hw",
    "cuda_fallback", "cuda_reason", "contract", "contract_reason", "guard_miss", "fallback",
    "cache_hit", "budget_exceeded", "graph_breaks", "break_first", "break_counts",
    "compilability", "autotune_loaded", "autotune_saved", "autotune_candidates", "spec_plans",
    "spec_hit", "spec_miss", "spec_guard", "spec_bucket", "spec_conf", "phantom_enabled",
    "phantom_match", "phantom_score", "phantom_matches", "phantom_misses", "phantom_reshapes",
    "phantom_expect", "phantom_observed", "fp")
"""The run log's keys in order. Real code: compiler_api.c pyc_run_model."""
KIND = Named(("none", "compile", "run"), "decision log kind")
"""An empty log, a compile's, or a run's."""
NONE, COMPILE, RUN = range(3)
KEYS = {COMPILE: COMPILE_KEYS, RUN: RUN_KEYS}


@dataclass(frozen=True)
class Log:
    """A parsed log: its kind, the (key, value) pairs read, and whether it may be cut."""

    kind: int
    entries: tuple[tuple[str, str], ...]
    truncated: bool


def render(kind: int, values: Sequence[str]) -> str:
    """The log PyC writes for these values (one per key of the kind), cut to 2047 bytes."""
    text = " ".join(f"{k}={v}" for k, v in zip(KEYS[kind], values, strict=True))
    return text.encode()[:LOG_MAX].decode("utf-8", "ignore")


def parse(log: str) -> Log:
    """Read a log back; a log that is not one is `invalid_input` naming the offset."""
    if not log:  # 1. the log is off
        return Log(NONE, (), False)
    if not log.startswith("mode="):
        raise InvalidInput("args.log: offset 0: a decision log starts with mode=")
    cut = len(log.encode()) >= LOG_MAX
    kind = RUN if " shadow_mode=" in log else COMPILE  # 2. the second key tells the kind
    keys, entries, pos = KEYS[kind], [], len("mode=")
    for key, nxt in pairwise(keys):  # 3. each value runs to the next key
        at = log.find(f" {nxt}=", pos)
        if at < 0:
            if cut:  # 4. the tail was cut off: the last value read may be short
                return Log(kind, (*entries, (key, log[pos:])), True)
            raise InvalidInput(f"args.log: offset {pos}: no {nxt}= after {key}=")
        entries.append((key, log[pos:at]))
        pos = at + len(nxt) + 2
    return Log(kind, (*entries, (keys[-1], log[pos:])), cut)


# ── pyc.decision_log.parse ────────────────────────────────────────────────────────────────────


def check_log(args: dict) -> None:
    """A log fits PyC's buffer."""
    if len(args["log"].encode()) > LOG_MAX:
        raise InvalidInput(f"args.log: longer than {LOG_MAX} bytes")


def parse_op(log: str) -> dict:
    p = parse(log)
    return {"kind": p.kind, "entries": [{"key": k, "value": v} for k, v in p.entries],
            "truncated": p.truncated}


COMPILE_EXAMPLE = (
    "0", "0", "0.000000", "matmul_cpu_tuned", "204.500000", "0.750000", "0.000000",
    "0.000000", "2", "1", "0", "0.120000", "0.000000", "0", "0", "none@-1", "0,0,0,0,0",
    "1.000000", "0", "0", "", "0.000000")
"""Values of a compile of the golden module on CPU (the default catalog's tuned kernel)."""
RUN_EXAMPLE = (
    "0", "0", "0", "0", "0", "0.000000", "matmul_cpu_tuned", "204.500000", "0.750000",
    "0.000000", "0.000000", "2", "small", "generic", "1", "cuda_runtime_not_built", "1", "ok",
    "0", "0", "0", "0", "0", "none@-1", "0,0,0,0,0", "1.000000", "0", "0", "2", "0", "0",
    "0", "0", "", "0.000000", "0", "0", "0.000000", "0", "0", "0", "", "",
    "7367339300434097518")
"""Values of a run of that module."""


def log_edges() -> list[dict]:
    """Empty, a compile log, a run log, a reason with spaces, a cut log."""
    spaced = list(RUN_EXAMPLE)
    spaced[15] = "cuda_sync_failed:an illegal memory access was encountered;cpu_fallback_failed"
    long = list(RUN_EXAMPLE)
    long[42] = "x" * 1900
    return [{"log": ""}, {"log": render(COMPILE, COMPILE_EXAMPLE)},
            {"log": render(RUN, RUN_EXAMPLE)}, {"log": render(RUN, spaced)},
            {"log": render(RUN, long)}, {"log": render(COMPILE, ("1",) * 21 + ("y" * 2100,))}]


def log_domain() -> st.SearchStrategy:
    value = st.sampled_from(("0", "1", "0.750000", "small", "", "a b", "x=y")) | st.text(
        st.characters(min_codepoint=32, max_codepoint=126), max_size=120)
    return st.sampled_from((COMPILE, RUN)).flatmap(lambda kind: st.lists(
        value, min_size=len(KEYS[kind]), max_size=len(KEYS[kind])).map(
            lambda vs: {"log": render(kind, vs)}))


declare(
    "pyc.decision_log.parse", chapter=12,
    summary="Read PyC's compile or run decision log back as (key, value) pairs in its key "
            "order; a log of 2047 bytes may have been cut.",
    args=record(log=Field(Utf8(c_string=True), "the decision log text (at most 2047 bytes)")),
    result=record(kind=Field(KIND, "none (empty), compile or run"),
                  entries=Field(List(record(key=Utf8(), value=Utf8())), "pairs in log order"),
                  truncated=Field(BOOL, "the log filled the buffer: its tail may be lost")),
    spec=(parse,), check=check_log, domain=log_domain,
    invalid=(
        InvalidCase("a log without mode=", lambda: st.just({"log": "kernel=x"})),
        InvalidCase("a compile log missing a key", lambda: st.just({"log": "mode=0 budget=0"})),
        InvalidCase("a log past the buffer", lambda: st.just({"log": "mode=" + "0" * 2043})),
        InvalidCase("a log that is a number", lambda: st.just({"log": 7}), "bad_request"),
    ),
    edges=log_edges,
    not_applicable={"numba": "a few dozen substring searches per log: no numeric core",
                    "cupy": "each value ends where the next key starts: sequential"},
)
