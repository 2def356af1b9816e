"""Cipher (chapter 18, facts §24): shard paths, HEAD and log, first writer wins, the seed
test's hash_at_step table, reopening, and the 299/300 (327/328 with a plan) store boundary of
E18.5 under each profile."""

from __future__ import annotations

import pytest

from crucible_spec.engine import Implementation
from crucible_spec.spec.core.errata import profile_errata
from crucible_spec.spec.crucible.cipher import estimate_boundary, object_path

SEED = profile_errata("crucible@8d2680a2")
H, H2 = "0x0000000000001234", "0xdeadbeef12345678"


def simulate(steps: list[dict], errata: frozenset[str] = frozenset()) -> dict:
    return Implementation("reference", errata).call("cipher.simulate", {"steps": steps})


def region(n: int, plan: bool = False, content: str | None = H, schema: int = 0xAA) -> dict:
    out: dict = {"ops": [{"schema_hash": hex(schema + i)} for i in range(n)], "has_plan": plan}
    if plan:
        out["plan"] = {"pool_bytes": 256, "slots": [{"nbytes": 256, "slot_id": 0}]}
    if content is not None:
        out["content_hash"] = content
    return out


@pytest.mark.parametrize("errata", [frozenset(), SEED])
def test_the_seed_cipher_test(errata):
    steps = [{"op": "empty"}, {"op": "store", "region": region(3)},
             {"op": "store", "region": region(3)}, {"op": "load", "hash": H},
             {"op": "advance_head", "hash": H, "step": 10}, {"op": "head"},
             {"op": "advance_head", "hash": H2, "step": 50},
             *[{"op": "hash_at_step", "step": s} for s in (0, 10, 30, 50, 999)],
             {"op": "load", "hash": "0x5678"}, {"op": "empty"}]
    out = simulate(steps, errata)
    r = out["results"]
    assert r[0] == {"empty": True} and r[1] == r[2] == {"hash": H}
    loaded = r[3]["region"]
    assert loaded["content_hash"] == H and len(loaded["ops"]) == 3
    assert r[5] == {"hash": H}
    assert [x["hash"] for x in r[7:12]] == ["0x" + "0" * 16, H, H, H2, H2]
    assert r[12] == {"region": None} and r[13] == {"empty": False}
    files = out["files"]
    assert sorted(files) == ["HEAD", "log", "objects/00/00000000001234"]
    assert files["HEAD"] == "deadbeef12345678\n"
    assert files["log"] == "10,0000000000001234,1\n50,deadbeef12345678,2\n"
    assert files["objects/00/00000000001234"].startswith("4741444307000000")


def test_object_paths_shard_on_the_first_two_hex_digits():
    assert object_path(0xDEADBEEF12345678) == "objects/de/adbeef12345678"
    assert object_path(1) == "objects/00/00000000000001"


def test_first_writer_wins_and_zero_is_never_stored():
    first, second = region(2), region(4, plan=True, schema=0x99)
    out = simulate([{"op": "store", "region": first}, {"op": "store", "region": second},
                    {"op": "load", "hash": H}, {"op": "store", "region": region(1, content="0x0")},
                    {"op": "load", "hash": "0x0"}])
    r = out["results"]
    assert r[0] == r[1] == {"hash": H}
    assert len(r[2]["region"]["ops"]) == 2 and not r[2]["region"]["has_plan"]
    assert r[3] == {"hash": "0x" + "0" * 16} and r[4] == {"region": None}
    assert list(out["files"]) == ["objects/00/00000000001234"]


def test_reopening_reads_head_and_the_log():
    out = simulate([{"op": "advance_head", "hash": H, "step": 3},
                    {"op": "advance_head", "hash": H2, "step": 7}, {"op": "open"},
                    {"op": "hash_at_step", "step": 5}, {"op": "head"},
                    {"op": "advance_head", "hash": H, "step": 9}, {"op": "open"}])
    r = out["results"]
    assert r[2] == {"head": H2, "log_entries": 2}
    assert r[3] == {"hash": H} and r[4] == {"hash": H2}
    assert r[6] == {"head": H, "log_entries": 3}
    assert out["files"]["log"].splitlines()[-1] == "9,0000000000001234,3"


def test_a_computed_content_hash_keys_the_object():
    out = simulate([{"op": "store", "region": region(2, content=None)}])
    h = out["results"][0]["hash"]
    assert h != "0x" + "0" * 16
    assert list(out["files"]) == [object_path(int(h, 16))]


@pytest.mark.parametrize("plan", [False, True])
def test_the_estimate_boundary_under_each_profile(plan):
    last = estimate_boundary(plan)
    assert last == (327 if plan else 299)
    for n, seed_stores in ((last, True), (last + 1, False)):
        steps = [{"op": "store", "region": region(n, plan)}]
        assert simulate(steps)["results"] == [{"hash": H}]
        got = simulate(steps, SEED)
        assert got["results"] == [{"hash": H if seed_stores else "0x" + "0" * 16}]
        assert bool(got["files"]) == seed_stores


def test_bad_steps_are_invalid_input():
    for steps in ([{"op": "delete"}], [{"op": "advance_head", "hash": "0x1"}],
                  [{"op": "load", "hash": "0x1", "extra": 1}], "nope"):
        with pytest.raises(Exception) as e:
            Implementation("reference").call("cipher.simulate", {"steps": steps})
        assert getattr(e.value, "code", None) == "invalid_input"
