"""Hand-written memory files with slightly-off fields are never invisible.

tests/data/handwritten/ holds realistic files people write by hand: each names an animal in
its title or body, so recall can find it by that one word. Every one must be recalled,
listed and shown; `lint` reports the ones with a problem at the right line.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import memgit
from memgit.cli import cli
from memgit.memory import lenient

from .conftest import ROOT, git

DATA = ROOT / "tests" / "data" / "handwritten"

#: file -> (id memgit reads it under, a word only it holds, what lint says (line: start), or None)
VARIANTS: dict[str, tuple[str, str, str | None]] = {
    "ok-minimal-aaa111.md": ("m-aaa111", "aardvark", None),
    "ok-minimal-copy.md": ("ok-minimal-copy", "badger", "0: duplicate id 'm-aaa111' (the original is ok-minimal-aaa111.md)"),
    "no-front-matter.md": ("no-front-matter", "cheetah", None),
    "crlf-bom-comments.md": ("crlf-bom-comments", "dolphin", None),
    "naive-time.md": ("naive-time", "dingo", "3: 'created' has no timezone; memgit reads it as UTC"),
    "space-time.md": ("space-time", "echidna", "3: 'updated' has no timezone"),
    "invalid-utf8.md": ("invalid-utf8", "elephant", "2: not valid UTF-8 (byte 23); save the file as UTF-8"),
    "confidence-high.md": ("confidence-high", "ferret", "3: 'confidence' must be a number from 0 to 1, not 'high'"),
    "confidence-90.md": ("confidence-90", "gecko", "3: 'confidence' is 90; memgit reads it as the percentage 0.9"),
    "confidence-percent.md": ("confidence-percent", "hedgehog", "3: 'confidence' is '85%'"),
    "confidence-quoted.md": ("confidence-quoted", "iguana", "3: 'confidence' must be a number, not text"),
    "unknown-kind.md": ("unknown-kind", "jackal", "3: unknown kind 'gotcha'"),
    "kind-capitalised.md": ("kind-capitalised", "koala", "3: kind 'Decision' is not lower case"),
    "unknown-source.md": ("unknown-source", "lemur", "3: unknown source 'human'"),
    "unknown-status.md": ("unknown-status", "mongoose", "3: unknown status 'done'"),
    "expires-soon.md": ("expires-soon", "narwhal", "4: 'expires' must be an ISO 8601 date"),
    "list-title.md": ("list-title", "ocelot", "2: 'title' must be text, not a list"),
    "wip-title.md": ("wip-title", "pangolin", "2: invalid YAML front-matter"),
    "conflict-body.md": ("conflict-body", "quokka", "5: unresolved merge conflict markers (<<<<<<<): resolve them"),
    "conflict-front.md": ("conflict-front", "raccoon", "2: unresolved merge conflict markers (<<<<<<<): resolve them"),
    "tags-as-text.md": ("tags-as-text", "salamander", None),
    "tags-nested.md": ("tags-nested", "tapir", "3: 'tags' must be a list of text items"),
    "bad-id.md": ("bad-id", "urchin", "2: id 'my memory' is not valid"),
    "yes-title.md": ("yes-title", "vulture", "2: 'title' must be text, not a yes/no value"),
    "never-closed.md": ("never-closed", "walrus", "1: the front-matter is never closed"),
    "invalid-yaml.md": ("invalid-yaml", "xerus", "2: invalid YAML front-matter"),
    "front-not-mapping.md": ("front-not-mapping", "yak", "1: front-matter must be a mapping"),
    "multiline-title.md": ("multiline-title", "zebra", "2: 'title' must be one line"),
    "Upper-case.MD": ("Upper-case", "albatross", None),
    "long-extension.markdown": ("long-extension", "bison", None),
    "control-char.md": ("control-char", "condor", "0: 'body' holds a control character (U+001B)"),
    "utf16-windows.md": ("utf16-windows", "dugong", "0: saved as UTF-16; save the file as UTF-8"),
    "classic-mac.md": ("classic-mac", "emu", "0: lines end in CR only"),
}


@pytest.fixture
def store(repo: Path) -> Path:
    """A repository whose .memory/ holds every hand-written file, committed."""
    shutil.copytree(DATA, repo / ".memory")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hand-written memories")
    return repo


def run(repo: Path, *args: str) -> object:
    return CliRunner().invoke(cli, ["-C", str(repo), *args], catch_exceptions=False)


def test_every_variant_is_recalled_listed_and_shown(store: Path) -> None:
    warnings: list[str] = []
    mem = memgit.open(store, warn=warnings.append)
    listed = {m.id: m for m in mem.list()}
    assert set(listed) == {memory_id for memory_id, _, _ in VARIANTS.values()}
    for name, (memory_id, word, _) in VARIANTS.items():
        hits = mem.recall(word)
        assert [h.id for h in hits][:1] == [memory_id], (name, [h.id for h in hits])
        shown = mem.get(memory_id)
        assert shown.path == name and word in f"{shown.title} {shown.body}".casefold()
    # Only the file with no text at all is skipped, and said so.
    assert warnings == ["skipping binary.md: binary file (contains NUL bytes); memory files are UTF-8 Markdown "
                        "(see 'memgit lint')"]


def test_lint_reports_every_problem_at_its_line(store: Path) -> None:
    mem = memgit.open(store, warn=lambda message: None)
    found = {f"{p.path}:{p.line}: {p.message}" for p in mem.lint()}
    for name, (_, _, expected) in VARIANTS.items():
        mine = [f for f in found if f.startswith(f"{name}:")]
        if expected is None:
            assert mine == [], name
        else:
            assert any(f.startswith(f"{name}:{expected}") for f in mine), (name, mine)
    assert "binary.md:0: binary file (contains NUL bytes); memory files are UTF-8 Markdown" in found
    assert "notes.txt:0: has front-matter but is not read as a memory: memory files end in .md or .markdown" in found
    assert "README.md:0: a README is documentation for people, never a memory; rename it to make it one" in found
    files_with_problems = {f.split(":", 1)[0] for f in found}
    assert files_with_problems == {n for n, v in VARIANTS.items() if v[2]} | {"binary.md", "notes.txt", "README.md"}


def test_the_cli_shows_and_lists_them_and_warns_about_the_binary_file_every_time(store: Path) -> None:
    for _ in range(2):  # every command, not only the first
        result = run(store, "show", "naive-time")
        assert result.exit_code == 0  # type: ignore[attr-defined]
        assert "Dingo deploys happen on Tuesdays" in result.stdout  # type: ignore[attr-defined]
        assert "skipping binary.md: binary file" in result.stderr  # type: ignore[attr-defined]
    listing = run(store, "list")
    assert len(listing.stdout.splitlines()) == len(VARIANTS)  # type: ignore[attr-defined]
    assert "skipping binary.md" in listing.stderr  # type: ignore[attr-defined]
    assert "README" not in listing.stdout  # type: ignore[attr-defined]


def test_memgit_writes_stay_strict(store: Path) -> None:
    from memgit.errors import MemgitError

    for name in ("naive-time.md", "confidence-high.md", "unknown-kind.md", "conflict-front.md"):
        with pytest.raises(MemgitError):
            lenient.parse((DATA / name).read_bytes(), name)
    mem = memgit.open(store, warn=lambda message: None)
    with pytest.raises(MemgitError, match="unknown kind"):
        mem.update("unknown-kind", kind="gotcha")
