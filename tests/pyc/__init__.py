"""Tests: PyC."""
