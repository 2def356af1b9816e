"""Tests: vyre."""
