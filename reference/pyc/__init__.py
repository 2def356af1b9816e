"""Reference implementation: PyC."""
