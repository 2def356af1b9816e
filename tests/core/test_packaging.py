"""The package's house: the wheel's package list names exactly the package folders on disk,
every module of a layer sits in its system's folder under a name without a system prefix, and no
two modules import each other in a circle."""

import ast
import tomllib
from pathlib import Path

import networkx as nx
import pytest

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


SYSTEMS = ("core", "crucible", "pyc", "symplex", "ringkernel", "vyre")
LAYERS = ("spec", "reference", "fast/numba", "fast/cupy", "proofs", "tests")
# The prefixes that once carried a module's system in its name (issue 31).
PREFIXES = ("pyc_", "rk_", "k2k_", "hlc_", "tla_", "vyre_", "egraph_", "symplex_", "expr_",
            "crucible_", "ringkernel_")


def _layer_modules(layer: str) -> list[tuple[str, ...]]:
    """Each module of a layer as its path's parts below the layer's folder."""
    return sorted(p.relative_to(ROOT / layer).parts for p in (ROOT / layer).rglob("*.py")
                  if "__pycache__" not in p.parts)


def _outside_a_system(parts: tuple[str, ...]) -> bool:
    if len(parts) == 1:
        return parts[0] not in ("__init__.py", "conftest.py")
    return parts[0] not in SYSTEMS


def _prefixed(parts: tuple[str, ...]) -> bool:
    names = (*parts[:-1], Path(parts[-1]).stem.removeprefix("test_"))
    return any(name.startswith(PREFIXES) for name in names)


@pytest.mark.parametrize("layer", LAYERS)
def test_every_module_of_a_layer_sits_in_a_system_folder(layer):
    assert ["/".join(m) for m in _layer_modules(layer) if _outside_a_system(m)] == []


@pytest.mark.parametrize("layer", LAYERS)
def test_no_module_name_carries_a_system_prefix(layer):
    assert ["/".join(m) for m in _layer_modules(layer) if _prefixed(m)] == []


def _module_names() -> dict[str, Path]:
    """Every module of the package by its dotted name, from the folders pyproject.toml maps."""
    _, package_dir = _declared()
    names = {}
    for dotted, folder in package_dir.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            names[".".join((dotted, *parts)).removesuffix(".__init__")] = path
    return names


def _imported_at_load(name: str, path: Path, names: dict[str, Path]) -> set[str]:
    """The package's modules `name` imports when it is loaded: its top-level imports, those
    under an `if` or `try` too, but not those inside functions or under TYPE_CHECKING."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
                visit(node.body + node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body + node.orelse + node.finalbody
                      + [s for h in node.handlers for s in h.body])
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name in names)
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[:len(package.split(".")) - max(node.level - 1, 0)]
                module = ".".join([*base, node.module] if node.level and node.module
                                  else base if node.level else [node.module])
                found.update(m for m in (module, *(f"{module}.{a.name}" for a in node.names))
                             if m in names)

    visit(ast.parse(path.read_text()).body)
    return found


def test_no_import_circle_in_the_package():
    names = _module_names()
    graph = nx.DiGraph((name, imported) for name, path in names.items()
                       for imported in _imported_at_load(name, path, names))
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert circles == [] and list(nx.selfloop_edges(graph)) == []
