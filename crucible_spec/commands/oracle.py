"""`crucible-spec oracle`: ask the reference where bytes or answers diverge."""

from __future__ import annotations

import argparse
import inspect
import json
from typing import Any

from . import oracle_cdag, oracle_replay
from .common import UsageError, count, profile_errata, read_input, sniff, what_is


def _json_object(path: str, data: bytes, wants: str) -> dict:
    """A JSON object from a file's bytes, or a UsageError saying what the file is instead and
    what the command wants."""
    kind = what_is(data)
    if kind != "text":
        hint = " (compare CDAG nodes with 'oracle cdag')" if sniff(data) == "cdag" else ""
        raise UsageError(f"{path} is {kind}{hint}: {wants}")
    try:
        value = json.loads(data)
    except ValueError as e:
        raise UsageError(f"{path} is not JSON ({e}): {wants}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{path}: expected a JSON object: {wants}")
    return value


def _read_json(path: str, wants: str) -> dict:
    return _json_object(path, read_input(path), wants)


def run_diff(args: argparse.Namespace) -> int:
    from ..conformance.oracle import diff_records
    from ..spec.core.errors import InvalidInput
    from ..spec.core.layout_ops import find_struct

    try:
        s = find_struct(args.struct)
    except InvalidInput as e:
        raise UsageError(e.message) from None
    a, b = read_input(args.a), read_input(args.b)
    for path, data in ((args.a, a), (args.b, b)):
        if not data:
            raise UsageError(f"{path} is empty: it holds no {s.name} record")
    diffs, notes = diff_records(s, a, b)
    if args.json:
        print(json.dumps({"struct": s.name, "notes": notes,
                          "differences": [d.__dict__ for d in diffs]}, indent=2))
    else:
        for n in notes:
            print(f"note: {n}")
        for d in diffs:
            print(d.describe(s.name))
        print(f"{len(diffs)} differing fields" if diffs or notes else "identical")
    return 1 if diffs or notes else 0


def run_explain(args: argparse.Namespace) -> int:
    from ..conformance.oracle import explain
    from ..spec.core.registry import REGISTRY

    if args.op not in REGISTRY.ops:
        raise UsageError(f"no op named {args.op!r} (see 'crucible-spec ops')")
    request = _read_json(args.args, "ARGS.json holds the args object or a whole request")
    got = _read_json(args.got, "GOT.json holds the result object or a whole response")
    op_args = request.get("args", request) if "op" in request else request
    ex = explain(args.op, op_args, got, profile_errata(args.profile))
    op = ex.op
    print(f"{op.name} (chapter {op.chapter}): {op.summary}")
    for fn in op.spec:
        print(f"\nspec: {fn.__module__.split('.')[-1]}.{fn.__name__}{inspect.signature(fn)}")
        print("  " + (inspect.getdoc(fn) or "").replace("\n", "\n  "))
    print(f"\nexpected ({args.profile}): {json.dumps(ex.expected, sort_keys=True)}")
    print(f"got: {json.dumps(got, sort_keys=True)[:500]}")
    print("first difference: " + (ex.difference.describe() if ex.difference else "none, the "
                                  "answer is right"))
    for po_id in REGISTRY.obligations_for(op.name)[:10]:
        print(f"obligation {po_id}: {REGISTRY.obligations[po_id].statement}")
    for e_id in REGISTRY.errata_for(op.name):
        print(f"erratum {e_id}: {REGISTRY.errata[e_id].title}")
    return 1 if ex.difference else 0


TRACE_INPUTS = "give a .crtrace (magic 'CRTR'), or trace.build args or a result (JSON)"
DAG_INPUTS = ("give a .crtrace (magic 'CRTR'), what 'analyze --json' prints, or a DAG in "
              "dag.merkle's args form ({dag: {nodes, root}})")


def _source(path: str, wants: str) -> bytes | dict:
    """A .crtrace's bytes (recognised by its magic) or a JSON object; anything else is a
    UsageError saying what the file is and what `wants`."""
    data = read_input(path)
    return data if sniff(data) == "crtrace" else _json_object(path, data, wants)


