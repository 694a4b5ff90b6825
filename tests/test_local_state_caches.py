"""Local caches under `<git-dir>/memgit/` are read as untrusted: a file half-written by a
killed process, left by another memgit version or altered by hand is set aside and built
again, and a recall never fails because of it (what it answers is what a fresh cache gives)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memgit
from memgit.recall import codecheck

from .conftest import git
from .test_code_anchors import AUTH, _commit, _hit

CRAFTED = [
    '{"files": {"src/auth.py": [[1, 2, 3, 4], ["not", "a", "blob"], {"login": 7}]}, "more": {}}',
    '{"files": {"src/auth.py": [["a", "b"], null, {}]}, "more": {}}',
    '{"files": {"src/auth.py": [[1, 2, 3, 4], null, {"login": ["x"]}]}, "more": {}}',
    '{"files": {}, "more": {"memory:M": {"stat": "S", "commit": "c0ffee", "prints": 5}}}',
    '{"files": {}, "more": {"memory:M": {"stat": "S", "commit": null, "prints": {"src/auth.py::login": 5}}}}',
    '{"files": {}, "more": {"memory:M": {"stat": "S", "commit": ["c"], "prints": {"src/auth.py": 1}}}}',
    '{"files": {}, "more": {"commits:M": {"memory": "S", "index": "I", "files": {"src/auth.py": 3}}}}',
    '{"files": {}, "more": {"commits:M": {"memory": "S", "index": "I", "files": [1, 2]}}}',
    '{"files": [], "more": []}',
    "[1, 2, 3]",
    '{"files": {"src/auth.py": "x"',
]


def test_a_crafted_codeprints_cache_is_built_again(repo: Path, mem: memgit.Memgit,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    _commit(repo, "auth", src__auth_py=AUTH)
    note = "---\nid: hand-1\ntitle: login refuses an empty password\nentity: src/auth.py::login\n---\n\nBy hand.\n"
    _commit(repo, "a note written by hand", **{".memory__login.md": note})
    _commit(repo, "login allows tokens", src__auth_py=AUTH.replace("if not password:", "if password is None:"))
    first = _hit(mem, "login password", "hand-1").code
    assert first is not None and first.status == "changed" and first.doubts[0].commits == 1

    cache = repo / ".git" / "memgit" / "codeprints.json"
    real = json.loads(cache.read_text())["more"]
    assert {"memory:.memory/login.md", "commits:.memory/login.md"} <= set(real)
    for crafted in CRAFTED:
        # The real stats where the crafted entry names them, so that the crafted value is the one read.
        text = (crafted.replace('"memory:M"', '"memory:.memory/login.md"').replace('"commits:M"', '"commits:.memory/login.md"')
                .replace('"S"', json.dumps(real["memory:.memory/login.md"]["stat"]))
                .replace('"I"', json.dumps(real["commits:.memory/login.md"]["index"])))
        cache.write_text(text)
        codecheck._PRINTS.clear()  # a new process's view: the cache is read from the file
        again = memgit.open(repo)
        hit = _hit(again, "login password", "hand-1")
        assert hit.code is not None, crafted
        assert [(d.anchor, d.state, d.commits) for d in hit.code.doubts] == \
            [(d.anchor, d.state, d.commits) for d in first.doubts], crafted
    assert git(repo, "status", "--porcelain").strip() == ""
