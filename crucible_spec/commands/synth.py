"""`crucible-spec synth`: write a synthetic training-loop trace as a .crtrace file."""

from __future__ import annotations

import argparse
import math

from .common import UsageError, check_output, write_chunks


def integer(text: str, least: int) -> int:
    """An integer written as 100000, 100_000 or 1e5, at least `least` (an argparse type's
    check)."""
    try:
        value: int | None = int(text)
    except ValueError:
        try:
            f = float(text)
        except ValueError:
            f = math.nan
        value = int(f) if f.is_integer() else None
    if value is None or value < least:
        raise argparse.ArgumentTypeError(f"expected an integer >= {least}, got {text!r}")
    return value


def op_count(text: str) -> int:
    """An argparse type: an op count of at least 1 (1e5 and 100_000 allowed)."""
    return integer(text, 1)


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
    from ..synthetic_file import file_chunks, meta_count

    if args.shape not in SHAPES:
        raise UsageError(f"--shape: {args.shape!r} is not one of {', '.join(SHAPES)}")
    seed = args.seed
    check_output(args.output, args.force)
    size = write_chunks(args.output, file_chunks(args.ops, args.shape, seed,
                                                 args.fresh_storages), args.force)
    length = iteration_length(args.shape, seed)
    metas = meta_count(args.ops, args.shape, seed)
    print(f"synthesized {args.shape} (seed {seed}): "
          f"{summary(args.ops, length, metas, size)} -> {args.output}")
    return 0


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
                   help="number of ops in the trace (e.g. 100000 or 1e5)")
    p.add_argument("--shape", default="mlp", metavar="SHAPE",
                   help="mlp (default) or transformer")
    p.add_argument("--seed", default=0, metavar="S", type=seed_value,
                   help="picks the model's sizes, dtype and addresses, never its ops "
                        "(default 0)")
    p.add_argument("--fresh-storages", action="store_true",
                   help="give each iteration's activations new addresses (as 'crucible-spec "
                        "record' remaps storages) instead of reusing the first iteration's")
    p.add_argument("-o", "--output", required=True, metavar="FILE.crtrace",
                   help="the .crtrace to write (an existing file is kept unless --force)")
    p.add_argument("--force", action="store_true", help="replace an existing output file")
    p.set_defaults(func=run)