def _trace_file(path: str, data: bytes, errata: frozenset[str]):
    """A .crtrace's bytes, loaded."""
    from ..conformance.trace_fields import TraceFile
    from ..spec.core.errors import InvalidInput

    try:
        return TraceFile.read(data, errata)
    except InvalidInput as e:
        raise UsageError(f"{path} is not a valid .crtrace: {e.message}") from None


def _pipeline(path: str, data: bytes, errata: frozenset[str]):
    """The reference pipeline's run over a .crtrace."""
    from ..conformance.trace_diff import pipeline_of
    from ..spec.core.errors import InvalidInput

    try:
        return pipeline_of(_trace_file(path, data, errata), errata)
    except InvalidInput as e:
        raise UsageError(f"{path}: {e.message}") from None


def _graph_source(path: str, source: bytes | dict, region: int, profile: str) -> dict:
    """A trace graph in trace.build's result form: from a .crtrace (region K of the reference
    pipeline), from trace.build args (built by the reference), or a result as it is."""
    from ..spec.core.errors import InvalidInput
    from ..spec.crucible.trace_build_ops import graph_to_wire, trace_build

    errata = profile_errata(profile)
    if isinstance(source, bytes):
        run = _pipeline(path, source, errata)
        if not 0 <= region < len(run.regions):
            raise UsageError(f"{path} has {len(run.regions)} regions; no region {region}")
        r = run.regions[region]
        return graph_to_wire(r.graph, r.plan)
    value = source.get("result", source.get("args", source)) if "op" in source else source
    if "fwd_offsets" in value or "offsets" in value:
        return value
    try:
        if "ops" in value:
            return trace_build(value["ops"], value.get("kernels", []), errata)
        if "slots" in value:
            from ..spec.crucible.memory_plan import plan_compute

            return plan_compute(value["slots"])
    except InvalidInput as e:
        raise UsageError(f"{path}: {e.message}") from None
    raise UsageError(f"{path}: expected a .crtrace, or a trace.build or plan.compute result "
                     f"or args")


def _report(findings: list, as_json: bool, same: str) -> int:
    if as_json:
        print(json.dumps([{"where": f.where, "text": f.text} for f in findings], indent=2))
    else:
        print("\n".join(f.describe() for f in findings) if findings else same)
    return 1 if findings else 0


def _print_comparison(c, as_json: bool, same: str) -> int:
    if as_json:
        print(json.dumps(c.to_json(), indent=2))
    else:
        print("\n".join(c.lines()) if c.first else same)
    return 1 if c.first else 0


def run_trace(args: argparse.Namespace) -> int:
    """Two .crtrace files op by op (what both hold, when one does not load), or two regions of
    one; else two trace graphs (JSON)."""
    from ..conformance.trace_diff import compare_regions, compare_traces
    from ..conformance.trace_prefix import compare_held, load_side
    from ..spec.core.errors import InvalidInput

    errata = profile_errata(args.profile)
    if args.against is not None:
        if args.got is not None:
            raise UsageError("--against compares two regions of one trace: give one file")
        data = read_input(args.expected)
        if sniff(data) != "crtrace":
            raise UsageError(f"{args.expected} is {what_is(data)}: --against needs a .crtrace "
                             f"(magic 'CRTR')")
        loaded = _trace_file(args.expected, data, errata)
        try:
            c = compare_regions(loaded, args.region, args.against, errata)
        except IndexError as e:
            raise UsageError(f"{args.expected}: {e}") from None
        except InvalidInput as e:
            raise UsageError(f"{args.expected}: {e.message}") from None
        return _print_comparison(c, args.json, f"regions {args.region} and {args.against} "
                                               f"hash the same")
    if args.got is None:
        raise UsageError("give two traces, or one with --region I --against J")
    sources = [_source(p, TRACE_INPUTS) for p in (args.expected, args.got)]
    if not all(isinstance(s, bytes) for s in sources):
        return run_graph(args, sources)
    a, b = (load_side(label, data, errata) for label, data in zip(("A", "B"), sources,
                                                                   strict=True))
    if a.loaded is None and b.loaded is None:
        raise UsageError(f"{args.expected} is not a valid .crtrace: {a.problem} (nor is "
                         f"{args.got}: give one that loads to compare the other against)")
    try:
        if a.loaded is None or b.loaded is None:
            return _print_comparison(compare_held(a, b), args.json, "identical files")
        return _print_comparison(compare_traces(a.loaded, b.loaded, errata), args.json,
                                 "identical traces")
    except InvalidInput as e:
        raise UsageError(e.message) from None


