"""Golden cases of the replay, context and Vigil expectations (chapter 11) and of the
TransactionLog and RegionCache (chapter 18): what the seed's own tests measured, written out
by hand as wire cases of our ops under the profile crucible@8d2680a2.

The tests' regions come from the background thread; here they are written as JSON regions of
the same shape (an 8-op chain, op i writing slot i and reading slot i - 1, 1024 floats per
tensor), and vigil.dispatch leaves out the handles (their offsets are the planner's).
"""

from __future__ import annotations

from ..spec.core.schema import HASH64
from ..spec.crucible.replay_context_ops import context_test_args
from ..spec.crucible.replay_ops import txlog_test_steps
from .golden_case import Case

NONE = 4294967295
RECORD_MATCH = {"action": 0, "status": 0, "op_index": NONE}
DIVERGED = {"action": 0, "status": 1, "op_index": NONE}


def h(x: int) -> str:
    return f"0x{x:016x}"


def op(schema: int, shape: int) -> dict:
    return {"schema_hash": hex(schema), "shape_hash": hex(shape)}


def compiled(status: int, op_index: int = NONE) -> dict:
    return {"action": 1, "status": status, "op_index": op_index}


def engine_cases() -> list[Case]:
    """test_replay_engine: three ops (schema 100 + i, shape 200 + i)."""
    three = [op(100 + i, 200 + i) for i in range(3)]

    def result(statuses, positions, completed, diverged, first=None) -> dict:
        return {"statuses": statuses, "positions": positions, "completed": completed,
                "diverged": diverged, "first_divergence": first}

    return [
        Case("replay.engine", {"region": three, "stream": three},
             result([0, 0, 2], [0, 1, 2], 1, 0), "linear: MATCH, MATCH, COMPLETE"),
        Case("replay.engine", {"region": three, "stream": [three[0], op(999, 201),
                                                           op(999, 201)]},
             result([0, 1, 1], [0, 1, 1], 0, 2, {"index": 1, "region_op": 1, "level": "schema",
                                                 "expected": h(101), "got": h(999)}),
             "schema divergence at op 1 stays diverged"),
        Case("replay.engine", {"region": three, "stream": [three[0], op(101, 999)]},
             result([0, 1], [0, 1], 0, 1, {"index": 1, "region_op": 1, "level": "shape",
                                           "expected": h(201), "got": h(999)}),
             "shape divergence"),
        Case("replay.engine", {"region": three, "stream": three * 2},
             result([0, 0, 2] * 2, [0, 1, 2] * 2, 2, 0), "reset and replay again"),
    ]


M0 = {"status": 0, "outputs": [{"slot": 0, "offset": 0}], "inputs": []}
C1 = {"status": 2, "outputs": [{"slot": 1, "offset": 1024}], "inputs": [{"slot": 0,
                                                                          "offset": 0}]}
D = {"status": 1, "outputs": [], "inputs": []}
POOL_OFF = {"initialized": False, "pool_bytes": 0, "num_slots": 0, "num_external": 0}
POOL_TWO = {"initialized": True, "pool_bytes": 2048, "num_slots": 2, "num_external": 0}


def context(results, mode, iterations, diverged, region, cursor, pool) -> dict:
    return {"results": results, "mode": mode, "compiled_iterations": iterations,
            "diverged_count": diverged, "active_region": region, "cursor": cursor,
            "pool": pool}


def context_cases() -> list[Case]:
    """test_crucible_context and test_pool_allocator's manual plan: the args are the op's
    edges (the tests' scenarios, in order); the expected answers are the tests' assertions."""
    outs = [{"slot": 0, "offset": 0}, {"slot": 1, "offset": 1024}]
    expected = [
        (context([], 0, 0, 0, None, 0, POOL_OFF), "fresh: RECORD, counters 0"),
        (context([{"ok": False}, {"ok": True}, M0, C1, M0, C1], 1, 2, 0, 0, 0, POOL_TWO),
         "no plan: false; two passes: iterations 1 then 2; output_ptr(0) == slot_ptr(1)"),
        (context([{"ok": True}, M0, D, {}], 0, 0, 1, None, 1, POOL_OFF),
         "divergence: diverged_count 1, RECORD after deactivate"),
        (context([{"ok": True}, M0, C1, {}, {"ok": True},
                  {"status": 0, "outputs": [{"slot": 0, "offset": 0}], "inputs": []},
                  {"status": 2, "outputs": [{"slot": 1, "offset": 512}],
                   "inputs": [{"slot": 0, "offset": 0}]}],
                 1, 2, 0, 1, 0, {"initialized": True, "pool_bytes": 1024, "num_slots": 2,
                                 "num_external": 0}),
         "re-activating another region keeps counting iterations"),
        (context([{"ok": True}, M0, D, {}, {"ok": True}, M0, D, {}, {"ok": True}, M0, C1],
                 1, 1, 2, 0, 0, POOL_TWO),
         "divergences accumulate over activations: 1, 2, then a clean pass"),
        (context([{"ok": True}, {"status": 2, "outputs": outs,
                                 "inputs": [{"slot": 2, "external": None}]}, {},
                  {"status": 2, "outputs": outs,
                   "inputs": [{"slot": 2, "external": h(0x7F0000001000)}]}],
                 1, 2, 0, 0, 0, {"initialized": True, "pool_bytes": 2048, "num_slots": 3,
                                 "num_external": 1}),
         "manual plan: slots at base + 0 and base + 1024; external null until registered"),
    ]
    return [Case("context.simulate", args, result, note)
            for args, (result, note) in zip(context_test_args(), expected, strict=True)]


