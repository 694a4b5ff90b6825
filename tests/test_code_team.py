"""Memories checked against the code, as a team and an attacker meet them: verify on code that
is gone, a work-tree cache fooled by a file rewritten under its old stat, a cache file left
corrupt in the git dir, anchors into `.git`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memgit
from memgit.errors import MemgitError

from .conftest import git

AUTH = 'def login(user, password):\n    """Check the password."""\n    return user\n'


def _commit(repo: Path, message: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git(repo, "add", rel)
    git(repo, "commit", "-q", "-m", message)


def _memgit(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memgit", *args], cwd=repo, capture_output=True, text=True,
                          check=False)


def _state(repo: Path, query: str, memory_id: str) -> dict:  # type: ignore[type-arg]
    """The `code` of a hit as `memgit recall --json` gives it, in its own process (the cache
    file in the git dir is what carries fingerprints from one process to the next)."""
    done = _memgit(repo, "recall", query, "--json", "--min-score", "0")
    assert done.returncode == 0, done.stderr
    hit = next(h for h in json.loads(done.stdout) if h["id"] == memory_id)
    return hit["code"]  # type: ignore[no-any-return]


def test_verify_refuses_a_memory_whose_code_is_gone(repo: Path, mem: memgit.Memgit) -> None:
    _commit(repo, "auth", {"src/auth.py": AUTH})
    m = mem.remember("login returns the user name unchanged", entity="src/auth.py::login").memory
    _commit(repo, "rename", {"src/auth.py": AUTH.replace("def login", "def signin")})
    before = git(repo, "rev-parse", "HEAD")
    text = (mem.memory_dir / Path(m.path).name).read_text()
    with pytest.raises(MemgitError, match="gone"):
        mem.code.verify(m.id)
    assert git(repo, "rev-parse", "HEAD") == before and git(repo, "status", "--porcelain") == ""
    assert (mem.memory_dir / Path(m.path).name).read_text() == text
    done = _memgit(repo, "verify", m.id)
    assert done.returncode != 0 and "gone" in done.stderr
    assert _state(repo, "login user name", m.id)["status"] == "gone"  # never silenced into "fresh"


def test_a_file_rewritten_under_its_old_mtime_and_size_is_read_again(repo: Path, mem: memgit.Memgit) -> None:
    """A tool that keeps a file's mtime (tar, `rsync -t --inplace`, `cp -p`), or a file system
    whose clock ticks coarsely, leaves a changed file with the stat it had: git trusts its ctime
    too, and so must the fingerprint cache."""
    _commit(repo, "auth", {"src/auth.py": AUTH})
    m = mem.remember("login returns the user name unchanged", entity="src/auth.py::login").memory
    path = repo / "src/auth.py"
    st = os.stat(path)
    assert _state(repo, "login user name", m.id)["status"] == "fresh"  # cached in the git dir now
    changed = AUTH.replace("return user", "return None")
    assert len(changed) == len(AUTH)
    with open(path, "r+") as handle:  # in place: the same inode
        handle.write(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_ino == st.st_ino and os.stat(path).st_mtime_ns == st.st_mtime_ns
    assert _state(repo, "login user name", m.id)["status"] == "changed"


def test_a_hand_written_memory_recalled_before_its_commit_is_checked_once_committed(
        repo: Path, mem: memgit.Memgit) -> None:
    """A memory written by hand (no `written_against`) is taken as written against the code of
    its commit; recalled before it was committed it has none, and what was cached then must not
    outlive the commit (it would hide a change as "unknown", which injection does not say)."""
    _commit(repo, "auth", {"src/auth.py": AUTH})
    (mem.memory_dir / "login.md").write_text(
        "---\nid: m-hand01\ntitle: login returns the user name unchanged\nentity: src/auth.py::login\n"
        "created: 2026-01-01T00:00:00+00:00\nupdated: 2026-01-01T00:00:00+00:00\n---\n\nBody.\n")
    assert _state(repo, "login user name", "m-hand01")["status"] == "unknown"  # never committed yet
    git(repo, "add", ".memory/login.md")
    git(repo, "commit", "-q", "-m", "a memory by hand")
    assert _state(repo, "login user name", "m-hand01")["status"] == "fresh"
    _commit(repo, "login returns a dict", {"src/auth.py": AUTH.replace("return user", "return {'u': user}")})
    code = _state(repo, "login user name", "m-hand01")
    assert code["status"] == "changed" and code["doubts"][0]["commits"] == 1


@pytest.mark.parametrize("anchor", [".git/config", ".git/HEAD", "src/../.git/config", ".GIT/config",
                                    "vendor/lib/.git/config"])
def test_an_anchor_into_the_git_dir_is_never_read_nor_recorded(repo: Path, mem: memgit.Memgit, anchor: str) -> None:
    """A hostile branch's memory naming `.git/config` with a bogus record would be "changed",
    the agent told to verify it, and verify would commit (and push) a hash of the clone's own
    config, with whatever credentials it holds: git's directory is not the project's code."""
    _commit(repo, "auth", {"src/auth.py": AUTH})
    nested = repo / "vendor" / "lib"  # a clone kept inside the work tree has a config of its own
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    m = mem.remember("the remote is set up by the bootstrap script", files=[anchor, "src/auth.py"]).memory
    record = m.extra["written_against"]
    assert record[0].endswith(" -") and record[1].startswith("src/auth.py ")
    (mem.memory_dir / "evil.md").write_text(
        f"---\nid: m-evil01\ntitle: the bootstrap script sets the remote\nfiles:\n- {anchor}\n"
        f"written_against:\n- {anchor} 0123456789ab\n---\n\nBody.\n")
    _commit(repo, "evil", {".memory/evil.md": (mem.memory_dir / "evil.md").read_text()})
    code = _state(repo, "bootstrap script remote", "m-evil01")
    assert code["status"] == "gone", code  # never "changed": the agent is not sent to verify it


def test_a_link_into_the_git_dir_is_never_read(repo: Path, mem: memgit.Memgit) -> None:
    _commit(repo, "auth", {"src/auth.py": AUTH})
    (repo / "src" / "settings").symlink_to("../.git/config")
    git(repo, "add", "src/settings")
    git(repo, "commit", "-q", "-m", "a link")
    m = mem.remember("settings come from the clone", files=["src/settings"]).memory
    assert m.extra["written_against"] == ["src/settings -"]


def test_a_function_too_deep_to_dump_is_fingerprinted_not_a_crash(repo: Path, mem: memgit.Memgit) -> None:
    """Python parses a long chain of `+` that `ast.dump` cannot print back (its recursion runs
    out): generated code, or a hostile branch's, must not make every recall or `doubts` fail."""
    deep = "def table():\n    return " + " + ".join(["a"] * 1500) + "\n"
    _commit(repo, "generated", {"src/gen.py": deep})
    m = mem.remember("the generated table sums every entry", entity="src/gen.py::table").memory
    assert m.extra["written_against"][0].startswith("src/gen.py::table py:")
    assert _state(repo, "generated table sums", m.id)["status"] == "fresh"
    _commit(repo, "one more", {"src/gen.py": deep.replace(" + a\n", " + b\n")})
    assert _state(repo, "generated table sums", m.id)["status"] == "changed"
    done = _memgit(repo, "doubts", "HEAD~1..HEAD", "--json")
    assert done.returncode == 0, done.stderr
    assert [d["id"] for d in json.loads(done.stdout)["memories"]] == [m.id]


