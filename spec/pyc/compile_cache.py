"""Chapter 14: PyC's in-memory compile cache (compiler_api.c g_compile_cache).

1. pyc_compile verifies the module, normalizes the options and computes the key (pyc_cache)
   from the source module's fingerprint.
2. With cache_mode IN_MEMORY (1) it looks through the 32 slots in slot order for the first
   valid one holding that key; a hit gives the model that slot's compiled state (the post-pass
   module, the plan, the kernel, the break counts). With DISABLED (0) it neither looks nor
   stores.
3. On a miss it compiles and stores into slot next % 32 (round robin, whatever the slot held),
   then counts next up. A module whose shapes do not infer fails to compile (invalid_input:
   the simulation stops); a hit runs no pass, so it cannot fail.

PyC compares only the 64-bit key, so two different modules (or options) with one key share a
slot and the second compile gets the first one's plan (E14.5). The spec's entry also keeps what
the key summarizes, the source module, the backend and the normalized options, and a slot
matches only when all of them are equal: a key collision is a miss, which compiles and takes
the next slot. The op answers, per compile, the key, hit or miss, the slot read or written and
which compile made the plan the model ends up with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.registry import InvalidCase, declare
from ..core.schema import Bool, Field, Int, List, record
from ..core.strategies import st
from .cache import DEFAULT_OPTIONS, OPTIONS, SWAPPED, CompileOptions, cache_key, normalized
from .fingerprint import _TWINS, E14_1, MODULE, fingerprint, modules
from .ir import DType, PycModule, module_from_wire, module_to_wire, require_verified
from .passes import run_passes
from .wire import PYC_SEED

E14_5 = "E14.5"
COMPILE_CACHE_MAX = 32
"""Slots of the process-global compile cache. Real code: src/compiler/compiler_api.c,
PYC_COMPILE_CACHE_MAX."""
CACHE_DISABLED, CACHE_IN_MEMORY = 0, 1
WIRE_MAX_STEPS = 256
"""The spec's own bound on the compiles of one simulation: eight times round the 32 slots."""


@dataclass(frozen=True)
class Identity:
    """What a key summarizes: the source module, the backend and the normalized options."""

    module: PycModule
    backend: int
    options: CompileOptions


@dataclass(frozen=True)
class Entry:
    """A valid slot: its key, what the spec compares besides, and the compile that filled it."""

    key: int
    identity: Identity
    compiled_by: int


@dataclass
class CompileCache:
    """g_compile_cache and g_compile_cache_next."""

    slots: list[Entry | None] = field(default_factory=lambda: [None] * COMPILE_CACHE_MAX)
    next: int = 0


def find(cache: CompileCache, key: int, identity: Identity,
         errata: frozenset[str] = NO_ERRATA) -> int | None:
    """Step 2: the first slot holding the key (and, in the spec, the same identity)."""
    for i, e in enumerate(cache.slots):
        if e is not None and e.key == key and (E14_5 in errata or e.identity == identity):
            return i
    return None


def store(cache: CompileCache, entry: Entry) -> int:
    """Step 3: overwrite slot next % 32 and count next up; the slot written."""
    slot = cache.next % COMPILE_CACHE_MAX
    cache.slots[slot] = entry
    cache.next += 1
    return slot


def compile_step(cache: CompileCache, step: int, module: PycModule, backend: int,
                 options: CompileOptions, errata: frozenset[str] = NO_ERRATA) -> dict:
    """One pyc_compile against the cache: steps 1 to 3."""
    o = normalized(options)  # 1.
    key = cache_key(fingerprint(module, errata), backend, options, errata)
    if o.cache_mode != CACHE_IN_MEMORY:
        require_compiles(module, step)
        return {"key": key, "hit": False, "slot": -1, "plan_of": step}
    identity = Identity(module, backend, o)
    slot = find(cache, key, identity, errata)  # 2.
    if slot is not None:
        return {"key": key, "hit": True, "slot": slot,
                "plan_of": cache.slots[slot].compiled_by}
    require_compiles(module, step)  # 3.
    slot = store(cache, Entry(key, identity, step))
    return {"key": key, "hit": False, "slot": slot, "plan_of": step}


