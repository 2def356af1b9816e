"""`crucible-spec warm`: compile every numba kernel into numba's on-disk cache.

A fresh install compiles each `@njit(cache=True)` function the first time it runs, which costs
minutes in total and shows nothing. `warm` pays that once, with progress:

1. Select the ops that have a numba kernel (`--ops GLOB` narrows them).
2. For each op, build small batches of valid decoded args: its `bench(2, rng)` inputs and
   each of its edges that decodes and checks; two examples of its strategy when it has neither.
3. Run each batch through `Implementation("numba").run_batch`, the path `serve` takes, so each
   function compiles for exactly the types that path gives it, and numba writes the machine
   code beside the module (or under NUMBA_CACHE_DIR when set).
4. With `--jobs N`, ops are spread over N worker processes (numba's cache files are written
   atomically, so processes can share it); each op is timed in the process that ran it.
5. Without `--ops`, also compile each compiled model-check search (a `CompiledMachine` among
   a model obligation's checks, e.g. hlc.tla's at its .cfg) by its `warm()`, in this process.
6. Print seconds per op (and per search, named by its obligation), slowest first; exit 1
   naming every one that failed.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

from . import console
from .common import positive_int, select_ops


def warm_batches(op) -> list[list[dict]]:
    """Small batches of valid decoded args for `op` (step 2 of the module docstring): its
    bench(2) inputs, and each edge that decodes and checks on its own (edges reach code paths
    random inputs miss); two generated examples when it has neither."""
    import numpy as np

    from ..engine import decode_args
    from ..spec.core.errors import SpecError

    batches = [op.bench(2, np.random.default_rng(0))] if op.bench is not None else []
    for wire in op.edges() if op.edges else []:
        try:
            batches.append([decode_args(op, wire)])
        except SpecError:
            continue
    if batches:
        return batches
    from ..conformance.vectors import draw

    return [draw(op.strategy(), 2, f"{op.name}/warm")]


def warm_op(name: str) -> tuple[str, float, str]:
    """(op, seconds, error or '') after running `name`'s numba kernel on each warm batch; a
    batch the kernel refuses with a SpecError (an input outside its domain) still compiled."""
    from .. import load_all
    from ..engine import Implementation
    from ..spec.core.errors import SpecError
    from ..spec.core.registry import REGISTRY

    load_all()
    op = REGISTRY.ops[name]
    impl = Implementation("numba")
    start = time.perf_counter()
    try:
        for batch in warm_batches(op):
            with contextlib.suppress(SpecError):
                impl.run_batch(op, batch)
    except Exception as e:  # reported per op: one failure must not hide the others
        return name, time.perf_counter() - start, f"{type(e).__name__}: {e}"
    return name, time.perf_counter() - start, ""


def _warm_all(names: list[str], jobs: int, tell) -> list[tuple[str, float, str]]:
    """warm_op of every name, in this process or in `jobs` workers, telling each as it ends."""
    done: list[tuple[str, float, str]] = []

    def finished(result: tuple[str, float, str]) -> None:
        done.append(result)
        name, secs, error = result
        tell(f"[{len(done)}/{len(names)}] {name} {'FAILED' if error else f'{secs:.1f}s'}")

    if jobs == 1:
        for name in names:
            tell(f"[{len(done) + 1}/{len(names)}] compiling {name}")
            finished(warm_op(name))
        return done
    with ProcessPoolExecutor(jobs, multiprocessing.get_context("spawn")) as pool:
        for future in as_completed([pool.submit(warm_op, n) for n in names]):
            finished(future.result())
    return done


def warm_searches() -> list[tuple[str, float, str]]:
    """(obligation, seconds, error or '') for each compiled model-check search (step 5)."""
    from ..proofs.core.model import CompiledMachine
    from ..spec.core.registry import REGISTRY

    done = []
    for po in REGISTRY.obligations.values():
        if po.kind != "model":
            continue
        start = time.perf_counter()
        try:
            machines = [m for m in po.build(po.subject) if isinstance(m, CompiledMachine)]
            for m in machines:
                m.warm()
        except Exception as e:  # reported per obligation, as warm_op does per op
            done.append((po.id, time.perf_counter() - start, f"{type(e).__name__}: {e}"))
            continue
        if machines:
            done.append((po.id, time.perf_counter() - start, ""))
    return done


def cache_location() -> str:
    """Where numba writes its cache: NUMBA_CACHE_DIR, or __pycache__ beside each module."""
    from numba.core import config

    return config.CACHE_DIR or "__pycache__ beside each kernel module"


def run(args: argparse.Namespace) -> int:
    from ..spec.core.registry import REGISTRY

    kernels = REGISTRY.kernels["numba"]
    ops = select_ops(args.ops, lambda op: op.name in kernels)
    start = time.perf_counter()
    with console.messages("warm") as tell:
        results = _warm_all([op.name for op in ops], min(args.jobs, len(ops)), tell)
        if not args.ops:
            tell("compiling the model-check searches")
        searches = [] if args.ops else warm_searches()
    total = time.perf_counter() - start
    also = f" and {len(searches)} model-check search{'es' * (len(searches) != 1)}" \
        if searches else ""
    results += searches
    results.sort(key=lambda r: (-r[1], r[0]))
    console.print_table(["op", "seconds", "status"],
                        [(n, f"{s:.2f}", "failed" if e else "ok") for n, s, e in results],
                        right=["seconds"])
    print(f"{len(ops)} ops{also} warmed in {total:.1f}s wall ({args.jobs} job(s)); "
          f"cache: {cache_location()}")
    failed = [(n, e) for n, _, e in sorted(results) if e]
    for name, error in failed:
        print(f"crucible-spec: warm: {name} failed: {error}", file=sys.stderr)
    return 1 if failed else 0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "warm", help="compile every numba kernel into the on-disk cache",
        description="Run each op's numba kernel once on small inputs (its bench inputs, else "
                    "its edges, else generated args) through the path serve takes, and (without "
                    "--ops) each compiled model-check search at its smallest bounds, so every "
                    "cached numba function is compiled and written to numba's on-disk cache "
                    "(beside the modules, or under NUMBA_CACHE_DIR). Later runs of serve, "
                    "conform, bench and the tests load the machine code instead of compiling. "
                    "Prints seconds per op, slowest first; exit 1 naming any op that failed.")
    p.add_argument("--ops", nargs="*", metavar="GLOB",
                   help="ops to warm (default: every op with a numba kernel)")
    p.add_argument("--jobs", type=positive_int, default=1,
                   help="worker processes compiling in parallel (default 1: each worker imports "
                        "everything and compiles the shared helpers again, so more helps only "
                        "with idle cores)")
    p.set_defaults(func=run)
