"""The README documents every command, and every command documents itself."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from memgit.cli import cli

from .conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = sorted(cli.commands)


@pytest.mark.parametrize("name", COMMANDS)
def test_command_has_help(name: str) -> None:
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0
    assert cli.commands[name].help, f"{name} has no help text"
    assert f"Usage: cli {name}" in result.output or f"Usage: memgit {name}" in result.output


@pytest.mark.parametrize("name", COMMANDS)
def test_command_appears_in_readme(name: str) -> None:
    assert re.search(rf"memgit (\S+ )*{name}\b", README), f"README does not show 'memgit {name}'"


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
