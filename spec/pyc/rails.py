"""Chapter 12: PyC's runtime rails (runtime/runtime_control.c): a controller that watches each
run's window of metrics and moves the objective mode.

Each observation first recommends a mode (the shadow recommendation, the first match wins): a
runtime error gives BALANCED, allocator pressure MEMORY_FIRST, a latency regression BALANCED,
a throughput regression UTILIZATION_FIRST; with no breach a non-BALANCED mode is recommended
back to BALANCED. A breach extends the run of consecutive breaches, anything else ends it.
After `windows` consecutive breaches a hard rollback puts the mode to BALANCED at once;
otherwise the controller auto-switches to the recommendation only once it has dwelt `dwell`
observations in its mode and its cooldown has run out. Strict mode (PyC's default) turns both
off, so only the shadow recommendation moves. Out-of-range settings fall back to the
defaults, as PyC's sanitizer does.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from ..core.machine import Machine
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, U64, Field, List, Optional, record
from ..core.strategies import st
from .kernels import BALANCED, MEMORY_FIRST, MODE, UTILIZATION_FIRST
from .wire import F64, Named, bits, f64_strategy, finite, non_negative

REASON = Named(("none", "latency", "throughput", "pressure", "runtime_error"), "rollback reason")
"""pyc_rollback_reason in ordinal order. Real code: include/pyc/runtime_control.h."""
NONE, LATENCY, THROUGHPUT, PRESSURE, RUNTIME_ERROR = range(5)
LIMIT = 100_000
"""dwell, cooldown and the event thresholds above this fall back to the defaults (and dwell,
windows and the thresholds at 0). Real code: compiler_api.c sanitize_runtime_rails."""
WINDOWS_LIMIT = 1000
"""consecutive_breach_windows above this falls back to the default. Real code: compiler_api.c."""


@dataclass(frozen=True)
class Rails:
    """pyc_runtime_rails with PyC's defaults (pyc_runtime_rails_default)."""

    auto_switch: bool = True
    hard_rollback: bool = True
    dwell: int = 4
    cooldown: int = 2
    windows: int = 2
    latency_threshold: float = 0.08
    throughput_threshold: float = 0.05
    pressure_score_threshold: float = 0.20
    pressure_events_threshold: int = 1
    remat_threshold: int = 4


def sanitize(r: Rails, strict: bool) -> Rails:
    """Strict mode turns both actions off; each out-of-range setting takes its default."""
    d = Rails()
    if strict:  # 1. strict: shadow recommendations only
        r = replace(r, auto_switch=False, hard_rollback=False)
    return replace(  # 2. the sanitizer, field by field
        r,
        dwell=r.dwell if 0 < r.dwell <= LIMIT else d.dwell,
        cooldown=r.cooldown if r.cooldown <= LIMIT else d.cooldown,
        windows=r.windows if 0 < r.windows <= WINDOWS_LIMIT else d.windows,
        latency_threshold=r.latency_threshold if 0.0 < r.latency_threshold <= 1.0
        else d.latency_threshold,
        throughput_threshold=r.throughput_threshold if 0.0 < r.throughput_threshold <= 1.0
        else d.throughput_threshold,
        pressure_score_threshold=r.pressure_score_threshold
        if 0.0 < r.pressure_score_threshold <= 10.0 else d.pressure_score_threshold,
        pressure_events_threshold=r.pressure_events_threshold
        if 0 < r.pressure_events_threshold <= LIMIT else d.pressure_events_threshold,
        remat_threshold=r.remat_threshold if 0 < r.remat_threshold <= LIMIT
        else d.remat_threshold)


@dataclass(frozen=True)
class Window:
    """One run's metrics (pyc_runtime_window_metrics)."""

    baseline_ms: float = 0.0
    observed_ms: float = 0.0
    baseline_throughput: float = 0.0
    observed_throughput: float = 0.0
    pressure_score: float = 0.0
    pressure_events: int = 0
    remat_tensors: int = 0
    runtime_error: bool = False


@dataclass(frozen=True)
class Controller:
    """pyc_runtime_controller: the mode, the last recommendation and the counters."""

    mode: int = BALANCED
    recommended: int = BALANCED
    reason: int = NONE
    last_stable: int = BALANCED
    rollback_reason: int = NONE
    rollbacks: int = 0
    steps: int = 0
    cooldown: int = 0
    breaches: int = 0


def controller(mode: int) -> Controller:
    """A fresh controller in `mode`."""
    return Controller(mode, mode, NONE, mode)


