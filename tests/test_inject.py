"""Injection: one policy ([inject] k, budget, per_memory, min_score) for what an agent is given."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

import memgit
from memgit.cli import cli
from memgit.memory.format import count_tokens


def _store(repo: Path) -> memgit.Memgit:
    mem = memgit.open(repo, warn=lambda m: None)
    mem.init()
    for i in range(5):
        mem.remember(f"Login note {i}: the login flow checks the session cookie in src/auth/login_{i}.py",
                     kind="fact")
    return mem


def test_inject_follows_the_inject_section(repo: Path) -> None:
    mem = _store(repo)
    assert len(mem.inject("login session cookie").hits) == 3  # the default k
    (repo / ".memory" / "config.toml").write_text("[inject]\nk = 2\nbudget = 120\nper_memory = 50\n")
    mem = memgit.open(repo, warn=lambda m: None)
    given = mem.inject("login session cookie")
    assert len(given.hits) == 2
    assert given.tokens <= 120 and count_tokens(given.text) <= 120
    assert all(count_tokens(part) <= 50 for part in given.parts)
    assert given.text.startswith("## Memories recalled by memgit\n\n### Login note")


def test_a_budget_too_small_says_so_instead_of_nothing_relevant(repo: Path) -> None:
    _store(repo)
    result = CliRunner().invoke(cli, ["-C", str(repo), "recall", "login session cookie", "--format", "markdown",
                                      "--budget", "1"], catch_exceptions=False)
    assert result.stdout == ""
    assert result.stderr.startswith("the budget of 1 token(s) is too small: the best memory's title alone needs about")
    result = CliRunner().invoke(cli, ["-C", str(repo), "recall", "login session cookie", "--budget", "1"],
                                catch_exceptions=False)
    assert result.stdout == "" and "is too small" in result.stderr
    result = CliRunner().invoke(cli, ["-C", str(repo), "recall", "quantum chromodynamics", "--format", "markdown"],
                                catch_exceptions=False)
    assert (result.stdout, result.stderr) == ("", "nothing relevant found\n")


def test_markdown_recall_is_the_injection(repo: Path) -> None:
    mem = _store(repo)
    result = CliRunner().invoke(cli, ["-C", str(repo), "recall", "login session cookie", "--format", "markdown"],
                                catch_exceptions=False)
    assert result.stdout == mem.inject("login session cookie").text


def test_a_setting_out_of_range_is_refused_with_where_it_came_from(repo: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _store(repo)
    monkeypatch.setenv("MEMGIT_RECALL_K", "0")
    result = CliRunner().invoke(cli, ["-C", str(repo), "recall", "login"], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.stderr == "Error: $MEMGIT_RECALL_K: 0 is out of range; use a number from 1 to 100\n"
