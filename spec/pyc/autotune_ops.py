"""Chapter 12 ops of PyC's autotune: the database (persist, compact, load) and what one run
records; errata E12.1 (simulated timings) and E12.3 (nan, inf and hex floats in the DB)."""

from __future__ import annotations

import math

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import I32, U64, Field, List, Optional, Utf8, record
from ..core.strategies import st
from .autotune import (
    E12_1,
    E12_3,
    E12_5,
    E12_6,
    Entry,
    compact,
    format_line,
    load,
    persist,
    recorded,
)
from .kernel_ops import KERNEL, check_select, kernels, to_kernel
from .kernels import BACKEND, KERNEL_MAX, MODE, OP_KEY_MAX, SYMBOL_MAX, default_catalog
from .wire import F64, PYC_SEED, bits, f64, f64_strategy, finite, non_negative

DB_TEXT_MAX = 1 << 20
"""Characters of database text one request may carry: the spec's own bound."""


# ── pyc.autotune.db ───────────────────────────────────────────────────────────────────────────

ENTRY = record(op=Field(Utf8(c_string=True), "op key, 1 to 63 bytes, no | or newline"),
               backend=Field(I32, "the backend ordinal as the line writes it"),
               symbol=Field(Utf8(c_string=True), "symbol, 1 to 127 bytes, no | or newline"),
               best_ms=Field(F64, "best time in ms (float64 bits), > 0"))
LOAD_KEY = record(op=Utf8(c_string=True), backend=I32)


def _name(text: str, limit: int, path: str) -> None:
    if not 0 < len(text) <= limit or "|" in text or "\n" in text:
        raise InvalidInput(f"{path}: must be 1 to {limit} characters with no | or newline")


def check_db(args: dict) -> None:
    """The database is ASCII; a record's names fit their fields and its time is positive."""
    if not args["db"].isascii():
        raise InvalidInput("args.db: the database is ASCII text")
    if len(args["db"]) > DB_TEXT_MAX:
        raise InvalidInput(f"args.db: longer than {DB_TEXT_MAX} characters")
    r = args["record"]
    if r is not None:
        _name(r["op"], OP_KEY_MAX, "args.record.op")
        _name(r["symbol"], SYMBOL_MAX, "args.record.symbol")
        if not r["op"].isascii() or not r["symbol"].isascii():
            raise InvalidInput("args.record: names are ASCII")
        if not finite(r["best_ms"], "args.record.best_ms") > 0.0:
            raise InvalidInput("args.record.best_ms: must be positive")


def _entry(e: Entry) -> dict:
    return {"op": e.op, "backend": e.backend, "symbol": e.symbol, "best_ms": bits(e.best_ms)}


def db_op(db: str, record: dict | None, load_key: dict | None,
          errata: frozenset[str] = NO_ERRATA) -> dict:
    rec = None if record is None else Entry(record["op"], record["backend"], record["symbol"],
                                            f64(record["best_ms"]))
    after = persist(db, rec, errata)
    applied = [] if load_key is None else load(after, load_key["op"], load_key["backend"],
                                               errata)
    return {"db": after, "entries": [_entry(e) for e in compact(after, errata)],
            "loaded": [_entry(e) for e in applied]}


def db_op_wire(db: str, record: dict | None, load: dict | None,
               errata: frozenset[str] = NO_ERRATA) -> dict:
    return db_op(db, record, load, errata)


NAN_DB = "matmul_fused|0|k|nan\nmatmul_fused|0|k|0.5\n"

erratum(
    E12_3, "The autotune database reads nan, inf and hexadecimal times",
    seed=PYC_SEED, location="src/compiler/compiler_api.c parse_autotune_line",
    ops=("pyc.autotune.db",),
    witness={"args": {"db": NAN_DB},
             "spec": {"db": "matmul_fused|0|k|0.500000\n"},
             "seed": {"db": "matmul_fused|0|k|nan\n"}},
    flag="result",
    detail="The time is read with %lf, which takes nan, inf and 0x1p-3 as well as decimals, "
           "and only times <= 0 are refused. nan is not <= 0, so a nan line is kept; as "
           "nothing is less than nan, min-compaction then keeps nan for that key forever and "
           "drops every real time after it, and a load hands nan to the registry (a nan "
           "score, which no comparison selects or rejects). The spec reads decimal times only.",
)