def recommend(c: Controller, r: Rails, w: Window) -> tuple[int, int]:
    """(recommended mode, reason): the first breach that matches, else back to BALANCED."""
    if w.runtime_error:
        return BALANCED, RUNTIME_ERROR
    if (w.pressure_score > r.pressure_score_threshold
            or w.pressure_events >= r.pressure_events_threshold
            or w.remat_tensors >= r.remat_threshold):
        return MEMORY_FIRST, PRESSURE
    if w.baseline_ms > 0.0 and w.observed_ms > w.baseline_ms * (1.0 + r.latency_threshold):
        return BALANCED, LATENCY
    if w.baseline_throughput > 0.0 and \
            w.observed_throughput < w.baseline_throughput * (1.0 - r.throughput_threshold):
        return UTILIZATION_FIRST, THROUGHPUT
    return (BALANCED if c.mode != BALANCED else c.mode), NONE


def observe(c: Controller, r: Rails, w: Window) -> Controller:
    """One observation: count the step, run the cooldown down, recommend, then roll back
    hard or switch when allowed."""
    steps, cooldown = c.steps + 1, c.cooldown - 1 if c.cooldown > 0 else 0  # 1.
    rec, reason = recommend(c, r, w)  # 2. the shadow recommendation
    breaches = c.breaches + 1 if reason != NONE else 0  # 3. the breach run
    c = replace(c, recommended=rec, reason=reason, steps=steps, cooldown=cooldown,
                breaches=breaches)
    if r.hard_rollback and breaches >= r.windows:  # 4. hard rollback to BALANCED
        return replace(c, mode=BALANCED, last_stable=BALANCED, rollback_reason=reason,
                       rollbacks=c.rollbacks + 1, steps=0, cooldown=r.cooldown, breaches=0)
    if r.auto_switch and cooldown == 0 and steps >= r.dwell and rec != c.mode:  # 5. switch
        return replace(c, mode=rec, last_stable=rec, steps=0, cooldown=r.cooldown, breaches=0)
    return c


def run_windows(runs: list[tuple[float, float, int, int, bool]]) -> list[Window]:
    """Windows as PyC builds them from runs (ms, pressure score, events, remat, error): the
    baselines are the first non-zero run time and throughput (1000 / ms, 0 when ms is 0)."""
    out, base_ms, base_tp = [], 0.0, 0.0
    for ms, score, events, remat, error in runs:
        tp = 1000.0 / ms if ms > 0.0 else 0.0
        base_ms = base_ms if base_ms != 0.0 else ms
        base_tp = base_tp if base_tp != 0.0 else tp
        out.append(Window(base_ms, ms, base_tp, tp, score, events, remat, error))
    return out


# ── the controller as an explorable machine ───────────────────────────────────────────────────

KINDS = {
    "ok": (Window(10.0, 10.0, 100.0, 100.0), False),
    "slow": (Window(10.0, 20.0, 100.0, 100.0), True),
    "starved": (Window(10.0, 10.0, 100.0, 50.0), True),
    "pressure": (Window(10.0, 10.0, 100.0, 100.0, 0.5), True),
    "events": (Window(10.0, 10.0, 100.0, 100.0, 0.0, 1), True),
    "error": (Window(10.0, 10.0, 100.0, 100.0, runtime_error=True), True),
}
"""The model's alphabet of windows (under the default thresholds) and whether each breaches."""


@dataclass(frozen=True)
class Step:
    """A machine state: the controller, its step count capped at dwell and its breach run at
    windows (all that decides a switch or a rollback), and whether the step that led here
    kept the rails' rules."""

    key: tuple
    c: Controller = field(default=Controller(), compare=False, hash=False)
    ok: bool = field(default=True, compare=False, hash=False)


def _key(c: Controller, r: Rails) -> tuple:
    return (c.mode, c.recommended, c.reason, c.rollback_reason, min(c.steps, r.dwell),
            c.cooldown, min(c.breaches, r.windows))


