"""Fuzzing the readers of client input: mutated real inputs, fed to every path that reads them.

Three readers. `crtrace`: mutated .crtrace files (seed runs and synthetic loops; byte flips,
truncations, inserted and deleted bytes, header, op-record and TensorMeta fields set to
boundary values) loaded by the spec loader and the fast loader, decoded by the reference and
numba `crtrace.decode`, and analyzed by both pipelines, under both profiles. `cdag`: mutated
golden .cdag regions and branches through the reference and numba readers. `wire`: mutated
requests of every op (from the conformance vectors) answered by the serve handler in process,
by the reference and numba implementations.

A finding is a crash (an exception that is no SpecError), a disagreement between two paths
(accept/reject, the error, or the content), or an `internal` answer to a request. Inputs come
from a numpy generator seeded by (seed, reader), so a seed gives the same inputs in the same
order; how many are tried depends on the time given.
"""

from __future__ import annotations

import ctypes
import io
import json
import math
import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from functools import cache, partial
from typing import Any

import numpy as np

from .engine import Implementation
from .spec.core.errata import profile_errata
from .spec.core.errors import INTERNAL, SpecError

IMPLS = ("reference", "numba")
SEED_PROFILE = "crucible@8d2680a2"
PROFILES = ("crucible", SEED_PROFILE)
BOUNDARY = (0, 1, 2, 7, 8, 9, 0x7F, 0x80, 0xFF, 0xFFFF, 1 << 27, 1 << 31, 1 << 32, 1 << 62,
            (1 << 63) - 1, 1 << 63, (1 << 64) - 1)
"""Values a mutated field is set to (truncated to its width): the edges of counts, ndim,
bools, enums, sizes and signed and unsigned widths."""
CALL_LIMIT_S = 30.0
"""The default wall seconds past which a single call is a finding (a hang), before scaling by
the machine's load; generous, as a first call may compile numba kernels."""
SHOWN_HEX = 256
"""Reproducers up to this many bytes are printed as hex; longer ones are in the report."""


class Hang(BaseException):
    """A call ran past its limit (a BaseException, so no `except Exception` catches it)."""


class BudgetSpent(BaseException):
    """The reader's time ran out during a call: the run ends there, the call is no finding."""


@dataclass(frozen=True)
class Clock:
    """A run's time rules: a call is a hang past `call_limit` wall seconds; every call ends
    at `deadline` (time.monotonic()), where the run stops."""

    call_limit: float = CALL_LIMIT_S
    deadline: float = math.inf


CLOCK: ContextVar[Clock | None] = ContextVar("CLOCK", default=None)
"""The time rules of the run in progress (run_reader sets them; none: Clock())."""


def load_scaled(limit: float) -> float:
    """`limit` stretched by how oversubscribed the CPUs are (the 1-minute load average over
    the CPU count, when above 1), so a loaded machine does not turn a slow call into a hang."""
    try:
        busy = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:
        busy = 1.0
    return limit * max(1.0, busy)


@dataclass
class Finding:
    """One problem: its kind (crash, disagreement, internal, hang), what happened, and the
    input that shows it (hex of a file or a JSON request), with how it was made."""

    reader: str
    kind: str
    detail: str
    input: str
    made: str


@dataclass
class ReaderRun:
    """One reader's campaign: inputs tried, seconds spent, and its distinct findings."""

    reader: str
    tried: int = 0
    seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    repeats: int = 0


@dataclass(frozen=True)
class Outcome:
    """What a path made of an input: ok with a value, rejected with (code, message), or a
    crash with the exception."""

    kind: str
    value: Any = None

    def signature(self) -> tuple:
        return (self.kind, self.value) if self.kind != "ok" else ("ok",)