def txlog_cases() -> list[Case]:
    """test_transaction: begin, commit, double commit, activations, rollbacks, 30 cycles; the
    args are the op's first edge, the expected answers the test's assertions."""
    results = [{"slot": 0}, {"ok": True}, {"ok": False}, {"ok": True, "superseded": None},
               {"slot": 1}, {"ok": True}, {"ok": True, "superseded": 0}, {"slot": 0},
               {"ok": True}, {"slot": None}, {"ok": False}]
    active = 0
    for k in range(30):
        slot = (2 + k) % 16
        results += [{"slot": slot}, {"ok": True}, {"ok": True, "superseded": active}]
        active = slot
    entries = [{"step_id": j + 17, "content_hash": h(0), "merkle_root": h(0), "region": j + 17,
                "status": 3 if j == 15 else 4} for j in range(16)]
    return [Case("txlog.simulate", {"capacity": 16, "steps": txlog_test_steps()},
                 {"results": results, "entries": entries, "head": 32, "count": 16,
                  "active": 15, "active_status": 3},
                 "active step 32 after 30 more cycles")]


def cache_cases() -> list[Case]:
    """test_region_cache: dedup, and a 9th distinct hash evicting the oldest."""
    hashes = [0x1234, *range(0x2001, 0x2008), 0xFFFF]
    regions = [{"ops": [op(1, 1)], "plan": {"slots": []}, "content_hash": hex(x)}
               for x in hashes]
    fill = [{"op": "insert", "region": k} for k in range(8)]
    return [
        Case("region_cache.simulate", {"regions": regions[:1], "steps": [
            {"op": "insert", "region": 0}] * 2},
             {"results": [{"inserted": True, "size": 1}, {"inserted": False, "size": 1}],
              "head": 1, "count": 1,
              "entries": [{"region": 0, "content_hash": h(0x1234), "num_ops": 1}]},
             "the same hash twice: size 1"),
        Case("region_cache.simulate", {"regions": regions, "steps": [
            *fill, {"op": "find", "content_hash": "0x1234"}, {"op": "insert", "region": 8},
            {"op": "find", "content_hash": "0x1234"}, {"op": "find", "content_hash": "0xffff"}]},
             {"results": [{"inserted": True, "size": k + 1} for k in range(8)] + [
                 {"region": 0}, {"inserted": True, "size": 8}, {"region": None},
                 {"region": 8}],
              "head": 9, "count": 8,
              "entries": [{"region": k, "content_hash": h(hashes[k]), "num_ops": 1}
                          for k in range(8, 0, -1)]},
             "8 distinct, then a 9th evicts 0x1234"),
    ]


def chain8(shapes: list[int], nbytes: list[int], content: int) -> dict:
    offsets = [sum(nbytes[:i]) for i in range(8)]
    return {"ops": [{"schema_hash": hex(0x100 + i), "shape_hash": hex(shapes[i]),
                     "output_slot_ids": [i], "input_slot_ids": [i - 1] if i else []}
                    for i in range(8)],
            "plan": {"pool_bytes": sum(nbytes), "slots": [
                {"offset_bytes": o, "nbytes": b} for o, b in zip(offsets, nbytes, strict=True)]},
            "content_hash": hex(content)}


SHAPE_A = [0x200 + i for i in range(8)]
SHAPE_B = [0x200, 0x201, 0x202, *(0x300 + i for i in range(3, 8))]
A = chain8(SHAPE_A, [4096] * 8, 0xA)
B = chain8(SHAPE_B, [4096] * 3 + [8192] * 5, 0xB)


