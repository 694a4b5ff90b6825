"""The agent hooks, driven as the agents drive them: `python -m memgit.hookrun AGENT EVENT`
as a subprocess, realistic payloads on stdin (tests/data/agents/, built from Claude Code's
and Codex's documented hook schemas and transcript formats), a real git repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import memgit
from memgit.memory.format import count_tokens

from .conftest import git

DATA = Path(__file__).parent / "data" / "agents"
SESSIONS = {"claude": "5b2c9a8e-1111-4c2d-9e3f-0123456789ab", "codex": "019aad50-a7e6-7422-b7a8-0b384290624f"}
TRANSCRIPTS = {"claude": "transcript.jsonl", "codex": "rollout.jsonl"}
END = {"claude": ("session-end", "session_end.json"), "codex": ("stop", "stop.json")}

AUTH = (
    "def login(req):\n    return redirect('/home')\n\n\n"
    "class Views:\n    def home(self):\n        return 'home'\n"
)
AUTH_EDITED = (
    "def login(req):\n    return redirect(safe_next(req) or '/home')\n\n\n"
    "def safe_next(req):\n    nxt = req.args.get('next', '')\n"
    "    return nxt if nxt.startswith('/') else None\n\n\n"
    "class Views:\n    def home(self):\n        return 'home'\n"
)


def hook(agent: str, event: str, payload: bytes | str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    data = payload.encode() if isinstance(payload, str) else payload
    return subprocess.run(
        [sys.executable, "-m", "memgit.hookrun", agent, event],
        input=data,
        cwd=cwd,
        capture_output=True,
        timeout=120,
        check=False,
    )


def payload(agent: str, name: str, project: Path, transcript: Path | None = None, **changes: str) -> str:
    data = json.loads((DATA / agent / name).read_text())
    data = json.loads(
        json.dumps(data).replace("{cwd}", str(project)).replace("{transcript}", str(transcript or ""))
    )
    data.update(changes)
    return json.dumps(data)


def context(done: subprocess.CompletedProcess[bytes], event: str = "SessionStart") -> str:
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == event
    text = out["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= 10_000
    return str(text)


@pytest.fixture
def project(repo: Path) -> Path:
    """A repository with four memories (one pinned) and src/auth.py, on a feature branch."""
    mem = memgit.open(repo, warn=lambda message: None)
    mem.init()
    mem.import_jsonl((DATA / "memories.jsonl").read_text().splitlines())
    (repo / "src").mkdir()
    (repo / "src" / "auth.py").write_text(AUTH)
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "auth")
    git(repo, "checkout", "-q", "-b", "fix/login-redirect")
    return repo


def transcript_for(agent: str, project: Path, tmp_path: Path, name: str | None = None) -> Path:
    path = tmp_path / (name or TRANSCRIPTS[agent])
    path.write_text((DATA / agent / (name or TRANSCRIPTS[agent])).read_text().replace("{cwd}", str(project)))
    return path


def _pinned_and_lesson() -> str:
    return (
        "## Memories recalled by memgit\n\n"
        "### Run the tests with pytest -q from the repository root\n"
        "`m-pin001` · convention · .memory/run-the-tests-with-pytest-q-from-the-repository-pin001.md\n"
        "CI runs the same command; tests need no network.\n\n"
        "### login redirect must follow only relative next paths\n"
        "`m-redir1` · lesson · .memory/login-redirect-must-follow-only-relative-next-redir1.md\n"
        "Anchors: `src/auth.py::login`, `/home`, `safe_next`, `login`\n"
        "An absolute next URL is an open redirect: login() checks it with safe_next() and falls back to /home.\n"
    )


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_session_with_a_compaction(
    agent: str, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript = transcript_for(agent, project, tmp_path)
    start_commit = git(project, "rev-parse", "HEAD").strip()

    # Session start: the pinned memory, then what the branch is about; not the unrelated one.
    text = context(
        hook(
            agent, "session-start", payload(agent, "session_start_startup.json", project, transcript), project
        )
    )
    assert text == _pinned_and_lesson()
    assert count_tokens(text) <= 600

    # The agent works; then the context fills up and is compacted.
    (project / "src" / "auth.py").write_text(AUTH_EDITED)
    done = hook(agent, "pre-compact", payload(agent, "pre_compact_auto.json", project, transcript), project)
    assert done.returncode == 0 and done.stdout == b""
    staged = git(project, "diff", "--cached", "--name-only").split()
    assert len(staged) == 1 and staged[0].startswith(".memory/checkpoint-fix-login-redirect-")
    assert git(project, "rev-parse", "HEAD").strip() == start_commit  # staged, never committed
    checkpoint = (project / staged[0]).read_text()
    assert "kind: checkpoint\n" in checkpoint and "task_id: fix/login-redirect\n" in checkpoint
    assert "expires: " in checkpoint and "- src/auth.py::safe_next\n" in checkpoint
    body = checkpoint.split("---\n", 2)[2]
    assert (
        "**Intent:** Fix the login redirect bug in src/auth.py so that users land on the page they asked for\n"
        "**Plan:** The test expects open-redirect protection: I'll make safe_next() accept only relative paths, "
        "to keep the redirect safe.\n"
    ) in body
    assert (
        f"**State** (files changed since {start_commit[:10]}):\n- `src/auth.py`: `login`, `safe_next`\n"
        in body
    )
    assert "`Views.home`" not in body  # unchanged methods are not named
    dead_end = (
        "- dead end: tried `pytest -q tests/test_auth.py` — failed: "
        "FAILED tests/test_auth.py::test_next_param - AssertionError: open redirect"
    )
    if agent == "claude":
        assert (
            "**Actions:**\n- read: `src/auth.py`, `redirect(`\n- changed: `src/auth.py`\n"
            "- delegated: `Find callers of login`\n" + dead_end + "\n"
        ) in body
        assert "grep -rn" not in body  # the sub-agent's own calls stay in its side chain
    else:
        assert (
            "**Actions:**\n- changed: `src/auth.py`\n- ran: `sed -n 1,40p src/auth.py`\n" + dead_end
        ) in body

    # After the compaction: the checkpoint first, then the pinned memory and the lesson again.
    text = context(
        hook(
            agent, "session-start", payload(agent, "session_start_compact.json", project, transcript), project
        )
    )
    assert text.startswith(
        "## Memories recalled by memgit\n\n### Checkpoint fix/login-redirect: Fix the login redirect"
    )
    assert "**State** (files changed since" in text and "`safe_next`" in text
    assert text.index("m-pin001") > text.index("Checkpoint") and "m-redir1" in text and "m-bill01" not in text
    assert count_tokens(text) <= 600

    # A prompt: only what the session does not hold yet; the same prompt again: nothing.
    prompt = payload(agent, "user_prompt.json", project, transcript)
    text = context(hook(agent, "user-prompt", prompt, project), "UserPromptSubmit")
    assert "m-cook01" in text and "m-redir1" not in text and "m-pin001" not in text
    again = hook(agent, "user-prompt", prompt, project)
    assert again.returncode == 0 and again.stdout == b""

    # `memgit recall --session` skips what the session was given.
    mem = memgit.open(project, warn=lambda message: None)
    ids = [h.id for h in mem.recall("session cookie sign-in", min_score=0, session=SESSIONS[agent])]
    assert "m-cook01" not in ids and "m-cook01" in [
        h.id for h in mem.recall("session cookie sign-in", min_score=0)
    ]

    # The end: recorded, and handed to the extractor, without waiting for it.
    marker = tmp_path / "captured"
    monkeypatch.setenv(
        "MEMGIT_CAPTURE_COMMAND",
        f'{sys.executable} -c "import pathlib,sys; pathlib.Path(sys.argv[1]).write_text(sys.argv[2])" '
        f"{marker} {{transcript}}",
    )
    event, name = END[agent]
    done = hook(agent, event, payload(agent, name, project, transcript), project)
    assert done.returncode == 0 and done.stdout == b""
    (record,) = [
        json.loads(line) for line in (project / ".git" / "memgit" / "sessions.jsonl").read_text().splitlines()
    ]
    assert record["session_id"] == SESSIONS[agent] and record["agent"] == agent
    assert record["task"] == "fix/login-redirect" and record["transcript"] == str(transcript)
    assert record["start_commit"] == start_commit and record["end_commit"] == start_commit
    for _ in range(600):  # the extractor runs detached: wait for it, not for a time
        if marker.exists() and marker.read_text():
            break
        time.sleep(0.05)
    assert marker.read_text() == str(transcript)
    assert not (project / ".git" / "memgit" / "hooks.log").exists()


def test_resume_command_and_a_session_in_chinese(project: Path, tmp_path: Path) -> None:
    transcript = transcript_for("claude", project, tmp_path, "transcript_zh.jsonl")
    session = "zh-session-0001"
    start = payload("claude", "session_start_startup.json", project, transcript, session_id=session)
    assert hook("claude", "session-start", start, project).returncode == 0
    (project / "src" / "auth.py").write_text(AUTH_EDITED)
    pre = payload("claude", "pre_compact_auto.json", project, transcript, session_id=session)
    assert hook("claude", "pre-compact", pre, project).stdout == b""
    mem = memgit.open(project, warn=lambda message: None)
    (point,) = mem.list(kind="checkpoint")
    assert (
        point.title
        == "Checkpoint fix/login-redirect: 修复 src/auth.py 里的登录跳转问题，让用户回到原来的页面"
    )
    assert "**Plan:** 我先检查 login() 的实现，然后只允许相对路径跳转。" in point.body
    given = mem.resume()
    assert given.text.startswith(f"## Memories recalled by memgit\n\n### {point.title}\n")
    assert given.hits[0].id == point.id and count_tokens(given.text) <= 600
    later = mem.checkpoint(intent="make safe_next() reject protocol-relative URLs", session=session)
    assert later.supersedes == (point.id,) and mem.resume(budget=80).hits[0].id == later.id


BAD = {
    "empty": b"",
    "malformed": b'{"session_id": "x", "cwd": ',
    "not an object": b'["SessionStart"]',
    "oversized": b'{"session_id": "x", "prompt": "' + b"a" * 3_000_000 + b'"}',
    "binary": bytes(range(256)),
}


@pytest.mark.parametrize(
    "event", ["session-start", "user-prompt", "pre-compact", "session-end", "stop", "bogus"]
)
def test_every_entry_point_fails_open(event: str, project: Path) -> None:
    log = project / ".git" / "memgit" / "hooks.log"
    for name, data in BAD.items():
        done = hook("claude", event, data, project)
        assert (done.returncode, done.stdout) == (0, b""), name
    assert len(log.read_text().splitlines()) == len(BAD)


def test_fails_open_without_memory_or_repository(repo: Path, tmp_path: Path) -> None:
    start = payload("claude", "session_start_startup.json", repo)
    for where in (repo, tmp_path):  # no .memory/; no repository at all
        done = hook("claude", "session-start", start.replace(str(repo), str(where)), where)
        assert (done.returncode, done.stdout) == (0, b"")
    assert "no .memory/" in (repo / ".git" / "memgit" / "hooks.log").read_text()
    no_session = payload("codex", "session_start_startup.json", repo, session_id="")
    assert hook("codex", "session-start", no_session, repo).stdout == b""
    gone = subprocess.run(
        "/nonexistent/python -m memgit.hookrun claude session-start 2>/dev/null || true",
        shell=True,
        input=b"{}",
        capture_output=True,
        check=False,
    )
    assert (gone.returncode, gone.stdout, gone.stderr) == (0, b"", b"")


def test_a_held_lock_does_not_block_the_hook(project: Path, tmp_path: Path) -> None:
    from memgit.git import repo as gitrepo

    transcript = transcript_for("claude", project, tmp_path)
    mem = memgit.open(project, warn=lambda message: None)
    os.environ["MEMGIT_LOCK_TIMEOUT"] = "0.2"
    try:
        with gitrepo.write_lock(mem.writer.repo()):
            done = hook(
                "claude",
                "pre-compact",
                payload("claude", "pre_compact_auto.json", project, transcript),
                project,
            )
    finally:
        del os.environ["MEMGIT_LOCK_TIMEOUT"]
    assert (done.returncode, done.stdout) == (0, b"")
    assert "pre-compact" in (project / ".git" / "memgit" / "hooks.log").read_text()


def test_session_start_with_the_real_embedder(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end with the bundled MiniLM model (the other tests use keywords and anchors)."""
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", "minilm")
    memgit.open(project, warn=lambda message: None).reindex()
    start = payload("claude", "session_start_startup.json", project, session_id="minilm-session")
    text = context(hook("claude", "session-start", start, project))
    assert text == _pinned_and_lesson()
    done = hook(
        "claude",
        "user-prompt",
        payload("claude", "user_prompt.json", project, session_id="minilm-session"),
        project,
    )
    assert "m-cook01" in context(done, "UserPromptSubmit")
    assert not (project / ".git" / "memgit" / "hooks.log").exists()


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_resume_keeps_what_the_session_holds_and_clear_starts_over(agent: str, project: Path) -> None:
    startup = context(
        hook(agent, "session-start", payload(agent, "session_start_startup.json", project), project)
    )
    # A resumed session still holds what it was given (the agent replays it): nothing new.
    resumed = hook(agent, "session-start", payload(agent, "session_start_resume.json", project), project)
    assert (resumed.returncode, resumed.stdout) == (0, b"")
    # /clear wipes the context: everything again.
    assert (
        context(hook(agent, "session-start", payload(agent, "session_start_clear.json", project), project))
        == startup
    )


