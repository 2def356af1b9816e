"""The yellowpaper: generated from the registry, byte-identical on every run, complete, and
checked for drift."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from crucible_spec import load_all
from crucible_spec.paper import build
from crucible_spec.paper.chapters import CHAPTERS
from crucible_spec.paper.figures import figure_digest
from crucible_spec.paper.links import layout_id, op_id, po_id
from crucible_spec.spec.core.layout_ops import layout_info
from crucible_spec.spec.core.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
COMPILER = json.loads((ROOT / "conformance" / "golden" / "crucible-8d2680a2-layouts.json")
                      .read_text())
PAPERS = ROOT / "papers"

load_all()


@pytest.fixture(scope="module")
def paper() -> build.Paper:
    return build.render_paper(PAPERS)


def _all_text(paper: build.Paper) -> str:
    return "\n".join(paper.texts.values())


def test_committed_paper_is_what_the_registry_generates():
    assert build.check(PAPERS) == []


def test_rendering_twice_gives_the_same_bytes(paper):
    again = build.render_paper(PAPERS)
    assert again.texts == paper.texts
    name = "layout-tensormeta.svg"
    assert paper.figures[name].draw() == again.figures[name].draw()


def test_every_spec_module_is_in_exactly_one_chapter():
    import pkgutil

    from crucible_spec import spec

    modules = {m.name for m in pkgutil.iter_modules(spec.__path__)}
    placed = [m for c in CHAPTERS for m in c.modules]
    assert sorted(placed) == sorted(set(placed)), "a module is in two chapters"
    assert set(placed) == modules


def test_all_twenty_chapters_exist_and_empty_ones_say_what_is_missing(paper):
    assert [c.number for c in CHAPTERS] == list(range(1, 21))
    for number in (13, 15):
        ch = next(c for c in CHAPTERS if c.number == number)
        text = paper.texts[ch.filename]
        assert "## Not yet specified" in text
        assert all(p.facts in text for p in ch.pending)
    for ch in CHAPTERS:
        if not ch.pending:
            assert "## Not yet specified" not in paper.texts[ch.filename], ch.number


def _anchors(text: str) -> set[str]:
    return set(re.findall(r'<a id="([^"]+)"></a>', text))


def test_every_registered_item_has_its_place_in_the_paper(paper):
    anchors = _anchors(_all_text(paper))
    structs = {s.name for s in REGISTRY.layouts.values()}
    missing = [n for n in REGISTRY.ops if op_id(n) not in anchors]
    missing += [n for n in structs if layout_id(n) not in anchors]
    missing += [i for i in REGISTRY.obligations if po_id(i) not in anchors]
    missing += [i for i in REGISTRY.errata if po_id(i) not in anchors]
    assert missing == []
    assert len(REGISTRY.ops) >= 46 and len(REGISTRY.obligations) >= 221


def test_every_link_inside_the_paper_resolves(paper):
    anchors_by_file = {name: _anchors(text) for name, text in paper.texts.items()}
    bad = []
    for name, text in paper.texts.items():
        prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)]+)\)", prose):
            if target.startswith("figures/"):
                if target.split("/", 1)[1] not in paper.figures:
                    bad.append((name, target))
                continue
            file, _, frag = target.partition("#")
            file = file or name
            known = file in anchors_by_file or file == "lean-coverage.md"
            if not known or (frag and frag not in anchors_by_file.get(file, set())):
                bad.append((name, target))
    assert bad == []


def _byte_table(text: str, struct: str) -> tuple[int, int, list[tuple[int, int, str]]]:
    """(sizeof, alignof, [(offset, size, field)]) as the paper prints them for `struct`."""
    section = text.split(f'<a id="{layout_id(struct)}"></a>', 1)[1]
    size, align = map(int, re.search(r"sizeof \*\*(\d+)\*\*, alignof \*\*(\d+)\*\*",
                                     section).groups())
    table = section.split("| offset |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    rows = []
    for line in table:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        rows.append((int(cells[0]), int(cells[1]), cells[3].strip("`")))
    return size, align, rows


def test_every_byte_table_equals_layout_info(paper):
    text = _all_text(paper)
    for s in {id(s): s for s in REGISTRY.layouts.values()}.values():
        size, align, rows = _byte_table(text, s.name)
        info = layout_info(s.name)
        assert (size, align) == (info["sizeof"], info["alignof"]), s.name
        printed = {f: off for off, _, f in rows if f != "(padding)"}
        own = {f: printed[f] for f in info["offsets"]}
        assert own == info["offsets"], s.name
        covered = sorted((off, off + n) for off, n, _ in rows)
        assert covered[0][0] == 0 and covered[-1][1] == size, s.name
        assert all(a[1] == b[0] for a, b in itertools.pairwise(covered)), s.name


def test_byte_tables_read_as_the_real_compiler_measured_them(paper):
    """sizeof and offsetof of the real structs, measured by compiling Crucible."""
    text, matched = _all_text(paper), 0
    for entry in COMPILER:
        s = REGISTRY.layout(entry["struct"])
        if s is None:
            continue
        size, align, rows = _byte_table(text, s.name)
        assert (size, align) == (entry["sizeof"], entry["alignof"]), s.name
        printed = {f: off for off, _, f in rows}
        same = {f: printed[f] for f in entry["offsets"] if f in printed}
        assert same == {f: entry["offsets"][f] for f in same}, s.name
        matched += len(same)
    assert matched >= 100
    assert REGISTRY.layout("TensorMeta") is not None


def test_every_figure_is_an_svg_carrying_its_source_digest(paper):
    for name, fig in paper.figures.items():
        svg = (PAPERS / "figures" / name).read_text()
        assert figure_digest(svg) == fig.digest, name
        ET.fromstring(svg[svg.index("<svg"):])
    chapters = {f.chapter for f in paper.figures.values() if not f.name.startswith("layout-")}
    assert {4, 9, 10, 11, 18} <= chapters


def test_a_worked_example_is_a_real_vector_line(paper):
    text = paper.texts[next(c for c in CHAPTERS if c.number == 8).filename]
    section = text.split(f'<a id="{op_id("hash.fnv1a")}"></a>', 1)[1]
    assert '{"args":{"data":""},"id":1,"op":"hash.fnv1a"}' in section.replace(" ", "")
    assert '"out":"0xcbf29ce484222325"' in section.replace(" ", "")


def _run(args: list[str], cwd: Path, tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "crucible_spec", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin",
                               "HOME": str(cwd)})


@pytest.fixture(scope="module")
def repo_copy(tmp_path_factory) -> tuple[Path, Path]:
    """A copy of the checkout, importable as crucible_spec once its layers are linked into
    the package (the installed package maps spec/, reference/, ... to crucible_spec.*)."""
    base = tmp_path_factory.mktemp("copy")
    listed = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    files = subprocess.run(listed, cwd=ROOT, capture_output=True, check=True
                           ).stdout.decode().split("\0")
    copy = base / "repo"
    for f in filter(None, files):
        if (ROOT / f).is_file():
            (copy / f).parent.mkdir(parents=True, exist_ok=True)
            (copy / f).write_bytes((ROOT / f).read_bytes())
    for layer in ("spec", "reference", "fast", "proofs", "conformance"):
        (copy / "crucible_spec" / layer).symlink_to(copy / layer)
    return copy, copy


@pytest.mark.slow
def test_check_fails_after_a_planted_change_until_regenerated(repo_copy):
    copy, tree = repo_copy
    assert _run(["paper", "--check"], copy, tree).returncode == 0
    meta = copy / "spec" / "tensor_meta.py"
    source = meta.read_text()
    planted = source.replace('doc="dimensions used, 0..8"', 'doc="how many dimensions"', 1)
    assert planted != source
    meta.write_text(planted)
    done = _run(["paper", "--check"], copy, tree)
    assert done.returncode == 1
    assert "05-tensormeta-and-slots.md:" in done.stdout and "how many dimensions" in done.stdout
    meta.write_text(source)
    dag = copy / "spec" / "dag.py"
    source = dag.read_text()
    dag.write_text(source.replace("MERGE_SCAN = 1024", "MERGE_SCAN = 2048", 1))
    done = _run(["paper", "--check"], copy, tree)
    assert done.returncode == 1 and "09-merkle-dag.md:" in done.stdout and "2048" in done.stdout
    dag.write_text(source)
    hashing = copy / "spec" / "hashing.py"
    source = hashing.read_text()
    fn = source.index("def fnv1a(")
    doc = source.index('"""', fn) + 3
    hashing.write_text(source[:doc] + "PLANTED. " + source[doc:])
    done = _run(["paper", "--check"], copy, tree)
    assert done.returncode == 1 and "08-hashing.md:" in done.stdout and "PLANTED." in done.stdout
    assert _run(["paper"], copy, tree).returncode == 0
    assert _run(["paper", "--check"], copy, tree).returncode == 0


