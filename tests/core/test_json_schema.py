"""The JSON Schema contract (spec/core/json_schema.py) against the code it describes: every input an
op's domain makes and every edge meets the arg schema, every reference answer meets the result
schema, the files under conformance/schemas/ are current, and a value of the wrong JSON type
anywhere in a request is answered bad_request or invalid_input naming its field, never
internal."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from crucible_spec.commands.common import profile_errata
from crucible_spec.conformance import contract, vectors
from crucible_spec.conformance.serve import answer
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.core.json_schema import _acceptor, arg_schema, result_errors
from crucible_spec.spec.core.registry import REGISTRY

OPS = sorted(REGISTRY.ops)
PROFILES = ("crucible", "crucible@8d2680a2")
DRAWS = 12
WRONG = ([], {}, "x", None, True, 1.5, -3)
"""One value of every JSON kind (and a negative integer): at each field, those the schema
does not allow are the wrong types sent."""


def examples(name: str) -> list[dict]:
    """Wire args of the op: its edges, its declared invalid cases' and drawn domain inputs."""
    op = REGISTRY.ops[name]
    out = list(op.edges() if op.edges else [])
    out += [op.args.encode(a) for a in vectors.draw(op.strategy(), DRAWS, f"{name}/schema")]
    for inv in op.invalid:
        out += vectors.draw(inv.args(), 2, f"{name}/schema/{inv.description}")
    return out


@pytest.mark.parametrize("name", OPS)
def test_generated_inputs_and_reference_answers_meet_the_schemas(name):
    op = REGISTRY.ops[name]
    valid = Draft202012Validator(arg_schema(op))
    inputs = list(op.edges() if op.edges else [])
    inputs += [op.args.encode(a) for a in vectors.draw(op.strategy(), DRAWS, f"{name}/schema")]
    answered = 0
    for args in inputs:
        problems = [e.message[:200] for e in valid.iter_errors(args)]
        assert not problems, (args, problems)
        for profile in PROFILES:
            try:
                result = Implementation("reference", profile_errata(profile)).call(name, args)
            except SpecError as e:
                assert e.code == "invalid_input", (args, e.message)
                continue
            assert result_errors(op, result) == [], (profile, args)
            answered += 1
    assert answered, f"{name}: no generated input was answered"


def test_the_schema_files_are_up_to_date():
    assert contract.stale() == []
    index = json.loads((contract.SCHEMA_DIR / contract.INDEX).read_text())
    assert sorted(index["ops"]) == OPS


def test_stale_and_left_over_schema_files_are_found(tmp_path):
    assert contract.write(tmp_path) == sorted(contract.rendered())
    assert contract.stale(tmp_path) == []
    (tmp_path / "hash.fmix64.json").write_text("{}")
    (tmp_path / "no.such_op.json").write_text("{}")
    assert contract.stale(tmp_path) == ["hash.fmix64.json", "no.such_op.json"]


def test_optional_and_nullable_fields_are_stated():
    plan = arg_schema(REGISTRY.ops["plan.compute"])["properties"]["slots"]["items"]
    assert "is_external" in plan["properties"] and "is_external" not in plan["required"]
    name = arg_schema(REGISTRY.ops["hash.schema"])["properties"]["name"]
    assert "null" in name["type"] and "name" in arg_schema(REGISTRY.ops["hash.schema"])[
        "required"]
    fmix = arg_schema(REGISTRY.ops["hash.fmix64"])["properties"]["x"]
    assert (fmix["minimum"], fmix["maximum"]) == (0, 2**64 - 1) and fmix["pattern"]


def _paths(value: Any, path: str, normal: str) -> Iterator[tuple[str, str, Any]]:
    """(concrete path, path with list indices as [*], value) of every node under `value`."""
    yield path, normal, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, f"{path}.{k}", f"{normal}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, f"{path}[{i}]", f"{normal}[*]")


