"""`crucible-spec record`: record a PyTorch program's iterations into a .crtrace file."""

from __future__ import annotations

import argparse
import importlib

from . import console
from .common import UsageError, check_output, output_stream, positive_int, write_output


def run(args: argparse.Namespace) -> int:
    check_output(args.output, args.force, stdout_ok=True)
    try:
        importlib.import_module("torch")
    except ImportError:
        raise UsageError("needs PyTorch: python -m pip install -e '.[torch]'") from None
    from .. import recorder
    from ..spec.crucible.crtrace import write_crtrace

    try:
        with console.messages("record") as progress, \
                recorder.load_program(args.script) as program:
            trace = recorder.record(program, args.iterations, args.raw_pointers, progress)
    except recorder.ScriptError as e:
        raise UsageError(str(e)) from None
    data = write_crtrace(trace)
    write_output(args.output, data, args.force, stdout_ok=True)
    print(f"recorded {args.iterations} iterations of {args.script}: {len(trace.entries)} ops, "
          f"{len(trace.metas)} metas, {len(trace.names)} names, {len(data)} bytes -> "
          f"{args.output}", file=output_stream(args.output))
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser(
        "record", help="record a PyTorch program into a .crtrace file",
        description="Run a PyTorch program on the CPU under a TorchDispatchMode and write every "
                    "ATen op as the native Vessel records it: one ring entry per op with its "
                    "input and output TensorMetas, the training phase, the module scope and the "
                    "op and scope names. The script (a .py file or an importable module) "
                    "defines `model` (an nn.Module, or a list or dict of modules) and step() "
                    "(one iteration); setup(), if defined, runs once first, unrecorded.")
    p.add_argument("script", metavar="SCRIPT_OR_MODULE", help="a .py file or a module name")
    p.add_argument("-o", "--output", required=True, metavar="PATH",
                   help="the .crtrace to write (an existing file is kept unless --force; "
                        "'-' writes it to standard output)")
    p.add_argument("--force", action="store_true", help="replace an existing output file")
    p.add_argument("--iterations", type=positive_int, default=3,
                   help="steps to record back to back (default 3: iteration detection needs "
                        "two full iterations plus a few ops)")
    p.add_argument("--raw-pointers", action="store_true",
                   help="write real data_ptr addresses (default: each storage remapped to a "
                        "fake base in first-seen order, so two recordings are byte-identical)")
    p.set_defaults(func=run)
