"""Reference for the layout ops: the declaration's own codec, applied record by record."""

from __future__ import annotations

from ...spec.core.layout_ops import layout_decode, layout_encode, layout_info
from ...spec.core.registry import reference

reference("layout.info")(layout_info)
reference("layout.decode")(layout_decode)
reference("layout.encode")(layout_encode)
