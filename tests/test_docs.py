"""The README is a front page that links to every page of docs/; together they document every
command, every command documents itself, and no link among them leads nowhere."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from memgit.cli import cli

from .conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted((ROOT / "docs").glob("*.md"))
#: The README and every page of docs/, by path relative to the repository.
PAGES = {"README.md": README} | {f"docs/{p.name}": p.read_text(encoding="utf-8") for p in DOCS}
COMMANDS = sorted(cli.commands)
#: Users read the first screen or two: the rest belongs in docs/.
README_MAX_LINES = 200


@pytest.mark.parametrize("name", COMMANDS)
def test_command_has_help(name: str) -> None:
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0
    assert cli.commands[name].help, f"{name} has no help text"
    assert f"Usage: cli {name}" in result.output or f"Usage: memgit {name}" in result.output


@pytest.mark.parametrize("name", COMMANDS)
def test_command_appears_in_the_documentation(name: str) -> None:
    shown = [page for page, text in PAGES.items() if re.search(rf"memgit (\S+ )*{name}\b", text)]
    assert shown, f"neither README.md nor a page of docs/ shows 'memgit {name}'"


def test_readme_fits_on_a_screen_or_two() -> None:
    lines = len(README.splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move detail to a page of docs/"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {_resolve("README.md", target)[0] for target in _links(README)}
    assert DOCS and [f"docs/{p.name}" for p in DOCS if f"docs/{p.name}" not in linked] == []


def _without_code(text: str) -> str:
    """`text` with its fenced code blocks and inline code removed: a `#` or `[x](y)` there is
    output or an example, not a heading or a link."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)


def _links(text: str) -> list[str]:
    """The targets of the Markdown links in `text` that stay inside the repository."""
    targets = re.findall(r"\]\(([^)\s]+)\)", _without_code(text))
    return [t for t in targets if not re.match(r"[a-z][a-z+.-]*:", t)]


def _resolve(page: str, target: str) -> tuple[str, str]:
    """(file relative to the repository, anchor) that a link on `page` points to."""
    path, _, anchor = target.partition("#")
    if not path:
        return page, anchor
    parts: list[str] = page.split("/")[:-1]
    for part in path.split("/"):
        if part == "..":
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts), anchor


def _anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to
    hyphens, a repeated one numbered."""
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL),
                              flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        number = 0
        while (candidate := slug if number == 0 else f"{slug}-{number}") in found:
            number += 1
        found.add(candidate)
    return found


def test_every_link_leads_somewhere() -> None:
    broken = []
    for page, text in PAGES.items():
        for target in _links(text):
            path, anchor = _resolve(page, target)
            if not (ROOT / path).exists():
                broken.append(f"{page}: {target} (no file {path})")
            elif anchor and path.endswith(".md") and anchor not in _anchors((ROOT / path).read_text(encoding="utf-8")):
                broken.append(f"{page}: {target} (no heading #{anchor} in {path})")
    assert broken == []


def test_the_link_checker_sees_a_broken_link() -> None:
    assert _anchors("# Keeping memory healthy: memgit reflect\n## A\n## A\n```\n# not a heading\n```\n") == {
        "keeping-memory-healthy-memgit-reflect", "a", "a-1"}
    assert _links("see [x](git.md#merges), `[y](nowhere.md)`, [z](https://example.com)") == ["git.md#merges"]
    assert _resolve("docs/git.md", "../README.md#a-tour") == ("README.md", "a-tour")
    assert _resolve("docs/git.md", "#merges") == ("docs/git.md", "merges")


def test_readme_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install --quiet -e '.[test]'" in ci and "pip install -e '.[test]'" in README
    assert "python -m pytest" in ci and "python -m pytest" in README


#: Words about how memgit was planned rather than about memgit: a user has none of those
#: documents, and a link outside the repository is dead for them.
PLANNING_WORDS = re.compile(r"\bthe (brief|issue)\b|\b(brief|issue)'s\b|design card|\.\./shared", re.IGNORECASE)


def test_the_project_speaks_of_itself() -> None:
    found = []
    for path in sorted(ROOT.glob("**/*")):
        rel = path.relative_to(ROOT).as_posix()
        if not path.is_file() or rel.startswith((".git/", ".venv")) or path.suffix not in {".py", ".md", ".toml", ".txt", ".yaml", ".yml"}:
            continue
        if rel == "tests/test_docs.py" or "/data/" in f"/{rel}":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if PLANNING_WORDS.search(line):
                found.append(f"{rel}:{number}: {line.strip()[:100]}")
    assert found == []


def test_usage_pages_lint_example_prints_what_the_page_shows(mem, repo) -> None:  # type: ignore[no-untyped-def]
    """docs/usage.md's `memgit lint` example, run as shown in a real repository."""
    page = PAGES["docs/usage.md"]
    shown = page.split("$ memgit lint\n", 1)[1].split("\n$ ", 1)[0].splitlines()
    (repo / ".memory" / "bad.md").write_text("---\ntitle: [broken\n")
    result = CliRunner().invoke(cli, ["-C", str(repo), "lint"])
    assert result.exit_code == 1
    assert result.output.splitlines() == shown
