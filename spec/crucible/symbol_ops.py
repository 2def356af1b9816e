"""Chapter 14: the symbol table's op. `symbol.table` runs a list of SymbolTable calls on a
fresh table and reports what each call returned and every entry at the end (its fields, its
32 bytes and the flag and sign queries)."""

from __future__ import annotations

from ..core.errata import NO_ERRATA, SEEDS, erratum
from ..core.registry import InvalidCase, declare
from ..core.schema import BOOL, BYTES, I64, U16, U32, Enum, Field, List, record
from ..core.strategies import st
from ..pyc.wire import Named
from .symbol_table import (
    E14_701,
    IS_SIZE_LIKE,
    SymbolEntry,
    SymKind,
    add,
    as_double,
    bound_key,
    default_range,
    entry_bytes,
    entry_of,
    is_nonnegative,
    is_positive,
    range_contains,
    set_hint,
    tighten_range,
)

E14_702 = "E14.702"
MAX_ACTIONS = 256
"""The spec's own bound on the calls one request makes."""
CALLS = ("add", "set_hint", "set_hint_float", "tighten_range", "set_size_like",
         "range_contains")
ADD, SET_HINT, SET_HINT_FLOAT, TIGHTEN, SIZE_LIKE, CONTAINS = range(len(CALLS))

ACTION = record(
    call=Field(Named(CALLS, "SymbolTable call"), "the call"),
    id=Field(U32, "the symbol (every call but add)", 0),
    kind=Field(Enum(SymKind), "add: the SymKind", 0),
    expr_flags=Field(U16, "add: the ExprFlags to stamp", 0),
    backed=Field(BOOL, "add: is_backed", True),
    value=Field(I64, "set_hint: the hint; set_hint_float: the double's bits", 0),
    lo=Field(I64, "tighten_range, range_contains: the lower bound", 0),
    hi=Field(I64, "tighten_range, range_contains: the upper bound", 0),
)
ENTRY = record(
    hint=I64, range_lower=I64, range_upper=I64, kind=Field(Enum(SymKind), "SymKind"),
    sym_flags=Field(U16, "SymFlags"), expr_flags=U16,
    bytes=Field(BYTES, "the 32-byte SymbolEntry"),
    has_hint=BOOL, is_size_like=BOOL, is_backed=BOOL, is_positive=BOOL, is_nonnegative=BOOL)


def run_call(table: list[SymbolEntry], i: int, a: dict,
             errata: frozenset[str] = NO_ERRATA) -> int:
    """One call; what it returns: add the new id, range_contains 1 or 0, the others -1."""
    if a["call"] == ADD:
        return add(table, SymKind(a["kind"]), a["expr_flags"], a["backed"])
    e = entry_of(table, a["id"], f"args.calls[{i}].id")
    if a["call"] in (SET_HINT, SET_HINT_FLOAT):
        set_hint(e, a["value"])
    elif a["call"] == TIGHTEN:
        tighten_range(e, a["lo"], a["hi"], errata)
    elif a["call"] == SIZE_LIKE:
        e.sym_flags |= IS_SIZE_LIKE
    else:
        return int(range_contains(e, a["lo"], a["hi"]))
    return -1


def entry_wire(e: SymbolEntry) -> dict:
    return {"hint": e.hint, "range_lower": e.range_lower, "range_upper": e.range_upper,
            "kind": e.kind, "sym_flags": e.sym_flags, "expr_flags": e.expr_flags,
            "bytes": entry_bytes(e), "has_hint": bool(e.sym_flags & 2),
            "is_size_like": bool(e.sym_flags & 1), "is_backed": bool(e.sym_flags & 4),
            "is_positive": is_positive(e), "is_nonnegative": is_nonnegative(e)}


def table_op(calls: list[dict], errata: frozenset[str] = NO_ERRATA) -> dict:
    table: list[SymbolEntry] = []
    returned = [run_call(table, i, a, errata) for i, a in enumerate(calls)]
    return {"returned": returned, "entries": [entry_wire(e) for e in table]}


def call(name: str, **kw) -> dict:
    return {"call": name} | kw


MINUS_ONE, PLUS_INF = hex(0xBFF0000000000000), hex(0x7FF0000000000000)
FLOAT_TIGHTEN = [call("add", kind=1), call("tighten_range", id=0, lo=MINUS_ONE, hi=PLUS_INF)]
"""A FLOAT symbol narrowed to [-1.0, +inf]."""


