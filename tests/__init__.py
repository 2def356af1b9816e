"""The test suite, one folder per system (core: the tools)."""
