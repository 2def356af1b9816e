"""Reference for `cipher.simulate`: the spec's store model run call by call."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.cipher_ops import cipher_simulate

reference("cipher.simulate")(cipher_simulate)
