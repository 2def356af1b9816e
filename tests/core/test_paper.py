"""The yellowpaper: generated from the registry, byte-identical on every run, complete, and
checked for drift."""

from __future__ import annotations

import itertools
import json
import os
import posixpath
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from crucible_spec import load_all
from crucible_spec.paper import build
from crucible_spec.paper.chapters import CHAPTERS, PARTS, misplaced_modules
from crucible_spec.paper.figure import figure_digest
from crucible_spec.paper.links import layout_id, op_id, po_id
from crucible_spec.paper.markdown import typeset
from crucible_spec.paper.systems import SYSTEMS, system_of
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


def test_files_the_paper_no_longer_makes_are_found_in_every_part(paper, tmp_path):
    """The flat chapters of the old layout, a part's old chapter and an old appendix page
    are stale; the pages the paper makes are not."""
    for name in ("01-notation-and-bits.md", "pyc/99-old.md", "appendix-obligations-old.md",
                 "crucible/01-notation-and-bits.md", "index.md", "lean-coverage.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    assert build.stale_files(tmp_path, paper) == [
        "01-notation-and-bits.md", "appendix-obligations-old.md", "pyc/99-old.md"]


def test_rendering_twice_gives_the_same_bytes(paper):
    again = build.render_paper(PAPERS)
    assert again.texts == paper.texts
    name = "layout-tensormeta.svg"
    assert paper.figures[name].draw() == again.figures[name].draw()


def test_every_spec_module_is_in_exactly_one_chapter_of_its_systems_part():
    import pkgutil

    from crucible_spec import spec

    prefix = f"{spec.__name__}."
    modules = {m.name.removeprefix(prefix)
               for m in pkgutil.walk_packages(spec.__path__, prefix) if not m.ispkg}
    placed = [m for c in CHAPTERS for m in c.modules]
    assert sorted(placed) == sorted(set(placed)), "a module is in two chapters"
    assert set(placed) == modules
    assert misplaced_modules() == []


@pytest.mark.parametrize("module,system", [
    ("pyc.alloc", "pyc"), ("ringkernel.queue", "ringkernel"), ("ringkernel.tla.hlc", "ringkernel"),
    ("vyre.tt", "vyre"), ("symplex.egraph.cost", "symplex"), ("crucible.expr.canon", "crucible"),
    ("core.bits", "crucible"),
])
def test_a_modules_system_is_its_package_and_core_counts_as_crucibles(module, system):
    assert system_of(module) == system


def test_the_index_names_five_parts_and_part_one_has_crucibles_twenty_chapters(paper):
    index = paper.texts["index.md"]
    titles = re.findall(r"^## (Part [IVX]+\. \w+)$", index, flags=re.M)
    assert titles == ["Part I. Crucible", "Part II. PyC", "Part III. SympleX",
                      "Part IV. RingKernel", "Part V. vyre"]
    assert [s.key for s in SYSTEMS] == list(PARTS)
    assert [c.number for c in PARTS["crucible"]] == list(range(1, 21))
    for s in SYSTEMS:
        part = paper.texts[f"{s.key}/index.md"]
        assert all(f"]({c.filename.split('/')[1]})" in part for c in PARTS[s.key]), s.key
        assert len(PARTS[s.key]) >= 3
        assert all(c.filename.startswith(f"{s.key}/") for c in PARTS[s.key])
    distribution = paper.texts["crucible/19-distribution.md"]
    assert "has no code for distribution" in distribution and "## Ops" not in distribution


def test_chapters_with_what_is_not_specified_say_so(paper):
    pending = [c for c in CHAPTERS if c.pending]
    assert {(c.system, c.title) for c in pending} == {("pyc", "Kernel registry and autotune")}
    for ch in CHAPTERS:
        text = paper.texts[ch.filename]
        assert ("## Not yet specified" in text) == bool(ch.pending), ch.filename
        assert all(p.facts in text for p in ch.pending)


def test_no_page_is_over_150_kb_and_chapters_leave_source_to_their_source_pages(paper):
    sizes = {name: len(text.encode()) for name, text in paper.texts.items()}
    assert max(sizes.values()) <= 150_000, max(sizes.items(), key=lambda kv: kv[1])
    for ch in CHAPTERS:
        assert "```python" not in paper.texts[ch.filename], ch.filename
    hashing = paper.texts["crucible/08-hashing-source.md"]
    assert '<a id="def-crucible-hashing-fnv1a"></a>' in hashing and "def fnv1a(" in hashing


