"""Reference for PyC's IR, canonical text, fingerprint, cache key, compile cache, passes, run
and run guards: the spec's own functions."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.pyc.alloc import alloc_op
from ...spec.pyc.cache import cache_key_op
from ...spec.pyc.compile_cache import simulate_op
from ...spec.pyc.fingerprint import fingerprint_op, serialize_op, verify_op
from ...spec.pyc.guard import guard_op
from ...spec.pyc.pass_ops import passes_op, run_op

reference("pyc.verify")(verify_op)
reference("pyc.serialize")(serialize_op)
reference("pyc.fingerprint")(fingerprint_op)
reference("pyc.cache_key")(cache_key_op)
reference("pyc.cache.simulate")(simulate_op)
reference("pyc.passes")(passes_op)
reference("pyc.run")(run_op)
reference("pyc.guard")(guard_op)
reference("pyc.alloc")(alloc_op)
