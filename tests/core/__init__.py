"""Tests: shared by every system."""
