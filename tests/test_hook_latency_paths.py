"""What keeps an agent's hooks short, checked by what they do, never by a clock:

- the hooks read where the repository is, HEAD, the branch and the default branch's refs from
  git's files (the same answers git gives, checked layout by layout; anything unusual is
  left to git), so a prompt runs one git process;
- `pre-compact`, `session-end` and `stop` only hand off: a record written, a detached
  process started, no git process and nothing heavy imported in the hook itself; the record
  is run later by that process, or by the next `session-start` (which the checkpoint of a
  compaction is for), and stays until it ran;
- a handed-off checkpoint reads the transcript as it was when the hook ran.

Real repositories, hooks as subprocesses the way an agent runs them.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import memgit
from memgit.git import gitfiles, localstate, repostate

from .conftest import git

# The hook's own process, as `python -I -m memgit.hookrun` runs it; then what it imported.
RUN_HOOK = (
    "import json, sys\n"
    "from memgit import hookrun\n"
    "code = hookrun.main(sys.argv[1:])\n"
    "sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n"
)


@pytest.fixture
def project(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMGIT_HOOKS_BACKGROUND", "1")
    with memgit.open(repo, warn=lambda message: None) as mem:
        mem.init()
        mem.import_jsonl([json.dumps({"id": f"m-retry{i}", "kind": "fact", "title": f"The retry handler {i} backs off "
                                      f"exponentially, capped at {i + 2} minutes", "body": "See retry.py."})
                          for i in range(4)])  # one commit
    git(repo, "checkout", "-q", "-b", "fix/retry-backoff")
    (repo / "retry.py").write_text("def backoff(n):\n    return 2 ** n\n")
    return repo


def payload(repo: Path, session: str, **extra: str | None) -> str:
    return json.dumps({"session_id": session, "cwd": str(repo), "transcript_path": None, **extra})


def run_hook(repo: Path, event: str, data: str, trace: Path | None = None) -> tuple[str, list[str], list[str]]:
    """(stdout, modules imported, git commands run) of one hook process."""
    env = dict(os.environ)
    if trace is not None:
        trace.unlink(missing_ok=True)
        env["GIT_TRACE"] = str(trace)
    done = subprocess.run([sys.executable, "-I", "-c", RUN_HOOK, "claude", event], input=data, cwd=repo,
                          capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stderr
    log = repo / ".git" / "memgit" / "hooks.log"
    assert not log.exists(), log.read_text()
    calls = []
    if trace is not None and trace.exists():
        calls = [line.split("built-in: ", 1)[1] for line in trace.read_text().splitlines() if "built-in: git" in line]
    return done.stdout, json.loads(done.stderr.split("\nMODULES ", 1)[1]), calls


def transcript(tmp_path: Path, *requests: str) -> Path:
    path = tmp_path / "session.jsonl"
    with open(path, "a") as handle:
        handle.writelines(json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n" for text in requests)
    return path


def test_a_prompt_runs_one_git_process(project: Path, tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    # A warm-up: the default branch's memory files are listed once per tip (`memgit.git.reviewed`).
    run_hook(project, "user-prompt", payload(project, "s-1", prompt="how does the retry handler back off"))
    prompt = payload(project, "s-2", prompt="how does the retry handler back off")
    out, _, calls = run_hook(project, "user-prompt", prompt, trace)
    assert "retry handler" in out
    assert calls == ["git config -z --get-regexp '^memgit\\.'"], calls  # settings; the rest from files
    _, _, start = run_hook(project, "session-start", payload(project, "s-3", source="startup"), trace)
    # What the branch changed (merge-base, diff, untracked files) and settings: no rev-parse, no for-each-ref.
    assert [c for c in start if " rev-parse " in c or "for-each-ref" in c] == [] and len(start) <= 4, start


def _both_ways(root: Path) -> None:
    """What the files say is what git says (or the files say nothing)."""
    with repostate.held():
        from memgit.git import repo as gitrepo

        fast = gitrepo.find(root)
        both = repostate.head(root), repostate.branch(root)
        refs = repostate.branch_refs(root)
    repostate.branch_refs.cache_clear()
    slow = gitrepo.find(root)
    assert fast == slow
    assert both == (repostate.head(root), repostate.branch(root))
    assert refs == repostate.branch_refs(root)
    repostate.branch_refs.cache_clear()


def test_git_state_read_from_files_is_what_git_says(repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature/x")
    assert gitfiles.locate(repo / "README.md") == (repo, repo / ".git")
    _both_ways(repo)
    origin = tmp_path / "origin"
    git(tmp_path, "clone", "-q", str(repo), str(origin))  # origin/HEAD a symbolic ref to origin/feature/x
    git(origin, "branch", "-q", "main")
    git(origin, "pack-refs", "--all")  # packed refs
    _both_ways(origin)
    git(origin, "checkout", "-q", "--detach")
    _both_ways(origin)
    linked = tmp_path / "linked"
    git(origin, "worktree", "add", "-q", "-b", "wt", str(linked))  # a `.git` file and a commondir
    assert gitfiles.locate(linked) == (linked, Path(os.path.realpath(origin / ".git" / "worktrees" / "linked")))
    _both_ways(linked)
    unborn = tmp_path / "unborn"
    git(tmp_path, "init", "-q", str(unborn))
    _both_ways(unborn)


@pytest.mark.parametrize("case", ["head-file-on-the-way", "inside-git-dir", "core-worktree", "include", "env"])
def test_unusual_layouts_are_left_to_git(case: str, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    start = repo / "sub"
    start.mkdir()
    if case == "head-file-on-the-way":
        (start / "HEAD").write_text("ref: refs/heads/main\n")  # committed: git would take the folder as a git dir
    elif case == "inside-git-dir":
        start = repo / ".git" / "refs"
    elif case == "core-worktree":
        git(repo, "config", "core.worktree", str(repo))
    elif case == "include":
        git(repo, "config", "include.path", "other.cfg")
    else:
        monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(repo.parent))
    assert gitfiles.locate(start) is None


def _hold(git_dir: Path):  # type: ignore[no-untyped-def]
    lock = localstate.handoff_lock(git_dir)
    lock.parent.mkdir(parents=True, exist_ok=True)
    handle = open(lock, "a+")  # noqa: SIM115 - closed by the caller
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def test_pre_compact_hands_off_and_the_compacted_session_gets_its_checkpoint(project: Path, tmp_path: Path) -> None:
    git_dir = project / ".git"
    session = transcript(tmp_path, "make the retry handler back off with jitter")
    run_hook(project, "session-start", payload(project, "s-c", source="startup", transcript_path=str(session)))
    # The background process cannot run it yet (this test holds its lock): it stays handed off.
    held = _hold(git_dir)
    try:
        out, modules, calls = run_hook(project, "pre-compact",
                                       payload(project, "s-c", transcript_path=str(session)), tmp_path / "trace")
        assert out == "" and calls == []
        assert [m for m in modules if m in ("memgit.api", "subprocess", "sqlite3", "pysqlite3")
                or m.startswith(("memgit.index", "memgit.recall", "memgit.store"))] == []
        assert len(os.listdir(localstate.handoffs(git_dir))) == 1
        assert git(project, "diff", "--cached", "--name-only") == ""  # nothing written yet
    finally:
        held.close()
    # Written after the hook ran: not the checkpoint's business.
    transcript(tmp_path, "now rewrite the whole scheduler in rust")
    out, _, _ = run_hook(project, "session-start", payload(project, "s-c", source="compact",
                                                           transcript_path=str(session)))
    assert os.listdir(localstate.handoffs(git_dir)) == []
    staged = git(project, "diff", "--cached", "--name-only").split()
    assert len(staged) == 1 and staged[0].startswith(".memory/checkpoint-fix-retry-backoff-")
    text = (project / staged[0]).read_text()
    assert "jitter" in text and "scheduler" not in text
    assert "jitter" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_the_background_process_runs_what_was_handed_off(project: Path, tmp_path: Path) -> None:
    sessions = localstate.sessions_log(project / ".git")
    run_hook(project, "session-start", payload(project, "s-e", source="startup"))
    out, _, _ = run_hook(project, "session-end", payload(project, "s-e", reason="exit"))
    assert out == ""
    deadline = time.monotonic() + 60  # a deadline for a hung process, not a measurement
    while not (sessions.exists() and '"s-e"' in sessions.read_text()):
        assert time.monotonic() < deadline, "the handed-off session end never ran"
        time.sleep(0.05)
    record = json.loads(sessions.read_text().splitlines()[-1])
    assert record["session_id"] == "s-e" and record["reason"] == "exit" and record["task"] == "fix/retry-backoff"


def test_a_record_stays_until_it_ran_and_a_broken_one_is_dropped(project: Path) -> None:
    git_dir = project / ".git"
    from memgit.agents import spool

    spool.write(git_dir, {"agent": "claude", "event": "session-end", "cwd": str(project),
                          "payload": {"session_id": "s-left", "cwd": str(project), "reason": "logout"}})
    broken = localstate.handoffs(git_dir) / "00000000000000000001-1.json"
    broken.write_text("{not json")
    # A process killed half-way left both; the next one runs what it can, drops the rest.
    done = subprocess.run([sys.executable, "-I", "-m", "memgit.hookjob", str(git_dir)], capture_output=True,
                          timeout=120, check=False)
    assert done.returncode == 0 and os.listdir(localstate.handoffs(git_dir)) == []
    assert '"s-left"' in localstate.sessions_log(git_dir).read_text()
    assert "cannot be read: 00000000000000000001-1.json" in localstate.hooks_log(git_dir).read_text()


def test_handing_off_can_be_turned_off(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_HOOKS_BACKGROUND", "0")
    session = transcript(tmp_path, "make the retry handler back off")
    run_hook(project, "pre-compact", payload(project, "s-off", transcript_path=str(session)))
    assert not localstate.handoffs(project / ".git").exists()
    assert git(project, "diff", "--cached", "--name-only").startswith(".memory/checkpoint-")


# -- the warm hook server ------------------------------------------------------------------


def _served(project: Path, session: str, prompt: str) -> tuple[str, list[str], str]:
    """(answer, the hook's modules, the session used) of the first prompt hook a server answers
    (the first hook starts one); each try is a new session."""
    deadline = time.monotonic() + 60  # a deadline for a server that never starts, not a measurement
    for attempt in range(1000):
        name = f"{session}-{attempt}"
        out, modules, _ = run_hook(project, "user-prompt", payload(project, name, prompt=prompt))
        if "memgit.api" not in modules:
            return out, modules, name
        assert time.monotonic() < deadline, "no warm hook server answered"
        time.sleep(0.2)
    raise AssertionError("no warm hook server answered")


def test_the_warm_server_answers_what_the_hook_would(project: Path, warm, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    prompt = "how does the retry handler back off"
    served, modules, session = _served(project, "s-warm", prompt)
    assert "retry handler" in served
    # The hook itself imported none of memgit's store, index or recall: the server's child did the work.
    assert [m for m in modules if m.startswith(("memgit.index", "memgit.recall", "memgit.store"))] == []
    assert [m for m in ("typing", "pathlib", "subprocess", "hashlib") if m in modules] == []
    monkeypatch.setenv("MEMGIT_HOOKS_WARM", "0")
    here, modules, _ = run_hook(project, "user-prompt", payload(project, "s-here", prompt=prompt))
    assert "memgit.api" in modules and here == served
    # The session's state was kept by the child as by the hook: the same memories are known.
    states = [json.loads(p.read_text()) for p in localstate.sessions(project / ".git").iterdir()]
    known = {s["session_id"]: s["known"] for s in states}
    assert known[session] == known["s-here"] and known[session]
    # The same prompt again in each session: what they hold is left out, served or not.
    again, _, _ = run_hook(project, "user-prompt", payload(project, "s-here", prompt=prompt))
    monkeypatch.delenv("MEMGIT_HOOKS_WARM")
    served_again, modules, _ = run_hook(project, "user-prompt", payload(project, session, prompt=prompt))
    assert served_again == again and "memgit.api" not in modules


@pytest.mark.parametrize("case", ["open-folder", "stale-socket", "not-a-socket"])
def test_a_socket_that_cannot_be_trusted_is_not_asked(case: str, project: Path, warm) -> None:  # type: ignore[no-untyped-def]
    path = warm.socket_path()
    path.parent.mkdir(mode=0o700, exist_ok=True)
    if case == "open-folder":
        path.parent.chmod(0o755)
    elif case == "stale-socket":
        import socket

        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
            dead.bind(str(path))  # nobody listens on it
    else:
        path.write_text("not a socket")
    prompt = "how does the retry handler back off"
    out, modules, _ = run_hook(project, "user-prompt", payload(project, "s-distrust", prompt=prompt))
    assert "memgit.api" in modules and "retry handler" in out  # answered in the hook, as ever
    if case == "open-folder":  # and no server is started in a folder others can enter
        assert warm.ask("claude", "user-prompt", json.loads(payload(project, "s-x", prompt=prompt)), project) is None
        assert warm.running() is None


def test_a_server_whose_code_changed_on_disk_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket
    import threading
    import types

    from memgit.agents import warmhooks

    probe = tmp_path / "probe.py"
    probe.write_text("x = 1\n")
    module = types.ModuleType("memgit._probe_for_test")
    module.__file__ = str(probe)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    stamp = warmhooks._code_stamp()
    assert str(probe) in stamp and warmhooks._unchanged(stamp)
    probe.write_text("x = 22\n")  # an upgrade
    assert not warmhooks._unchanged(stamp)
    # Such a server answers `stale`; the hook then does the work itself.
    path = warmhooks.socket_path()
    path.parent.mkdir(mode=0o700)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def refuse() -> None:
        conn, _ = server.accept()
        warmhooks._refuse(conn)

    thread = threading.Thread(target=refuse)
    thread.start()
    try:
        assert warmhooks.ask("claude", "user-prompt", {"session_id": "s"}, tmp_path) is None
    finally:
        thread.join(10)
        server.close()
