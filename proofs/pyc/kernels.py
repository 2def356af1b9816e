"""Chapter 12 obligations for PyC's kernel registry, rails, dispatch, decision log and autotune
database. The score formula and the family rules are restated here by hand from the facts
(kernel_registry.c, compiler_api.c); nothing is read from the spec's own tables."""

from __future__ import annotations

import itertools
import re

from hypothesis import strategies as st

from ...spec.core.registry import Mutant
from ...spec.pyc import autotune as at
from ...spec.pyc import decision_log as dl
from ...spec.pyc import dispatch as dp
from ...spec.pyc import kernels as pk
from ...spec.pyc import rails as rl
from ...spec.pyc.kernel_ops import kernels, to_context, to_kernel
from ..core.obligation import Property, model_obligation, property_obligation

# ── PO12.200: scores and the selection ────────────────────────────────────────────────────────


def restated_score(k: pk.Kernel, mode: int, c: pk.Context) -> float:
    """The joint score from the facts sheet's formula, term by term."""
    util_first = mode == pk.UTILIZATION_FIRST
    time = 0.0 if k.best_ms <= 0.0 or k.best_ms == pk.DBL_MAX else -100.0 * k.best_ms
    press = 0.0 if util_first or c.pressure_score <= 0.0 else \
        c.pressure_score * float(k.shared_mem_bytes // 1024 + 8 * k.reg_class)
    base = (100.0 * k.priority + (12.0 if util_first else 6.0) * k.occupancy
            + (25.0 if k.tensor_core else 0.0) + time - press)
    alloc = reuse = 0.0
    if not util_first:
        w1, w2, w3 = (10.0, 16.0, 120.0) if mode == pk.MEMORY_FIRST else (7.0, 10.0, 90.0)
        kb, reg = k.shared_mem_bytes / 1024.0, float(k.reg_class)
        if c.pressure_events:
            alloc += c.pressure_events * (w1 + kb * 0.5 + reg * 4.0)
        if c.remat_tensors:
            alloc += c.remat_tensors * (w2 + kb * 0.35 + reg * 3.0)
        if c.budget_bytes and c.peak_bytes > c.budget_bytes:
            alloc += (c.peak_bytes - c.budget_bytes) / c.budget_bytes * (w3 + kb * 1.5
                                                                          + reg * 12.0)
        if c.reused and c.total_requested_bytes:
            reuse = (c.reused / (c.reused + c.pressure_events + 1)
                     * (1.0 / (1.0 + reg + k.shared_mem_bytes / 32768.0))
                     * (42.0 if mode == pk.MEMORY_FIRST else 24.0))
    wl = 0.0 if pk.ANY in (k.workload, c.workload) else (36.0 if k.workload == c.workload
                                                         else -18.0)
    if pk.HW_ANY in (k.hardware, c.hardware):
        hw = 0.0
    elif k.hardware == c.hardware:
        hw = 48.0
    else:
        hw = -8.0 if c.hardware == pk.GENERIC else (10.0 if k.hardware == pk.GENERIC else -24.0)
    return base - alloc + reuse + wl + hw


def _cases() -> st.SearchStrategy:
    from ...spec.pyc.kernel_ops import contexts
    return st.tuples(st.lists(kernels(), max_size=6), st.integers(0, 2), contexts())


def _selection(case) -> None:
    raw, mode, ctx = case
    ks, c = [to_kernel(k) for k in raw], to_context(ctx)
    scores = [pk.joint_score(k, mode, c).score for k in ks]
    for k, s in zip(ks, scores, strict=True):
        assert abs(s - restated_score(k, mode, c)) <= 1e-9 * max(1.0, abs(s)), (k, s)
    got = pk.select(ks, mode, c)
    if not ks:
        assert got is None
        return
    top = max(scores)
    want = min((i for i, s in enumerate(scores) if s == top), key=lambda i: (
        ks[i].symbol.encode(), i))
    assert got == want, (got, want, scores)
    for perm in itertools.islice(itertools.permutations(range(len(ks))), 6):
        other = pk.select([ks[i] for i in perm], mode, c)
        assert ks[perm[other]].symbol == ks[want].symbol, perm


def _ties(order: tuple[int, ...]) -> None:
    same = [pk.Kernel(sym, 1, 0.5) for sym in ("b", "ab", "a", "ba", "")]
    ks = [same[i] for i in order]
    assert ks[pk.select(ks, pk.BALANCED, pk.Context())].symbol == "", order
    ks = [k for k in ks if k.symbol]
    assert ks[pk.select(ks, pk.BALANCED, pk.Context())].symbol == "a", order


def _default_catalog(_none) -> None:
    cpu = pk.default_catalog(pk.CPU)
    assert [pk.joint_score(k, pk.BALANCED, pk.Context()).score for k in cpu] == [103.3, 204.5]
    assert cpu[pk.select(cpu, pk.BALANCED, pk.Context())].symbol == "matmul_cpu_tuned"
    reuse = pk.Context(reused=1, total_requested_bytes=4096)
    assert abs(pk.reuse_bonus(cpu[1], pk.BALANCED, reuse) - 8.0 / 3.0) < 1e-12


@property_obligation(
    "PO12.200",
    "Every kernel's joint score equals the facts sheet's formula (base, allocator penalty, "
    "reuse bonus, workload and hardware affinity); selection takes the highest score and, "
    "on an exact tie, the bytewise-smallest symbol, whatever the registration order; the "
    "default CPU catalog scores 103.3 and 204.5 and selects matmul_cpu_tuned.",
    covers=("pyc.kernel.select",),
    subject=pk.select,
    mutants=(
        Mutant.edit("tie to the larger symbol", "strcmp > 0", pk.select,
                    "symbol_key(k.symbol) < symbol_key", "symbol_key(k.symbol) > symbol_key"),
        Mutant.edit("ties to the last", "a tie replaces", pk.select,
                    "s > best_score", "s >= best_score"),
        Mutant.edit("tensor cores 20", "a smaller bonus", pk.base_score,
                    "bonus = TENSOR_CORE_BONUS", "bonus = 20.0"),
        Mutant.edit("generic device rewards", "+8 for a specific kernel on a generic device",
                    pk.hardware_adjustment, "return HW_ON_GENERIC", "return -HW_ON_GENERIC"),
        Mutant.edit("reuse without pressure", "the ratio ignores pressure events",
                    pk.reuse_bonus, "c.reused + c.pressure_events + 1", "c.reused + 1"),
        Mutant.edit("util weight always 6", "UTILIZATION_FIRST weighs occupancy 6",
                    pk.base_score, "12.0 if mode == UTILIZATION_FIRST", "6.0 if mode == "
                    "UTILIZATION_FIRST"),
    ),
)
def selection_is_max_then_symbol(_subject):
    return [Property("default catalog", _default_catalog, cases=lambda: [None]),
            Property("five equal kernels in every order", _ties,
                     cases=lambda: itertools.permutations(range(5))),
            Property("random catalogs", _selection, strategy=_cases, examples=300)]


# ── PO12.201: the rails controller ────────────────────────────────────────────────────────────

RAILS = (rl.Rails(), rl.Rails(auto_switch=False, hard_rollback=False),
         rl.Rails(hard_rollback=False), rl.Rails(dwell=1, cooldown=0),
         rl.Rails(windows=3, cooldown=3, dwell=2), rl.Rails(auto_switch=False))


@model_obligation(
    "PO12.201",
    "The rails controller, every sequence of six kinds of windows from each initial mode "
    "under six settings (defaults; strict; no rollback; dwell 1 cooldown 0; windows 3; no "
    "auto switch): a hard rollback to BALANCED happens exactly when a breach completes "
    "`windows` in a row (2 by default) and resets steps, breaches and the cooldown; a mode "
    "changes otherwise only by auto switch after dwelling and with the cooldown run out; the "
    "cooldown runs down by one a step; with both actions off (strict) the mode never moves.",
    covers=("pyc.rails.simulate",),
    subject=rl.rails_machine,
    mutants=(
        Mutant.edit("rollback after 3", "breaches > windows", rl.observe,
                    "breaches >= r.windows", "breaches > r.windows"),
        Mutant.edit("no dwell", "switch without dwelling", rl.observe,
                    "steps >= r.dwell and", ""),
        Mutant.edit("cooldown ignored", "switch during the cooldown", rl.observe,
                    "cooldown == 0 and", ""),
        Mutant.edit("cooldown frozen", "the cooldown never runs down", rl.observe,
                    "c.cooldown - 1 if c.cooldown > 0 else 0", "c.cooldown"),
        Mutant.edit("breach run kept", "a clean window does not end the run", rl.observe,
                    "c.breaches + 1 if reason != NONE else 0",
                    "c.breaches + 1 if reason != NONE else c.breaches"),
        Mutant.edit("rollback keeps steps", "a rollback does not restart the dwell",
                    rl.observe, "rollbacks=c.rollbacks + 1, steps=0", "rollbacks=c.rollbacks + 1"),
    ),
)
def rails_rules(machine):
    return [machine(r, m) for r in RAILS for m in range(3)]


# ── PO12.202: every dispatch reason is reached ────────────────────────────────────────────────

REASONS = (
    ("forced_error", dp.ERROR), ("disabled_by_env", dp.FALLBACK),
    (r"cuda_runtime_error_\d+", dp.FALLBACK), ("cuda_runtime_no_device", dp.FALLBACK),
    ("cuda_runtime_not_built", dp.FALLBACK), ("cuda_native_cublas", dp.OK),
    ("cuda_native_cublas_graph_capture", dp.OK), ("cuda_native_cublas_graph_replay", dp.OK),
    ("cuda_native_half", dp.OK), ("cuda_native_half_graph_capture", dp.OK),
    ("cuda_native_half_graph_replay", dp.OK), ("cuda_promoted_gemm:.+", dp.OK),
    ("cuda_promoted_gemm_graph:.+", dp.OK), ("cuda_cutlass_bf16:.+", dp.OK),
    ("cuda_cutlass_bf16_graph:.+", dp.OK), ("cuda_native_simulated", dp.OK),
    ("cuda_forced_fallback", dp.FALLBACK), ("cuda_native_unsupported_fallback", dp.FALLBACK),
    ("cuda_native_failed_fallback", dp.FALLBACK), ("cpu_fallback_failed", dp.ERROR),
    (r"[^;]+(;[^;]+)?;cpu_fallback_failed", dp.ERROR))
"""Every reason a dispatch ends in (as a pattern) and its status, from cuda_backend.c."""


def _decide(args: dict):
    a = dict(args)
    env = dp.Env(**a.pop("env", None) or {})
    named = {"runtime": dp.RUNTIME, "dtype": dp.DTYPE}
    s = dp.Situation(**{k: named[k].names.index(v) if k in named else v for k, v in a.items()})
    return dp.dispatch(env, s)


def _all_reached(_none) -> None:
    got = [_decide(a) for a in dp.dispatch_edges()]
    assert all(len(d.reason.encode()) <= dp.REASON_MAX for d in got)
    for pattern, status in REASONS:
        hits = [d for d in got if re.fullmatch(pattern, d.reason)]
        assert hits, f"no edge reaches {pattern}"
        assert all(d.status == status for d in hits), (pattern, hits)


def _some_reason(args: dict) -> None:
    a = {**args, "runtime": dp.RUNTIME.names[args["runtime"]],
         "dtype": dp.DTYPE.names[args["dtype"]]}
    d = _decide(a)
    assert len(d.reason.encode()) <= dp.REASON_MAX
    assert any(re.fullmatch(p, d.reason) and d.status == s for p, s in REASONS), d
    assert d.fallback_to_cpu == (d.status == dp.FALLBACK), d


@property_obligation(
    "PO12.202",
    "Every reason string the dispatch can end in (21 forms) is reached by one of the op's "
    "edge vectors with its status (ok, fallback or error); on any input the reason is one of "
    "those forms with its status, at most 127 bytes, and the CPU fallback flag is set exactly "
    "on FALLBACK.",
    covers=("pyc.dispatch",),
    subject=dp.dispatch,
    mutants=(
        Mutant.edit("unsupported as failed", "no unsupported reason", dp.dispatch,
                    "elif available and not s.native_executable:", "elif False:"),
        Mutant.edit("forced fallback last", "force_fallback reads as availability",
                    dp.dispatch, "if env.force_fallback:  # 6.", "if False:  # 6."),
        Mutant.edit("replay never named", "a replayed graph named a capture", dp.native,
                    'if s.native_graph == "replayed"', 'if False'),
        Mutant.edit("simulated before native", "no simulated path", dp.dispatch,
                    "if env.simulate_available and s.simulated_ok:", "if False:"),
        Mutant.edit("no clip", "reasons unclipped", dp.clip,
                    "reason.encode()[:REASON_MAX]", "reason.encode()"),
    ),
)
def every_reason_reached(_subject):
    return [Property("edge vectors reach every reason", _all_reached, cases=lambda: [None]),
            Property("any decision", _some_reason, strategy=dp.dispatch_domain)]


# ── PO12.203: min-compaction ──────────────────────────────────────────────────────────────────


def _reads(line: str) -> at.Entry | None:
    """A generated line restated: op|b|s<i>|<ms> with a positive decimal ms."""
    m = re.fullmatch(r"(op)\|(\d)\|(s\d+)\|([0-9.]+)", line)
    if not m or not float(m.group(4)) > 0.0:
        return None
    return at.Entry(m.group(1), int(m.group(2)), m.group(3), float(m.group(4)))


def _compaction(lines: list[str]) -> None:
    text = "".join(x + "\n" for x in lines)
    out = at.compact(text)
    parsed = [e for x in lines if (e := _reads(x)) is not None]
    keys = list(dict.fromkeys(e.key for e in parsed))[:at.DB_ENTRY_MAX]
    assert [e.key for e in out] == keys
    for e in out:
        assert e.best_ms == min(p.best_ms for p in parsed if p.key == e.key), e
    again = at.persist(at.persist(text, None), None)
    assert again == at.persist(text, None)
    if out:
        assert at.compact(at.persist(text, None)) == [
            at.Entry(e.op, e.backend, e.symbol, float(f"{e.best_ms:.6f}")) for e in out]


def _db_lines() -> st.SearchStrategy:
    line = st.builds(lambda i, b, ms: f"op|{b}|s{i}|{ms}", st.integers(0, 700),
                     st.integers(0, 1), st.sampled_from(("0.5", "0.25", "1", "-1", "0", "x")))
    return st.lists(line | st.sampled_from(("", "junk", "op|0|s1|0.125")), max_size=900)


@property_obligation(
    "PO12.203",
    "Compacting an autotune database keeps one entry per (op, backend, symbol) that reads, in "
    "first-seen order, at most 512 (later new keys dropped), each with its least time; "
    "compaction is idempotent, and a compacted file reads back to the same entries at six "
    "decimals.",
    covers=("pyc.autotune.db",),
    subject=at.compact,
    mutants=(
        Mutant.edit("max, not min", "keeps the largest time", at.compact,
                    "e.best_ms < entries[i].best_ms", "e.best_ms > entries[i].best_ms"),
        Mutant.edit("cap 513", "one more key kept", at.compact,
                    "len(entries) < DB_ENTRY_MAX", "len(entries) <= DB_ENTRY_MAX"),
        Mutant.edit("zero times read", "a time of 0 is kept", at.parse_line,
                    "t <= 0.0", "t < 0.0"),
        Mutant.edit("last wins", "a later line replaces whatever its time", at.compact,
                    "if e.best_ms < entries[i].best_ms:", "if True:"),
    ),
)
def compaction_keeps_minima(_subject):
    wide = [f"op|0|s{i}|{1 + i % 3}" for i in range(530)] + ["op|0|s3|0.5", "op|0|s600|0.5"]
    return [Property("530 keys", _compaction, cases=lambda: [wide]),
            Property("random databases", _compaction, strategy=_db_lines, examples=150)]


# ── PO12.204: workload family rules ───────────────────────────────────────────────────────────


def restated_family(m: int, n: int, k: int) -> int:
    """The facts sheet's first matching rule, in exact arithmetic."""
    if 0 in (m, n, k):
        return pk.ANY
    if max(m, n) <= 512 or m * n * k <= 512 ** 3:
        return pk.SMALL
    if m >= 3 * n:
        return pk.TALL_SKINNY
    if n >= 3 * m:
        return pk.WIDE_SKINNY
    if min(m, n) >= 1024 and max(m, n) <= 2 * min(m, n) and k >= 512:
        return pk.LARGE_SQUARE
    return pk.SQUARE


DIMS = (0, 1, 2, 256, 511, 512, 513, 1000, 1023, 1024, 1025, 1536, 2047, 2048, 2049, 3072,
        3073, 4096, 2**40, 2**63)


def _family(case: tuple[int, int, int]) -> None:
    assert pk.workload_family(*case) == restated_family(*case), case


@property_obligation(
    "PO12.204",
    "The workload family of (m, n, k) is the first of the facts sheet's rules that holds "
    "(small, tall, wide, large square, square; any with a zero dimension), in exact "
    "arithmetic, on every triple of 20 boundary dimensions and on random ones.",
    covers=("pyc.workload_family",),
    subject=pk.workload_family,
    mutants=(
        Mutant.edit("small strict", "max < 512", pk.workload_family,
                    "hi <= SMALL_MAX_DIM", "hi < SMALL_MAX_DIM"),
        Mutant.edit("ratio 2", "skinny at twice", pk.workload_family,
                    "m >= wrap(n * SKINNY_RATIO)", "m >= wrap(n * 2)"),
        Mutant.edit("large k strict", "k > 512", pk.workload_family,
                    "k >= LARGE_MIN_K", "k > LARGE_MIN_K"),
        Mutant.edit("wrapping", "the seed's 64-bit products", pk.workload_family,
                    "if E12_2 in errata else", "if True else"),
    ),
)
def family_rules(_subject):
    triples = list(itertools.product(DIMS, repeat=3))
    return [Property("boundary triples", _family, cases=lambda: triples),
            Property("random triples", _family, strategy=lambda: st.tuples(
                *[st.integers(0, 2**64 - 1) | st.integers(0, 5000)] * 3), examples=300)]


# ── PO12.205: the decision log reads back ─────────────────────────────────────────────────────


def _log(case: tuple[int, list[str]]) -> None:
    kind, values = case
    text = dl.render(kind, values)
    got = dl.parse(text)
    assert got.kind == kind
    pairs = list(zip(dl.KEYS[kind], values, strict=True))
    if not got.truncated:
        assert list(got.entries) == pairs, (got, pairs)
    else:
        assert list(got.entries[:-1]) == pairs[:len(got.entries) - 1]
        key, value = got.entries[-1]
        assert key == pairs[len(got.entries) - 1][0] and value.startswith(
            pairs[len(got.entries) - 1][1][:len(value)])


def _logs() -> st.SearchStrategy:
    value = st.text(st.sampled_from("0123456789.abc _:;@,"), max_size=80).filter(
        lambda v: "=" not in v)
    return st.sampled_from((dl.COMPILE, dl.RUN)).flatmap(lambda kind: st.tuples(
        st.just(kind), st.lists(value, min_size=len(dl.KEYS[kind]),
                                max_size=len(dl.KEYS[kind]))))


@property_obligation(
    "PO12.205",
    "A decision log PyC writes reads back to its (key, value) pairs in key order, of the "
    "right kind (values may hold spaces); a log cut at 2047 bytes reads back to a prefix of "
    "them, the last value possibly short, and says it may be cut.",
    covers=("pyc.decision_log.parse",),
    subject=dl.parse,
    mutants=(
        Mutant.edit("kind by first key", "every log read as a compile log", dl.parse,
                    'RUN if " shadow_mode=" in log else COMPILE', "COMPILE"),
        Mutant.edit("value to the first space", "values end at a space", dl.parse,
                    'at = log.find(f" {nxt}=", pos)', 'at = log.find(" ", pos)'),
        Mutant.edit("cut never flagged", "a full buffer is not flagged", dl.parse,
                    "cut = len(log.encode()) >= LOG_MAX", "cut = False"),
    ),
)
def log_reads_back(_subject):
    return [Property("rendered logs", _log, strategy=_logs, examples=300),
            Property("edge logs", lambda a: dl.parse(a["log"]), cases=dl.log_edges)]


# ── PO12.206: what a run records ──────────────────────────────────────────────────────────────


def _round_robin(n: int) -> None:
    names = [f"k{(7 * i) % n:02d}" for i in range(n)]  # registered out of symbol order
    cat = [pk.Kernel(s) for s in names]
    first = sorted(names)[:16]
    seen = [at.recorded(cat, run, 5.0, 2.5, pk.BALANCED, 0.0) for run in range(1, 2 * len(
        first) + 1)]
    assert [s for s, _ in seen] == first * 2, (n, seen)
    assert all(ms == 2.5 for _, ms in seen)
    assert at.recorded(cat, 0, 5.0, 2.5, pk.BALANCED, 0.0)[0] == first[0]


@property_obligation(
    "PO12.206",
    "With autotune on, runs 1, 2, ... record the candidates in symbol order (at most the "
    "first 16 by symbol), one per run, cycling; run 0 records the first; each records the "
    "candidate's measured time (not an estimate from the run, E12.1).",
    covers=("pyc.autotune.record",),
    subject=at.recorded,
    mutants=(
        Mutant.edit("off by one", "run 1 takes the second candidate", at.candidate_index,
                    "(run_count - 1) % count", "run_count % count"),
        Mutant.edit("registration order", "candidates not sorted by symbol", at.recorded,
                    "collect_order(catalog)[:CANDIDATE_MAX]",
                    "list(range(len(catalog)))[:CANDIDATE_MAX]"),
        Mutant.edit("no candidate cap", "every kernel is a candidate", at.recorded,
                    "collect_order(catalog)[:CANDIDATE_MAX]", "collect_order(catalog)"),
        Mutant.edit("estimate", "the seed's estimate always", at.recorded,
                    "if E12_1 in errata:", "if True:"),
    ),
)
def round_robin_measures(_subject):
    return [Property("catalogs of 1 to 20 kernels", _round_robin, cases=lambda: range(1, 21))]
