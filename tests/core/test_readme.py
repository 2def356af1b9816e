"""The READMEs' set-up and numbers: the set-up block creates the virtual environment it
installs into and installs the CPU-only torch within the `torch` extra's bounds before the
command it changes; the C example's op count is its dispatch table's, and its build command is
in the main README. Numbers are read from pyproject.toml and the C source, not from the code
under test."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
C_DIR = ROOT / "conformance" / "examples" / "c"


def setup_block() -> list[str]:
    """The command lines of the first shell block after 'Set up and run'."""
    section = README[README.index("## Set up and run"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


def torch_bounds() -> str:
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["torch"]
    (spec,) = [d for d in extra if d.startswith("torch")]
    return spec.removeprefix("torch")


def test_the_setup_block_makes_the_venv_first_and_pins_cpu_torch_to_the_extra():
    lines = setup_block()
    assert lines[0].startswith("python3 -m venv .venv && . .venv/bin/activate"), lines
    cpu = next(i for i, line in enumerate(lines) if "download.pytorch.org/whl/cpu" in line)
    editable = next(i for i, line in enumerate(lines) if "install -e" in line)
    assert 0 < cpu < editable
    assert f"'torch{torch_bounds()}'" in lines[cpu]


def test_the_c_example_counts_and_build_command():
    source = (C_DIR / "crucible_impl.c").read_text()
    table = re.findall(r'^\s*\{"([a-z_.0-9]+)", op_\w+\},', source, re.M)
    c_readme = (C_DIR / "README.md").read_text()
    assert f"**{len(table)} ops**" in c_readme
    assert all(f"`{name}`" in c_readme for name in table)
    assert f"ops fully supported: {len(table)} of N" in c_readme
    assert not re.search(r"\(\d+ of the \d+\)", c_readme)
    build = re.search(r"```sh\n(cc -std=c11 [^\n]*) -o crucible_impl crucible_impl.c\n",
                      c_readme).group(1)
    assert f"{build} -o crucible_impl conformance/examples/c/crucible_impl.c" in README


def test_the_signature_length_the_readme_names_is_the_detectors():
    from crucible_spec.spec.crucible.iteration_detector import K

    assert f"completes the {K}-op signature" in README and f"ends {K} ops before it" in README
