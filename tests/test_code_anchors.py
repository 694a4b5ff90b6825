"""Memories checked against the code: what a memory was written against, what recall says when
that code changed, `memgit verify`, and `memgit doubts` on a revision range, over real git
histories (a function edited, moved, renamed, moved to another file, deleted; a file renamed;
a branch changing code under a pinned memory; a hand-written memory)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import memgit
from memgit.cli import cli

from .conftest import git

AUTH = '''\
def login(user, password):
    """Check the password, then open a session."""
    if not password:
        raise ValueError("no password")
    return {"user": user}


def logout(session):
    session.clear()
'''


def _commit(repo: Path, message: str, **files: str | None) -> str:
    for name, text in files.items():  # src__auth_py is src/auth.py
        rel = name.replace("__", "/")
        if "." not in rel.rsplit("/", 1)[-1]:
            rel = ".".join(rel.rsplit("_", 1))
        path = repo / rel
        if text is None:
            git(repo, "rm", "-q", str(path.relative_to(repo)))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git(repo, "add", str(path.relative_to(repo)))
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def _memgit(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The `memgit` command as a user runs it, in its own process."""
    return subprocess.run([sys.executable, "-m", "memgit", *args], cwd=repo, capture_output=True, text=True,
                          check=False)


def _hit(mem: memgit.Memgit, query: str, memory_id: str) -> memgit.Hit:
    hits = [h for h in mem.recall(query, 10, min_score=0, record=False) if h.id == memory_id]
    assert hits, f"{memory_id} was not recalled"
    return hits[0]


