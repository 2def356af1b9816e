"""Reference implementation: vyre."""
