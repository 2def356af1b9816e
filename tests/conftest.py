"""Shared fixtures: the loaded registry and the implementations under test."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

import crucible_spec

crucible_spec.load_all()

settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          derandomize=True,
                          print_blob=True)
settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(scope="session")
def registry():
    from crucible_spec.spec.registry import REGISTRY

    return REGISTRY