@pytest.fixture
def code(repo: Path, mem: memgit.Memgit, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(repo)  # where `memgit` (CliRunner, subprocesses) runs
    _commit(repo, "auth", src__auth_py=AUTH,
            web__app_js="function startServer(port) {\n  listen(port);\n}\n\n"
            "function stop() {\n  close();\n}\n")
    return repo


def test_a_memory_records_the_code_it_was_written_against(code: Path, mem: memgit.Memgit) -> None:
    m = mem.remember("login refuses an empty password", entity="src/auth.py::login", files=["src/auth.py"],
                     symbols=["web/app.js::startServer"]).memory
    blob = git(code, "hash-object", "src/auth.py").strip()[:12]
    record = m.extra["written_against"]
    assert record[0] == f"src/auth.py {blob}"
    assert record[1].startswith("src/auth.py::login py:")
    assert record[2].startswith("web/app.js::startServer tx:")
    text = (mem.memory_dir / m.path).read_text()
    assert f"written_against:\n- src/auth.py {blob}\n- src/auth.py::login py:" in text  # readable in a diff
    assert _hit(mem, "login password", m.id).code.status == "fresh"  # type: ignore[union-attr]
    # A memory without code anchors records nothing.
    plain = mem.remember("the release process is on Tuesdays", entity="release process").memory
    assert "written_against" not in plain.extra


def test_an_edited_function_is_said_changed_and_verify_records_it_again(
        code: Path, mem: memgit.Memgit) -> None:
    m = mem.remember("login refuses an empty password", entity="src/auth.py::login").memory
    _commit(code, "log out too", src__auth_py=AUTH + "\n\ndef whoami():\n    return None\n")
    assert _hit(mem, "login password", m.id).code.status == "fresh"  # type: ignore[union-attr]  # another function
    _commit(code, "login allows tokens", src__auth_py=AUTH.replace("if not password:",
                                                                    "if password is None:"))
    hit = _hit(mem, "login password", m.id)
    assert hit.code is not None and hit.code.status == "changed"
    assert [(d.anchor, d.state, d.commits) for d in hit.code.doubts] == [("src/auth.py::login", "changed", 2)]
    shown = mem.inject("login password", min_score=0, record=False).text
    assert ("> ⚠ `src/auth.py::login` changed since this was written — 2 commits, last just now; "
            "verify before "
            f"relying on it (then `memgit verify {m.id}`)") in shown
    out = CliRunner().invoke(cli, ["recall", "login password", "--json", "--min-score", "0"],
                             catch_exceptions=False)
    carried = json.loads(out.stdout)[0]["code"]
    assert carried["status"] == "changed" and carried["doubts"][0]["commits"] == 2
    text = CliRunner().invoke(cli, ["recall", "login password", "--min-score", "0"],
                              catch_exceptions=False).stdout
    assert "      ⚠ `src/auth.py::login` changed since this was written — 2 commits, last just now" in text

    before = git(code, "rev-parse", "HEAD").strip()
    done = _memgit(code, "verify", m.id)
    assert done.returncode == 0, done.stderr
    assert git(code, "log", "-1", "--format=%s").startswith('memory: verify "login refuses')
    assert git(code, "rev-parse", "HEAD~1").strip() == before  # one commit
    assert _hit(mem, "login password", m.id).code.status == "fresh"  # type: ignore[union-attr]


def test_a_function_moved_within_its_file_and_respaced_is_not_a_doubt(code: Path, mem: memgit.Memgit) -> None:
    m = mem.remember("login refuses an empty password", entity="src/auth.py::login").memory
    logout, login = AUTH.split("\n\n\n")[1], AUTH.split("\n\n\n")[0]
    respaced = login.replace("(user, password)", "( user,  password )")
    moved = "import os\n\n\n" + logout + "\n\n\n" + respaced + "\n"
    _commit(code, "reorder", src__auth_py=moved)
    assert _hit(mem, "login password", m.id).code.status == "fresh"  # type: ignore[union-attr]
    result = CliRunner().invoke(cli, ["doubts", "HEAD~1..HEAD", "--json"], catch_exceptions=False)
    assert json.loads(result.stdout)["memories"] == []


def test_doubts_names_a_renamed_moved_and_deleted_function(code: Path, mem: memgit.Memgit) -> None:
    renamed = mem.remember("login refuses an empty password", entity="src/auth.py::login").memory
    moved = mem.remember("logout clears the session", entity="src/auth.py::logout").memory
    start = git(code, "rev-parse", "HEAD").strip()
    login, logout = AUTH.split("\n\n\n")
    _commit(code, "rename login, move logout", src__auth_py=login.replace("def login", "def sign_in") + "\n",
            src__session_py=logout)
    result = CliRunner().invoke(cli, ["doubts", f"{start}..HEAD", "--json"], catch_exceptions=False)
    found = {d["id"]: d["changes"] for d in json.loads(result.stdout)["memories"]}
    assert found[renamed.id][0] | {"commits": []} == {
        "anchor": "src/auth.py::login", "change": "renamed", "new": "src/auth.py::sign_in", "commits": []}
    assert found[moved.id][0]["change"] == "moved" and found[moved.id][0]["new"] == "src/session.py::logout"
    assert found[moved.id][0]["commits"][0].endswith(" rename login, move logout")
    # In the work tree both are gone from src/auth.py: recall says so, and ranks them lower.
    hit = _hit(mem, "login password", renamed.id)
    assert hit.code is not None and hit.code.status == "gone"

    _commit(code, "drop sign_in", src__auth_py="X = 1\n")
    result = CliRunner().invoke(cli, ["doubts", "HEAD~1..HEAD"], catch_exceptions=False)
    assert "`src/auth.py::login` deleted" not in result.stdout  # it was already gone before this range
    md = CliRunner().invoke(cli, ["doubts", f"{start}..HEAD"], catch_exceptions=False).stdout
    assert md.startswith("## Memories this change makes doubtful (2)\n")
    assert f"- **login refuses an empty password** (`{renamed.id}`) — `.memory/" in md
    assert "  - `src/auth.py::login` deleted (" in md


def test_a_gone_anchor_ranks_lower(code: Path, mem: memgit.Memgit) -> None:
    gone = mem.remember("session tokens expire after one hour", entity="src/auth.py::login").memory
    mem.remember("session tokens are refreshed by the web app", files=["web/app.js"])
    mem.remember("tokens live in the session store", files=["src/auth.py"])
    before = _hit(mem, "session tokens expire", gone.id)
    _commit(code, "no login", src__auth_py="def logout(session):\n    session.clear()\n")
    hits = mem.recall("session tokens expire", 10, min_score=0, record=False)
    after = next(h for h in hits if h.id == gone.id)
    assert after.code is not None and after.code.status == "gone"
    assert after.score == pytest.approx(before.score / 2)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_renamed_file_is_fixed_in_fields_and_body_by_reflect(code: Path, mem: memgit.Memgit) -> None:
    m = mem.remember("src/auth.py holds the login flow; see src/auth.py::login, not src/auth.pyc",
                     entity="src/auth.py::login", files=["src/auth.py"]).memory
    start = git(code, "rev-parse", "HEAD").strip()
    git(code, "mv", "src/auth.py", "src/accounts.py")
    git(code, "commit", "-q", "-m", "rename auth")
    found = json.loads(CliRunner().invoke(cli, ["doubts", f"{start}..HEAD", "--json"],
                                          catch_exceptions=False).stdout)["memories"][0]["changes"]
    assert [(c["anchor"], c["change"], c["new"]) for c in found] == [
        ("src/auth.py", "renamed", "src/accounts.py"),
        ("src/auth.py::login", "renamed", "src/accounts.py::login")]
    mem.reflect(apply=True, only=["stale"])
    fixed = mem.get(m.id)
    assert fixed.files == ("src/accounts.py",) and fixed.entity == "src/accounts.py::login"
    assert fixed.title == "src/accounts.py holds the login flow; see src/accounts.py::login, not src/auth.pyc"
    assert fixed.extra["written_against"][0].startswith("src/accounts.py ")
    assert _hit(mem, "login flow", m.id).code.status == "fresh"  # type: ignore[union-attr]


def test_a_branch_changing_code_under_a_pinned_memory_fails_until_verified(
        code: Path, mem: memgit.Memgit) -> None:
    m = mem.remember("login refuses an empty password", entity="src/auth.py::login").memory
    mem.update(m.id, pinned=True)
    other = mem.remember("logout clears the session", entity="src/auth.py::logout").memory
    git(code, "checkout", "-q", "-b", "feature")
    _commit(code, "login accepts tokens", src__auth_py=AUTH.replace('raise ValueError("no password")',
                                                                      'return {"token": user}'))
    done = _memgit(code, "doubts", "main...feature", "--fail-pinned")
    assert done.returncode == 1
    assert f"1 pinned memory is left doubtful: {m.id}" in done.stderr
    assert f"(`{m.id}`, pinned) — " in done.stdout and other.id not in done.stdout
    assert _memgit(code, "doubts", "main...feature").returncode == 0  # without the option it only tells

    assert _memgit(code, "verify", m.id).returncode == 0
    done = _memgit(code, "doubts", "main...feature", "--fail-pinned")
    assert done.returncode == 0, done.stderr
    assert f"(`{m.id}`, pinned, verified in this range) — " in done.stdout


def test_a_hand_written_memory_is_checked_against_its_commit_or_unknown(
        code: Path, mem: memgit.Memgit) -> None:
    (mem.memory_dir / "login.md").write_text("---\nid: hand-1\ntitle: login refuses an empty password\n"
                                             "entity: src/auth.py::login\n---\n\nBy hand.\n")
    assert _hit(mem, "login password", "hand-1").code.status == "unknown"  # type: ignore[union-attr]  # not committed
    _commit(code, "a note", **{".memory__login.md": (mem.memory_dir / "login.md").read_text()})
    assert _hit(mem, "login password", "hand-1").code.status == "fresh"  # type: ignore[union-attr]
    _commit(code, "change login", src__auth_py=AUTH.replace("ValueError", "PermissionError"))
    hit = _hit(mem, "login password", "hand-1")
    assert hit.code is not None and [(d.state, d.commits) for d in hit.code.doubts] == [("changed", 1)]


def test_other_languages_by_their_definition_block(code: Path, mem: memgit.Memgit) -> None:
    m = mem.remember("startServer listens on the port", entity="web/app.js::startServer").memory
    _commit(code, "stop logs", web__app_js="function startServer(port) {\n  listen(port);\n}\n\n"
            "function stop() {\n  log();\n  close();\n}\n")
    assert _hit(mem, "startServer port", m.id).code.status == "fresh"  # type: ignore[union-attr]
    _commit(code, "tls", web__app_js="function startServer(port) {\n  listen(port, tls);\n}\n")
    assert _hit(mem, "startServer port", m.id).code.status == "changed"  # type: ignore[union-attr]


@pytest.mark.parametrize("record", [
    "[src/auth.py::login not-a-print, ../../etc/passwd 0123456789ab]",
    "{src/auth.py: 12}",
    "42",
    "['src/auth.py::login', 7, '']",
])
def test_a_bogus_record_makes_a_memory_doubtful_never_fresh(code: Path, mem: memgit.Memgit, record: str,
                                                           tmp_path: Path) -> None:
    secret = tmp_path / "outside.py"
    secret.write_text("def login():\n    pass\n")
    (mem.memory_dir / "bogus.md").write_text(
        f"---\nid: bogus-1\ntitle: login refuses an empty password\nentity: src/auth.py::login\n"
        f"files:\n- ../outside.py\n- /etc/passwd\nwritten_against: {record}\n---\n\nBody.\n")
    _commit(code, "bogus", **{".memory__bogus.md": (mem.memory_dir / "bogus.md").read_text()})
    hit = _hit(mem, "login password", "bogus-1")
    assert hit.code is not None and hit.code.status in ("unknown", "gone")
    states = {d.anchor: d.state for d in hit.code.doubts}
    assert states["src/auth.py::login"] == "unknown"
    assert states.get("../outside.py", "gone") == "gone"  # never read: outside the work tree
    result = CliRunner().invoke(cli, ["doubts", "HEAD~1..HEAD"], catch_exceptions=False)
    assert result.exit_code == 0
    assert CliRunner().invoke(cli, ["verify", "bogus-1"], catch_exceptions=False).exit_code == 0
    verified = mem.get("bogus-1").extra["written_against"]
    assert verified[0] == "../outside.py -" and verified[1].startswith("src/auth.py::login py:")
    assert _hit(mem, "login password", "bogus-1").code.status == "fresh"  # type: ignore[union-attr]


def test_doubts_refuses_a_bad_range(code: Path, mem: memgit.Memgit) -> None:
    result = CliRunner().invoke(cli, ["doubts", "--upload-pack=x..HEAD"])
    assert result.exit_code != 0
    result = CliRunner().invoke(cli, ["doubts", "nope..HEAD"])
    assert result.exit_code == 1 and "unknown revision 'nope'" in result.stderr


def test_an_agent_sees_the_change_and_verifies_through_mcp(code: Path, mem: memgit.Memgit) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters

    m = mem.remember("login refuses an empty password", entity="src/auth.py::login").memory
    _commit(code, "login allows tokens", src__auth_py=AUTH.replace("if not password:",
                                                                    "if password is None:"))
    params = StdioServerParameters(command=sys.executable, args=["-m", "memgit", "mcp"], cwd=str(code),
                                   env=dict(__import__("os").environ))

    async def steps() -> tuple[dict, dict, dict]:  # type: ignore[type-arg]
        async with Client(params) as client:
            before = (await client.call_tool("recall", {"query": "login password"})).structured_content
            verified = (await client.call_tool("verify", {"ref": m.id})).structured_content
            after = (await client.call_tool("recall", {"query": "login password"})).structured_content
            return before, verified, after

    before, verified, after = anyio.run(steps)
    assert before["hits"][0]["code"]["status"] == "changed"
    assert verified["id"] == m.id and verified["written_against"][0].startswith("src/auth.py::login py:")
    assert after["hits"][0]["code"] == {"status": "fresh", "doubts": []}
    assert git(code, "log", "-1", "--format=%s").startswith("memory: verify")


def test_doubts_go_by_symbol_when_a_memory_names_one_and_by_file_when_not(
        code: Path, mem: memgit.Memgit) -> None:
    by_symbol = mem.remember("login refuses an empty password", entity="src/auth.py::login",
                             files=["src/auth.py"]).memory
    by_file = mem.remember("auth holds the session code", files=["src/auth.py"]).memory
    _commit(code, "logout logs", src__auth_py=AUTH.replace("session.clear()", "session.clear()\n    log()"))
    found = json.loads(CliRunner().invoke(cli, ["doubts", "HEAD~1..HEAD", "--json"],
                                          catch_exceptions=False).stdout)["memories"]
    assert [(d["id"], [c["anchor"] for c in d["changes"]]) for d in found] == [(by_file.id, ["src/auth.py"])]
    assert by_symbol.id not in json.dumps(found)


def test_a_link_out_of_the_work_tree_is_never_read(code: Path, mem: memgit.Memgit, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.py").write_text("def login():\n    pass\n")
    (code / "src" / "linked.py").symlink_to(outside / "secret.py")
    (code / "vendor").symlink_to(outside)
    m = mem.remember("linked code", files=["src/linked.py", "vendor/secret.py"],
                     symbols=["vendor/secret.py::login"]).memory
    assert m.extra["written_against"] == ["src/linked.py -", "vendor/secret.py -",
                                          "vendor/secret.py::login -"]
    hit = _hit(mem, "linked code", m.id)
    assert hit.code is not None and hit.code.status == "fresh"  # gone then, gone now: nothing was read


def test_a_memory_naming_a_symbol_doubts_its_other_files_only_when_they_go(code: Path,
                                                                           mem: memgit.Memgit) -> None:
    _commit(code, "tests", tests__test_auth_py="def test_login():\n    pass\n")
    m = mem.remember("login refuses an empty password", entity="src/auth.py::login",
                     files=["tests/test_auth.py"]).memory
    _commit(code, "more tests", tests__test_auth_py="def test_login():\n    assert True\n")
    assert _hit(mem, "login password", m.id).code.status == "fresh"  # type: ignore[union-attr]
    assert json.loads(CliRunner().invoke(cli, ["doubts", "HEAD~1..HEAD", "--json"]).stdout)["memories"] == []
    _commit(code, "no tests", tests__test_auth_py=None)
    found = json.loads(CliRunner().invoke(cli, ["doubts", "HEAD~1..HEAD", "--json"]).stdout)["memories"]
    assert [(c["anchor"], c["change"]) for c in found[0]["changes"]] == [("tests/test_auth.py", "deleted")]
    assert _hit(mem, "login password", m.id).code.status == "gone"  # type: ignore[union-attr]


def test_the_session_start_hook_says_a_pinned_memory_s_code_changed(code: Path,
                                                                    mem: memgit.Memgit) -> None:
    m = mem.remember("login refuses an empty password", entity="src/auth.py::login").memory
    mem.update(m.id, pinned=True)
    _commit(code, "login allows tokens", src__auth_py=AUTH.replace("ValueError", "PermissionError"))
    start = (Path(__file__).parent / "data" / "agents" / "claude" / "session_start_startup.json").read_text()
    done = subprocess.run([sys.executable, "-m", "memgit.hookrun", "claude", "session-start"],
                          input=start.replace("{cwd}", str(code)).replace("{transcript}", "").encode(),
                          cwd=code, capture_output=True, timeout=120, check=False)
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"### login refuses an empty password\n`{m.id}` · fact · " in text
    assert "> ⚠ `src/auth.py::login` changed since this was written — 1 commit, last just now;" in text
