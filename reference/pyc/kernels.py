"""Reference for PyC's kernel registry, rails, dispatch, decision log and autotune database
(chapter 12): the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.pyc.autotune_ops import db_op_wire, record_op
from ...spec.pyc.decision_log import parse_op
from ...spec.pyc.dispatch import dispatch_op
from ...spec.pyc.kernel_ops import select_op, workload_family_op
from ...spec.pyc.rails import simulate_op

reference("pyc.workload_family")(workload_family_op)
reference("pyc.kernel.select")(select_op)
reference("pyc.rails.simulate")(simulate_op)
reference("pyc.autotune.db")(db_op_wire)
reference("pyc.autotune.record")(record_op)
reference("pyc.dispatch")(dispatch_op)
reference("pyc.decision_log.parse")(parse_op)