def _chromium() -> str | None:
    import shutil

    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
def test_the_site_opens_in_headless_chromium_without_errors(tmp_path):
    """The built site, served over HTTP on the loopback, shows its index and a chapter with
    every image loaded and no console error, failed request or script error."""
    import functools
    import http.server
    import threading

    from crucible_spec.paper import site

    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Chromium (see .ci/run)")
        pytest.skip("no Chromium on this machine")
    from playwright.sync_api import sync_playwright

    out = tmp_path / "site"
    assert site.build_site(PAPERS, out) == len(CHAPTERS) + 4
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    problems: list[str] = []
    try:
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=browser, args=["--no-sandbox"])
            page = b.new_page()
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
            images = {}
            for name in ("index.html", "05-tensormeta-and-slots.html"):
                page.goto(f"http://127.0.0.1:{server.server_port}/{name}", wait_until="load")
                page.wait_for_load_state("networkidle")
                images[name] = page.evaluate(
                    "Array.from(document.images).map(i => [i.src, i.naturalWidth])")
            b.close()
    finally:
        server.shutdown()
    assert problems == []
    chapter = images["05-tensormeta-and-slots.html"]
    assert len(chapter) >= 3 and all(width > 0 for _, width in chapter), chapter


@pytest.mark.dot
def test_analyze_plot_draws_the_plan_and_dag_of_any_trace(tmp_path, capsys):
    from crucible_spec.cli import main

    out = tmp_path / "figs"
    assert main(["analyze", str(ROOT / "examples" / "traces" / "mlp.crtrace"), "--plot",
                 str(out)]) == 0
    assert "region nodes" in capsys.readouterr().out
    names = sorted(p.name for p in out.iterdir())
    assert names == ["dag.svg", "memory-plan-region-0.svg"]
    dag = (out / "dag.svg").read_text()
    assert "regions 0..2 (x3)" in dag and "kernel for content" in dag
    plan = (out / "memory-plan-region-0.svg").read_text()
    assert "lower bound" in plan and figure_digest(plan)