@contextmanager
def time_limit() -> Iterator[None]:
    """Interrupt Python code that runs past the call limit (Hang) or the run's deadline
    (BudgetSpent), whichever comes first."""
    clock = CLOCK.get() or Clock()
    limit = load_scaled(clock.call_limit)
    left = clock.deadline - time.monotonic()
    if left <= 0:
        raise BudgetSpent

    def on_alarm(signum, frame) -> None:
        if time.monotonic() >= clock.deadline:
            raise BudgetSpent
        raise Hang(f"no answer in {limit:.3g} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, min(limit, left))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def outcome(fn: Callable[[], Any]) -> Outcome:
    """Run one path on one input."""
    try:
        with time_limit():
            return Outcome("ok", fn())
    except SpecError as e:
        return Outcome("reject", (e.code, e.message))
    except Hang as e:
        return Outcome("hang", str(e))
    except Exception as e:  # what the fuzzer looks for: any other exception is a crash
        alarm = interrupted_by(e)
        if alarm is BudgetSpent:
            raise BudgetSpent from e
        if alarm is Hang:
            return Outcome("hang", str(e))
        return Outcome("crash", f"{type(e).__name__}: {e}"[:300])


def interrupted_by(e: BaseException) -> type[BaseException] | None:
    """BudgetSpent or Hang where `e` only wraps one of them: ctypes reports an exception that
    the alarm raised while it converted a C call's argument (z3's, say) as an ArgumentError
    naming it, so a time limit would read as a crash."""
    seen: BaseException | None = e
    while seen is not None:
        if isinstance(seen, (BudgetSpent, Hang)):
            return type(seen)
        seen = seen.__context__
    return alarm_in(str(e)) if isinstance(e, ctypes.ArgumentError) else None


def alarm_in(message: str) -> type[BaseException] | None:
    """The alarm a wrapped C call's error names ('argument 2: BudgetSpent: '), if any: serve
    answers it as `internal`, ctypes raises it as an ArgumentError."""
    for alarm in (BudgetSpent, Hang):
        if f": {alarm.__name__}:" in message:
            return alarm
    return None


# --- byte mutations -------------------------------------------------------------------------


@dataclass(frozen=True)
class Base:
    """A valid input and the fields worth setting to boundary values: (offset, width, name)."""

    name: str
    data: bytes
    fields: tuple[tuple[int, int, str], ...]


def mutate(base: Base, rng: np.random.Generator) -> tuple[bytes, str]:
    """1-3 of: a byte flip, a truncation, inserted or deleted bytes, a field set to a boundary
    value (twice as likely). Returns the bytes and how they were made."""
    data, steps = bytearray(base.data), []
    for _ in range(int(rng.integers(1, 4))):
        kind = ("flip", "truncate", "insert", "delete", "field", "field")[int(rng.integers(6))]
        at = int(rng.integers(max(len(data), 1)))
        if kind == "flip" and data:
            bit = int(rng.integers(1, 256))
            data[at] ^= bit
            steps.append(f"byte {at} ^= 0x{bit:02x}")
        elif kind == "truncate":
            del data[at:]
            steps.append(f"truncated to {at} bytes")
        elif kind == "insert":
            data[at:at] = rng.bytes(int(rng.integers(1, 9)))
            steps.append(f"bytes inserted at {at}")
        elif kind == "delete":
            n = int(rng.integers(1, 9))
            del data[at:at + n]
            steps.append(f"{n} bytes deleted at {at}")
        elif base.fields:
            off, width, name = base.fields[int(rng.integers(len(base.fields)))]
            value = BOUNDARY[int(rng.integers(len(BOUNDARY)))] & ((1 << 8 * width) - 1)
            if off + width <= len(data):
                data[off:off + width] = value.to_bytes(width, "little")
                steps.append(f"{name} = {value}")
    return bytes(data), f"{base.name}: " + "; ".join(steps)


def finding(reader: str, kind: str, detail: str, data: bytes | str, made: str) -> Finding:
    text = data.hex() if isinstance(data, bytes) else data
    return Finding(reader, kind, detail, text, made)


# --- .crtrace -------------------------------------------------------------------------------


def _leaf_fields(struct, base: int, prefix: str) -> list[tuple[int, int, str]]:
    from .spec.core.layout import leaf_name, leaves

    return [(base + leaf.offset, leaf.size, f"{prefix}{leaf_name(leaf)}")
            for leaf in leaves(struct) if leaf.wire != "pad"]


def crtrace_base(name: str, data: bytes) -> Base:
    """A file with its header counts, every op record field and every meta field."""
    from .spec.crucible.crtrace import HEADER_SIZE, TRACE_OP_RECORD, frame
    from .spec.crucible.tensor_meta import TENSOR_META

    f = frame(data)
    fields = [(8, 4, "num_ops"), (12, 4, "num_metas")]
    for i in range(f.num_ops):
        fields += _leaf_fields(TRACE_OP_RECORD, HEADER_SIZE + i * TRACE_OP_RECORD.size,
                               f"op {i} ")
    for k in range(f.num_metas):
        fields += _leaf_fields(TENSOR_META, f.meta_start + k * f.meta_size, f"meta {k} ")
    return Base(name, data, tuple(x for x in fields if x[0] + x[1] <= f.meta_end))


@cache
def crtrace_bases() -> tuple[Base, ...]:
    """Real traces: the seed's MLP and end-to-end runs, a synthetic MLP loop of 110 ops, and
    that loop with 160-byte (legacy) metas."""
    from .conformance.seed_runs import e2e_stream, mlp_stream
    from .spec.crucible.crtrace import write_crtrace
    from .spec.crucible.pipeline import trace_of
    from .spec.crucible.trace_build_ops import recorded_ops
    from .synthetic import synthetic_trace

    loop = write_crtrace(synthetic_trace(110))
    return (crtrace_base("seed MLP run", write_crtrace(trace_of(recorded_ops(mlp_stream())))),
            crtrace_base("seed end-to-end run",
                         write_crtrace(trace_of(recorded_ops(e2e_stream())))),
            crtrace_base("synthetic MLP, 110 ops", loop),
            crtrace_base("synthetic MLP, 160-byte metas", legacy(loop, 160)))


def legacy(data: bytes, size: int) -> bytes:
    """The file with every meta record cut to its first `size` bytes."""
    from .spec.crucible.crtrace import frame

    f = frame(data)
    metas = b"".join(data[at:at + size] for at in range(f.meta_start, f.meta_end, f.meta_size))
    return data[:f.meta_start] + metas + data[f.meta_end:]


META_ARRAYS = ("ptr", "ndim", "sizes", "strides", "dtype", "device_type", "device_idx", "nbytes")


def spec_load(data: bytes, errata: frozenset[str]) -> tuple:
    """What the fast loader makes, the spec's way: the loaded trace, and the arrays of the
    ops the pipeline drains from it."""
    from .fast.core.trace_arrays import arrays_of
    from .spec.crucible.crtrace import parse_crtrace
    from .spec.crucible.pipeline import recorded_of

    trace = parse_crtrace(data, errata)
    return trace, arrays_of(recorded_of(trace))


def same_load(spec: tuple, fast: tuple) -> str | None:
    """Where the fast loader's arrays differ from the spec's, if anywhere."""
    spec, want = spec
    arrays, scope, callsite, names = fast
    if arrays.ptr.size != len(spec.metas):
        return "number of metas"
    for name in want.__dataclass_fields__:
        x, y = getattr(arrays, name), getattr(want, name)
        if name in META_ARRAYS:  # the ops' metas, then any the seed profile lets go unused
            x = x[:y.shape[0]]
        if x.shape != y.shape or not np.array_equal(x.astype(np.uint64), y.astype(np.uint64)):
            return f"TraceArrays.{name}"
    if scope.tolist() != spec.scope_hashes or callsite.tolist() != spec.callsite_hashes:
        return "scope or callsite hashes"
    return "names" if names != spec.names else None


def check_crtrace(data: bytes, profile: str) -> list[tuple[str, str]]:
    """(kind, detail) of every problem with one file under one profile."""
    from .fast.core.trace_file import load_arrays

    errata = profile_errata(profile)
    problems = []
    spec, fast = outcome(partial(spec_load, data, errata)), outcome(
        partial(load_arrays, data, errata))
    problems += crashes({"spec loader": spec, "fast loader": fast})
    if spec.signature() != fast.signature() and "crash" not in (spec.kind, fast.kind):
        problems.append(("disagreement", f"loaders: spec {_said(spec)}, fast {_said(fast)}"))
    elif spec.kind == fast.kind == "ok":
        where = outcome(lambda: same_load(spec.value, fast.value))
        if where.kind != "ok" or where.value:
            problems.append(("disagreement", f"loaders read different {where.value}"))
    problems += compare("crtrace.decode", both_impls("crtrace.decode", {"hex": data.hex()},
                                                     errata))
    if spec.kind == "ok":
        problems += compare("analyze", {impl: outcome(partial(analysis, data, profile, impl))
                                        for impl in IMPLS})
    return problems


def both_impls(op: str, args: dict, errata: frozenset[str]) -> dict[str, Outcome]:
    """The reference's and the numba implementation's answers to one call."""
    return {impl: outcome(partial(Implementation(impl, errata).call, op, args))
            for impl in IMPLS}


def analysis(data: bytes, profile: str, impl: str) -> dict:
    """`crucible-spec analyze --json` of a file, less the implementation's name."""
    from .analysis import analyze

    a = analyze(data, file="fuzz", profile=profile, errata=profile_errata(profile), impl=impl)
    return {k: v for k, v in a.to_json().items() if k != "impl"}


def _said(o: Outcome) -> str:
    if o.kind == "ok":
        return "accepts"
    return f"{o.kind}s ({o.value[1] if o.kind == 'reject' else o.value})"


def crashes(paths: dict[str, Outcome]) -> list[tuple[str, str]]:
    return [(o.kind, f"{name}: {o.value}") for name, o in paths.items()
            if o.kind in ("crash", "hang")]


def compare(what: str, paths: dict[str, Outcome]) -> list[tuple[str, str]]:
    """Crashes of any path, and a disagreement if the paths differ."""
    found = crashes({f"{what} {name}": o for name, o in paths.items()})
    if found:
        return found
    (a, x), (b, y) = paths.items()
    if x.signature() != y.signature() or (x.kind == "ok" and x.value != y.value):
        found.append(("disagreement", f"{what}: {a} {_said(x)}, {b} {_said(y)}"
                      + (", different results" if x.kind == y.kind == "ok" else "")))
    return found


def fuzz_crtrace(rng: np.random.Generator) -> Iterator[list[Finding]]:
    bases = crtrace_bases()
    while True:
        data, made = mutate(bases[int(rng.integers(len(bases)))], rng)
        profile = PROFILES[int(rng.integers(len(PROFILES)))]
        yield [finding("crtrace", kind, detail, data, f"{made} (profile {profile})")
               for kind, detail in check_crtrace(data, profile)]


# --- .cdag ----------------------------------------------------------------------------------


@cache
def cdag_bases() -> tuple[Base, ...]:
    """The golden regions with their count fields, and the golden 80-byte branch."""
    from .conformance.golden import golden
    from .conformance.golden_cdag import BRANCH_80
    from .spec.crucible.cdag import decode_region, encode_region

    counts = ("num_ops", "num_inputs", "num_outputs", "num_scalar_args", "num_slots")
    out = []
    for i, r in enumerate(golden()["cdag"]["regions"]):
        data, spans = bytes.fromhex(r["hex"]), []
        encode_region(decode_region(data), spans)
        out.append(Base(f"golden region {i}", data, tuple(
            (at, 4, name) for at, _, name in spans if name.rsplit(".", 1)[-1] in counts)))
    out.append(Base("golden branch", bytes.fromhex(BRANCH_80), ((44, 4, "num_arms"),)))
    return tuple(out)


def fuzz_cdag(rng: np.random.Generator) -> Iterator[list[Finding]]:
    bases = cdag_bases()
    while True:
        base = bases[int(rng.integers(len(bases)))]
        data, made = mutate(base, rng)
        profile = PROFILES[int(rng.integers(len(PROFILES)))]
        errata, args = profile_errata(profile), {"hex": data.hex()}
        op = "cdag.decode_branch" if base.name == "golden branch" else "cdag.decode"
        problems = compare(op, both_impls(op, args, errata))
        yield [finding("cdag", k, d, data, f"{made} (profile {profile})") for k, d in problems]


# --- checkpoint -----------------------------------------------------------------------------

CHECKPOINT_PROFILES = ("crucible", "ringkernel@1.1.0")


@cache
def checkpoint_bases() -> tuple[Base, ...]:
    """The files of checkpoint.encode's hand-picked cases, with their header words and the
    metadata length."""
    from .spec.core.registry import REGISTRY

    encode = Implementation("reference").call
    words = ((8, 4, "version"), (12, 4, "header_size"), (16, 8, "total_size"),
             (24, 4, "chunk_count"), (28, 4, "compression"), (64, 4, "metadata length"))
    return tuple(Base(f"checkpoint.encode edge {i}", bytes.fromhex(
        encode("checkpoint.encode", args)["hex"].removeprefix("0x")), words)
        for i, args in enumerate(REGISTRY.ops["checkpoint.encode"].edges()))


def check_checkpoint(data: bytes, profile: str) -> list[tuple[str, str]]:
    """A crash, or (the spec's profile) a refusal that names no offset, or an accepted file
    that does not re-encode to its own bytes."""
    errata = profile_errata(profile)
    paths = both_impls("checkpoint.decode", {"hex": data.hex()}, errata)
    problems = compare("checkpoint.decode", paths)
    got = paths["reference"]
    if problems or errata:
        return problems
    if got.kind == "reject" and not got.value[1].startswith("offset "):
        return [("unnamed", f"checkpoint.decode refuses without an offset: {got.value[1]}")]
    if got.kind == "ok":
        args = {k: got.value[k] for k in ("header", "metadata", "chunks")}
        again = outcome(partial(Implementation("reference").call, "checkpoint.encode", args))
        if again.kind != "ok" or again.value["hex"].removeprefix("0x") != data.hex():
            return [("round trip", f"checkpoint.encode of the decoded file {_said(again)} "
                                   "other bytes")]
    return []


def fuzz_checkpoint(rng: np.random.Generator) -> Iterator[list[Finding]]:
    bases = checkpoint_bases()
    while True:
        data, made = mutate(bases[int(rng.integers(len(bases)))], rng)
        profile = CHECKPOINT_PROFILES[int(rng.integers(2))]
        yield [finding("checkpoint", kind, detail, data, f"{made} (profile {profile})")
               for kind, detail in check_checkpoint(data, profile)]


# --- wire -----------------------------------------------------------------------------------


ODD_VALUES = (None, True, False, -1, 0, 1 << 32, 1 << 64, -(1 << 64), 1.5, "", "x", "0x",
              "0xzz", "0x" + "f" * 20, [], [None], {}, {"x": 1})
"""What a mutated request puts where a value was."""


@cache
def wire_bases(ops: tuple[str, ...] | None = None) -> tuple[tuple[str, dict], ...]:
    """(op, args) of the first three vectors of every op (or of `ops`) of the default
    profile."""
    from .conformance.vectors import VECTORS_DIR, load

    cases = load(VECTORS_DIR, "crucible")
    return tuple((op, c.args) for op in sorted(cases) if ops is None or op in ops
                 for c in cases[op][:3])


def _paths(obj: Any, at: tuple = ()) -> list[tuple]:
    """Every place in a JSON value (bounded, so a large vector is cheap)."""
    out = [at]
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) \
        else ()
    for k, v in list(items)[:8]:
        out += _paths(v, (*at, k))
    return out[:200]


