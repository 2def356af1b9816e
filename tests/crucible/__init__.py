"""Tests: Crucible."""
