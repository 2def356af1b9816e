"""Spec: vyre."""
