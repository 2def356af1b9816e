"""RingKernel's QueueTier (queue.tier): the tiers queue.rs's own tests state, the boundaries
and the wrapping product, as the real code (rustc -O) answers them."""

from __future__ import annotations

import pytest

from crucible_spec import load_all
from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.core.errors import SpecError
from crucible_spec.spec.core.registry import REGISTRY
from crucible_spec.witness import check

load_all()
RK = profile_errata("ringkernel@1.1.0")
TOP = 2**64


def _tier(rate: int, ms: int, errata: frozenset[str] = frozenset()) -> dict:
    return Implementation("reference", errata).call(
        "queue.tier", {"messages_per_second": rate, "headroom_ms": ms})


@pytest.mark.parametrize("rate,ms,tier,up,down", [
    (1000, 100, "Small", "Medium", "Small"),          # queue.rs test: 100 needed
    (5000, 100, "Medium", "Large", "Small"),          # 500
    (20000, 100, "Large", "ExtraLarge", "Medium"),    # 2000
    (100000, 100, "ExtraLarge", "ExtraLarge", "Large"),  # 10000
    (2560, 100, "Small", "Medium", "Small"),          # exactly 256
    (2570, 100, "Medium", "Large", "Small"),          # 257
    (4096000, 1, "Large", "ExtraLarge", "Medium"),    # exactly 4096
    (4097000, 1, "ExtraLarge", "ExtraLarge", "Large"),
    (16385000, 1, "ExtraLarge", "ExtraLarge", "Large"),  # past the largest tier
])
@pytest.mark.parametrize("profile", [frozenset(), RK])
def test_tiers_as_the_real_code_picks_them(rate, ms, tier, up, down, profile):
    got = _tier(rate, ms, profile)
    caps = {"Small": 256, "Medium": 1024, "Large": 4096, "ExtraLarge": 16384}
    assert got == {"tier": tier, "capacity": caps[tier], "upgrade": up, "downgrade": down}


@pytest.mark.parametrize("rate,ms", [(1 << 62, 4), (TOP - 1, TOP - 1), (1 << 63, 2)])
def test_a_wrapping_product_picks_small_in_ringkernel_only(rate, ms):
    """Real: 2^62 x 4 and (2^64 - 1)^2 wrap to 0 and 1; both pick Small."""
    assert _tier(rate, ms, RK)["tier"] == "Small"
    assert _tier(rate, ms)["tier"] == "ExtraLarge"


def test_a_headroom_of_2_to_the_64_is_refused():
    with pytest.raises(SpecError) as e:
        _tier(1, TOP)
    assert e.value.code == "invalid_input"


def test_the_erratum_reproduces():
    assert check(REGISTRY.errata["E4.110"]) == "reproduced"
