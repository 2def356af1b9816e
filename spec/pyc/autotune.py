"""Chapter 12: PyC's autotune database (compiler_api.c) and what a run records in it.

The database is a text file of lines `op|backend|symbol|best_ms`: the op key (at most 63
bytes, no `|`), the backend's ordinal in decimal, the symbol (at most 127 bytes, no `|`) and
the best time in milliseconds with six decimals. A line that does not read so, or whose time
is not positive, is skipped. Persisting a result appends its line and then compacts the file
under an exclusive lock on `<db>.lock`: the lines are read in order, each (op, backend,
symbol) keeps its least time at the place it was first seen, at most 512 keys are kept (a
later new key is dropped), and the file is rewritten with one line per key (left as it was
when no line reads). Loading applies the lines whose op and backend match.

With autotune on, each successful run records one candidate (round robin over the catalog in
symbol order, candidate (run_count - 1) mod count). The spec records that candidate's own
measured time. PyC does not measure it (erratum E12.1): it scales the whole run's wall time by
a formula of the candidate's descriptor and records the estimate as if it were a timing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.errata import NO_ERRATA
from .kernels import MEMORY_FIRST, OP_KEY_MAX, SYMBOL_MAX, Kernel, collect_order

E12_1, E12_3, E12_5, E12_6 = "E12.1", "E12.3", "E12.5", "E12.6"
DB_ENTRY_MAX = 512
"""Keys a compacted database keeps (PYC_AUTOTUNE_DB_ENTRY_MAX). Real code: compiler_api.c."""
CANDIDATE_MAX = 16
"""Candidates a run's round robin collects (PYC_AUTOTUNE_CANDIDATE_MAX).
Real code: compiler_api.c."""
LINE_MAX = 511
"""Bytes a read of one line takes at most (fgets into 512 bytes). Real code: compiler_api.c."""
DEFAULT_DB_PATH = "benchmark/benchmarks/results/json/pyc_autotune.db"
"""Where the database lives unless the option or PYC_AUTOTUNE_DB_PATH says otherwise."""
MIN_MS = 0.001
"""The floor of a recorded time. Real code: compiler_api.c (autotune_estimate_candidate_ms)."""
TC_FACTOR = 0.97
"""The seed's estimate of a tensor-core kernel: 3% off. Real code: compiler_api.c."""

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


@dataclass(frozen=True)
class Entry:
    """One database line: (op, backend, symbol) and its best time in ms."""

    op: str
    backend: int
    symbol: str
    best_ms: float

    @property
    def key(self) -> tuple[str, int, str]:
        return self.op, self.backend, self.symbol


def split_lines(text: str) -> list[str]:
    """The pieces a line reader sees: each line through its newline, a longer one in pieces
    of at most 511 characters (the database is ASCII)."""
    out, pos = [], 0
    while pos < len(text):
        end = text.find("\n", pos, pos + LINE_MAX)
        stop = end + 1 if end >= 0 else min(pos + LINE_MAX, len(text))
        out.append(text[pos:stop])
        pos = stop
    return out


def read_ms(text: str, errata: frozenset[str] = NO_ERRATA) -> float | None:
    """The decimal number that starts `text` (after blanks), None when there is none.
    E12.3: the seed's reader also takes nan, inf and hexadecimal floats."""
    text = text.lstrip(" \t\n\r\v\f")
    if E12_3 in errata:
        special = re.match(r"[+-]?(nan|inf)", text, re.IGNORECASE)
        if special:
            return float(special.group(0))
        hexa = re.match(r"[+-]?0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?\d+)?",
                        text.lower())
        if hexa:
            return float.fromhex(hexa.group(0))
    m = _NUMBER.match(text)
    return float(m.group(0)) if m else None


def parse_line(line: str, errata: frozenset[str] = NO_ERRATA) -> Entry | None:
    """The entry a line holds, or None: four `|`-separated fields, a non-empty op of at most
    63 bytes, a decimal backend, a non-empty symbol of at most 127 bytes, and a positive
    decimal time (anything after it is ignored)."""
    fields = line.split("|", 3)
    if len(fields) != 4:
        return None
    op, backend, symbol, ms = fields  # 1. the four fields
    if not 0 < len(op) <= OP_KEY_MAX or not 0 < len(symbol) <= SYMBOL_MAX:
        return None
    b = re.fullmatch(r"\s*([+-]?\d+)", backend)  # 2. the backend ordinal
    if not b:
        return None
    ordinal = int(b.group(1))
    if not -2**31 <= ordinal < 2**31:
        if E12_5 not in errata:
            return None
        ordinal = wrapped_int(ordinal)
    t = read_ms(ms, errata)  # 3. the time: positive and finite (E12.3: nan, inf pass)
    if t is None or t <= 0.0 or (E12_3 not in errata and math.isinf(t)):
        return None
    return Entry(op, ordinal, symbol, t)


