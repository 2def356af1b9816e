"""Spec: Crucible."""
