"""`crucible-spec synth`: write a synthetic training-loop trace as a .crtrace file."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from . import console
from .common import UsageError, check_output, integer, output_stream, write_chunks

U32_MAX = 0xFFFF_FFFF
"""The most ops, and metas, a .crtrace's header can count (u32 fields)."""

PROGRESS_BYTES = 64 << 20
"""A write at least this big shows its progress."""


def op_count(text: str) -> int:
    """An argparse type: an op count from 1 to U32_MAX (1e5 and 100_000 allowed)."""
    return integer(text, 1, U32_MAX)


def seed_value(text: str) -> int:
    """An argparse type: a seed of at least 0."""
    return integer(text, 0)


def summary(num_ops: int, length: int, metas: int, size: int) -> str:
    full, tail = divmod(num_ops, length)
    cut = f" and one cut to {tail}" if tail else ""
    return (f"{num_ops} ops ({full} iterations of {length}{cut}), {metas} metas, "
            f"{size} bytes")


def run(args: argparse.Namespace) -> int:
    from ..synthetic import SHAPES, iteration_length
    from ..synthetic_file import file_chunks, file_size, meta_count

    if args.shape not in SHAPES:
        raise UsageError(f"--shape: {args.shape!r} is not one of {', '.join(SHAPES)}")
    seed = args.seed
    check_output(args.output, args.force, stdout_ok=True)
    metas = meta_count(args.ops, args.shape, seed)
    if metas > U32_MAX:
        raise UsageError(f"--ops {args.ops}: the trace would hold {metas} metas, more than a "
                         f".crtrace counts ({U32_MAX})")
    size = file_size(args.ops, args.shape, seed)
    with console.messages("synth") as show:
        write_chunks(args.output, file_chunks(args.ops, args.shape, seed, args.fresh_storages),
                     args.force, size, _progress(size, show), stdout_ok=True)
    length = iteration_length(args.shape, seed)
    print(f"synthesized {args.shape} (seed {seed}): "
          f"{summary(args.ops, length, metas, size)} -> {args.output}",
          file=output_stream(args.output))
    return 0


def _progress(size: int, show: Callable[[str], None]) -> Callable[[int], None]:
    """A write_chunks progress that shows every 5% of a big write, nothing for a small one."""
    if size < PROGRESS_BYTES:
        return lambda done: None
    shown = [-1]

    def progress(done: int) -> None:
        percent = 100 * done // size // 5 * 5
        if percent > shown[0]:
            shown[0] = percent
            show(f"writing: {percent}% of {size} bytes")

    return progress


def add_parser(sub) -> None:
    p = sub.add_parser(
        "synth", help="write a synthetic training-loop trace as a .crtrace file",
        description="Write a deterministic synthetic trace shaped like a recorded training "
                    "loop, without PyTorch: one iteration of a model's forward, backward and "
                    "optimizer ops (parameters and optimizer state as external tensors, "
                    "activations, views, in-place updates, a tensorless op), repeated until "
                    "--ops (the last iteration may be cut). mlp: 3 Linear layers with SGD, 51 "
                    "ops an iteration; transformer: a 2-block GPT with AdamW, 408 ops. Every "
                    "iteration has the same pointers, as a caching allocator gives them, unless "
                    "--fresh-storages. The same arguments give the same bytes.")
    p.add_argument("--ops", required=True, metavar="N", type=op_count,
                   help="number of ops in the trace (e.g. 100000 or 1e5; at most 4294967295, "
                        "what a .crtrace counts, and fewer with the metas they need)")
    p.add_argument("--shape", default="mlp", metavar="SHAPE",
                   help="mlp (default) or transformer")
    p.add_argument("--seed", default=0, metavar="S", type=seed_value,
                   help="picks the model's sizes, dtype and addresses, never its ops "
                        "(default 0)")
    p.add_argument("--fresh-storages", action="store_true",
                   help="give each iteration's activations new addresses (as 'crucible-spec "
                        "record' remaps storages) instead of reusing the first iteration's")
    p.add_argument("-o", "--output", required=True, metavar="FILE.crtrace",
                   help="the .crtrace to write (an existing file is kept unless --force; "
                        "'-' writes it to standard output)")
    p.add_argument("--force", action="store_true", help="replace an existing output file")
    p.set_defaults(func=run)
