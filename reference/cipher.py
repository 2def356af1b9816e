"""Reference for `cipher.simulate`: the spec's store model run call by call."""

from __future__ import annotations

from ..spec.cipher_ops import cipher_simulate
from ..spec.registry import reference

reference("cipher.simulate")(cipher_simulate)