def test_checkpoint_keeps_credentials_out_and_refuses_an_empty_one(project: Path, tmp_path: Path) -> None:
    mem = memgit.open(project, warn=lambda message: None)
    with pytest.raises(memgit.MemgitError, match="nothing to checkpoint yet"):
        mem.checkpoint(task_id="T-1")
    transcript = tmp_path / "secret.jsonl"
    command = "curl -u deploy:Zq8vK2mN4pR7sT1w https://ci.example.com/api/build"
    transcript.write_text(
        json.dumps({"type": "user", "message": {"role": "user", "content": "trigger the deploy build"}})
        + "\n"
        + json.dumps(
            {
                "type": "assistant",
                "message": {"content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}}]},
            }
        )
        + "\n"
    )
    from memgit.agents import checkpoint

    made = checkpoint.write(mem.workspace, task="T-1", transcript=str(transcript))
    assert made.body.startswith("**Intent:** trigger the deploy build") and "Zq8vK2mN4pR7sT1w" not in made.body
    assert "**Actions:**" not in made.body and "**State**" in made.body


def test_session_end_leaves_a_capture_proposal_by_default(project: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """With nothing configured, the session-end hook runs memgit's own capture, detached: its
    proposal waits for `memgit capture --pending`, and nothing is committed or staged."""
    monkeypatch.delenv("MEMGIT_CAPTURE_COMMAND")
    transcript = transcript_for("claude", project, tmp_path)
    start = payload("claude", "session_start_startup.json", project, transcript)
    assert hook("claude", "session-start", start, project).returncode == 0
    head = git(project, "rev-parse", "HEAD")
    event, name = END["claude"]
    done = hook("claude", event, payload("claude", name, project, transcript), project)
    assert done.returncode == 0 and done.stdout == b""
    pending = project / ".git" / "memgit" / "capture"
    for _ in range(1200):  # the capture runs detached: wait for its proposal, not for a time
        if pending.is_dir() and list(pending.glob("*.json")):
            break
        time.sleep(0.05)
    assert len(list(pending.glob("*.json"))) == 1
    listed = subprocess.run([sys.executable, "-m", "memgit", "-C", str(project), "capture", "--pending"],
                            capture_output=True, text=True, check=True)
    (line,) = listed.stdout.splitlines()
    assert line.endswith(str(transcript)) and " memories " in line
    assert git(project, "rev-parse", "HEAD") == head and git(project, "status", "--porcelain", ".memory") == ""


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "symlink-to-dev-zero", "folder"])
def test_a_transcript_path_that_is_not_a_file_is_not_read(kind: str, project: Path, tmp_path: Path) -> None:
    """The payload names the transcript; /dev/zero never ends and a FIFO nobody writes never
    opens. The hook reads neither, returns, and still writes the checkpoint from the
    repository. The subprocess timeout fails the test instead of letting a hanging hook hang it."""
    target = {"dev-zero": Path("/dev/zero"), "fifo": tmp_path / "fifo",
              "symlink-to-dev-zero": tmp_path / "link", "folder": tmp_path / "folder"}[kind]
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "symlink-to-dev-zero":
        target.symlink_to("/dev/zero")
    elif kind == "folder":
        target.mkdir()
    (project / "src" / "auth.py").write_text(AUTH_EDITED)
    data = payload("claude", "pre_compact_auto.json", project, target).encode()
    done = subprocess.run([sys.executable, "-m", "memgit.hookrun", "claude", "pre-compact"], input=data,
                          cwd=project, capture_output=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, b"")
    staged = git(project, "diff", "--cached", "--name-only").split()
    assert len(staged) == 1 and staged[0].startswith(".memory/checkpoint-fix-login-redirect-")
    captured = subprocess.run([sys.executable, "-m", "memgit", "capture", str(target)], cwd=project,
                              capture_output=True, text=True, timeout=60, check=False)
    assert captured.returncode == 1
    assert "give a transcript file" in captured.stderr or "folder" in captured.stderr