erratum(
    E12_5, "A backend ordinal past int in the autotune database wraps",
    seed=PYC_SEED, location="src/compiler/compiler_api.c parse_autotune_line",
    ops=("pyc.autotune.db",),
    witness={"args": {"db": "op|9999999999|s|1\n"},
             "spec": {"db": "op|9999999999|s|1\n", "entries": [], "loaded": []},
             "seed": {"db": "op|1410065407|s|1.000000\n",
                      "entries": [{"op": "op", "backend": 1410065407, "symbol": "s",
                                   "best_ms": "0x3ff0000000000000"}], "loaded": []}},
    flag="result",
    detail="The backend is read with %d, and glibc stores what strtol gives, saturated at the "
           "64-bit bounds, cut to an int: 9999999999 reads as 1410065407, "
           "99999999999999999999 as -1, so a corrupt line is kept under another backend and "
           "compaction rewrites it so. The spec skips a line whose backend is not an int; "
           "under E12.5 it takes the wrapped value.",
)

_LINES = ("matmul_fused|0|matmul_cpu_ref|0.500000", "matmul_fused|0|matmul_cpu_ref|0.25",
          "matmul_fused|0|matmul_cpu_tuned|1.5", "matmul_fused|1|matmul_cuda_tuned|0.1",
          "matmul_fused|0|matmul_cpu_ref|-1", "matmul_fused|0|x|0", "garbage", "",
          "matmul_fused| 0|matmul_cpu_ref| 0.3 trailing", "matmul_fused|0|k|nan",
          "matmul_fused|0|k|inf", "other|0|s|2e-3", "matmul_fused|0|s|0x1p-3",
          "a" * 64 + "|0|s|1", "op|0|" + "s" * 128 + "|1", "op|9999999999|s|1")


def db_domain() -> st.SearchStrategy:
    text = st.lists(st.sampled_from(_LINES) | st.builds(
        lambda i, ms: f"op{i}|0|s{i}|{ms}", st.integers(0, 600), st.floats(0, 5)), max_size=24)
    rec = st.none() | st.fixed_dictionaries({
        "op": st.sampled_from(("matmul_fused", "op1")), "backend": st.integers(0, 1),
        "symbol": st.sampled_from(("matmul_cpu_ref", "matmul_cpu_tuned", "s1")),
        "best_ms": f64_strategy(1e-7, 50.0)})
    key = st.none() | st.just({"op": "matmul_fused", "backend": 0})
    return st.fixed_dictionaries({"db": text.map(lambda ls: "".join(x + "\n" for x in ls)),
                                  "record": rec, "load": key})


def db_edges() -> list[dict]:
    """Empty, the witness, min-compaction, the 512 cap, unreadable lines, long lines."""
    many = "".join(f"op|0|s{i}|1.0\n" for i in range(520))
    rec = {"op": "matmul_fused", "backend": 0, "symbol": "matmul_cpu_tuned",
           "best_ms": f"0x{bits(0.75):016x}"}
    return [
        {"db": ""}, {"db": "", "record": rec}, {"db": NAN_DB, "load": {"op": "matmul_fused",
                                                                        "backend": 0}},
        {"db": "".join(x + "\n" for x in _LINES), "record": rec,
         "load": {"op": "matmul_fused", "backend": 0}},
        {"db": many}, {"db": many, "record": rec}, {"db": "garbage\nmore garbage"},
        {"db": "op|0|s|" + "1" * 600 + "\n"},
        {"db": "op|0|s|0.4", "record": {**rec, "best_ms": f"0x{bits(1e-7):016x}"}},
        {"db": "matmul_fused|0|k|inf\nmatmul_fused|0|k|0x1p-3\n"},
    ]


