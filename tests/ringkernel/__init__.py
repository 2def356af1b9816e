"""Tests: RingKernel."""