def test_an_op_is_written_in_its_systems_part_with_its_registry_ids(paper):
    """pyc.alloc is a chapter-10 op in the registry: it is written in PyC's part, and its
    obligations keep their ids (PO10.x)."""
    pyc = paper.texts["pyc/04-memory-planner.md"]
    assert f'<a id="{op_id("pyc.alloc")}"></a>' in pyc
    assert re.search(r'<a id="po10-\d+"></a>PO10\.\d+', pyc)
    assert f'<a id="{op_id("pyc.alloc")}"></a>' not in paper.texts["crucible/10-memory-plan.md"]
    hlc = paper.texts["ringkernel/01-hybrid-logical-clock.md"]
    assert f'<a id="{op_id("hlc.tick")}"></a>' in hlc and "E19." in hlc


@pytest.mark.parametrize("prose,typeset_as", [
    ("values mod 2^64.", "values mod $`2^{64}`$."),
    ("2^(w-1) and 2^-16", "$`2^{w-1}`$ and $`2^{-16}`$"),
    ("in [-2**63, 2**63) and 2**width", "in [-$`2^{63}`$, $`2^{63}`$) and $`2^{width}`$"),
    ("INT64_MAX + 1 is INT64__MIN, `a_b`", "INT64\\_MAX + 1 is INT64\\_\\_MIN, `a_b`"),
    ("a ^ b, `x^2`, `2**8`, **bold** and INTEGER^(0..62)",
     "a ^ b, `x^2`, `2**8`, **bold** and INTEGER^(0..62)"),
])
def test_prose_powers_are_typeset_and_code_is_not(prose, typeset_as):
    assert typeset(prose) == typeset_as


def test_inline_maths_becomes_mathml_without_a_script():
    import markdown

    html = markdown.markdown("mod $`2^{64}`$ but `2^64` | $`x`$",
                             extensions=["crucible_spec.paper.mathml"])
    assert html.count("<math") == 2 and "<msup><mn>2</mn><mrow><mn>64</mn>" in html
    assert "<code>2^64</code>" in html and "<script" not in html


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
            if "figures/" in target:
                if target.split("figures/", 1)[1] not in paper.figures:
                    bad.append((name, target))
                continue
            file, _, frag = target.partition("#")
            file = posixpath.normpath(posixpath.join(posixpath.dirname(name), file)) \
                if file else name
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
    dag = paper.figures["dag-mlp.svg"].source
    assert re.findall(r'label="(region \d+)\\n', dag) == ["region 0", "region 1", "region 2"]
    assert dag.count("shape=component") == 1, "the equal contents share one kernel"
    machines = [f for f in paper.figures.values() if f.name.startswith("machine-")]
    assert machines and all("rankdir=TB" in f.source for f in machines)


def _fnv1a(data: bytes) -> int:
    """FNV-1a, 64 bits, from its published offset basis and prime."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) % (1 << 64)
    return h


def _fmix64(k: int) -> int:
    """MurmurHash3's 64-bit finalizer, from its published constants."""
    m = (1 << 64) - 1
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & m
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & m
    return k ^ (k >> 33)


def _example(text: str, op: str) -> list[dict]:
    section = text.split(f'<a id="{op_id(op)}"></a>', 1)[1].split('<a id="op-', 1)[0]
    block = section.split("```json\n", 1)[1].split("\n```", 1)[0]
    return [json.loads(line) for line in block.splitlines()]


def test_a_worked_example_is_a_real_vector_line_that_shows_something(paper):
    text = paper.texts["crucible/08-hashing.md"]
    request, answer = _example(text, "hash.fnv1a")
    data = bytes.fromhex(request["args"]["data"])
    assert data and answer["result"]["out"] == f"0x{_fnv1a(data):016x}"
    request, answer = _example(text, "hash.fmix64")
    x = int(request["args"]["x"], 16)
    assert x != 0 and answer["result"]["out"] == f"0x{_fmix64(x):016x}" != f"0x{x:016x}"
    for op in ("kernel.mul", "kernel.transpose_2d", "kernel.avgpool_global"):
        request, answer = _example(paper.texts["crucible/12-kernels.md"], op)
        tensors = [v for v in (*request["args"].values(), *answer["result"].values())
                   if isinstance(v, dict)]
        assert tensors and all(t["data"] for t in tensors), (op, request)


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