declare(
    "pyc.autotune.db", chapter=12,
    summary="PyC's autotune database: append a record (when given), min-compact to one line "
            "per (op, backend, symbol) in first-seen order, at most 512, and the lines a load "
            "of (op, backend) applies.",
    args=record(db=Field(Utf8(), "the database text before (ASCII)"),
                record=Field(Optional(ENTRY, {}), "a result to persist; null: compact only",
                             None),
                load=Field(Optional(LOAD_KEY, {}), "an (op, backend) to load; null: none",
                           None)),
    result=record(db=Field(Utf8(), "the database text after"),
                  entries=Field(List(ENTRY), "its entries in file order"),
                  loaded=Field(List(ENTRY), "the lines the load applies, in file order")),
    spec=(persist, compact, load), errata=(E12_3, E12_5), check=check_db, domain=db_domain,
    invalid=(
        InvalidCase("a record with a | in its symbol", lambda: st.just(
            {"db": "", "record": {"op": "m", "backend": 0, "symbol": "a|b",
                                  "best_ms": "0x3ff0000000000000"}})),
        InvalidCase("a record with time 0", lambda: st.just(
            {"db": "", "record": {"op": "m", "backend": 0, "symbol": "s", "best_ms": "0x0"}})),
        InvalidCase("non-ASCII text", lambda: st.just({"db": "op|0|s\u00e9|1\n"})),
        InvalidCase("a database as a list", lambda: st.just({"db": ["op|0|s|1"]}),
                    "bad_request"),
    ),
    edges=db_edges,
    not_applicable={"numba": "text parsing of a small file, once a run: no numeric core",
                    "cupy": "each line's fate depends on the keys before it"},
)


# ── pyc.autotune.record ───────────────────────────────────────────────────────────────────────


def check_record(args: dict) -> None:
    check_select(args | {"context": None})
    non_negative(args["run_ms"], "args.run_ms")
    non_negative(args["measured_ms"], "args.measured_ms")
    non_negative(args["pressure_score"], "args.pressure_score")


def record_op(backend: int, mode: int, catalog: list[dict] | None, run_count: int,
              run_ms: int, measured_ms: int, pressure_score: int,
              errata: frozenset[str] = NO_ERRATA) -> dict:
    ks = default_catalog(backend) if catalog is None else tuple(map(to_kernel, catalog))
    symbol, ms = recorded(ks, run_count, f64(run_ms), f64(measured_ms), mode,
                          f64(pressure_score), errata)
    line = format_line(Entry("matmul_fused", backend, symbol, ms)) if ks and \
        not math.isnan(ms) else ""  # an empty registry: no kernel to update, nothing persisted
    return {"symbol": symbol, "best_ms": bits(ms), "line": line}


def _hex(x: float) -> str:
    return f"0x{bits(x):016x}"


RECORD_WITNESS = {"run_count": 1, "run_ms": _hex(10.0), "measured_ms": _hex(3.0)}

erratum(
    E12_1, "Autotune records an estimate from the whole run, not a measurement",
    seed=PYC_SEED, location="src/compiler/compiler_api.c pyc_run_model (autotune), "
                            "autotune_estimate_candidate_ms",
    ops=("pyc.autotune.record",),
    witness={"args": RECORD_WITNESS,
             "spec": {"symbol": "matmul_cpu_ref", "best_ms": "0x4008000000000000",
                      "line": "matmul_fused|0|matmul_cpu_ref|3.000000\n"},
             "seed": {"symbol": "matmul_cpu_ref", "best_ms": "0x4024b851eb851eb8",
                      "line": "matmul_fused|0|matmul_cpu_ref|10.360000\n"}},
    flag="result",
    detail="The round-robin candidate is never run on its own: PyC takes the whole run's wall "
           "time (whichever kernel ran) and scales it by 1 + 0.08(1 - occupancy) + "
           "0.005 · reg_class · pressure (+ shared memory / 128 KiB under MEMORY_FIRST), "
           "times 0.97 for a tensor-core kernel, then stores that in the registry and the "
           "database as the candidate's best time. Selection then ranks kernels by invented "
           "times. The spec records the candidate's own measured time.",
)


