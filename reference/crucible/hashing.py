"""Reference for the chapter 8 hash primitives and the Vessel identity hashes."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.hashing import fmix64, fnv1a, kdimmix, wymix
from ...spec.crucible.vessel import schema_hash, scope_hash, shape_hash


@reference("hash.fmix64")
def fmix64_op(x: int) -> dict:
    return {"out": fmix64(x)}


@reference("hash.wymix")
def wymix_op(a: int, b: int) -> dict:
    return {"out": wymix(a, b)}


@reference("hash.fnv1a")
def fnv1a_op(data: bytes) -> dict:
    return {"out": fnv1a(data)}


@reference("hash.kdimmix")
def kdimmix_op(index: int) -> dict:
    return {"out": kdimmix(index)}


@reference("hash.schema")
def schema_hash_op(name: str | None) -> dict:
    return {"out": schema_hash(name)}


@reference("hash.shape")
def shape_hash_op(shapes: list[list[int]], errata: frozenset[str]) -> dict:
    return {"out": shape_hash(shapes, errata)}


@reference("hash.scope")
def scope_hash_op(path: str | None) -> dict:
    return {"out": scope_hash(path)}
