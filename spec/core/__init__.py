"""Spec: shared by every system."""