LATE_KERNEL = {**RECORD_WITNESS, "catalog": [{"symbol": f"k{i:02d}"} for i in range(16)]
               + [{"symbol": "a"}]}
"""Seventeen kernels, the last registered first by symbol (E12.6)."""

erratum(
    E12_6, "The autotune round robin takes the first 16 kernels registered, then sorts them",
    seed=PYC_SEED, location="src/compiler/runtime/kernel_registry.c pyc_kernel_collect",
    ops=("pyc.autotune.record",),
    witness={"args": LATE_KERNEL,
             "spec": {"symbol": "a", "best_ms": "0x4008000000000000",
                      "line": "matmul_fused|0|a|3.000000\n"},
             "seed": {"symbol": "k00", "best_ms": "0x402599999999999a",
                      "line": "matmul_fused|0|k00|10.800000\n"}},
    flag="result",
    detail="pyc_kernel_collect walks the registry in slot order, insertion-sorts what it takes "
           "by symbol and stops once its 16 places are full, so the candidates are the first "
           "16 kernels registered, in symbol order, not the 16 first by symbol: a 17th kernel "
           "is never autotuned however its symbol sorts. The spec takes the first 16 of all "
           "the kernels in symbol order.",
)


def record_domain() -> st.SearchStrategy:
    return st.fixed_dictionaries({
        "backend": st.integers(0, 1), "mode": st.integers(0, 2),
        "catalog": st.none() | st.lists(kernels(), max_size=18),
        "run_count": st.integers(0, 40) | st.integers(0, 2**64 - 1),
        "run_ms": f64_strategy(0.0, 100.0), "measured_ms": f64_strategy(0.0, 100.0),
        "pressure_score": f64_strategy(0.0, 2.0)})


declare(
    "pyc.autotune.record", chapter=12,
    summary="What one successful run with autotune on records: the round-robin candidate "
            "(by symbol) and its measured time, and the database line.",
    args=record(
        backend=Field(BACKEND, "the default catalog's backend", 0),
        mode=Field(MODE, "the objective mode", 0),
        catalog=Field(Optional(List(KERNEL, KERNEL_MAX), []), "kernels in registration "
                      "order; null: PyC's default catalog", None),
        run_count=Field(U64, "runs so far, this one included"),
        run_ms=Field(F64, "the run's wall time (float64 bits)"),
        measured_ms=Field(F64, "the candidate's own measured time (float64 bits)"),
        pressure_score=Field(F64, "the plan's pressure score", 0)),
    result=record(symbol=Field(Utf8(), "the candidate recorded"),
                  best_ms=Field(F64, "the time recorded"),
                  line=Field(Utf8(), "the database line appended")),
    spec=(recorded,), errata=(E12_1, E12_6), check=check_record, domain=record_domain,
    invalid=(
        InvalidCase("a negative run time", lambda: st.just(
            {"run_count": 1, "run_ms": _hex(-1.0), "measured_ms": _hex(1.0)})),
        InvalidCase("an infinite measurement", lambda: st.just(
            {"run_count": 1, "run_ms": _hex(1.0), "measured_ms": "0x7ff0000000000000"})),
        InvalidCase("a negative run count", lambda: st.just(
            {"run_count": -1, "run_ms": _hex(1.0), "measured_ms": _hex(1.0)})),
    ),
    edges=lambda: [
        RECORD_WITNESS, {**RECORD_WITNESS, "run_count": 2}, {**RECORD_WITNESS, "run_count": 0},
        {**RECORD_WITNESS, "backend": "cuda", "mode": "memory_first", "run_count": 2,
         "pressure_score": _hex(0.5)},
        {**RECORD_WITNESS, "catalog": []}, {**RECORD_WITNESS, "run_ms": _hex(0.0),
                                            "measured_ms": _hex(0.0)},
        {**RECORD_WITNESS, "catalog": [{"symbol": f"k{i:02d}"} for i in range(20)],
         "run_count": 17}, LATE_KERNEL],
    not_applicable={"numba": "one round-robin pick and a few multiplications a run",
                    "cupy": "one candidate per run: nothing to spread over a device"},
)
