"""`memgit doubts A..B` lists only memories the range makes doubtful: a memory written in the
range, against the range's own code, has nothing to doubt; one that was there before, or was
moved to another file, still does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import memgit
from memgit.cli import cli

from .conftest import git
from .test_code_anchors import AUTH, _commit


@pytest.fixture
def code(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(repo)  # where `memgit doubts` runs
    _commit(repo, "auth", src__auth_py=AUTH)
    return repo


def _doubted(start: str) -> dict[str, dict]:
    result = CliRunner().invoke(cli, ["doubts", f"{start}..HEAD", "--json"], catch_exceptions=False)
    return {d["id"]: d for d in json.loads(result.stdout)["memories"]}


def test_a_memory_written_in_the_range_against_its_code_is_not_listed(code: Path, mem: memgit.Memgit) -> None:
    old = mem.remember("login refuses an empty password", entity="src/auth.py::login").memory
    start = git(code, "rev-parse", "HEAD").strip()
    _commit(code, "login allows tokens", src__auth_py=AUTH.replace("if not password:", "if password is None:"))
    new = mem.remember("login takes None as no password", entity="src/auth.py::login").memory
    found = _doubted(start)
    assert set(found) == {old.id}  # the new one was written against the code it names
    md = CliRunner().invoke(cli, ["doubts", f"{start}..HEAD"], catch_exceptions=False).stdout
    assert "verified in this range" not in md and new.id not in md

    # Written in the range, then its code changed again after it: a doubt like any other.
    tokens = AUTH.replace("if not password:", "if not password or password.startswith(\"t:\"):")
    _commit(code, "login refuses tokens", src__auth_py=tokens)
    found = _doubted(start)
    assert set(found) == {old.id, new.id} and found[new.id]["resolved"] is False


def test_a_memory_moved_in_the_range_is_still_checked(code: Path, mem: memgit.Memgit) -> None:
    m = mem.remember("login refuses an empty password", entity="src/auth.py::login").memory
    start = git(code, "rev-parse", "HEAD").strip()
    git(code, "mv", f".memory/{m.path}", ".memory/login-rule.md")
    git(code, "commit", "-q", "-m", "rename a memory file")
    _commit(code, "login allows tokens", src__auth_py=AUTH.replace("if not password:", "if password is None:"))
    found = _doubted(start)
    assert set(found) == {m.id} and found[m.id]["resolved"] is False
