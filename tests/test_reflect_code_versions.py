"""Two notes written against different versions of the same code are never merged; the one
whose version the code is now supersedes the other, as a reviewable change (and a change that
is undone makes the older note the one that holds)."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import git
from .test_reflect_team import memgit_cli

OLD = "def login(user):\n    return user\n"
NEW = "def login(user, session):\n    return session.user\n"


def _supersessions(repo: Path) -> list[dict]:
    out = json.loads(memgit_cli(repo, "reflect", "--json").stdout)
    assert [p for p in out["proposals"] if p["kind"] == "merge"] == []
    return [p for p in out["proposals"] if p["kind"] == "supersede"]


def test_the_note_the_code_agrees_with_supersedes_the_other(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "auth.py").write_text(OLD)
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "login")
    memgit_cli(repo, "init")
    before = json.loads(memgit_cli(repo, "remember", "--json", "login() returns the user object it is given, "
                                   "and callers check the session", "--entity", "src/auth.py::login").stdout)
    (repo / "src" / "auth.py").write_text(NEW)
    git(repo, "commit", "-q", "-am", "login takes a session")
    after = json.loads(memgit_cli(repo, "remember", "--json", "login() returns the user object of the session "
                                  "it is given, callers check", "--entity", "src/auth.py::login").stdout)

    found = _supersessions(repo)
    assert [p["ids"] for p in found] == [[after["id"], before["id"]]]  # kept, archived
    assert found[0]["reason"].startswith("`src/auth.py::login` is now the code the kept memory was written against")

    # The change undone: the older note holds again, and reflect says so.
    git(repo, "revert", "--no-edit", "HEAD~1")  # HEAD is the second note's commit
    assert (repo / "src" / "auth.py").read_text() == OLD
    found = _supersessions(repo)
    assert [p["ids"] for p in found] == [[before["id"], after["id"]]]

    # Applied, it is one commit that archives the note the code no longer agrees with.
    head = git(repo, "rev-parse", "HEAD").strip()
    memgit_cli(repo, "reflect", "--apply")
    assert git(repo, "rev-parse", "HEAD~1").strip() == head
    archived = (repo / after["path"]).read_text()
    assert "status: archived" in archived and f"superseded_by:\n- {before['id']}" in archived
    hits = json.loads(memgit_cli(repo, "recall", "--json", "--min-score", "0", "login session user").stdout)
    assert after["id"] not in [h["id"] for h in hits] and before["id"] in [h["id"] for h in hits]


def test_when_the_code_matches_neither_nothing_is_archived(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "auth.py").write_text(OLD)
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "login")
    memgit_cli(repo, "init")
    memgit_cli(repo, "remember", "login() returns the user object it is given, and callers check the session",
               "--entity", "src/auth.py::login")
    (repo / "src" / "auth.py").write_text(NEW)
    git(repo, "commit", "-q", "-am", "login takes a session")
    memgit_cli(repo, "remember", "login() returns the user object of the session it is given, callers check",
               "--entity", "src/auth.py::login")
    (repo / "src" / "auth.py").write_text("def login(user, session, token):\n    return token.user\n")
    git(repo, "commit", "-q", "-am", "login takes a token")
    assert _supersessions(repo) == []