def kept_rules(before: Controller, after: Controller, r: Rails, breached: bool) -> bool:
    """The rails' rules for one transition, stated from the outside: a hard rollback exactly
    when a breach completes `windows` in a row; a mode change otherwise only by auto-switch,
    after dwelling and with the cooldown run out; the cooldown runs down by one a step."""
    rolled = after.rollbacks == before.rollbacks + 1
    due = r.hard_rollback and breached and before.breaches + 1 >= r.windows
    if rolled != due or after.rollbacks not in (before.rollbacks, before.rollbacks + 1):
        return False
    if rolled:
        return (after.mode, after.steps, after.breaches, after.cooldown) == (
            BALANCED, 0, 0, r.cooldown)
    if after.breaches != (before.breaches + 1 if breached else 0) and after.mode == before.mode:
        return False
    if after.mode != before.mode:
        return (r.auto_switch and before.steps + 1 >= r.dwell and before.cooldown <= 1
                and (after.steps, after.breaches, after.cooldown) == (0, 0, r.cooldown))
    return after.cooldown == max(before.cooldown - 1, 0) and after.steps == before.steps + 1


def rails_machine(r: Rails, initial: int = BALANCED) -> Machine:
    """Every sequence of windows from KINDS fed to a controller with rails `r`."""

    def steps(s: Step) -> Iterator[tuple[str, Step]]:
        for label, (w, breached) in KINDS.items():
            c = observe(s.c, r, w)
            ok = kept_rules(s.c, c, r, breached)
            yield label, Step((*_key(c, r), ok), c, ok)

    c0 = controller(initial)
    return Machine(f"rails {r}", Step((*_key(c0, r), True), c0), steps, (
        ("each step keeps the rails' rules", lambda s: s.ok),
        ("fewer than `windows` breaches stay pending when hard rollback is on",
         lambda s: not r.hard_rollback or s.c.breaches < r.windows),
        ("the cooldown never exceeds its setting", lambda s: s.c.cooldown <= r.cooldown),
        ("with both actions off the mode never moves",
         lambda s: r.auto_switch or r.hard_rollback or s.c.mode == initial)),
        done=lambda s: False)


# ── pyc.rails.simulate ────────────────────────────────────────────────────────────────────────

RUNS_MAX = 4096
"""Runs one request may feed the controller: the spec's own bound."""
_D = Rails()
RAILS = record(
    auto_switch=Field(BOOL, "enable_auto_switch", True),
    hard_rollback=Field(BOOL, "enable_hard_rollback", True),
    dwell=Field(U64, "dwell_steps", _D.dwell), cooldown=Field(U64, "cooldown_steps", _D.cooldown),
    windows=Field(U64, "consecutive_breach_windows", _D.windows),
    latency_threshold=Field(F64, "latency regression fraction", bits(_D.latency_threshold)),
    throughput_threshold=Field(F64, "throughput regression fraction",
                               bits(_D.throughput_threshold)),
    pressure_score_threshold=Field(F64, "pressure score above which a window breaches",
                                   bits(_D.pressure_score_threshold)),
    pressure_events_threshold=Field(U64, "pressure events that breach",
                                    _D.pressure_events_threshold),
    remat_threshold=Field(U64, "rematerialised tensors that breach", _D.remat_threshold))
RUN = record(ms=Field(F64, "the run's wall time in ms (float64 bits, >= 0)"),
             pressure_score=Field(F64, "the plan's pressure score", 0),
             pressure_events=Field(U64, "allocator pressure events", 0),
             remat_tensors=Field(U64, "rematerialised tensors", 0),
             runtime_error=Field(BOOL, "the run failed", False))
STATE = record(mode=MODE, recommended=MODE, reason=REASON, rollback_reason=REASON,
               rollbacks=U64, steps_in_mode=U64, cooldown=U64, breaches=U64)


def check_rails(args: dict) -> None:
    """Thresholds are finite; run times finite and not negative."""
    for name in ("latency_threshold", "throughput_threshold", "pressure_score_threshold"):
        if args["rails"] is not None:
            finite(args["rails"][name], f"args.rails.{name}")
    for i, run in enumerate(args["runs"]):
        non_negative(run["ms"], f"args.runs[{i}].ms")
        finite(run["pressure_score"], f"args.runs[{i}].pressure_score")


def simulate(rails: Rails, strict: bool, mode: int,
             runs: list[tuple[float, float, int, int, bool]]) -> list[Controller]:
    """The controller after each run, from a fresh one in `mode`."""
    r, c, out = sanitize(rails, strict), controller(mode), []
    for w in run_windows(runs):
        c = observe(c, r, w)
        out.append(c)
    return out


