"""Spec: PyC."""
