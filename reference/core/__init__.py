"""Reference implementation: shared by every system."""