def mutate_request(args: dict, rng: np.random.Generator) -> tuple[dict, str]:
    """One of: a value replaced by an odd one, a field removed, an unknown field added."""
    args = json.loads(json.dumps(args))
    paths = _paths(args)[1:]
    if not paths:
        args["unknown"] = 1
        return args, "unknown field added"
    path = paths[int(rng.integers(len(paths)))]
    parent = args
    for k in path[:-1]:
        parent = parent[k]
    kind = int(rng.integers(4))
    if kind == 0 and isinstance(parent, dict):
        del parent[path[-1]]
        return args, f"{_where(path)} removed"
    if kind == 1 and isinstance(parent, dict):
        parent["unknown"] = 1
        return args, f"unknown field next to {_where(path)}"
    value = ODD_VALUES[int(rng.integers(len(ODD_VALUES)))]
    parent[path[-1]] = value
    return args, f"{_where(path)} = {json.dumps(value)}"


def _where(path: tuple) -> str:
    return "args" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)


def fuzz_wire(rng: np.random.Generator, ops: tuple[str, ...] | None = None
              ) -> Iterator[list[Finding]]:
    from .conformance.serve import answer

    bases = wire_bases(ops)
    impls = {name: Implementation(name) for name in IMPLS}
    n = 0
    while True:
        op, args = bases[int(rng.integers(len(bases)))]
        mutated, made = mutate_request(args, rng)
        line = json.dumps({"id": n, "op": op, "args": mutated})
        n += 1
        said: dict[tuple[str, str], list[str]] = {}
        for name, impl in impls.items():
            with redirect_stderr(io.StringIO()):  # the handler's traceback of an internal
                got = outcome(partial(answer, line, impl, "crucible"))
            error = got.value.get("error") or {} if got.kind == "ok" else {}
            if got.kind != "ok":
                said.setdefault((got.kind, str(got.value)), []).append(name)
            elif error.get("code") == INTERNAL and alarm_in(error["message"]) is BudgetSpent:
                raise BudgetSpent
            elif error.get("code") == INTERNAL and alarm_in(error["message"]) is Hang:
                said.setdefault(("hang", error["message"][:200]), []).append(name)
            elif error.get("code") == INTERNAL:
                said.setdefault(("internal", error["message"][:200]), []).append(name)
        found = [(kind, f"{op} ({', '.join(names)}): {what}")
                 for (kind, what), names in said.items()]
        yield [finding("wire", k, d, line, f"{op}: {made}") for k, d in found]