def wrapped_int(n: int) -> int:
    """E12.5: what %d stores for a decimal past int: strtol's long, saturated at the 64-bit
    bounds, cut to its low 32 bits as a signed int."""
    n = max(-2**63, min(n, 2**63 - 1)) & 0xFFFF_FFFF
    return n - 2**32 if n >= 2**31 else n


def format_line(e: Entry) -> str:
    """`op|backend|symbol|ms` with the time in six decimals, and a newline."""
    ms = "nan" if math.isnan(e.best_ms) else f"{e.best_ms:.6f}"  # E12.3 only
    return f"{e.op}|{e.backend}|{e.symbol}|{ms}\n"


def compact(text: str, errata: frozenset[str] = NO_ERRATA) -> list[Entry]:
    """The entries of a database: each key's least time, first-seen order, at most 512."""
    entries: list[Entry] = []
    where: dict[tuple, int] = {}
    for line in split_lines(text):
        e = parse_line(line, errata)
        if e is None:
            continue
        if e.key in where:  # 1. a known key keeps its least time
            i = where[e.key]
            if e.best_ms < entries[i].best_ms:
                entries[i] = e
        elif len(entries) < DB_ENTRY_MAX:  # 2. a new key while there is room
            where[e.key] = len(entries)
            entries.append(e)
    return entries


def persist(text: str, record: Entry | None, errata: frozenset[str] = NO_ERRATA) -> str:
    """The file after appending `record` (when given) and compacting."""
    if record is not None:
        text += format_line(record)
    entries = compact(text, errata)
    return "".join(map(format_line, entries)) if entries else text


def load(text: str, op: str, backend: int, errata: frozenset[str] = NO_ERRATA) -> list[Entry]:
    """The lines a load applies to (op, backend), in file order."""
    return [e for line in split_lines(text)
            if (e := parse_line(line, errata)) is not None and (e.op, e.backend) == (op, backend)]


# ── what a run records ────────────────────────────────────────────────────────────────────────


def candidate_index(run_count: int, count: int) -> int:
    """The round robin: candidate (run_count - 1) mod count (0 on the first run)."""
    return 0 if run_count == 0 else (run_count - 1) % count


def estimate_ms(run_ms: float, k: Kernel, mode: int, pressure_score: float) -> float:
    """The seed's estimate of `k`'s time from the run's wall time (E12.1)."""
    occupancy = (1.0 - k.occupancy) * 0.08
    pressure = (float(k.reg_class) * pressure_score) * 0.005 if pressure_score > 0.0 else 0.0
    bias = float(k.shared_mem_bytes) / (128.0 * 1024.0) if mode == MEMORY_FIRST else 0.0
    est = run_ms * (1.0 + occupancy + pressure + bias)
    if k.tensor_core:
        est *= TC_FACTOR
    return est if est > 0.0 else MIN_MS


def recorded(catalog: Sequence[Kernel], run_count: int, run_ms: float, measured_ms: float,
             mode: int, pressure_score: float, errata: frozenset[str] = NO_ERRATA
             ) -> tuple[str, float]:
    """(symbol, ms) a successful run records: the round-robin candidate and its measured time;
    E12.1: the seed's estimate instead. An empty catalog names matmul_cpu_ref at the run's
    time, and nothing is persisted: the registry has no kernel of that symbol to update."""
    base = run_ms if run_ms > 0.0 else MIN_MS  # 1. the run's time, floored
    order = collect_order(catalog)[:CANDIDATE_MAX]  # 2. candidates by symbol
    if E12_6 in errata:  # the first 16 registered, by symbol
        order = collect_order(catalog[:CANDIDATE_MAX])
    if not order:
        return "matmul_cpu_ref", base
    k = catalog[order[candidate_index(run_count, len(order))]]  # 3. the round robin
    if E12_1 in errata:
        return k.symbol, estimate_ms(base, k, mode, pressure_score)
    return k.symbol, measured_ms if measured_ms > 0.0 else MIN_MS
