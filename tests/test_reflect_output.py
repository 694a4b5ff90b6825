"""What reflect gives the people and agents reading it: `--check` that fails CI only for a
proposed change, MCP answers in pages within a byte budget, a progress bar on a terminal,
and `stats` counting the explanations a user had to repeat (`restated.jsonl`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

import memgit
from memgit.cli import cli


def run(repo: Path, *args: str) -> "object":
    return CliRunner().invoke(cli, ["-C", str(repo), *args], catch_exceptions=False)


# -- reflect --check ---------------------------------------------------------------------------


def test_check_passes_on_notes_for_a_person_and_strict_fails_on_them(repo: Path, mem: memgit.Memgit) -> None:
    # A vague title is a hygiene note: reflect proposes no change, a person may look at it.
    run(repo, "remember", "Some thoughts about the parser and its error recovery.", "--title", "Notes")
    result = run(repo, "reflect", "--check")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("## memgit reflect: 0 change(s) proposed, 1 for a person to review\n")
    result = run(repo, "reflect", "--check", "--strict")
    assert result.exit_code == 1
    assert "reflect --check --strict: 1 note(s) for a person to review" in result.stderr
    result = run(repo, "reflect", "--strict")
    assert result.exit_code == 1 and "--strict goes with --check" in result.stderr

    # Two memories that say the same thing: a merge is a proposed change, and fails --check.
    run(repo, "remember", "The parser recovers from a syntax error by skipping to the next statement.",
        "--title", "Parser error recovery skips to the next statement")
    run(repo, "remember", "The parser recovers from a syntax error by skipping to the next statement!",
        "--title", "Parser error recovery: skip to the next statement", "--source", "inferred")
    result = run(repo, "reflect", "--check")
    assert result.exit_code == 1, result.output
    assert "reflect --check: 1 change(s) proposed" in result.stderr
