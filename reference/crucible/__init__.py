"""Reference implementation: Crucible."""