def test_a_hook_run_in_process_leaves_the_lock_timeout_out_of_the_environment(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook's short wait for the write lock is its own: a long-lived process that runs a
    hook in-process keeps the default wait for every later writer."""
    from memgit import hookrun
    from memgit.git import repo as gitrepo

    monkeypatch.delenv("MEMGIT_LOCK_TIMEOUT", raising=False)
    transcript = transcript_for("claude", project, tmp_path)
    data = json.loads(payload("claude", "session_start_startup.json", project, transcript))
    hookrun.run("claude", "session-start", data)
    hookrun.run("claude", "pre-compact", json.loads(payload("claude", "pre_compact_auto.json", project, transcript)))
    assert "MEMGIT_LOCK_TIMEOUT" not in os.environ
    later = memgit.open(project, warn=lambda message: None)
    assert gitrepo.lock_timeout(os.environ.get("MEMGIT_LOCK_TIMEOUT")) == gitrepo.LOCK_TIMEOUT_SECONDS
    assert later.writer.lock_timeout is None  # the default wait, not the hook's


def test_the_hook_waits_for_the_lock_as_long_as_it_says(project: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from memgit import api as api_mod
    from memgit import hookrun

    monkeypatch.delenv("MEMGIT_LOCK_TIMEOUT", raising=False)
    transcript = transcript_for("claude", project, tmp_path)
    data = json.loads(payload("claude", "pre_compact_auto.json", project, transcript))
    opened: list[memgit.Memgit] = []
    real_open = api_mod.open

    def remembering(*args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(real_open(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(api_mod, "open", remembering)
    hookrun.run("claude", "pre-compact", data)
    assert opened[0].writer.lock_timeout == hookrun.LOCK_TIMEOUT
    monkeypatch.setenv("MEMGIT_LOCK_TIMEOUT", "3")
    hookrun.run("claude", "pre-compact", data)
    assert opened[1].writer.lock_timeout == 3.0


def test_the_committed_settings_command_runs_through_sh_with_a_real_payload(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command `memgit hooks install claude` writes into .claude/settings.json, run the way
    Claude Code runs it (`sh -c`, the payload on stdin, memgit-hook found on PATH): it gives
    the session its memories, on stdout, and exits 0."""
    from click.testing import CliRunner

    from memgit.cli import cli

    installed = CliRunner().invoke(cli, ["-C", str(project), "hooks", "install", "claude"],
                                   catch_exceptions=False)
    assert installed.exit_code == 0, installed.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    [group] = settings["hooks"]["SessionStart"]
    command = group["hooks"][0]["command"]
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}/usr/bin{os.pathsep}/bin")
    transcript = transcript_for("claude", project, tmp_path)
    done = subprocess.run(["sh", "-c", command], cwd=project, capture_output=True, timeout=120, check=False,
                          input=payload("claude", "session_start_startup.json", project, transcript).encode())
    assert done.stderr == b""
    assert context(done) == _pinned_and_lesson()
