"""Reference for PyC's speculative plans and their selection: the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.pyc.speculative import plans_op, select_op

reference("pyc.speculative.plans")(plans_op)
reference("pyc.speculative.select")(select_op)
