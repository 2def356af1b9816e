"""Reference for the .crtrace ops: the spec's loader and canonical writer."""

from __future__ import annotations

from ..spec.crtrace_ops import crtrace_decode, crtrace_encode
from ..spec.registry import reference

reference("crtrace.decode")(crtrace_decode)
reference("crtrace.encode")(crtrace_encode)