def run_graph(args: argparse.Namespace, sources: list | None = None) -> int:
    from ..conformance import oracle_graphs
    from ..spec.core.errors import InvalidInput

    paths = (args.expected, args.got)
    sources = sources or [_source(p, TRACE_INPUTS) for p in paths]
    expected, got = (_graph_source(p, s, args.region, args.profile)
                     for p, s in zip(paths, sources, strict=True))
    try:
        if args.action == "trace":
            findings = oracle_graphs.trace_diff(expected, got)
        else:
            findings = oracle_graphs.plan_diff(expected, got)
    except InvalidInput as e:
        raise UsageError(e.message) from None
    return _report(findings, args.json, f"identical {args.action}s")


def _dag_of(path: str, profile: str) -> tuple[str, Any]:
    """("run", region nodes) for a .crtrace (its reference pipeline's regions) or an
    `analyze --json` report; ("dag", a DAG in dag.merkle's args form) otherwise."""
    from ..conformance.oracle_graphs import report_nodes, run_nodes
    from ..spec.core.errors import InvalidInput

    source = _source(path, DAG_INPUTS)
    if isinstance(source, bytes):
        return "run", run_nodes(_pipeline(path, source, profile_errata(profile)).regions)
    if "regions" in source and "boundaries" in source:
        try:
            return "run", report_nodes(source["regions"])
        except InvalidInput as e:
            raise UsageError(f"{path}: {e.message}") from None
    return "dag", source.get("dag", source)


def run_dag(args: argparse.Namespace) -> int:
    from ..conformance import oracle_graphs
    from ..spec.core.errors import InvalidInput

    (ka, a), (kb, b) = (_dag_of(p, args.profile) for p in (args.expected, args.got))
    if ka != kb:
        run, dag = (args.expected, args.got) if ka == "run" else (args.got, args.expected)
        raise UsageError(f"{run} is a pipeline run (a .crtrace or analyze's report) and {dag} "
                         f"a DAG: compare a run with a run, or a DAG with a DAG")
    errata = profile_errata(args.profile)
    try:
        findings = oracle_graphs.runs_diff(a, b, errata) if ka == "run" else \
            oracle_graphs.dag_diff(a, b, errata)
    except InvalidInput as e:
        raise UsageError(e.message) from None
    return _report(findings, args.json, "identical regions" if ka == "run" else
                   "identical DAGs")


def _graph_parser(osub, name: str, what: str, description: str, func,
                  region: bool = True) -> argparse.ArgumentParser:
    g = osub.add_parser(name, help=what, description=description)
    g.add_argument("expected", metavar="EXPECTED")
    g.add_argument("got", metavar="GOT", nargs="?" if name == "trace" else None)
    if region:
        g.add_argument("--region", type=count, default=0,
                       help="for a .crtrace: which region of the pipeline (default 0)")
    g.add_argument("--profile", default="crucible", help="errata profile (default crucible)")
    g.add_argument("--json", action="store_true", help="machine-readable output")
    g.set_defaults(func=func)
    return g


