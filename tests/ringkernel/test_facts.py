"""Every RingKernel vector of the facts sheet (§3.2-3.5), asked through `serve` of the reference
and of the numba implementation, under the profile(s) where it holds. The expected values are
the sheet's, written out here."""

from __future__ import annotations

import json

import pytest

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata

load_all()

SEED = "ringkernel@1.1.0"
BOTH = ("crucible", SEED)


def _ts(p: int, lo: int, node: int) -> dict:
    return {"physical": p, "logical": lo, "node_id": node}


CB_123 = {"type": 1, "id": 0, "data": "010203"}
PRESSURE = {"type": 5, "id": 12440809081581870634, "data": "04050607"}

FACTS = [
    ("(100,0,1) < (100,1,1)", "hlc.compare", {"a": _ts(100, 0, 1), "b": _ts(100, 1, 1)}, BOTH,
     {"order": -1}),
    ("(100,1,1) < (101,0,1)", "hlc.compare", {"a": _ts(100, 1, 1), "b": _ts(101, 0, 1)}, BOTH,
     {"order": -1}),
    ("node_id breaks ties", "hlc.compare", {"a": _ts(100, 5, 2), "b": _ts(100, 5, 1)}, BOTH,
     {"order": 1}),
    ("a message 200 s ahead, 100 ms allowed", "hlc.update",
     {"clock": _ts(1_000, 0, 1), "recv": _ts(1_000 + 200_000_000, 0, 2), "wall": 1_000,
      "max_drift_us": 100_000}, ("crucible",),
     {"ok": False, "outcome": "clock_skew", "skew_ms": 200_000, "max_ms": 100}),
    ("host receive: (5,0) + (5,7) gives (5,8)", "hlc.update",
     {"clock": _ts(5, 0, 1), "recv": _ts(5, 7, 2), "wall": 5, "max_drift_us": 0}, ("crucible",),
     {"physical": 5, "logical": 8, "node_id": 1}),
    ("GPU receive: (5,0) + (5,7) gives (5,1)", "hlc.device_update",
     {"clock": _ts(5, 0, 1), "recv": _ts(5, 7, 2), "wall": 5, "max_drift_us": 0}, (SEED,),
     {"physical": 5, "logical": 1}),
    ("pack: node truncated to 16 bits", "hlc.pack",
     {"physical": 1, "logical": 2, "node_id": 0x10003}, (SEED,),
     {"packed": "0x00000000000000010000000000020003"}),
    ("content digest of ControlBlock [1,2,3]", "checkpoint.digest", {"chunks": [CB_123]}, BOTH,
     {"digest": "a7171038"}),
    ("with DeviceMemory(pressure) [4,5,6,7]", "checkpoint.digest",
     {"chunks": [CB_123, PRESSURE]}, BOTH, {"digest": "f0c2205b"}),
    ("ControlBlock's offsets", "layout.info", {"struct": "ControlBlock"}, BOTH,
     {"sizeof": 128, "alignof": 128, "offsets": {
         "is_active": 0, "should_terminate": 4, "has_terminated": 8, "_pad1": 12,
         "messages_processed": 16, "messages_in_flight": 24, "input_head": 32,
         "input_tail": 40, "output_head": 48, "output_tail": 56, "input_capacity": 64,
         "output_capacity": 68, "input_mask": 72, "output_mask": 76, "hlc_state": 80,
         "last_error": 96, "error_count": 100, "_reserved": 104}}),
    ("HlcState: 16 bytes, align 16", "layout.info", {"struct": "HlcState"}, BOTH,
     {"sizeof": 16, "alignof": 16}),
    ("HlcTimestamp: 24 bytes", "layout.info", {"struct": "HlcTimestamp"}, BOTH,
     {"sizeof": 24, "alignof": 8}),
    ("MessageHeader: 256 bytes, align 64", "layout.info", {"struct": "MessageHeader"}, BOTH,
     {"sizeof": 256, "alignof": 64}),
    ("a queue of 3 holds 4, the fifth is dropped", "queue.simulate",
     {"capacity": 3, "steps": [{"op": "enqueue", "message": m} for m in range(5)]
      + [{"op": "dequeue"}]}, BOTH,
     {"capacity": 4, "head": 4, "tail": 1, "dropped": 1, "depth": 3,
      "results": [{"outcome": "ok"}] * 4 + [{"outcome": "queue_full", "capacity": 4},
                                             {"outcome": "ok", "message": 0}]}),
]


@pytest.mark.parametrize("impl", ["reference", "numba"])
@pytest.mark.parametrize("what,op,args,profiles,expected", FACTS, ids=[f[0] for f in FACTS])
def test_the_facts_sheets_values_through_serve(impl, what, op, args, profiles, expected):
    for profile in profiles:
        req = json.dumps({"id": 1, "op": op, "args": args})
        got = answer(req, Implementation(impl, profile_errata(profile)), profile)["result"]
        assert {k: got[k] for k in expected} == expected, (what, profile)