def table_edges() -> list[dict]:
    every_kind = [call("add", kind=k, expr_flags=0x10 * k, backed=k % 2 == 0) for k in range(4)]
    return [{"calls": []}, {"calls": every_kind},
            {"calls": [*every_kind, call("set_hint", id=0, value=64),
                       call("set_hint_float", id=1, value=hex(0x3FF8000000000000)),
                       call("set_size_like", id=2), call("tighten_range", id=0, lo=1, hi=8),
                       call("tighten_range", id=0, lo=4, hi=100),
                       call("range_contains", id=0, lo=4, hi=8),
                       call("range_contains", id=2, lo=0, hi=10)]},
            {"calls": FLOAT_TIGHTEN},
            {"calls": [call("add", kind=2), call("tighten_range", id=0, lo=-5, hi=-1)]}]


def table_domain() -> st.SearchStrategy:
    word = st.sampled_from([0, 1, 2, -1, 2**63 - 1, -2**63, -2**63 + 1, 0xBFF0000000000000 -
                            2**64, 0x3FF0000000000000]) | st.integers(-2**63, 2**63 - 1)
    one = st.fixed_dictionaries({"call": st.integers(0, len(CALLS) - 1), "id": st.integers(0, 3),
                                 "kind": st.integers(0, 3), "expr_flags": st.integers(0, 0xFFFF),
                                 "backed": st.booleans(), "value": word, "lo": word, "hi": word})
    adds = [{"call": ADD, "id": 0, "kind": k, "expr_flags": 0, "backed": True, "value": 0,
             "lo": 0, "hi": 0} for k in range(4)]
    return st.lists(one, max_size=24).map(lambda cs: {"calls": adds + cs})


def _float_entry(lower_hex: str, lower: int) -> dict:
    """The witness's FLOAT entry on the wire: backed, no hint, [lower, +inf]."""
    return {"hint": -2**63, "range_lower": lower, "range_upper": 0x7FF0000000000000, "kind": 1,
            "sym_flags": 4, "expr_flags": 0,
            "bytes": "0000000000000080" + lower_hex + "000000000000f07f" + "0104000000000000",
            "has_hint": False, "is_size_like": False, "is_backed": True, "is_positive": False,
            "is_nonnegative": False}


declare(
    "symbol.table", chapter=14,
    summary="Run SymbolTable calls (add, set_hint, set_hint_float, tighten_range, "
            "set_size_like, range_contains) on a fresh table: what each returned, and every "
            "entry with its 32 bytes and its flag and sign queries.",
    args=record(calls=Field(List(ACTION, MAX_ACTIONS), "the calls, in order")),
    result=record(returned=Field(List(I64), "add: the id; range_contains: 1 or 0; else -1"),
                  entries=Field(List(ENTRY), "every entry, by id")),
    spec=(table_op, run_call, add, default_range, set_hint, tighten_range, bound_key,
          as_double, range_contains, is_positive, is_nonnegative, entry_bytes),
    errata=(E14_701,), domain=table_domain, edges=table_edges,
    invalid=(InvalidCase("a call on a symbol never added", lambda: st.just(
                 {"calls": [call("set_hint", id=0, value=1)]})),
             InvalidCase("an unknown SymKind", lambda: st.just(
                 {"calls": [call("add", kind=4)]})),
             InvalidCase("an unknown call", lambda: st.just({"calls": [{"call": "remove"}]}),
                         "bad_request")),
    not_applicable={"numba": "a few field updates per call: no numeric core",
                    "cupy": "a few field updates per call: no numeric core"},
)

erratum(
    E14_701, "tighten_range orders a float symbol's bounds as signed integers",
    seed=SEEDS["crucible"], location="include/crucible/SymbolTable.h SymbolTable::tighten_range",
    ops=("symbol.table",),
    witness={"args": {"calls": FLOAT_TIGHTEN},
             "spec": {"entries": [_float_entry("000000000000f0bf", -4616189618054758400)]},
             "seed": {"entries": [_float_entry("000000000000f0ff", -4503599627370496)]}},
    flag="result",
    detail="A FLOAT or UNBACKED_FLOAT symbol keeps its range as the bit patterns of doubles "
           "(add stores -inf and +inf so), but tighten_range compares them as signed 64-bit "
           "integers. Every negative double's pattern is a negative integer ordered the wrong "
           "way round: tightening [-inf, +inf] to [-1.0, +inf] keeps -inf (0xfff0... is "
           "greater than 0xbff0... as a signed integer); every finite negative double's pattern "
           "is below -inf's, so a float symbol's lower bound never becomes a finite negative "
           "number. The spec compares a float symbol's bounds as doubles.",
)
erratum(
    E14_702, "A SymbolTable call on an id never added indexes past the entries",
    seed=SEEDS["crucible"], location="include/crucible/SymbolTable.h (every call taking an id)",
    ops=("symbol.table",),
    witness={"args": {"calls": [call("set_hint", id=0, value=1)]}},
    flag="ub",
    detail="set_hint, tighten_range, the queries and operator[] index the entry vector with "
           "the id unchecked; an id no add returned reads or writes past its end. The spec "
           "refuses it as invalid input naming the call.",
)
