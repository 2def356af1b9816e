"""Reference for chapter 12's input generator: the spec's std::mt19937 and
uniform_real_distribution<float>, one request at a time."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.rng_ops import uniform_op, words_op

reference("rng.mt19937")(words_op)
reference("rng.mt19937_uniform")(uniform_op)
