"""Contracts checked symbolically by crosshair: each is a function whose leading asserts are
its preconditions, then the call of the spec function, then asserts stating what the spec
promises. crosshair searches every path it can reach within the budget for inputs that meet
the first and break the second.

PYTEST_DONT_REWRITE: pytest rewrites the asserts of every module of a distribution that
provides a plugin (ours does), and crosshair reads only plain asserts as pre- and
postconditions."""

from __future__ import annotations

from ...spec.core import bits
from ...spec.core.errors import InvalidInput
from ...spec.core.registry import Mutant
from ...spec.crucible.cdag import Reader, decode_branch, encode_branch
from ...spec.crucible.crtrace import frame, parse_crtrace, write_crtrace
from ...spec.crucible.iteration_detector import K, check, run_detector
from ...spec.crucible.memory_plan import ALIGNMENT, PlanSlot, compute_memory_plan, sweep
from ...spec.crucible.tensor_meta import compute_storage_nbytes
from ...spec.crucible.types import ELEMENT_SIZE, ScalarType
from .obligation import Contract, contract_obligation

# --- storage span (chapter 5) ---------------------------------------------------------------

DTYPES = tuple(int(t) for t in ScalarType if t != ScalarType.Undefined)


def storage_nbytes_contract(sizes: list[int], strides: list[int], dtype: int) -> None:
    """Up to three dims of a known dtype: the span is a whole number of elements, zero
    exactly when a size is zero, one element for a 0-d tensor, and at least one element
    more than the largest single extent."""
    assert len(sizes) == len(strides) <= 3
    assert all(0 <= s <= 1000 for s in sizes) and all(-1000 <= d <= 1000 for d in strides)
    assert dtype in DTYPES
    n = compute_storage_nbytes(sizes, strides, dtype)
    e = ELEMENT_SIZE[ScalarType(dtype)]
    assert n % e == 0
    assert (n == 0) == (0 in sizes)
    assert sizes or n == e
    assert 0 in sizes or all(n >= e * ((s - 1) * abs(d) + 1) for s, d in zip(sizes, strides,
                                                                            strict=True))


@contract_obligation(
    "PO5.80",
    "compute_storage_nbytes on up to three dims: a whole number of elements, zero exactly "
    "when a size is zero, one element when 0-d, and at least one element past every extent.",
    covers=("meta.storage_nbytes",),
    subject=compute_storage_nbytes,
    mutants=(Mutant.edit("span without the last element", "the span is max - min",
                         compute_storage_nbytes, "(max_offset - min_offset + 1)",
                         "(max_offset - min_offset)"),),
)
def storage_nbytes_holds(_subject):
    return [Contract("storage span", storage_nbytes_contract, iterations=100, seconds=30)]


# --- bits (chapter 1) -----------------------------------------------------------------------


def align_up_contract(x: int, k: int) -> None:
    """align_up(x, k) for a power of two k is the least multiple of k that is >= x."""
    assert 0 <= x < 2**64 and 0 < k < 2**64 and k & (k - 1) == 0 and x + k - 1 < 2**64
    r = bits.align_up(x, k)
    assert r % k == 0 and x <= r < x + k


def pow2_index_contract(h: int, k: int) -> None:
    """pow2_index(h, k) for a power of two k is h mod k."""
    assert 0 <= h < 2**64 and 0 < k < 2**64 and k & (k - 1) == 0
    assert bits.pow2_index(h, k) == h % k


def mask_contract(width: int) -> None:
    """mask(w) is 2^w - 1."""
    assert 0 <= width <= 64
    assert bits.mask(width) == 2**width - 1


@contract_obligation(
    "PO1.80",
    "On Python ints, align_up(x, k) is the least multiple of the power of two k that is >= x, "
    "pow2_index(h, k) is h mod k, and mask(w) is 2^w - 1.",
    covers=("bits.align_up", "bits.pow2_index"),
    subject=bits.align_up,
    mutants=(Mutant.edit("plus k", "(x + k) & ~(k - 1)", bits.align_up,
                         "add(x, sub(k, 1, width), width)", "add(x, k, width)"),
             Mutant.edit("mask is C", "h & C instead of h & (C - 1)", bits.pow2_index,
                         "h & sub(capacity, 1, width)", "h & capacity"),
             Mutant.edit("mask one bit short", "mask(w) is 2^(w-1) - 1", bits.mask,
                         "(1 << width) - 1", "(1 << (width - 1)) - 1")),
)
def bits_hold(_subject):
    return [Contract("align_up", align_up_contract, iterations=100, seconds=20),
            Contract("pow2_index", pow2_index_contract, iterations=100, seconds=20),
            Contract("mask", mask_contract, iterations=100, seconds=20)]


# --- the memory planner (chapter 10) --------------------------------------------------------


