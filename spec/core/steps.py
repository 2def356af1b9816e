"""The wire form shared by the `*.simulate` ops: a list of steps, each {"op": name, fields}."""

from __future__ import annotations

from typing import Any

from . import shapes as js
from .errors import InvalidInput
from .layout_ops import scalar_from_wire


def parse_steps(steps: Any, ops: dict[str, tuple[str, ...]]) -> list[tuple[str, dict]]:
    """Each step as (op, its raw fields), checking the op names and field names."""
    if not isinstance(steps, list):
        raise InvalidInput("args.steps: expected a list of steps")
    out = []
    for i, step in enumerate(steps):
        if not isinstance(step, dict) or step.get("op") not in ops:
            raise InvalidInput(f"args.steps[{i}]: expected an object with op one of "
                               f"{', '.join(ops)}")
        unknown = sorted(set(step) - {"op", *ops[step["op"]]})
        if unknown:
            raise InvalidInput(f"args.steps[{i}]: {step['op']} has no field {unknown[0]!r}")
        out.append((step["op"], step))
    return out


def steps_schema(ops: dict[str, tuple[str, ...]], fields: dict[str, dict],
                 required: dict[str, tuple[str, ...]]) -> dict:
    """The JSON Schema of the steps `parse_steps(steps, ops)` accepts: each op's fields, with
    their schemas from `fields`, those named in `required` present."""
    return js.array(js.tagged("op", {op: js.obj(
        {n: fields[n] for n in required.get(op, ())},
        {n: fields[n] for n in names if n not in required.get(op, ())})
        for op, names in ops.items()}))


def step_field(step: dict, name: str, ctype: Any, default: Any, path: str) -> Any:
    """A step's field (InvalidInput as the default: the step needs it)."""
    if name not in step:
        if default is InvalidInput:
            raise InvalidInput(f"{path}: {step['op']} needs {name}")
        return default
    return scalar_from_wire(ctype, step[name], f"{path}.{name}")
