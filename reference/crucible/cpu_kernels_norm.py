"""Reference for chapter 12's normalisation and pooling kernels: the spec's scalar loops, one
request at a time."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.cpu_kernels_norm import (
    avgpool_global,
    batch_norm,
    bits_of_f32,
    cross_entropy,
    f32_of_bits,
    layer_norm,
    maxpool2d,
    softmax,
)


@reference("kernel.softmax")
def softmax_op(x) -> dict:
    return {"y": softmax(x)}


@reference("kernel.layer_norm")
def layer_norm_op(x, gamma, beta, eps) -> dict:
    return {"y": layer_norm(x, gamma, beta, f32_of_bits(eps))}


@reference("kernel.batch_norm")
def batch_norm_op(x, gamma, beta, eps) -> dict:
    return {"y": batch_norm(x, gamma, beta, f32_of_bits(eps))}


@reference("kernel.maxpool2d")
def maxpool2d_op(x, k) -> dict:
    return {"y": maxpool2d(x, k)}


@reference("kernel.avgpool_global")
def avgpool_global_op(x) -> dict:
    return {"y": avgpool_global(x)}


@reference("kernel.cross_entropy")
def cross_entropy_op(logits, targets) -> dict:
    probs, loss = cross_entropy(logits, targets)
    return {"probs": probs, "loss": bits_of_f32(loss)}