READERS: dict[str, Callable[[np.random.Generator], Iterator[list[Finding]]]] = {
    "crtrace": fuzz_crtrace, "cdag": fuzz_cdag, "checkpoint": fuzz_checkpoint,
    "wire": fuzz_wire}


def run_reader(name: str, seconds: float, seed: int,
               progress: Callable[[ReaderRun], None] = lambda run: None,
               max_inputs: int | None = None, call_limit: float = CALL_LIMIT_S) -> ReaderRun:
    """Feed one reader mutated inputs for `seconds` (or `max_inputs`), a call past
    `call_limit` (scaled by load) a hang; keep the first finding of each (kind, detail) and
    count the repeats. After the first input (which may compile kernels, cached for the next
    run), a call still running when the time is up is cut short, no finding."""
    rng = np.random.default_rng([seed, list(READERS).index(name)])
    run = ReaderRun(name)
    start = time.monotonic()
    token = CLOCK.set(Clock(call_limit))
    try:
        _feed(run, READERS[name](rng), start, seconds, progress, max_inputs,
              lambda: CLOCK.set(Clock(call_limit, start + seconds)))
    except BudgetSpent:
        pass
    finally:
        CLOCK.reset(token)
    run.seconds = time.monotonic() - start
    return run


def _feed(run: ReaderRun, inputs: Iterator[list[Finding]], start: float, seconds: float,
          progress: Callable[[ReaderRun], None], max_inputs: int | None,
          after_first: Callable[[], object]) -> None:
    """run_reader's loop: count each input's findings into `run` until the time or the
    inputs are spent; `after_first` once the first input is done."""
    seen: set[tuple[str, str]] = set()
    last = start
    for found in inputs:
        run.tried += 1
        if run.tried == 1:
            after_first()
        for f in found:
            if (f.kind, f.detail) in seen:
                run.repeats += 1
            else:
                seen.add((f.kind, f.detail))
                run.findings.append(f)
        now = time.monotonic()
        run.seconds = now - start
        if now - last >= 5:
            progress(run)
            last = now
        if run.seconds >= seconds or (max_inputs is not None and run.tried >= max_inputs):
            return


def render_finding(f: Finding) -> str:
    shown = f.input if len(f.input) <= 2 * SHOWN_HEX else f"{f.input[:80]}... " \
        f"({len(f.input) // 2} bytes; whole in the report)"
    return f"FINDING {f.reader} {f.kind}: {f.detail}\n  made: {f.made}\n  input: {shown}"


def report(runs: list[ReaderRun], seed: int) -> dict:
    return {"seed": seed, "readers": [asdict(r) for r in runs]}