def simulate_op(strict: bool, initial_mode: int, rails: dict | None, runs: list[dict]) -> dict:
    from .wire import f64
    got = Rails() if rails is None else Rails(**{
        k: f64(v) if k.endswith("threshold") and k != "pressure_events_threshold"
        and k != "remat_threshold" else v for k, v in rails.items()})
    seq = [(f64(u["ms"]), f64(u["pressure_score"]), u["pressure_events"], u["remat_tensors"],
            u["runtime_error"]) for u in runs]
    return {"states": [
        {"mode": c.mode, "recommended": c.recommended, "reason": c.reason,
         "rollback_reason": c.rollback_reason, "rollbacks": c.rollbacks,
         "steps_in_mode": c.steps, "cooldown": c.cooldown, "breaches": c.breaches}
        for c in simulate(got, strict, initial_mode, seq)]}


def _run(ms: float, score: float = 0.0, events: int = 0, remat: int = 0,
         error: bool = False) -> dict:
    return {"ms": f"0x{bits(ms):016x}", "pressure_score": f"0x{bits(score):016x}",
            "pressure_events": events, "remat_tensors": remat, "runtime_error": error}


def rails_edges() -> list[dict]:
    """Strict shadowing, a hard rollback after two breaches, a dwell-gated switch, cooldown."""
    slow, ok = _run(20.0), _run(10.0)
    return [
        {"runs": [ok, slow, slow, slow]},
        {"strict": False, "runs": [ok, slow, slow, slow]},
        {"strict": False, "initial_mode": "memory_first", "runs": [ok] * 6},
        {"strict": False, "runs": [ok, _run(10.0, 0.5), ok, _run(10.0, 0.0, 1), _run(40.0),
                                   _run(10.0, error=True), _run(10.0, 0.0, 0, 4), ok]},
        {"strict": False, "rails": {"hard_rollback": False, "dwell": 1, "cooldown": 0},
         "runs": [ok, _run(30.0), _run(10.0, 1.0), ok, ok]},
        {"strict": False, "rails": {"dwell": 0, "windows": 0, "cooldown": 200000},
         "runs": [ok, slow, slow]},
        {"strict": False, "runs": [_run(0.0), _run(5.0), _run(10.0), _run(10.0)]},
        {"runs": []},
    ]


def rails_domain() -> st.SearchStrategy:
    run = st.fixed_dictionaries({
        "ms": f64_strategy(0.0, 40.0) | st.sampled_from((bits(10.0), bits(20.0))),
        "pressure_score": st.sampled_from((0, bits(0.5))) | f64_strategy(0.0, 1.0),
        "pressure_events": st.sampled_from((0, 0, 1)), "remat_tensors": st.integers(0, 5),
        "runtime_error": st.sampled_from((False, False, False, True))})
    rails = st.none() | st.fixed_dictionaries({
        "auto_switch": st.booleans(), "hard_rollback": st.booleans(),
        "dwell": st.integers(0, 5), "cooldown": st.integers(0, 3), "windows": st.integers(0, 4),
        "latency_threshold": st.just(bits(0.08)), "throughput_threshold": st.just(bits(0.05)),
        "pressure_score_threshold": st.just(bits(0.2)),
        "pressure_events_threshold": st.integers(0, 2), "remat_threshold": st.integers(0, 5)})
    return st.fixed_dictionaries({"strict": st.booleans(), "initial_mode": st.integers(0, 2),
                                  "rails": rails, "runs": st.lists(run, max_size=12)})


declare(
    "pyc.rails.simulate", chapter=12,
    summary="Feed a sequence of runs to PyC's runtime rails controller (strict mode, its "
            "default, only shadows); the controller's state after each run.",
    args=record(strict=Field(BOOL, "deterministic_strict: no auto switch, no rollback", True),
                initial_mode=Field(MODE, "the compiled objective mode", 0),
                rails=Field(Optional(RAILS, {}), "the rails; null: PyC's defaults", None),
                runs=Field(List(RUN, RUNS_MAX), "the runs in order")),
    result=record(states=Field(List(STATE), "the controller after each run")),
    spec=(recommend, observe), check=check_rails, domain=rails_domain,
    invalid=(
        InvalidCase("a negative run time", lambda: st.just({"runs": [_run(-1.0)]})),
        InvalidCase("a NaN threshold", lambda: st.just(
            {"rails": {"latency_threshold": "0x7ff8000000000000"}, "runs": []})),
        InvalidCase("an unknown mode", lambda: st.just({"initial_mode": "turbo", "runs": []}),
                    "bad_request"),
        InvalidCase("a negative dwell", lambda: st.just({"rails": {"dwell": -1}, "runs": []})),
    ),
    edges=rails_edges,
    not_applicable={"numba": "each step depends on the last; a few comparisons per run",
                    "cupy": "a sequential controller: nothing to spread over a device"},
)
