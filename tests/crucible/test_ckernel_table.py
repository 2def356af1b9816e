"""The CKernel taxonomy (facts sheet §7.1, §7.2, §8.3): the id table, names and the
registration table, through `serve` and directly, with the seed's test_ckernel expectations."""

from __future__ import annotations

import json
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from crucible_spec import load_all
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.crucible.ckernel import CKERNEL_ENTRY, CKernelId
from crucible_spec.spec.crucible.ckernel_table import build_table, classify, register_op
from crucible_spec.spec.crucible.graph import NodeKind
from crucible_spec.spec.crucible.trace_entry import TRACE_ENTRY

load_all()

SEED_PAIRS = [("0xaaaa000000000001", "GEMM_LINEAR"), ("0xbbbb000000000002", "CONV2D"),
              ("0xcccc000000000003", "SDPA"), ("0xdddd000000000004", "ACT_RELU"),
              ("0xeeee000000000005", "EWISE_ADD")]
ABSENT = ["0xdead000000000000", "0x0", "0xffffffffffffffff", "0x1", "0xffff000000000010"]
FAMILY_COUNTS = {"Linear Algebra": 8, "Convolution": 6, "Attention": 4, "Normalization": 6,
                 "Activations": 13, "Elementwise Binary": 9, "Elementwise Unary": 10,
                 "Reductions": 8, "Pooling": 8, "Data Movement / Indexing": 16, "Embedding": 2,
                 "Copy / I/O": 2, "Vision": 3, "Fused high-level": 4,
                 "Linear Algebra Decompositions": 9, "SSM / Recurrence Primitives": 6,
                 "Production Inference Primitives": 6, "3D / Neural Rendering": 4,
                 "Structured Matrix / Graph": 5, "Collective Communication": 10, "I/O": 4,
                 "RNG": 2, "Synchronization": 1, "Opaque": 1}


def _ask(op: str, args: dict) -> dict:
    impl = Implementation("reference", profile_errata("crucible"))
    return answer(json.dumps({"id": 1, "op": op, "args": args}), impl, "crucible")


def _regs(pairs) -> list[dict]:
    return [{"schema_hash": h, "id": int(CKernelId[name])} for h, name in pairs]


def test_table_rows():
    """types.ckernel_table lists ids 0..146 in order with the facts' family counts and a few
    rows checked by hand (COPY_ keeps its underscore and is the only MUTATION)."""
    rows = _ask("types.ckernel_table", {})["result"]["rows"]
    assert [r["id"] for r in rows] == list(range(147))
    assert Counter(r["family"] for r in rows) == FAMILY_COUNTS
    assert rows[91] == {"id": 91, "name": "COPY_", "family": "Copy / I/O",
                        "node_kind": int(NodeKind.MUTATION)}
    assert rows[0] == {"id": 0, "name": "OPAQUE", "family": "Opaque",
                       "node_kind": int(NodeKind.EXTERN)}
    assert rows[146]["name"] == "COMM_BARRIER" and rows[146]["family"] == "Synchronization"
    kinds = Counter(NodeKind(r["node_kind"]).name for r in rows)
    assert kinds == {"POINTWISE": 32, "REDUCTION": 7, "SCAN": 2, "NOP": 16, "MUTATION": 1,
                     "EXTERN": 89}


def test_names():
    """ckernel.name: the enumerator's spelling for 0..146 (none starts with '<'), "<unknown>"
    for every byte 148..255, invalid_input for the sentinel 147 and for 256."""
    assert _ask("ckernel.name", {"id": 5})["result"]["name"] == "GEMM_LINEAR"
    assert _ask("ckernel.name", {"id": 10})["result"]["name"] == "CONV2D"
    for i in range(1, 147):
        assert not _ask("ckernel.name", {"id": i})["result"]["name"].startswith("<")
    for i in range(148, 256):
        assert _ask("ckernel.name", {"id": i})["result"]["name"] == "<unknown>"
    for i in (147, 256):
        assert _ask("ckernel.name", {"id": i})["error"]["code"] == "invalid_input"


def test_seed_expectations():
    """test_ckernel: the empty table answers OPAQUE; five registrations classify back; the
    absent hashes stay OPAQUE; registering the same pairs again changes nothing."""
    empty = _ask("ckernel.classify", {"registrations": [], "queries": ABSENT})["result"]
    assert empty == {"entries": [], "size": 0, "ids": [0] * 5}
    queries = [h for h, _ in SEED_PAIRS] + ABSENT
    once = _ask("ckernel.classify", {"registrations": _regs(SEED_PAIRS),
                                     "queries": queries})["result"]
    assert once["ids"] == [int(CKernelId[n]) for _, n in SEED_PAIRS] + [0] * 5
    assert once["size"] == 5
    twice = _ask("ckernel.classify", {"registrations": _regs(SEED_PAIRS * 2),
                                      "queries": queries})["result"]
    assert twice == once


def test_default_trace_entry_is_opaque():
    """A default TraceEntry has kernel_id OPAQUE and is_mutable false; a CKernelEntry is 16
    bytes."""
    defaults = TRACE_ENTRY.default_values()
    assert defaults["kernel_id"] == CKernelId.OPAQUE and not defaults["is_mutable"]
    assert CKERNEL_ENTRY.size == 16


def test_last_wins_in_place_and_sorted():
    """A repeated hash keeps its place and takes the later id; entries are ascending as
    unsigned 64-bit hashes."""
    regs = _regs([("0xffffffffffffffff", "GEMM_MM"), ("0x7", "CONV1D"), ("0x0", "SDPA"),
                  ("0x7", "ACT_GELU")])
    out = _ask("ckernel.classify", {"registrations": regs,
                                    "queries": ["0x7", "0x0", "0x8"]})["result"]
    assert [e["schema_hash"] for e in out["entries"]] == [
        "0x0000000000000000", "0x0000000000000007", "0xffffffffffffffff"]
    assert out["ids"] == [int(CKernelId.ACT_GELU), int(CKernelId.SDPA), 0]


def test_full_table_drops():
    """Past 256 distinct hashes a registration is dropped silently, but a held hash can still
    be re-registered."""
    regs = [{"schema_hash": hex(1000 - i), "id": 1} for i in range(300)]
    regs.append({"schema_hash": hex(1000), "id": 2})
    out = _ask("ckernel.classify", {"registrations": regs,
                                    "queries": [hex(1000), hex(1000 - 255), hex(1000 - 256)]})
    assert out["result"]["size"] == 256
    assert out["result"]["ids"] == [2, 1, 0]


def test_invalid():
    """Registering the sentinel or a byte past it, or a hash past 64 bits, is invalid_input."""
    for kid in (147, 200):
        r = _ask("ckernel.classify", {"registrations": [{"schema_hash": "0x1", "id": kid}],
                                      "queries": []})
        assert r["error"]["code"] == "invalid_input"
    r = _ask("ckernel.classify", {"registrations": [], "queries": [hex(2**64)]})
    assert r["error"]["code"] == "invalid_input"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 146)), max_size=60),
       st.lists(st.integers(0, 45), max_size=20))
def test_against_a_dict(regs, queries):
    """The table agrees with a plain dict of last registrations when it never fills, and
    register_op on the built table again changes nothing when every id is re-registered."""
    table = build_table(regs)
    model = dict(regs)
    assert [q for q in queries if classify(table, q) != model.get(q, 0)] == []
    again = [list(e) for e in table]
    for h, k in table:
        register_op(again, h, k)
    assert again == table