def it(shapes: list[int], lo: int = 0, hi: int = 8) -> list[dict]:
    return [op(0x100 + i, shapes[i]) for i in range(lo, hi)]


ALIGN = [RECORD_MATCH] * 5 + [compiled(0), compiled(0), compiled(2)]
PASS = [compiled(0)] * 7 + [compiled(2)]


def change(at: int, event: str, ctx: int, mode: int, region: int | None) -> dict:
    return {"at": at, "event": event, "ctx_mode": ctx, "mode": mode, "region": region}


def vigil(decisions, changes, ctx, mode, iterations, diverged, active, cache, step, reset,
          tx, recorded=(), migrations=()) -> dict:
    """Every publish here begins, commits and activates a transaction, so the active one is
    the last publish's (step - 1); no case persists, so the Cipher head stays 0."""
    return {"decisions": decisions, "changes": changes, "recorded": list(recorded),
            "migrations": list(migrations), "ctx_mode": ctx, "mode": mode,
            "compiled_iterations": iterations, "diverged_count": diverged,
            "active_region": active, "region_cache": cache, "step": step,
            "reset_requested": reset, "active_tx_region": tx,
            "calls": [], "active_tx_step": step - 1, "cipher_head": HASH64.encode(0)}


def vigil_cases() -> list[Case]:
    """test_vigil_dispatch and the Vigil-level tests of test_region_cache."""
    aligned = change(4, "aligned", 1, 1, 0)
    bad3, bad0 = op(0xBAD, 0x203), op(0xBAD, 0x200)
    moved = [{"at": 40, "op": i, "old_slot": i, "new_slot": i, "nbytes": 4096}
             for i in range(3)]
    return [
        Case("vigil.dispatch", {"regions": [A], "stream": it(SHAPE_A) * 2, "handles": False},
             vigil(ALIGN + PASS, [aligned], 1, 1, 2, 0, 0, [0], 1, False, 0),
             "5 aligning ops RECORD, ops 5..7 COMPILED; a full pass 7 MATCH + COMPLETE"),
        Case("vigil.dispatch", {"regions": [A], "stream": it(SHAPE_A) + it(SHAPE_A, 0, 3) +
                                [bad3, op(0x104, 0x204)], "handles": False},
             vigil(ALIGN + [compiled(0)] * 3 + [DIVERGED, RECORD_MATCH],
                   [aligned, change(11, "fallback", 0, 0, None)], 0, 0, 1, 1, None, [0], 1,
                   True, 0, recorded=[12]),
             "divergence at op 3: RECORD/DIVERGED, then recording"),
        Case("vigil.dispatch", {"regions": [A], "stream": it(SHAPE_A) + [bad0, {"publish": 0}] +
                                it(SHAPE_A) * 2, "handles": False},
             vigil([*ALIGN, DIVERGED, *ALIGN, *PASS],
                   [aligned, change(8, "fallback", 0, 0, None),
                    change(9, "published", 0, 1, None), change(14, "aligned", 1, 1, 0)],
                   1, 1, 3, 1, 0, [0], 2, True, 0),
             "recovery: a new region after the fallback aligns and compiles again"),
        Case("vigil.dispatch", {"regions": [A, B], "published": [0], "handles": False,
                                "stream": it(SHAPE_A) * 2 + it(SHAPE_A, 0, 3) +
                                [op(0x103, 0x303), {"publish": 1}] + it(SHAPE_B) * 2 +
                                it(SHAPE_A)},
             vigil(ALIGN + PASS + [compiled(0)] * 3 + [DIVERGED] + ALIGN + PASS +
                   [compiled(0)] * 3 + [compiled(0, 4)] + [compiled(0)] * 3 + [compiled(2)],
                   [aligned, change(19, "fallback", 0, 0, None),
                    change(20, "published", 0, 1, None), change(25, "aligned", 1, 1, 1),
                    change(40, "switched", 1, 1, 0)],
                   1, 1, 5, 2, 0, [1, 0], 2, True, 1, migrations=moved),
             "shape variants A and B switch at op 3; the prefix slots migrate"),
        Case("vigil.dispatch", {"regions": [A], "stream": [*it(SHAPE_A), op(57005, 48879)],
                                "handles": False},
             vigil([*ALIGN, DIVERGED], [aligned, change(8, "fallback", 0, 0, None)],
                   0, 0, 1, 1, None, [0], 1, True, 0),
             "a cache miss falls back to recording; the cache holds 1"),
    ]


def cases(g: dict) -> list[Case]:
    """The seed tests' expectations for these ops, as wire cases."""
    return engine_cases() + context_cases() + txlog_cases() + cache_cases() + vigil_cases()
