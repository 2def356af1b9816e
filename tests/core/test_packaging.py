"""The wheel's package list names exactly the package folders on disk."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _declared() -> tuple[set[str], dict[str, str]]:
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return set(tool["packages"]), tool["package-dir"]


def _on_disk(package_dir: dict[str, str]) -> set[str]:
    found = set()
    for dotted, folder in package_dir.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((dotted, *rel)))
    return found


def test_every_declared_package_is_a_folder_and_every_folder_is_declared():
    declared, package_dir = _declared()
    on_disk = _on_disk(package_dir)
    assert sorted(declared - on_disk) == [], "declared but missing on disk"
    assert sorted(on_disk - declared) == [], "on disk but left out of the wheel"