def _property_names(schema: Any, normal: str, out: dict[str, set[str]]) -> None:
    """Every member name the schema allows in an object at each [*]-path."""
    if not isinstance(schema, dict):
        return
    out.setdefault(normal, set()).update(schema.get("properties", {}))
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key, []):
            _property_names(sub, normal, out)
    for key in ("then", "if"):
        _property_names(schema.get(key), normal, out)
    for name, sub in schema.get("properties", {}).items():
        _property_names(sub, f"{normal}.{name}", out)
    for sub in [schema.get("items"), *schema.get("prefixItems", [])]:
        _property_names(sub, f"{normal}[*]", out)


def _parent(path: str) -> str:
    """args.a[0].b -> args.a[0]; args.a[0] -> args.a."""
    return re.sub(r"(\.[^.\[]+|\[\d+\])$", "", path)


def _replace(args: dict, path: str, value: Any) -> dict:
    """A copy of args with the node at `path` (args.a[0].b) set to `value`."""
    out = json.loads(json.dumps(args))
    steps = re.findall(r"\.([^.\[]+)|\[(\d+)\]", path[len("args"):])
    node = out
    for name, index in steps[:-1]:
        node = node[int(index)] if index else node[name]
    name, index = steps[-1]
    node[int(index) if index else name] = value
    return out


def mutations(name: str) -> Iterator[tuple[str, dict]]:
    """For every field path of the op's args (once per [*]-path, in the smallest well-formed
    example that has it, members the schema allows but the example lacks included): args with
    a value of each JSON kind at that path."""
    schema, allowed = arg_schema(REGISTRY.ops[name]), {}
    _property_names(schema, "args", allowed)
    valid, seen = Draft202012Validator(schema), set()
    for args in sorted(examples(name), key=lambda a: len(json.dumps(a))):
        if not valid.is_valid(args):
            continue
        for path, normal, value in list(_paths(args, "args", "args")):
            targets = [] if path == "args" else [(path, normal)]
            if isinstance(value, dict):
                targets += [(f"{path}.{m}", f"{normal}.{m}") for m in sorted(
                    allowed.get(normal, set()) - set(value))]
            for target, key in targets:
                if key not in seen:
                    seen.add(key)
                    for wrong in WRONG:
                        yield target, _replace(args, target, wrong)


@pytest.mark.parametrize("name", OPS)
def test_a_wrong_json_type_anywhere_is_a_client_error_naming_the_field(name):
    valid = Draft202012Validator(arg_schema(REGISTRY.ops[name]))
    impl, sent = Implementation("reference"), 0
    for path, args in mutations(name):
        reply = answer(json.dumps({"id": 1, "op": name, "args": args}), impl, "crucible")
        if valid.is_valid(args):
            assert reply.get("error", {}).get("code") != "internal", (path, reply)
            continue
        sent += 1
        error = reply["error"]
        assert error["code"] in ("bad_request", "invalid_input"), (path, error)
        named = error["message"].split(":", 1)[0]
        assert path.startswith(named) and len(named) >= len(_parent(path)), (path, error)
    assert sent or not REGISTRY.ops[name].args.fields, f"{name}: no wrong type was sent"


@pytest.mark.parametrize("name", OPS)
def test_the_compiled_acceptor_agrees_with_jsonschema(name):
    """check_args answers at once when the compiled validator accepts: on every example, every
    wrong-type mutation and every vector case's args it must give jsonschema's verdict."""
    op = REGISTRY.ops[name]
    python, compiled = Draft202012Validator(arg_schema(op)), _acceptor(name)
    cases = [c.args for c in _vector_cases()[name]]
    inputs = [*examples(name), *(args for _, args in mutations(name)), *cases]
    verdicts = {json.dumps(a): (python.is_valid(a), compiled.is_valid(a)) for a in inputs}
    differ = [a for a, (p, c) in verdicts.items() if p != c]
    assert not differ, differ[:3]
    assert any(p for p, _ in verdicts.values())
    assert not all(p for p, _ in verdicts.values()) or not op.args.fields


@cache
def _vector_cases() -> dict:
    return vectors.load(vectors.VECTORS_DIR, "crucible")
