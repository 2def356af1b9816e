"""How the conformance vectors are stored: the default profile's suite once, whole, and every
other profile as an overlay on it.

- `<root>/crucible/<chapter>/<op>.jsonl` with `manifest.json`: the default profile's complete
  suite, in the layout an implementer gets (a *flat* suite).
- `<root>/<profile>/overlay.json`: what the profile replaces in that suite. Per file
  (`<chapter>/<op>.jsonl`) it lists the line numbers it `replaces` (1-based, as case ids count),
  with the op, chapter, count and sha256 of the profile's complete file; files it does not list
  are the default's, line for line. It also holds the profile's manifest header (errata,
  generator, spec version) and the sha256 of the default's `manifest.json` it was made against.
- `<root>/<profile>/overlay.jsonl.xz`: the replacing case lines, xz-compressed, in the order
  of the files (sorted) and of their `replaces`.

An overlay holds the cases whose line differs from the default's (a different answer, or the
same answer from another source) and the witnesses of the profile's errata. Reading a profile
(`read`) merges the two into the complete suite, whose files and `manifest.json` are byte for
byte those a flat generation writes (`export` writes them out).
"""

from __future__ import annotations

import hashlib
import json
import lzma
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BASE_PROFILE = "crucible"
MANIFEST = "manifest.json"
OVERLAY = "overlay.json"
OVERLAY_CASES = "overlay.jsonl.xz"
PACKED = ".xz"
Writer = Callable[[Path, bytes], object]


@dataclass(frozen=True)
class Suite:
    """A profile's complete suite: the bytes of each `<chapter>/<op>.jsonl` and its manifest."""

    manifest: dict
    files: dict[str, bytes]

    @property
    def profile(self) -> str:
        return self.manifest["profile"]


def manifest_text(manifest: dict) -> bytes:
    """A manifest as its file holds it."""
    return (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()


def case_lines(data: bytes) -> list[str]:
    """The case lines of a file: split at newlines only (a name may hold U+2028)."""
    return [x for x in data.decode("utf-8").split("\n") if x]


def join_lines(lines: list[str]) -> bytes:
    """A vector file's bytes from its case lines."""
    return "".join(x + "\n" for x in lines).encode()


def source_family(source: str) -> str:
    """The provenance a case's source counts under (erratum and invalid sources folded)."""
    if source.startswith(("invalid:", "erratum ")):
        return source.split(":")[0].split(" ")[0]
    return source


def file_entry(op: str, chapter: int, data: bytes) -> dict:
    """A vector file's manifest entry: op, chapter, count, sha256 and provenance counts."""
    sources = Counter(source_family(json.loads(x).get("source", "")) for x in case_lines(data))
    return {"op": op, "chapter": chapter, "count": len(case_lines(data)),
            "sha256": hashlib.sha256(data).hexdigest(),
            "provenance": dict(sorted(sources.items()))}


def read_bytes(path: Path) -> bytes:
    """A case file's bytes, read from `path` or, where only that exists, from `path`.xz."""
    packed = path.with_name(path.name + PACKED)
    if not path.exists() and packed.exists():
        return lzma.decompress(packed.read_bytes())
    return path.read_bytes()


def compressed(data: bytes) -> bytes:
    """`data` xz-compressed, the same way on every run."""
    return lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)


def is_overlay(root: Path, profile: str) -> bool:
    return (root / profile / OVERLAY).is_file()


def stored_profiles(root: Path) -> list[str]:
    """The profiles with a suite under root, flat or overlay."""
    return sorted({p.parent.name for p in root.glob(f"*/{MANIFEST}")}
                  | {p.parent.name for p in root.glob(f"*/{OVERLAY}")})


def read_manifest(root: Path, profile: str) -> dict:
    """The manifest of a flat suite, or the overlay of an overlay."""
    base = root / profile
    for name in (OVERLAY, MANIFEST):
        if (base / name).is_file():
            return json.loads((base / name).read_text())
    raise FileNotFoundError(f"no vectors for profile {profile!r} at {base / MANIFEST} (run "
                            f"'crucible-spec vectors generate')")


def read(root: Path, profile: str) -> Suite:
    """The complete suite of `profile` under root, merged from its overlay where it has one.
    FileNotFoundError when there is none; ValueError when its overlay was made against another
    default suite or does not rebuild the files it recorded."""
    if not is_overlay(root, profile):
        stored = read_manifest(root, profile)
        return Suite(stored, {rel: (root / profile / rel).read_bytes()
                              for rel in sorted(stored["files"])})
    stored = json.loads((root / profile / OVERLAY).read_text())
    if is_overlay(root, stored["base"]):
        raise ValueError(f"{root / profile / OVERLAY}: its base {stored['base']} is not a "
                         f"whole suite")
    base = read(root, stored["base"])
    problem = stale(base, stored)
    if problem:
        raise ValueError(f"{root / profile / OVERLAY}: {problem}")
    suite = apply(base, stored, overlay_lines(root, profile))
    for rel, info in stored["files"].items():
        if hashlib.sha256(suite.files[rel]).hexdigest() != info["sha256"]:
            raise ValueError(f"{root / profile}: the overlay does not rebuild {rel} (regenerate)")
    return suite