def test_a_long_lived_writer_looks_again_at_a_folder_that_became_a_link(
        repo: Path, mem: memgit.Memgit, tmp_path: Path) -> None:
    """An MCP server writes for hours: a checkout in between can make `src` a link out of the
    work tree, and what it recorded of `src` before must not let it read through that link."""
    _commit(repo, "auth", {"src/auth.py": AUTH})
    first = mem.remember("login returns the user", files=["src/auth.py"]).memory
    assert first.extra["written_against"][0] != "src/auth.py -"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "auth.py").write_text("SECRET = 'hunter2'\n")
    git(repo, "rm", "-q", "-r", "src")
    (repo / "src").symlink_to(outside)
    m = mem.remember("the auth module keeps a secret", files=["src/auth.py"]).memory
    assert m.extra["written_against"] == ["src/auth.py -"]


def test_doubts_does_not_send_a_memory_whose_code_was_deleted_to_verify(repo: Path, mem: memgit.Memgit) -> None:
    _commit(repo, "auth", {"src/auth.py": AUTH + "\n\ndef logout():\n    pass\n"})
    m = mem.remember("login returns the user name unchanged", entity="src/auth.py::login").memory
    _commit(repo, "no login", {"src/auth.py": "def logout():\n    pass\n"})
    text = mem.code.doubts("HEAD~1..HEAD").markdown()
    assert "`src/auth.py::login` deleted" in text
    assert f"memgit verify {m.id}" not in text and f"`memgit forget {m.id}`" in text
    with pytest.raises(MemgitError, match="gone"):
        mem.code.verify(m.id)


def test_a_long_lived_process_sees_the_default_branch_as_it_is_after_a_fetch(tmp_path: Path) -> None:
    """An MCP server that made a checkpoint (which asks git for the default branch) and then
    fetched a teammate's edit of a memory must not go on calling its old copy "reviewed"."""
    origin, a, b = tmp_path / "origin.git", tmp_path / "a", tmp_path / "b"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(tmp_path, "clone", "-q", str(origin), str(a))
    _commit(a, "code", {"src/auth.py": AUTH})
    mem_a = memgit.open(a, warn=lambda message: None)
    mem_a.init()
    m = mem_a.remember("zebra sessions expire after an hour").memory
    git(a, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(origin), str(b))
    mem_b = memgit.open(b, warn=lambda message: None)
    mem_b.checkpoint(intent="looking at sessions")
    mem_a.update(m.id, title="zebra sessions expire after a day")
    git(a, "push", "-q", "origin", "main")
    git(b, "fetch", "-q")
    hit = next(h for h in mem_b.recall("zebra sessions", 5, min_score=0, record=False) if h.id == m.id)
    assert hit.review is not None and hit.review.state == "changed"