@pytest.mark.dot
@pytest.mark.slow(seconds=60)
def test_check_fails_after_a_planted_change_until_regenerated(repo_copy):
    copy, tree = repo_copy
    assert _run(["paper", "--check"], copy, tree).returncode == 0
    meta = copy / "spec" / "crucible" / "tensor_meta.py"
    source = meta.read_text()
    planted = source.replace('doc="dimensions used, 0..8"', 'doc="how many dimensions"', 1)
    assert planted != source
    meta.write_text(planted)
    done = _run(["paper", "--check"], copy, tree)
    assert done.returncode == 1
    assert "05-tensormeta-and-slots.md:" in done.stdout and "how many dimensions" in done.stdout
    meta.write_text(source)
    dag = copy / "spec" / "crucible" / "dag.py"
    source = dag.read_text()
    dag.write_text(source.replace("MERGE_SCAN = 1024", "MERGE_SCAN = 2048", 1))
    done = _run(["paper", "--check"], copy, tree)
    assert done.returncode == 1 and "09-merkle-dag.md:" in done.stdout and "2048" in done.stdout
    dag.write_text(source)
    hashing = copy / "spec" / "crucible" / "hashing.py"
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


_PROBE = """() => {
  const column = document.querySelector('.md-content__inner').getBoundingClientRect().width;
  const figures = Array.from(document.querySelectorAll('img[src*="figures/"]')).map(i => ({
    name: i.src.split('/').pop(), natural: i.naturalWidth,
    shown: i.getBoundingClientRect().width,
    top: i.getBoundingClientRect().top + window.scrollY}));
  const maths = Array.from(document.querySelectorAll('math')).map(
    m => m.getBoundingClientRect().width);
  const wraps = Array.from(document.querySelectorAll('.md-typeset__scrollwrap'));
  const wide = wraps.filter(w => w.scrollWidth > w.clientWidth + 1);
  let scrolled = null;
  if (wide.length) { wide[0].scrollLeft = 200; scrolled = wide[0].scrollLeft; }
  const nav = Array.from(document.querySelectorAll('.md-nav__item--nested > label, '
    + '.md-nav__item--nested > .md-nav__link')).map(e => e.textContent.trim());
  return {column, figures, maths, wide: wide.length, scrolled, nav,
          height: document.body.scrollHeight};
}"""
_PAGES = ("index.html", "pyc/index.html", "crucible/04-spsc-ring-and-metalog.html",
          "crucible/05-tensormeta-and-slots.html", "crucible/08-hashing.html",
          "crucible/09-merkle-dag.html", "crucible/10-memory-plan.html", "appendix.html")


@pytest.mark.slow(seconds=50)
def test_the_site_opens_in_headless_chromium_and_reads_as_a_paper(tmp_path):
    """The built site, served over HTTP on the loopback, opens every probed page with every
    image loaded and no console error, failed request or script error; the navigation has a
    section per part; the maths is MathML the browser lays out; figures are not shrunk past
    legibility and the memory plan's sits near the top of its chapter; a wide table scrolls."""
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
    assert site.build_site(PAPERS, out) == sum(1 for _ in PAPERS.rglob("*.md")) + 1  # 404
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    problems: list[str] = []
    seen = {}
    try:
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=browser, args=["--no-sandbox"])
            page = b.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
            for name in _PAGES:
                page.goto(f"http://127.0.0.1:{server.server_port}/{name}", wait_until="load")
                page.wait_for_load_state("networkidle")
                seen[name] = page.evaluate(_PROBE)
            b.close()
    finally:
        server.shutdown()
    assert problems == []
    assert [n for n in seen["index.html"]["nav"] if n.startswith("Part ")] == [
        "Part I. Crucible", "Part II. PyC", "Part III. SympleX", "Part IV. RingKernel",
        "Part V. vyre"]
    for name, probe in seen.items():
        for f in probe["figures"]:
            assert f["natural"] > 0, (name, f)
            assert f["shown"] >= min(0.6 * f["natural"], probe["column"] - 2), (name, f)
    machines = [f for f in seen["crucible/04-spsc-ring-and-metalog.html"]["figures"]
                if f["name"].startswith("machine-")]
    assert len(machines) == 2 and all(f["shown"] >= 0.7 * f["natural"] for f in machines)
    plan = seen["crucible/10-memory-plan.html"]
    assert next(f["top"] for f in plan["figures"] if f["name"] == "memory-plan-mlp.svg") < 1500
    maths = seen["crucible/08-hashing.html"]["maths"]
    assert maths and all(w > 0 for w in maths)
    assert seen["appendix.html"]["wide"] >= 1 and seen["appendix.html"]["scrolled"] > 0


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