def stale(base: Suite, overlay: dict) -> str | None:
    """Why `overlay` does not apply to `base` (made against another default suite), or None."""
    if hashlib.sha256(manifest_text(base.manifest)).hexdigest() != overlay["base_manifest_sha256"]:
        return (f"made against another {overlay['base']} suite (run 'crucible-spec vectors "
                f"generate --profile {overlay['profile']}')")
    return None


def overlay_lines(root: Path, profile: str) -> list[str]:
    """The replacing lines of `profile`'s overlay, in order."""
    try:
        return case_lines(lzma.decompress((root / profile / OVERLAY_CASES).read_bytes()))
    except lzma.LZMAError as e:
        raise ValueError(f"{root / profile / OVERLAY_CASES}: not xz data: {e}") from None


def apply(base: Suite, overlay: dict, lines: list[str]) -> Suite:
    """The complete suite of the overlay's profile: `base` with the overlay's lines put in."""
    files = dict(base.files)
    entries = dict(base.manifest["files"])
    replaced = sum(len(info["replaces"]) for info in overlay["files"].values())
    if len(lines) != replaced:
        raise ValueError(f"{overlay['profile']}: the overlay holds {len(lines)} cases, its "
                         f"manifest replaces {replaced}")
    todo = iter(lines)
    for rel, info in sorted(overlay["files"].items()):
        merged = case_lines(files.get(rel, b""))[:info["count"]]
        merged += [""] * (info["count"] - len(merged))
        for number in info["replaces"]:
            merged[number - 1] = next(todo)
        files[rel] = join_lines(merged)
        entries[rel] = file_entry(info["op"], info["chapter"], files[rel])
    header = {k: overlay[k] for k in ("errata", "generator", "profile", "spec_version")}
    return Suite(header | {"files": dict(sorted(entries.items()))}, files)


def overlay_of(base: Suite, suite: Suite, base_manifest_sha256: str,
               keep: frozenset[str] = frozenset()) -> tuple[dict, list[str]]:
    """(overlay manifest, replacing lines) that rebuild `suite` from `base`: every line that
    differs from the base's, and every line whose source is in `keep` (the witnesses of the
    profile's errata: `erratum <id>`)."""
    files, lines = {}, []
    for rel, data in sorted(suite.files.items()):
        ours, theirs = case_lines(data), case_lines(base.files.get(rel, b""))
        numbers = [i for i, line in enumerate(ours, 1)
                   if i > len(theirs) or line != theirs[i - 1]
                   or json.loads(line).get("source") in keep]
        if not numbers and len(ours) == len(theirs) and rel in base.files:
            continue
        entry = suite.manifest["files"][rel]
        files[rel] = {"op": entry["op"], "chapter": entry["chapter"], "count": len(ours),
                      "sha256": hashlib.sha256(data).hexdigest(), "replaces": numbers}
        lines += [ours[i - 1] for i in numbers]
    missing = sorted(set(base.files) - set(suite.files))
    if missing:
        raise ValueError(f"{suite.profile}: an overlay cannot drop the default's {missing[0]}")
    header = {k: suite.manifest[k] for k in ("errata", "generator", "profile", "spec_version")}
    return header | {"base": base.profile, "base_manifest_sha256": base_manifest_sha256,
                     "files": files}, lines


def write_flat(root: Path, suite: Suite, write: Writer = Path.write_bytes) -> None:
    """Write `suite` whole under root/<profile>, each file by `write`: its files and
    manifest.json."""
    base = root / suite.profile
    for rel, data in suite.files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        write(base / rel, data)
    write(base / MANIFEST, manifest_text(suite.manifest))


def write_overlay(root: Path, suite: Suite, base: Suite) -> dict:
    """Write `suite` under root/<profile> as an overlay on `base` (which is stored at root).
    A flat suite of the profile stored there before (a directory holding its manifest) is
    removed; vector files in a directory that held none are kept. Returns the overlay
    manifest."""
    digest = hashlib.sha256(manifest_text(base.manifest)).hexdigest()
    keep = frozenset(f"erratum {e}" for e in suite.manifest["errata"])
    overlay, lines = overlay_of(base, suite, digest, keep)
    target = root / suite.profile
    if (target / MANIFEST).is_file():
        for old in [target / MANIFEST, *target.glob("*/*.jsonl")]:
            old.unlink()
        for folder in sorted(p for p in target.iterdir() if p.is_dir() and not any(p.iterdir())):
            folder.rmdir()
    target.mkdir(parents=True, exist_ok=True)
    (target / OVERLAY_CASES).write_bytes(compressed(join_lines(lines)))
    (target / OVERLAY).write_bytes(manifest_text(overlay))
    return overlay


def unlisted(base: Path, files: dict) -> list[Path]:
    """Vector-like files (<chapter>/<op>.jsonl) under base that `files` does not list."""
    return [p for p in sorted(base.glob("*/*.jsonl")) if str(p.relative_to(base)) not in files]
