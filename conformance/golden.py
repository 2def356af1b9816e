"""The golden values of the real Crucible, as wire cases of our ops.

Each group of the golden file that an op covers becomes (op, args, result) cases with the
provenance "crucible 8d2680a2". Chapters 11, 17 and 18 add theirs from their own modules.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from ..spec.crucible.ckernel import CKernelId
from ..spec.crucible.hashing import fnv1a
from . import golden_cdag, golden_philox, golden_replay
from .golden_case import Case
from .seed_runs import PIPELINE_RUNS

GOLDEN_FILE = Path(__file__).parent / "golden" / "crucible-8d2680a2.json"
PROVENANCE = "crucible 8d2680a2"
PROFILE = "crucible@8d2680a2"


@cache
def golden() -> dict:
    return json.loads(GOLDEN_FILE.read_text())


def cases() -> list[Case]:
    """Every golden value an existing op reproduces, in a fixed order."""
    g = golden()
    out: list[Case] = []
    for name, info in g["layout"].items():
        if name != "strong_types":
            out.append(Case("layout.info", {"struct": name},
                            {k: info[k] for k in ("sizeof", "alignof", "offsets")}))
    h = g["hashes"]
    out += [Case("hash.fmix64", {"x": c["in"]}, {"out": c["out"]}) for c in h["fmix64"]]
    out += [Case("hash.wymix", {"a": c["a"], "b": c["b"]}, {"out": c["out"]})
            for c in h["wymix"]]
    out += [Case("hash.kdimmix", {"index": i}, {"out": v}) for i, v in enumerate(h["kDimMix"])]
    for c in h["fnv1a_string (crucible_hash_string)"]:
        out.append(Case("hash.schema", {"name": c["in"]}, {"out": c["out"]}))
        out.append(Case("hash.fnv1a", {"data": c["in"].encode().hex()}, {"out": c["out"]}))
    out.append(Case("hash.schema", {"name": None}, {"out": h["crucible_hash_string(NULL)"]},
                    "crucible_hash_string(NULL)"))
    out += [Case("hash.shape", {"shapes": c["shapes"]}, {"out": c["out"]})
            for c in h["shape_hash (crucible_hash_shapes)"]]
    out += [Case("types.element_size", {"dtype": c["ordinal"]},
                 {"element_size": c["element_size"]}, c["name"])
            for c in g["types"]["scalar_type_element_size"]]
    out += [Case("detector.run", {"stream": c["stream"]},
                 {"boundaries": c["boundaries"], "final_state": c["final_state"]}, c["name"])
            for c in g["iteration_detector"]]
    cm = g["content_merkle"]
    for key, value in cm["content_hash"].items():
        name, _, window = key.partition("[")
        ops = cm["region_inputs"][name]["ops"] if name in cm["region_inputs"] else []
        if window:
            start, stop = (int(x) for x in window.rstrip("]").split(":"))
            ops = ops[start:stop]
        out.append(Case("dag.content_hash", {"ops": ops}, {"out": value}, key))
    out += [Case("plan.compute", {"slots": c["slots_in"]},
                 {k: c[k] for k in ("offsets", "pool_bytes", "num_slots", "num_external")},
                 c["name"]) for c in g["memory_plan"]["cases"]]
    out.append(build_trace_case(g["build_trace"]))
    out += [Case("dag.guard_hash", {k: c[k] for k in ("kind", "op_index", "arg_index",
                                                      "dim_index")}, {"out": c["hash"]})
            for c in h["guard_hash"]]
    raw_guard = g["raw_bytes"]["Guard"]
    out.append(Case("dag.guard_hash", {"kind": 0, "op_index": 0x1234, "arg_index": 2,
                                       "dim_index": 1}, {"out": raw_guard["hash"]},
                    raw_guard["desc"]))
    out += [Case("dag.feedback_signature", {"edges": c["edges"]}, {"out": c["out"]})
            for c in h["feedback_signature"]]
    out += [Case("dag.loopterm_hash", {k: c[k] for k in ("term_kind", "repeat_count",
                                                         "epsilon_bits")}, {"out": c["out"]})
            for c in h["loopterm_hash"]]
    out += dag_cases(cm)
    out += [Case("pipeline.run", {"ops": stream()}, result, name)
            for name, (stream, result) in PIPELINE_RUNS.items()]
    out += [Case("meta.storage_nbytes", {k: c[k] for k in ("sizes", "strides", "dtype")},
                 {"nbytes": c["nbytes"]}, c["desc"]) for c in g["compute_storage_nbytes"]]
    for module in (golden_philox, golden_cdag, golden_replay):
        out += module.cases(g)
    return out


def _ints(ids: list) -> list[int]:
    return [int(x, 16) if isinstance(x, str) else x for x in ids]


def build_trace_case(b: dict) -> Case:
    """The build_trace group as one trace.build case; the kernels it registered are named in
    its note ("aten::mm.default->GEMM_MM, ..."), and its ids are hex strings in the file."""
    kernels = []
    for pair in b["registered_kernels"].split(" (")[0].split(", "):
        name, kernel = pair.split("->")
        kernels.append([f"0x{fnv1a(name.encode()):016x}", int(CKernelId[kernel])])
    ops = [{k: op[k] for k in ("kernel_id", "num_inputs", "num_outputs", "num_scalar_args",
                               "inference_mode", "is_mutable", "training_phase",
                               "torch_function")}
           | {k: _ints(op[k]) for k in ("input_trace_indices", "input_slot_ids",
                                        "output_slot_ids")} for op in b["ops_out"]]
    slots = [{k: s[k] for k in ("slot_id", "nbytes", "birth_op", "death_op", "is_external",
                                "offset_bytes", "raw_hex")} for s in b["slots"]]
    result = {"ops": ops, "edges": b["edges_fwd_csr"], "fwd_offsets": b["fwd_offsets"],
              "rev_offsets": b["rev_offsets"], "slots": slots, "pool_bytes": b["pool_bytes"],
              "num_external": b["num_external"], "content_hash": b["content_hash"]}
    return Case("trace.build", {"ops": b["ops_in"], "kernels": kernels}, result,
                "build_trace")


def dag_cases(cm: dict) -> list[Case]:
    """The Merkle hashes of the chain A -> B -> C -> TERMINAL, of A alone, and the three
    dag_diff cases, as dag.merkle and dag.diff cases."""
    ops = {name: cm["region_inputs"][name]["ops"] for name in "ABC"}

    def chain(*names: str) -> dict:
        nodes = [{"kind": "terminal"}]
        for name in reversed(names):
            nodes.append({"kind": "region", "ops": ops[name], "next": len(nodes) - 1})
        return {"nodes": nodes, "root": len(nodes) - 1}

    m = cm["dag1_chain A->B->C->TERMINAL"]
    out = [Case("dag.merkle", {"dag": chain("A", "B", "C")},
                {"merkle": [m["merkle_TERMINAL"], m["merkle_C"], m["merkle_B"], m["merkle_A"]],
                 "node_count": m["dag_node_count"]}, "dag1_chain"),
           Case("dag.merkle", {"dag": {"nodes": [{"kind": "region", "ops": ops["A"]}],
                                       "root": 0}},
                {"merkle": [cm["merkle_A_alone(next=null)"]], "node_count": 1},
                "merkle_A_alone")]
    others = {"dag1 vs dag1 (same pointer)": chain("A", "B", "C"),
              "A->B->C->T vs A->C->B->T": chain("A", "C", "B"),
              "A->B->C->T vs TERMINAL": {"nodes": [{"kind": "terminal"}], "root": 0}}
    for c in cm["dag_diff"]:
        out.append(Case("dag.diff", {"a": chain("A", "B", "C"), "b": others[c["case"]]},
                        {"kind": c["kind"], "depth": c["depth"]}, c["case"]))
    return out


def raw_images() -> list[tuple[str, str, str]]:
    """(struct, hex, description) of every populated record image."""
    return [(name, rb["hex"], rb["desc"]) for name, rb in golden()["raw_bytes"].items()]
