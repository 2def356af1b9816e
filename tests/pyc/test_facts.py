"""Every value the facts sheet measured by running PyC at fdf1563 (§1.2-1.6), asked through
`serve` of the reference and of the numba implementation, under both profiles where the
value holds in both. The expected values are the sheet's, written out here."""

from __future__ import annotations

import json

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata

load_all()


def _op(kind, name="", shape=(2, 4), inputs=()):
    return {"kind": kind, "name": name, "dtype": 1, "shape": list(shape), "inputs": list(inputs)}


def _req(tid, size, start, end):
    return {"tensor_id": tid, "size": size, "alignment": 64, "start_step": start,
            "end_step": end}


SOURCE = {"ops": [_op("input", "lhs", (2, 3)), _op("input", "rhs", (3, 4)),
                  _op("matmul", inputs=(0, 1)), _op("relu", inputs=(2,)),
                  _op("output", inputs=(3,))]}
NO_FUSION = {"ops": [*SOURCE["ops"][:2], _op("matmul", "op_2", inputs=(0, 1)),
                     _op("relu", "op_3", inputs=(2,)), _op("output", "op_4", inputs=(3,))]}
FUSED = {"ops": [*SOURCE["ops"][:2], _op("matmul", "fused_op_2_op_3", inputs=(0, 1)),
                 _op("output", "op_4", inputs=(2,))]}
A_B_C = [_req(0, 128, 0, 2), _req(1, 64, 3, 4), _req(2, 256, 1, 3)]
ALL = dict.fromkeys(("canonicalize", "shape_inference", "layout_propagation", "fusion",
                     "liveness", "allocation", "lowering"), True)
BOTH = ("crucible", "pyc@fdf1563")

FACTS = [
    ("source fingerprint", "pyc.fingerprint", {"module": SOURCE}, BOTH,
     {"out": hex(7367339300434097518)}),
    ("post-pass fingerprint, fusion off", "pyc.fingerprint", {"module": NO_FUSION}, BOTH,
     {"out": hex(8971991241683528107)}),
    ("post-pass fingerprint, fusion on", "pyc.fingerprint", {"module": FUSED}, BOTH,
     {"out": hex(10484150177586984269)}),
    ("cache key, fusion off", "pyc.cache_key",
     {"module": SOURCE, "options": {"enable_fusion": False}}, BOTH,
     {"out": hex(10346072359797451416)}),
    ("cache key, fusion on", "pyc.cache_key",
     {"module": SOURCE, "options": {"enable_fusion": True}}, BOTH,
     {"out": hex(17405130821193028594)}),
    ("the golden pipeline", "pyc.passes", {"module": SOURCE, "passes": ALL}, ("pyc@fdf1563",),
     {"passes_run": 7, "fused_patterns": 1, "shape_bucket": "tiny:i2:b72",
      "signature": "1:r2x2x3;1:r2x3x4", "plan_count": 3}),
    ("MEMORY_FIRST, budget 256", "pyc.alloc",
     {"requests": A_B_C, "mode": "memory_first", "budget": 256}, BOTH,
     {"offsets": [0, 0, 128], "peak_bytes": 256, "reused": 1, "allocation_events": 2,
      "overlap_pairs": 2, "pressure_events": 1, "remat_tensors": 3, "remat_bytes": 159}),
    ("BALANCED, budget 256", "pyc.alloc", {"requests": A_B_C, "mode": "balanced",
                                           "budget": 256}, BOTH,
     {"offsets": [0, 0, 128], "peak_bytes": 299, "remat_tensors": 1, "remat_bytes": 85}),
    ("UTILIZATION_FIRST, budget 256", "pyc.alloc",
     {"requests": A_B_C, "mode": "utilization_first", "budget": 256}, BOTH,
     {"peak_bytes": 384, "remat_tensors": 0, "remat_bytes": 0}),
    ("the default CPU catalog", "pyc.kernel.select", {}, BOTH,
     {"found": True, "symbol": "matmul_cpu_tuned", "score": "0x4069900000000000"}),
]


@pytest.mark.parametrize("impl", ["reference", "numba"])
@pytest.mark.parametrize("what,op,args,profiles,expected", FACTS, ids=[f[0] for f in FACTS])
def test_the_facts_sheets_values_through_serve(impl, what, op, args, profiles, expected):
    for profile in profiles:
        req = json.dumps({"id": 1, "op": op, "args": args})
        got = answer(req, Implementation(impl, profile_errata(profile)), profile)["result"]
        assert {k: got[k] for k in expected} == expected, (what, profile)
