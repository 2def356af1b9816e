"""Pipeline runs of the seed's own tests, as wire streams, with what the real code produced.

The streams are written from the seed's test programs (the 8-op chain of its end-to-end test,
the 10-op MLP of its MLP trace test): two full iterations, then the first K ops of a third.
The expected values are those the facts sheet records from running the real C++ (§27).
"""

from __future__ import annotations

from ..spec.crucible.iteration_detector import K

FLOAT = 6


def _meta(ptr: int, *sizes: int) -> dict:
    strides = [sizes[1], 1] if len(sizes) == 2 else [1]
    return {"ndim": len(sizes), "sizes": list(sizes), "strides": strides, "dtype": FLOAT,
            "device_type": 0, "device_idx": 0, "data_ptr": hex(ptr)}


def _op(schema: int, shape: int, inputs: list[dict], outputs: list[dict]) -> dict:
    return {"schema_hash": hex(schema), "shape_hash": hex(shape), "inputs": inputs,
            "outputs": outputs}


def _feed(make, length: int) -> list[dict]:
    """Iterations 0 and 1 in full, then the first K ops of iteration 2."""
    return [make(it, i) for it in range(3) for i in range(length if it < 2 else K)]


def e2e_stream() -> list[dict]:
    """The end-to-end test: op i of iteration t reads op i - 1's 1024-float output and writes
    its own; pointers are (t + 1) * 0x100000 + (i + 1) * 0x1000."""

    def ptr(t: int, i: int) -> int:
        return (t + 1) * 0x100000 + (i + 1) * 0x1000

    return _feed(lambda t, i: _op(0x100 + i, 0x200 + i,
                                  [_meta(ptr(t, i - 1), 1024)] if i else [],
                                  [_meta(ptr(t, i), 1024)]), 8)


W1, B1, W2, B2, X = 0x10000, 0x20000, 0x30000, 0x40000, 0x50000
MM, ADD, RELU, LOSS_BWD, RELU_BWD, MM_BWD, ACCUM = range(0xA001, 0xA008)


ACT_SHAPES = [(4, 4), (4, 4), (4, 4), (4, 2), (4, 2), (4, 2), (4, 4), (4, 4), (8, 4), (8, 4)]
MLP_SCHEMAS = [MM, ADD, RELU, MM, ADD, LOSS_BWD, MM_BWD, RELU_BWD, MM_BWD, ACCUM]


def mlp_stream() -> list[dict]:
    """The MLP trace test: input[4,8] -> mm W1 -> add B1 -> relu -> mm W2 -> add B2, then the
    backward ops; op i writes activation i; parameters sit at fixed pointers, activation k of
    iteration t at (t + 1) * 0x1000000 + (k + 1) * 0x10000."""

    def op(t: int, i: int) -> dict:
        def a(k: int) -> dict:
            return _meta((t + 1) * 0x1000000 + (k + 1) * 0x10000, *ACT_SHAPES[k])

        inputs = [[_meta(X, 4, 8), _meta(W1, 8, 4)], [a(0), _meta(B1, 4)], [a(1)],
                  [a(2), _meta(W2, 4, 2)], [a(3), _meta(B2, 2)], [a(4)],
                  [a(5), _meta(W2, 4, 2)], [a(6), a(1)], [_meta(X, 4, 8), a(7)],
                  [_meta(W1, 8, 4), a(8)]][i]
        return _op(MLP_SCHEMAS[i], 0xF001 + i, inputs, [a(i)])

    return _feed(op, 10)


def region(boundary: int, start: int, num_ops: int, content: str, edges: int, slots: int,
           external: int, pool: int) -> dict:
    return {"boundary": boundary, "start": start, "num_ops": num_ops, "content_hash": content,
            "merkle_hash": content, "num_edges": edges, "num_slots": slots,
            "num_external": external, "pool_bytes": pool}


PIPELINE_RUNS = {
    "end-to-end chain": (e2e_stream, {
        "boundaries": [20], "retained": K,
        "regions": [region(20, 8, 8, "0x1b2e4e507403cbdd", 7, 8, 0, 8192)]}),
    "MLP trace": (mlp_stream, {
        "boundaries": [24], "retained": K,
        "regions": [region(24, 10, 10, "0x54b300b4f0a5396f", 10, 18, 8, 768)]}),
}
"""name -> (stream, pipeline.run result of the real code)."""

MLP_SLOTS = [  # (external, nbytes, birth, death, offset) of the MLP region, facts §27
    (True, 128, 0, 0, 0), (True, 128, 0, 0, 0), (False, 64, 0, 1, 0), (True, 16, 0, 1, 0),
    (False, 64, 1, 7, 256), (False, 64, 2, 3, 0), (True, 32, 0, 3, 0), (False, 32, 3, 4, 512),
    (True, 8, 0, 4, 0), (False, 32, 4, 5, 0), (False, 32, 5, 6, 512), (True, 32, 0, 6, 0),
    (False, 64, 6, 7, 0), (False, 64, 7, 8, 512), (True, 128, 0, 8, 0), (False, 128, 8, 9, 256),
    (True, 128, 0, 9, 0), (False, 128, 9, 9, 512)]
MLP_FWD_OFFSETS = [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 10]
MLP_REV_OFFSETS = [0, 0, 1, 2, 3, 4, 5, 6, 8, 9, 10]
