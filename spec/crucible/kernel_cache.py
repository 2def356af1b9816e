"""Chapter 9: the kernel cache, compiled kernels by content hash and device capability.

An open-addressing table of power-of-two capacity: the probe starts at the content hash's low
32 bits and walks linearly; content hash 0 marks an empty slot. The README and whitepaper key
it by (content hash, device capability): a kernel compiled for one GPU generation must not be
handed to another. The code keys it by the content hash alone (erratum E9.4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core import shapes as js
from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.layout import hash64, u64
from ..core.layout_ops import scalar_from_wire, wire_schema
from ..core.registry import InvalidCase, declare
from ..core.schema import U32, Field, Json, record
from ..core.strategies import st
from .merkle_dag import KERNEL_CACHE_CAPACITY

E9_4 = "E9.4"


def default_capacity() -> int:
    """KERNEL_CACHE_CAPACITY, read when a cache is made (not bound when the class is)."""
    return KERNEL_CACHE_CAPACITY


@dataclass
class KernelCache:
    capacity: int = field(default_factory=default_capacity)
    keys: list[tuple[int, int] | None] = field(default_factory=list)
    kernels: list[int] = field(default_factory=list)
    size: int = 0

    def __post_init__(self) -> None:
        self.keys = self.keys or [None] * self.capacity
        self.kernels = self.kernels or [0] * self.capacity


def _key(content: int, capability: int, errata: frozenset[str]) -> tuple[int, int]:
    return (content, 0 if E9_4 in errata else capability)


def _probe(c: KernelCache, content: int):
    start = content & 0xFFFFFFFF
    return ((start + k) & (c.capacity - 1) for k in range(c.capacity))


def cache_insert(c: KernelCache, content: int, capability: int, kernel: int,
                 errata: frozenset[str] = NO_ERRATA) -> bool:
    """Store a kernel (a newer one for the same key replaces it); False when the table is full
    (the code asserts)."""
    key = _key(content, capability, errata)
    for i in _probe(c, content):
        if c.keys[i] is None:
            c.keys[i], c.kernels[i] = key, kernel
            c.size += 1
            return True
        if c.keys[i] == key:
            c.kernels[i] = kernel
            return True
    return False


def cache_lookup(c: KernelCache, content: int, capability: int,
                 errata: frozenset[str] = NO_ERRATA) -> int | None:
    """The kernel stored under the key, or None (an empty slot or a full probe ends it)."""
    key = _key(content, capability, errata)
    for i in _probe(c, content):
        if c.keys[i] is None:
            return None
        if c.keys[i] == key:
            return c.kernels[i]
    return None


_STEP = js.obj({"content_hash": wire_schema(hash64)},
               {"device_capability": wire_schema(u64), "kernel": wire_schema(u64)})
STEPS = js.array(js.tagged("op", {"insert": _STEP, "lookup": _STEP}))
"""What `kernel_cache_simulate` accepts as steps."""
ANSWERS = js.array(js.one_of(js.obj({"ok": js.BOOLEAN, "size": js.uint(32)}),
                             js.obj({"kernel": js.or_null(js.uint(64))})))
"""Its answers: {ok, size} to an insert, {kernel} to a lookup."""


def kernel_cache_simulate(capacity: int, steps: Any, errata: frozenset[str] = NO_ERRATA) -> dict:
    """Run insert / lookup steps on a fresh cache."""
    if capacity & (capacity - 1) or not 1 <= capacity <= 1 << 20:
        raise InvalidInput("args.capacity: a power of two from 1 to 2^20")
    if not isinstance(steps, list):
        raise InvalidInput("args.steps: a list of insert / lookup steps")
    c, results = KernelCache(capacity), []
    for i, s in enumerate(steps):
        path = f"args.steps[{i}]"
        fields = {"op", "content_hash", "device_capability", "kernel"}
        if not isinstance(s, dict) or s.get("op") not in ("insert", "lookup") or \
                set(s) - fields or "content_hash" not in s:
            raise InvalidInput(f"{path}: {{op: insert|lookup, content_hash, "
                               f"device_capability, kernel}}")
        content = scalar_from_wire(hash64, s["content_hash"], f"{path}.content_hash")
        if content == 0:
            raise InvalidInput(f"{path}.content_hash: 0 marks an empty slot")
        capability = scalar_from_wire(u64, s.get("device_capability", 0), path)
        if s["op"] == "insert":
            ok = cache_insert(c, content, capability, scalar_from_wire(u64, s.get("kernel", 1),
                                                                       path), errata)
            results.append({"ok": ok, "size": c.size})
        else:
            found = cache_lookup(c, content, capability, errata)
            results.append({"kernel": found})
    return {"results": results, "size": c.size}


@st.composite
def _steps(draw) -> dict:
    contents = draw(st.lists(st.integers(1, 2**64 - 1), min_size=1, max_size=5))
    steps = [{"op": draw(st.sampled_from(["insert", "lookup"])),
              "content_hash": hex(draw(st.sampled_from(contents))),
              "device_capability": draw(st.sampled_from([0, 80, 90])),
              "kernel": draw(st.integers(1, 99))} for _ in range(draw(st.integers(0, 16)))]
    return {"capacity": draw(st.sampled_from([1, 2, 4, 16])), "steps": steps}


erratum(
    E9_4, "The kernel cache is keyed by the content hash alone, not with the device capability",
    seed="crucible@8d2680a2", location="include/crucible/MerkleDag.h KernelCache",
    ops=("dag.kernel_cache",),
    witness={"args": {"capacity": 4, "steps": [
        {"op": "insert", "content_hash": "0x5", "device_capability": 80, "kernel": 1},
        {"op": "lookup", "content_hash": "0x5", "device_capability": 90}]},
        "spec": {"results": [{"ok": True, "size": 1}, {"kernel": None}]},
        "seed": {"results": [{"ok": True, "size": 1}, {"kernel": 1}]}},
    flag="result",
    detail="README and whitepaper say (ContentHash, device_capability); the code stores only "
           "the content hash, so a kernel compiled for one device capability is returned for "
           "another. device_capability is only recorded in the MemoryPlan.",
)

declare(
    "dag.kernel_cache", chapter=9,
    summary="Run insert / lookup steps on a kernel cache keyed by (content hash, capability).",
    args=record(capacity=Field(U32, "a power of two", default=KERNEL_CACHE_CAPACITY),
                steps=Field(Json("[{op, content_hash, device_capability, kernel}]", STEPS),
                            "steps")),
    result=record(results=Json("[per-step result]", ANSWERS), size=U32),
    spec=(cache_insert, cache_lookup), errata=(E9_4,), domain=_steps,
    not_applicable={"numba": "a handful of probes per step: nothing to batch",
                    "cupy": "each step depends on the table the last one left"},
    invalid=(InvalidCase("content hash 0", lambda: st.just(
        {"steps": [{"op": "insert", "content_hash": "0x0"}]})),),
)