def test_analyze_plot_refuses_a_file_as_its_directory(tmp_path, capsys):
    from crucible_spec.cli import main

    target = tmp_path / "file"
    target.write_text("keep me")
    assert main(["analyze", str(ROOT / "examples" / "traces" / "mlp.crtrace"), "--plot",
                 str(target)]) == 2
    assert "is a file, not an output directory" in capsys.readouterr().err
    assert target.read_text() == "keep me"


@pytest.mark.dot
@pytest.mark.parametrize("trace,clusters", [
    ("mlp", {"forward", "backward", "optimizer"}),
    ("transformer", {"forward", "backward", "optimizer"}),
])
def test_render_draws_the_bundled_traces(tmp_path, capsys, trace, clusters):
    from crucible_spec.cli import main

    out = tmp_path / f"{trace}.svg"
    assert main(["render", str(ROOT / "examples" / "traces" / f"{trace}.crtrace"),
                 "-o", str(out)]) == 0
    assert "blocks, architecture" in capsys.readouterr().out
    svg = out.read_text()
    ET.fromstring(svg[svg.index("<svg"):])
    titles = set(re.findall(r">(forward|backward|optimizer)<", svg))
    assert titles == clusters
    assert "Backward" in svg


@pytest.mark.dot
def test_render_puts_sgd_updates_in_the_optimizer_block(tmp_path, capsys):
    """The MLP's SGD steps each parameter with add_ (no optimizer-family name); the recording
    marks those ops as the optimizer phase (op_flags 0x0a, `dump`): ops 29-32 of each 34-op
    iteration, so ops 131..134 of the last region (ops 102..135), then the epilogue."""
    from crucible_spec.cli import main

    out = tmp_path / "mlp.svg"
    assert main(["render", str(ROOT / "examples" / "traces" / "mlp.crtrace"), "-o",
                 str(out)]) == 0
    svg = out.read_text()
    assert "Optimizer" in svg and "ops 131..134 (4): add_ x4" in svg
    assert "Epilogue" in svg and "ops 135..135 (1): _local_scalar_dense" in svg
    assert svg.count("add_") == 1  # no add_ left in a Backward block


@pytest.mark.parametrize("content,message", [
    (None, "cannot read"),
    (b"not a trace at all", "is not a .crtrace"),
    (b"CRTR\x01\0\0\0\xff\xff\xff\xff\0\0\0\0", "not a valid .crtrace"),
])
def test_render_refuses_bad_input_in_one_line(tmp_path, capsys, content, message):
    from crucible_spec.cli import main

    path = tmp_path / "in.crtrace"
    if content is not None:
        path.write_bytes(content)
    assert main(["render", str(path), "-o", str(tmp_path / "out.svg")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out.svg").exists()