def require_compiles(module: PycModule, step: int) -> None:
    """A compile that misses runs the pass pipeline; when shape inference fails, compile fails
    and nothing is stored: the simulation stops there."""
    try:
        run_passes(module)
    except InvalidInput as e:
        raise InvalidInput(f"args.steps[{step}].module: compile fails: {e}") from None


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

_STEP = record(module=Field(MODULE, "the source module (verified)"),
               backend=Field(Int(32), "0 CPU, 1 CUDA", 0),
               options=Field(OPTIONS, "compile options; a missing one takes PyC's default",
                             DEFAULT_OPTIONS))
_RESULT = record(key=Field(Int(64, hex=True), "the compile-cache key"),
                 hit=Field(Bool(), "the model came from the cache"),
                 slot=Field(Int(32, signed=True), "the slot read or written; -1 with the "
                                                  "cache disabled"),
                 plan_of=Field(Int(32), "the step whose compile made the model's plan"))


def _check(args: dict) -> None:
    """Each step's module: a pyc_dtype per op and what PyC's structs hold."""
    for s, step in enumerate(args["steps"]):
        path = f"args.steps[{s}].module"
        for i, op in enumerate(step["module"]["ops"]):
            if op["dtype"] not in tuple(DType):
                raise InvalidInput(f"{path}.ops[{i}].dtype: {op['dtype']} is not a pyc_dtype")
        module_from_wire(step["module"], path)


def simulate_op(steps: list[dict], errata: frozenset[str] = NO_ERRATA) -> dict:
    """Compile each step in order against one fresh cache."""
    cache, results = CompileCache(), []
    for s, step in enumerate(steps):
        path = f"args.steps[{s}]"
        m = module_from_wire(step["module"], f"{path}.module")
        require_verified(m, f"{path}.module")
        o = CompileOptions(**step["options"])
        if o.dist_enabled and not o.dist_backend_path:
            raise InvalidInput(f"{path}.options.dist_backend_path: distributed compile needs "
                               "a backend path")
        results.append(compile_step(cache, s, m, step["backend"], o, errata))
    return {"results": results}


def _compile(module: dict, **options) -> dict:
    return {"module": module, "backend": 0, "options": DEFAULT_OPTIONS | options}


def _wire(kind: str, name: str, shape: list[int], inputs: list[int]) -> dict:
    return {"kind": kind, "name": name, "dtype": 1, "shape": shape, "inputs": inputs}


RELU_TWIN = {"ops": [_wire("input", "x", [2, 3], []), _wire("relu", "F/nxUs7AOgH", [2, 3], [0])]}
"""A relu module whose fingerprint equals GELU_TWIN's; how the names were found: E14.5."""
GELU_TWIN = {"ops": [_wire("input", "x", [2, 3], []), _wire("gelu", "Q4vK836kmzC", [2, 3], [0])]}
"""A gelu module with RELU_TWIN's fingerprint, so with its key under any options."""


def edges() -> list[dict]:
    """A hit, the options that part two compiles, the disabled cache, eviction after 32 stores,
    and the key collisions of E14.1, E14.2 and E14.5."""
    from .fingerprint import GOLDEN_SOURCE

    src = module_to_wire(GOLDEN_SOURCE)
    other = {"ops": [_wire("input", "x", [4], []), _wire("relu", "", [4], [0])]}
    budgets = [_compile(src, memory_budget_bytes=b) for b in range(COMPILE_CACHE_MAX + 1)]
    return [
        {"steps": [_compile(src), _compile(src), _compile(src, enable_fusion=False),
                   _compile(other), _compile(src, enable_fusion=False)]},
        {"steps": [_compile(src, cache_mode=0), _compile(src, cache_mode=0),
                   _compile(src, cache_mode=7), _compile(src)]},
        {"steps": [*budgets, budgets[0], budgets[COMPILE_CACHE_MAX]]},
        {"steps": [{"module": RELU_TWIN}, {"module": GELU_TWIN}]},
        {"steps": [{"module": _TWINS[1]["module"]}, {"module": _TWINS[0]["module"]}]},
        {"steps": [{"module": src, "options": SWAPPED[0]}, {"module": src,
                                                             "options": SWAPPED[1]}]},
        {"steps": [{"module": src, "options": {"autotune_db_path": "a.db",
                                               "dist_config_json": "{}"}},
                   {"module": src, "options": {"autotune_db_path": "{}",
                                               "dist_config_json": "a.db"}}]},
    ]


