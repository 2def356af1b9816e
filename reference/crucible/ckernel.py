"""Reference for chapter 12's CKernel taxonomy: the spec's table, names and registration
table, one request at a time."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.ckernel_ops import name_op
from ...spec.crucible.ckernel_table import classify_op, table_rows


@reference("types.ckernel_table")
def ckernel_table_op() -> dict:
    return {"rows": table_rows()}


reference("ckernel.name")(name_op)
reference("ckernel.classify")(classify_op)