def add_parser(sub) -> None:
    p = sub.add_parser("oracle", help="find where bytes or answers diverge",
                       description="Debugging tools backed by the reference.")
    osub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    d = osub.add_parser("diff", help="field-level diff of two records or record arrays",
                        description="Compare two binary files holding one record or an array "
                                    "of records of STRUCT; print every differing member with "
                                    "its record index and byte offset. Exit 1 if they differ.")
    d.add_argument("struct", help="struct name, e.g. TensorMeta or TraceRing::Entry")
    d.add_argument("a", metavar="A.bin")
    d.add_argument("b", metavar="B.bin")
    d.add_argument("--json", action="store_true", help="machine-readable output")
    d.set_defaults(func=run_diff)
    e = osub.add_parser("explain", help="what the spec says about one answer",
                        description="Show the op's spec text, the expected answer for ARGS, the "
                                    "first difference of GOT from it, and the op's proof "
                                    "obligations and errata. ARGS.json holds the args object (or "
                                    "a whole request); GOT.json the result object (or a whole "
                                    "response). Exit 1 if GOT is wrong.")
    e.add_argument("op")
    e.add_argument("args", metavar="ARGS.json")
    e.add_argument("got", metavar="GOT.json")
    e.add_argument("--profile", default="crucible", help="errata profile (default crucible)")
    e.set_defaults(func=run_explain)
    sources = ("EXPECTED and GOT are each a .crtrace (the reference builds region --region of "
               "its pipeline), trace.build args (built by the reference) or a trace.build "
               "result (JSON).")
    t = _graph_parser(
        osub, "trace", "first divergent op and field of two traces, and what it changes",
        "Two .crtrace files (recognised by their magic): walk both op by op and name the first "
        "divergent op by index and name, the field (ops[40].inputs[1].sizes[0]) with both "
        "values and its byte offset in each file, then the consequences: the region it lies "
        "in, which content and Merkle hashes, slots and plan offsets change, and how many ops "
        "differ in all. A difference outside every op (header, names, a byte no field "
        "covers) is named by its offset; every further divergent op is named. When a "
        "file does not load (cut short, say), the fields of the ops both files hold whole are "
        "compared, and where that file ends is named. With --against J and one file: why "
        "region J is not "
        "region --region (the first op whose hashed fields differ). EXPECTED and GOT may "
        "also be trace.build args or results (JSON): then the trace graphs are compared "
        "(first divergent op, edge and slot of region --region). Exit 1 if they differ, 2 on "
        "invalid input.", run_trace)
    t.add_argument("--against", type=count, metavar="J",
                   help="with one .crtrace: compare region J with region --region")
    t.set_defaults(layers=lambda args: ("spec", "reference"))
    _graph_parser(osub, "plan", "first divergent slot of two memory plans, and broken "
                                "invariants",
                  "Compare two memory plans: the first slot whose offset differs, the pools, "
                  "and every invariant GOT breaks (live slots overlapping, misaligned, outside "
                  "the pool). " + sources + " A plan.compute result or its args (slots) also "
                  "serve. Exit 1 if they differ.", run_graph)
    _graph_parser(osub, "dag", "first divergent node of two Merkle DAGs, or region of two "
                                "pipeline runs",
                  "Two pipeline runs, each a .crtrace (recognised by its magic; the reference "
                  "pipeline runs over it) or what 'analyze --json' prints: their region nodes, "
                  "each without continuation as the background thread makes them, paired in "
                  "stream order; names the first pair whose Merkle hashes differ, the first op "
                  "that differs inside it (for a .crtrace; analyze's report gives a region by "
                  "its content hash only), every other pair that differs and the region "
                  "counts. Or two DAGs (JSON in dag.merkle's args form: {dag: {nodes, root}}), "
                  "walked in lockstep as dag_diff does: the first divergent node pair, the "
                  "kind of divergence and the nodes' Merkle hashes. Exit 1 if they differ, 2 "
                  "on invalid input (an empty file, or one of another kind, is named for what "
                  "it is).", run_dag, region=False)
    oracle_cdag.add_actions(osub)
    oracle_replay.add_actions(osub)
