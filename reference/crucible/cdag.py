"""Reference for the CDAG ops: the spec's encoder and decoder, field by field."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.cdag_ops import (
    cdag_decode,
    cdag_decode_branch,
    cdag_encode,
    cdag_encode_branch,
)

reference("cdag.encode")(cdag_encode)
reference("cdag.decode")(cdag_decode)
reference("cdag.encode_branch")(cdag_encode_branch)
reference("cdag.decode_branch")(cdag_decode_branch)