def plan_contract(slots: list[tuple[int, int, int, bool]]) -> None:
    """Up to three slots (nbytes <= 1024, birth <= 3, lifetime <= 3): every internal offset is
    256-aligned and inside the pool, internal slots alive at a common op share no byte, and an
    external slot sits at 0."""
    assert len(slots) <= 3
    assert all(0 <= n <= 1024 and 0 <= b <= 3 and 0 <= span <= 3 for n, b, span, _ in slots)
    planned = [PlanSlot(n, b, b + span, ext) for n, b, span, ext in slots]
    plan = compute_memory_plan(planned)
    assert plan.pool_bytes % ALIGNMENT == 0
    sizes = [(s.nbytes + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT for s in planned]
    for i, s in enumerate(planned):
        if s.is_external:
            assert plan.offsets[i] == 0
            continue
        assert plan.offsets[i] % ALIGNMENT == 0 and plan.offsets[i] + sizes[i] <= plan.pool_bytes
        for j in range(i):
            t = planned[j]
            if t.is_external or not sizes[i] or not sizes[j]:
                continue
            if s.birth_op <= t.death_op and t.birth_op <= s.death_op:
                assert plan.offsets[i] + sizes[i] <= plan.offsets[j] or \
                    plan.offsets[j] + sizes[j] <= plan.offsets[i]


@contract_obligation(
    "PO10.80",
    "On up to three slots the memory plan is valid: offsets 256-aligned inside the pool, live "
    "internal slots disjoint, externals at 0, the pool a multiple of 256.",
    covers=("plan.compute",),
    subject=compute_memory_plan,
    mutants=(Mutant.edit("frees at death", "a slot is freed at its death op", sweep,
                         "slots[i].death_op + 1", "slots[i].death_op"),),
)
def plan_holds(_subject):
    return [Contract("three slots", plan_contract, iterations=200, seconds=40)]


# --- the iteration detector (chapter 7) -----------------------------------------------------


def detector_contract(period: list[int], reps: int, tail: list[int]) -> None:
    """A period of K to K + 1 hashes repeated up to three times, then up to two more hashes:
    boundaries come at most one per K ops after the first 2K (the signature, then its
    confirming match), the detector counts them, and each completed iteration is at least
    K ops long."""
    assert K <= len(period) <= K + 1 and 1 <= reps <= 3 and len(tail) <= 2
    stream = period * reps + tail
    boundaries, d = run_detector(stream)
    assert len(boundaries) <= max(len(stream) - 2 * K, 0) // K
    assert d.boundaries_detected == len(boundaries)
    assert all(K <= b["last_completed_len"] <= b["index"] for b in boundaries)


@contract_obligation(
    "PO7.80",
    "On a period of K or K + 1 hashes repeated up to three times, then up to two hashes, the "
    "detector gives at most (n - 2K) / K boundaries, counts them, and each completed "
    "iteration is at least K ops long.",
    covers=("detector.run",),
    subject=run_detector,
    mutants=(Mutant.edit("no confirmation", "the first full match is already a boundary",
                         check, "if not d.confirmed:", "if d.confirmed and not d.confirmed:"),),
)
def detector_holds(_subject):
    return [Contract("repeated periods", detector_contract, iterations=100, seconds=30)]


# --- the readers (chapter 18) ---------------------------------------------------------------


def crtrace_contract(data: bytes) -> None:
    """Any file of up to 24 bytes is rejected with InvalidInput or loads as a trace that writes
    and loads back to itself."""
    assert len(data) <= 24
    try:
        t = parse_crtrace(data)
    except InvalidInput:
        return
    assert parse_crtrace(write_crtrace(t)) == t


@contract_obligation(
    "PO18.80",
    "parse_crtrace on any file of up to 24 bytes raises InvalidInput or returns a trace that "
    "writes and loads back to itself.",
    covers=("crtrace.decode",),
    subject=parse_crtrace,
    mutants=(Mutant.edit("short header", "the header check counts 12 bytes, not 16", frame,
                         "if len(data) < HEADER_SIZE:", "if len(data) < HEADER_SIZE - 4:"),),
)
def crtrace_holds(_subject):
    return [Contract("short files", crtrace_contract, iterations=80, seconds=30)]


def branch_contract(data: bytes) -> None:
    """Any file of up to 72 bytes is rejected with InvalidInput or decodes to a branch that
    encodes back to the same bytes."""
    assert len(data) <= 72
    try:
        b = decode_branch(data)
    except InvalidInput:
        return
    assert encode_branch(b) == data


@contract_obligation(
    "PO18.81",
    "decode_branch on any file of up to 72 bytes raises InvalidInput or returns a branch that "
    "encodes back to the same bytes.",
    covers=("cdag.decode_branch",),
    subject=decode_branch,
    mutants=(Mutant.edit("trailing bytes read", "the reader ignores bytes after the node",
                         Reader.end, "if self.left and not lenient:", "if False:"),),
)
def branch_holds(_subject):
    """A decodable file's two 64-bit hashes, encoded back, are chains of integer div and mod
    that z3 answers unknown on at 15 s and at 20 s alone: those paths end at 1 s."""
    return [Contract("short files", branch_contract, iterations=20, seconds=12,
                     query_seconds=1.0)]