WORKSPACE_MAX = 1 << 20
"""Elements a drawn module's ops hold at most: compile allocates a buffer for each matmul, add
and relu, so larger modules fail for want of memory, not by PyC's rules."""


def compilable(module: dict) -> bool:
    """The module's shapes infer, and no op after the pipeline holds more than WORKSPACE_MAX."""
    try:
        after, _ = run_passes(module_from_wire(module))
    except InvalidInput:
        return False
    return all(math.prod(op.shape) <= WORKSPACE_MAX for op in after.ops)


@st.composite
def _steps(draw) -> dict:
    """Compiles drawn from a few modules and budgets, so that hits and evictions both occur;
    the modules compile, into buffers a workstation can hold."""
    pool = draw(st.lists(modules(True).map(lambda a: a["module"]).filter(compilable),
                         min_size=1, max_size=3))
    n = draw(st.integers(0, 48))
    return {"steps": [_compile(draw(st.sampled_from(pool)),
                               memory_budget_bytes=draw(st.integers(0, 20)),
                               enable_fusion=draw(st.booleans()),
                               cache_mode=draw(st.sampled_from([0, 1, 1, 1])))
                      for _ in range(n)]}


declare(
    "pyc.cache.simulate", chapter=14,
    summary="Compiles against PyC's in-memory compile cache: 32 round-robin slots; per compile "
            "the key, hit or miss, the slot and whose plan the model gets.",
    args=record(steps=Field(List(_STEP, WIRE_MAX_STEPS), "compiles, in order, against one "
                                                        "fresh cache")),
    result=record(results=Field(List(_RESULT), "one per step")),
    spec=(compile_step, find, store), check=_check, domain=_steps, edges=edges,
    invalid=(InvalidCase("a module verify rejects", lambda: st.just(
        {"steps": [_compile({"ops": []})]})),
             InvalidCase("a module whose shapes do not infer", lambda: st.just(
        {"steps": [_compile({"ops": [_wire("input", "a", [2, 3], []),
                                     _wire("input", "b", [4, 5], []),
                                     _wire("matmul", "", [2, 5], [0, 1])]})]})),
             InvalidCase("more steps than the bound", lambda: st.just(
        {"steps": [_compile({"ops": [_wire("input", "x", [1], [])]})] *
         (WIRE_MAX_STEPS + 1)}))),
    errata=(E14_1, "E14.2", E14_5),
    not_applicable={"numba": "one key and a scan of 32 slots per compile: nothing to batch",
                    "cupy": "one key and a scan of 32 slots per compile: nothing to batch"},
)

_KEY = "0x514e415340ef8c9c"
"""The key of RELU_TWIN and GELU_TWIN under PyC's default options and the CPU backend."""


def _result(key: str, hit: bool, slot: int, plan_of: int) -> dict:
    return {"key": key, "hit": hit, "slot": slot, "plan_of": plan_of}


erratum(
    E14_5, "The compile cache compares only the 64-bit key, so a colliding module gets "
           "another module's compiled plan",
    seed=PYC_SEED, location="src/compiler/compiler_api.c compile_cache_find_locked",
    ops=("pyc.cache.simulate",),
    witness={"args": edges()[3],
             "spec": {"results": [_result(_KEY, False, 0, 0), _result(_KEY, False, 1, 1)]},
             "seed": {"results": [_result(_KEY, False, 0, 0), _result(_KEY, True, 0, 0)]}},
    flag="result",
    detail="A lookup returns the first valid slot whose key equals the compile's key; the "
           "entry keeps the post-pass module but not the source module or the options, so "
           "nothing else can be compared. The witness's two modules, input x then relu or "
           "gelu of it, have one fingerprint (so one key under every option): compiling the "
           "gelu module after the relu module gives it the relu module's plan. Their names "
           "were found by a distinguished-point (rho) collision search over FNV-1a 64: the "
           "walk maps a 64-bit value to a kind (its low bit) and an 11-character base64 name "
           "(the other bits), and hashes the text up to the end of the name from PyC's basis; "
           "everything after the name is the same in both texts and each FNV step is a "
           "bijection of the state, so equal states there mean equal fingerprints. About "
           "2^33 walk steps, under two minutes of one core. The spec compares the source module, "
           "the backend and the normalized options too, so the second compile misses and "
           "takes slot 1.",
)
