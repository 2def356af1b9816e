"""Reference for the .crtrace ops: the spec's loader and canonical writer."""

from __future__ import annotations

from ...spec.core.registry import reference
from ...spec.crucible.crtrace_ops import crtrace_decode, crtrace_encode

reference("crtrace.decode")(crtrace_decode)
reference("crtrace.encode")(crtrace_encode)
