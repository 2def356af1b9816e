"""Chapter 3: the arena, a bump allocator over blocks of 1 MiB.

An allocation aligns the ABSOLUTE address (block base + offset), so its offset depends on where
malloc put the block. The simulator therefore takes each block's base address; by default the
k-th block lies at ((k + 1) << 32) + 16, the shape of glibc's mmap'd chunks (a page plus a
16-byte header). A request that does not fit the current block abandons the block's tail and
starts a new one: block_size bytes, or size + align when the request alone needs more.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core import shapes as js
from ..core.bits import BitVal, add, align_up, is_pow2, select, sub, ule
from ..core.errors import InvalidInput
from ..core.layout import Member, array, ptr, struct, u64
from ..core.registry import InvalidCase, declare
from ..core.schema import U64, Field, Json, record
from ..core.strategies import st

BLOCK_SIZE = 1 << 20
"""Bytes per arena block (1 MiB). Real code: `Arena.h`, the default block size."""
DEFAULT_ALIGN = 16
"""alignof(max_align_t) on x86-64. Real code: `Arena.h`, the default alignment of `alloc`."""

ARENA = struct("Arena", [
    Member("cur_block_", ptr),
    Member("cur_base_", u64, doc="uintptr of the current block"),
    Member("offset_", u64),
    Member("end_offset_", u64),
    Member("block_size_", u64, default=BLOCK_SIZE),
    Member("blocks_", array(ptr, 3), doc="std::vector<char*>: begin, end, capacity"),
], size=64, align=8, chapter=3, doc="Arena object (64 bytes, asserted <= 64).")


def default_base(block: int) -> int:
    """Where the simulator puts block k unless told: a page boundary plus 16 bytes."""
    return ((block + 1) << 32) + 16


def place(base: BitVal, offset: BitVal, align: BitVal) -> BitVal:
    """The in-block offset of the next allocation: align the absolute address base + offset."""
    return sub(align_up(add(base, offset), align), base)


def new_block_size(size: BitVal, align: BitVal, block_size: BitVal) -> BitVal:
    """A fresh block: block_size, or size + align when the request alone needs more."""
    need = add(size, align)
    return select(ule(need, block_size), block_size, need)


def fits_block(off: BitVal, size: BitVal, end_offset: BitVal) -> Any:
    """The bump check: an allocation at `off` of `size` bytes ends by the block's end."""
    return ule(off + size, end_offset)


@dataclass
class ArenaState:
    """The blocks so far (base, size) and the bump offset in the last one."""

    block_size: int
    bases: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    offset: int = 0
    end_offset: int = 0

    @property
    def total_allocated(self) -> int:
        """(blocks - 1) * block_size + offset: oversized blocks count as block_size."""
        return (len(self.bases) - 1) * self.block_size + self.offset


def arena_new(block_size: int, base: int) -> ArenaState:
    return ArenaState(block_size, [base], [block_size], 0, block_size)


def arena_alloc(a: ArenaState, size: int, align: int, next_base: int) -> tuple[int, int]:
    """(block, offset) of `size` bytes aligned to `align` (a power of two)."""
    off = place(a.bases[-1], a.offset, align)  # 1. align the absolute address
    if fits_block(off, size, a.end_offset):  # 2. fits: bump
        a.offset = off + size
        return len(a.bases) - 1, off
    new_size = new_block_size(size, align, a.block_size)  # 3. a new block
    a.bases.append(next_base)
    a.sizes.append(new_size)
    off = place(next_base, 0, align)
    a.offset, a.end_offset = off + size, new_size
    return len(a.bases) - 1, off


def arena_simulate(block_size: int, requests: list[dict], bases: list[int]) -> dict:
    """Run the allocation requests on a fresh arena; block k lies at bases[k] if given."""
    def base_of(k: int) -> int:
        return bases[k] if k < len(bases) else default_base(k)

    a = arena_new(block_size, base_of(0))
    allocations = []
    for r in requests:
        block, off = arena_alloc(a, r["size"], r["align"], base_of(len(a.bases)))
        allocations.append({"block": block, "offset": off,
                            "address": f"0x{a.bases[block] + off:016x}"})
    return {"allocations": allocations,
            "blocks": [{"base": f"0x{b:016x}", "size": s} for b, s in
                       zip(a.bases, a.sizes, strict=True)],
            "total_allocated": a.total_allocated}


