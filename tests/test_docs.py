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
