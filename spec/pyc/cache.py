"""Chapter 14: PyC's compile-cache key (compiler_api.c build_compile_cache_key).

1. Options are normalized as compile does: an out-of-range cache mode becomes IN_MEMORY,
   speculative plans are capped at 3, a zero phantom horizon becomes 1, a negative compile
   budget 0, an unknown objective mode BALANCED; the distributed options are sanitized, and
   with distribution off reset (backend, strategy and ranks 0, world 1, no path, no config).
2. The key starts at the source module's fingerprint and folds 20 numbers in a fixed order,
   each as k = fnv1a64(the 8 little-endian bytes of k XOR v); the two doubles enter as
   (u64)(x * 1000), truncated.
3. Then each non-empty string among autotune_db_path, distributed.backend_path and
   distributed.config_json. PyC XORs fnv1a64(s) into the key, so the three commute and
   swapping two collides (E14.2); the spec folds each with its position like the numbers.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, fields

from ..core.errata import NO_ERRATA, erratum
from ..core.errors import InvalidInput
from ..core.registry import declare
from ..core.schema import Bool, Field, Int, Utf8, record
from ..core.strategies import st
from .fingerprint import MODULE, check_module, fingerprint, fnv1a64, modules
from .ir import module_from_wire, require_verified

E14_2 = "E14.2"
SPECULATIVE_PLAN_MAX = 3
"""Speculative plans kept. Real code: src/compiler/compiler_api.c, PYC_SPECULATIVE_PLAN_MAX."""
MODE_BALANCED, MODE_UTILIZATION_FIRST = 0, 2
DIST_BACKEND_MAX = 4
"""PYC_DIST_BACKEND_CUSTOM, the last distributed backend. Real code: include/pyc/compiler_api.h."""
DIST_STRATEGY_MAX = 5
"""PYC_DIST_STRATEGY_3D, the last strategy. Real code: include/pyc/compiler_api.h."""


@dataclass(frozen=True)
class CompileOptions:
    """pyc_compile_options as they enter the key, with PyC's defaults (default_compile_options);
    the two doubles are IEEE bit patterns."""

    enable_fusion: bool = True
    enable_memory_reuse: bool = True
    enable_autotune: bool = False
    enable_speculative_plans: bool = False
    enable_phantom_graph: bool = False
    max_speculative_plans: int = 0
    phantom_horizon_steps: int = 1
    objective_mode: int = MODE_BALANCED
    memory_budget_bytes: int = 0
    target_utilization_floor: int = 0x3FE6666666666666
    deterministic_strict: bool = True
    cache_mode: int = 1
    compile_budget_ms: int = 0
    dist_enabled: bool = False
    dist_backend: int = 0
    dist_strategy: int = 0
    world_size: int = 1
    rank: int = 0
    local_rank: int = 0
    autotune_db_path: str = ""
    dist_backend_path: str = ""
    dist_config_json: str = ""


def _double(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def milli(bits: int, path: str) -> int:
    """(u64)(x * 1000.0) of a double given by its bits; outside [0, 2^64) C leaves it undefined,
    so the spec refuses it."""
    scaled = _double(bits) * 1000.0
    if math.isnan(scaled) or not 0 <= scaled < 2.0**64:
        raise InvalidInput(f"{path}: {_double(bits)!r} * 1000 is not a u64")
    return int(scaled)


DIST_OFF = {"dist_backend": 0, "dist_strategy": 0, "world_size": 1, "rank": 0, "local_rank": 0,
            "dist_backend_path": "", "dist_config_json": ""}
"""What sanitize_distributed_options leaves of the distributed options when they are off."""


def normalized(o: CompileOptions) -> CompileOptions:
    """Step 1: the options compile keeps; with distribution off, none of its options."""
    world = o.world_size if o.world_size > 0 else 1
    budget = 0 if _double(o.compile_budget_ms) < 0 else o.compile_budget_ms
    dist = {
        "dist_backend": o.dist_backend if 0 <= o.dist_backend <= DIST_BACKEND_MAX else 0,
        "dist_strategy": o.dist_strategy if 0 <= o.dist_strategy <= DIST_STRATEGY_MAX else 0,
        "world_size": world, "rank": o.rank if 0 <= o.rank < world else 0,
        "local_rank": max(o.local_rank, 0)} if o.dist_enabled else DIST_OFF
    return CompileOptions(**{**{f.name: getattr(o, f.name) for f in fields(o)},
        "cache_mode": o.cache_mode if o.cache_mode in (0, 1) else 1,
        "max_speculative_plans": min(o.max_speculative_plans, SPECULATIVE_PLAN_MAX),
        "phantom_horizon_steps": o.phantom_horizon_steps or 1,
        "compile_budget_ms": budget,
        "objective_mode": o.objective_mode if MODE_BALANCED <= o.objective_mode
        <= MODE_UTILIZATION_FIRST else MODE_BALANCED, **dist})


def fold(key: int, value: int) -> int:
    """hash_u64: fnv1a64 of the 8 little-endian bytes of key XOR value."""
    return fnv1a64(((key ^ value) & (2**64 - 1)).to_bytes(8, "little"))


def cache_key(source_fingerprint: int, backend: int, options: CompileOptions,
              errata: frozenset[str] = NO_ERRATA) -> int:
    """Steps 2 and 3."""
    o = normalized(options)
    numbers = (backend, o.enable_fusion, o.enable_memory_reuse, o.enable_autotune,
               o.enable_speculative_plans, o.enable_phantom_graph, o.max_speculative_plans,
               o.phantom_horizon_steps, o.objective_mode, o.memory_budget_bytes,
               milli(o.target_utilization_floor, "args.options.target_utilization_floor"),
               o.deterministic_strict, o.cache_mode,
               milli(o.compile_budget_ms, "args.options.compile_budget_ms"), o.dist_enabled,
               o.dist_backend, o.dist_strategy, o.world_size, o.rank, o.local_rank)
    key = source_fingerprint
    for v in numbers:  # 2.
        key = fold(key, int(v))
    strings = (o.autotune_db_path, o.dist_backend_path, o.dist_config_json)
    for position, s in enumerate(strings):  # 3.
        if s:
            h = fnv1a64(s.encode("utf-8"))
            key = key ^ h if E14_2 in errata else fold(key, h ^ (position + 1))
    return key


# ── wire ──────────────────────────────────────────────────────────────────────────────────────

_U64, _I32 = Int(64), Int(32, signed=True)
_OPTION_TYPES = {
    "enable_fusion": Bool(), "enable_memory_reuse": Bool(), "enable_autotune": Bool(),
    "enable_speculative_plans": Bool(), "enable_phantom_graph": Bool(),
    "max_speculative_plans": _U64, "phantom_horizon_steps": _U64, "objective_mode": _I32,
    "memory_budget_bytes": _U64, "target_utilization_floor": Int(64, hex=True),
    "deterministic_strict": Bool(), "cache_mode": _I32, "compile_budget_ms": Int(64, hex=True),
    "dist_enabled": Bool(), "dist_backend": _I32, "dist_strategy": _I32, "world_size": _I32,
    "rank": _I32, "local_rank": _I32, "autotune_db_path": Utf8(c_string=True),
    "dist_backend_path": Utf8(c_string=True), "dist_config_json": Utf8(c_string=True)}
DEFAULT_OPTIONS = {name: getattr(CompileOptions(), name) for name in _OPTION_TYPES}
"""default_compile_options() as the wire writes it."""
OPTIONS = record(**{name: Field(t, "default: PyC's", getattr(CompileOptions(), name))
                    for name, t in _OPTION_TYPES.items()})


def cache_key_op(module: dict, backend: int, options: dict,
                 errata: frozenset[str] = NO_ERRATA) -> dict:
    m = module_from_wire(module)
    require_verified(m)
    o = CompileOptions(**options)
    if o.dist_enabled and not o.dist_backend_path:
        raise InvalidInput("args.options.dist_backend_path: distributed compile needs a "
                           "backend path")
    return {"out": cache_key(fingerprint(m, errata), backend, o, errata)}


def _edges() -> list[dict]:
    from .fingerprint import GOLDEN_SOURCE
    from .ir import module_to_wire

    src = module_to_wire(GOLDEN_SOURCE)
    return [{"module": src, "backend": 0, "options": {"enable_fusion": False}},
            {"module": src, "backend": 0, "options": {}},
            {"module": src, "backend": 1, "options": {"max_speculative_plans": 9,
                                                      "objective_mode": 7, "world_size": -2}},
            {"module": src, "backend": 0, "options": {"autotune_db_path": "a.db",
                                                      "dist_config_json": "{}"}},
            {"module": src, "backend": 0, "options": {"autotune_db_path": "{}",
                                                      "dist_config_json": "a.db"}},
            {"module": src, "backend": 0, "options": SWAPPED[0]},
            {"module": src, "backend": 0, "options": SWAPPED[1]}]


SWAPPED = ({"dist_enabled": True, "dist_backend_path": "b.so", "autotune_db_path": "a.db"},
           {"dist_enabled": True, "dist_backend_path": "a.db", "autotune_db_path": "b.so"})
"""Distributed options whose autotune and backend paths swap (E14.2); with distribution off
the backend path and the config are dropped, so they cannot collide."""


declare(
    "pyc.cache_key", chapter=14,
    summary="The compile-cache key: the source fingerprint folded over the normalized "
            "options and the backend.",
    args=record(module=Field(MODULE, "the source module (verified)"),
                backend=Field(Int(32), "0 CPU, 1 CUDA", 0),
                options=Field(OPTIONS, "compile options; a missing one takes PyC's default",
                              DEFAULT_OPTIONS)),
    result=record(out=Field(Int(64, hex=True), "the key")),
    spec=(cache_key, normalized), check=check_module, errata=(E14_2,),
    domain=lambda: st.fixed_dictionaries({
        "module": modules(True).map(lambda a: a["module"]), "backend": st.integers(0, 1),
        "options": st.fixed_dictionaries({}, optional={
            "enable_fusion": st.booleans(), "max_speculative_plans": st.integers(0, 9),
            "autotune_db_path": st.sampled_from(["", "x.db", "y.db"]),
            "dist_config_json": st.sampled_from(["", "x.db", "{}"])}).map(
                lambda o: DEFAULT_OPTIONS | o)}),
    edges=_edges,
    not_applicable={"numba": "twenty-odd folds of one key per compile: nothing to batch",
                    "cupy": "twenty-odd folds of one key per compile: nothing to batch"},
)

erratum(
    E14_2, "The three option strings fold by XOR, so swapping two gives the same cache key",
    seed="pyc@fdf1563", location="src/compiler/compiler_api.c build_compile_cache_key",
    ops=("pyc.cache_key", "pyc.cache.simulate"),
    witness={"args": _edges()[5], "spec": {"out": "0x9b4c72b1664264ab"},
             "seed": {"out": "0x84637cd1d9d86844"}},
    flag="result",
    also=({"op": "pyc.cache.simulate", "args": {"steps": [
        {"module": _edges()[5]["module"], "options": _edges()[5]["options"]},
        {"module": _edges()[6]["module"], "options": _edges()[6]["options"]}]},
        "spec": {"results": [
            {"key": "0x9b4c72b1664264ab", "hit": False, "slot": 0, "plan_of": 0},
            {"key": "0x2043ea66a8386f2a", "hit": False, "slot": 1, "plan_of": 1}]},
        "seed": {"results": [
            {"key": "0x84637cd1d9d86844", "hit": False, "slot": 0, "plan_of": 0},
            {"key": "0x84637cd1d9d86844", "hit": True, "slot": 0, "plan_of": 0}]}},),
    detail="After the numbers, PyC does key = fnv1a64(s) ^ key for each non-empty string "
           "among autotune_db_path, backend_path and config_json. XOR commutes, so options "
           "that swap two of these strings (or repeat one in two places, which cancels) give "
           "the key of different options, and the in-memory cache, which compares only the "
           "key, hands back a model compiled for other options: the witness's distributed "
           "options and the same with the autotune and backend paths swapped both give the "
           "seed's key 0x84637cd1d9d86844 (with distribution off compile drops the backend "
           "path and the config, so only the autotune path enters). The spec folds each "
           "string with its position, as it folds the numbers.",
)