def arena_requests(requests: object) -> list[dict]:
    """Requests as {size, align}: align defaults to 16 and must be a power of two, and
    size + align must fit 64 bits (the code does not check the first: its mask arithmetic
    assumes it)."""
    if not isinstance(requests, list):
        raise InvalidInput("args.requests: expected a list of {size, align}")
    out = []
    for i, r in enumerate(requests):
        if not isinstance(r, dict) or set(r) - {"size", "align"} or "size" not in r:
            raise InvalidInput(f"args.requests[{i}]: expected {{size, align}}")
        size, align = r["size"], r.get("align", DEFAULT_ALIGN)
        if not all(type(v) is int for v in (size, align)) or size < 0 or \
                not is_pow2(align) or size + align >= 1 << 64:
            raise InvalidInput(f"args.requests[{i}]: size >= 0, align a power of two, "
                               f"size + align < 2^64")
        out.append({"size": size, "align": align})
    return out


_REQUESTS = js.array(js.obj({"size": js.uint(64)}, {"align": js.integer(1, (1 << 64) - 1)}))
"""What `arena_requests` accepts; the power-of-two and sum rules are its own."""


def check_arena_args(args: dict) -> None:
    """A positive block size, well-formed requests (their default align filled in), and
    block bases that leave room for a block."""
    if args["block_size"] == 0:
        raise InvalidInput("args.block_size: must be positive")
    args["requests"] = arena_requests(args["requests"])
    if any(b + args["block_size"] + 1 >= 1 << 64 or b == 0 for b in args["bases"]):
        raise InvalidInput("args.bases: a block must fit below 2^64 and not start at 0")


@st.composite
def _requests(draw) -> dict:
    reqs = draw(st.lists(st.fixed_dictionaries(
        {"size": st.integers(0, 700) | st.integers(0, 5000)},
        optional={"align": st.sampled_from([1, 2, 4, 8, 16, 32, 64, 256, 4096])}), max_size=30))
    bases = draw(st.lists(st.integers(1, 1 << 40), max_size=4))
    return {"block_size": draw(st.sampled_from([64, 256, 1024, 4096])), "requests": reqs,
            "bases": bases}


declare(
    "arena.simulate", chapter=3,
    summary="Run allocation requests on a bump arena: each block and offset, and the blocks.",
    args=record(block_size=Field(U64, "bytes per block", default=BLOCK_SIZE),
                requests=Field(Json("[{size, align}]", _REQUESTS), "allocation requests in order"),
                bases=Field(Json("[u64]", js.array(js.uint(64))), "base address of each block "
                            "(optional)", default=[])),
    result=record(allocations=Json("[{block, offset, address}]", js.array(js.obj(
                      {"block": js.uint(32), "offset": js.uint(64), "address": js.HEX64_OUT}))),
                  blocks=Json("[{base, size}]", js.array(js.obj(
                      {"base": js.HEX64_OUT, "size": js.uint(64)}))),
                  total_allocated=U64),
    spec=(arena_alloc,), check=check_arena_args, domain=_requests,
    not_applicable={"cupy": "each allocation depends on the offset the last one left"},
    invalid=(InvalidCase("an alignment that is not a power of two",
                         lambda: st.just({"requests": [{"size": 8, "align": 12}]})),
             InvalidCase("a zero block size",
                         lambda: st.just({"block_size": 0, "requests": []}))),
    edges=lambda: [
        {"block_size": 64, "requests": [{"size": 32}, {"size": 64}]},
        {"block_size": 32, "requests": [{"size": 1024}]},
        {"requests": [{"size": 0}, {"size": 8, "align": 4096}, {"size": 1, "align": 1}]},
        {"block_size": 64, "requests": [{"size": 10, "align": 64}] * 3, "bases": [4096, 4100]}],
)
