"""The fast agent hooks (hand-off, the warm hook server, git state read from git's files) under
attack, in a team and in careless hands: what a repository, a record or a second repository
can make them do. Hooks run as real subprocesses, `python -I -m memgit.hookrun claude EVENT`
with the payload on stdin, the way an agent runs them; the warm server as the hook starts it.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

import memgit
from memgit.agents import spool
from memgit.git import localstate

from .conftest import git
from .hookwatch import hooks_log, no_job, wait_until

PROMPT = "how does the retry handler back off"


def store(repo: Path, words: str) -> Path:
    with memgit.open(repo, warn=lambda message: None) as mem:
        mem.init()
        mem.import_jsonl(
            [
                json.dumps(
                    {
                        "id": f"m-{words.split()[0].lower()}",
                        "kind": "fact",
                        "title": f"The retry handler backs off: {words}",
                        "body": "See retry.py.",
                    }
                )
            ]
        )
    return repo


@pytest.fixture
def project(repo: Path) -> Path:
    store(repo, "Exponential backoff capped at five minutes")
    git(repo, "checkout", "-q", "-b", "fix/retry-backoff")
    return repo


def hook(cwd: Path, event: str, data: dict[str, Any] | str, **env: str) -> tuple[str, str]:
    """(stdout, stderr) of one hook process; it must exit 0."""
    text = data if isinstance(data, str) else json.dumps(data)
    done = subprocess.run(
        [sys.executable, "-I", "-m", "memgit.hookrun", "claude", event],
        input=text,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


# -- git's files ---------------------------------------------------------------------------


def test_a_symlinked_head_is_the_branch_git_says(project: Path) -> None:
    # git still honours a HEAD that is a symbolic link (`core.preferSymlinkRefs`, old clones).
    head = project / ".git" / "HEAD"
    head.unlink()
    head.symlink_to("refs/heads/fix/retry-backoff")
    assert git(project, "symbolic-ref", "HEAD").strip() == "refs/heads/fix/retry-backoff"
    hook(project, "session-start", {"session_id": "s-link", "cwd": str(project), "source": "startup"})
    hook(project, "session-end", {"session_id": "s-link", "cwd": str(project), "reason": "exit"})
    record = json.loads(localstate.sessions_log(project / ".git").read_text().splitlines()[-1])
    assert record["task"] == "fix/retry-backoff", record
    assert hooks_log(project) == ""


def test_a_ref_linked_outside_the_git_dir_is_left_to_git(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text(git(project, "rev-parse", "HEAD"))
    ref = project / ".git" / "refs" / "heads" / "fix" / "retry-backoff"
    ref.unlink()
    ref.symlink_to(outside)
    from memgit.git import gitfiles

    assert gitfiles.head_and_branch(project / ".git") is None  # git's own word, not a file read outside


# -- the warm hook server ------------------------------------------------------------------

# The hook's own process, as `python -I -m memgit.hookrun` runs it; then whether it did the work.
RUN_HOOK = (
    "import sys\n"
    "from memgit import hookrun\n"
    "hookrun.main(sys.argv[1:])\n"
    "sys.stderr.write('\\nSERVED ' + str('memgit.api' not in sys.modules))\n"
)


def start_hook(cwd: Path, event: str, data: dict[str, Any], **env: str) -> subprocess.Popen[str]:
    with tempfile.TemporaryFile("w+") as stdin:  # the payload, as the agent pipes it
        stdin.write(json.dumps(data))
        stdin.seek(0)
        return subprocess.Popen(
            [sys.executable, "-I", "-c", RUN_HOOK, "claude", event],
            cwd=cwd,
            text=True,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
        )


def finish(process: subprocess.Popen[str], timeout: float = 120) -> tuple[str, bool]:
    """(stdout, whether the warm server answered) of a hook started with `start_hook`."""
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err
    return out, err.rsplit("\nSERVED ", 1)[1].strip() == "True"


def server_up(warm: Any, cwd: Path) -> None:
    """A hook that starts the server, then until it answers."""

    def answered() -> bool:
        return finish(start_hook(cwd, "user-prompt", {"session_id": "s-up", "cwd": str(cwd), "prompt": "x"}))[
            1
        ]

    wait_until(answered, "no warm hook server answered")


def test_the_warm_server_resolves_a_relative_folder_as_the_hook_would(project: Path, warm: Any) -> None:
    (project / "src").mkdir()
    server_up(warm, project)
    for folder in (".", "src"):
        served, by_server = finish(
            start_hook(project, "user-prompt", {"session_id": f"s-{folder}", "cwd": folder, "prompt": PROMPT})
        )
        here, by_server_here = finish(
            start_hook(
                project,
                "user-prompt",
                {"session_id": f"h-{folder}", "cwd": folder, "prompt": PROMPT},
                MEMGIT_HOOKS_WARM="0",
            )
        )
        assert by_server and not by_server_here
        assert "Exponential backoff" in here and served == here, (folder, served)


def git_repo(root: Path) -> Path:
    root.mkdir()
    git(root, "init", "-q")
    (root / "README.md").write_text("other\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    return root


def test_two_repositories_served_at_once_never_cross(repo: Path, tmp_path: Path, warm: Any) -> None:
    first = store(repo, "Alpha jitter from the first repository")
    second = git_repo(tmp_path / "second")
    store(second, "Bravo deadline from the second repository")
    server_up(warm, first)
    running = [
        (
            where,
            start_hook(where, "user-prompt", {"session_id": f"s-{i}", "cwd": str(where), "prompt": PROMPT}),
        )
        for i in range(6)
        for where in (first, second)
    ]
    for where, process in running:
        out, _ = finish(process)
        mine, theirs = ("Alpha", "Bravo") if where == first else ("Bravo", "Alpha")
        assert mine in out and theirs not in out, out


# -- what is handed off ---------------------------------------------------------------------


def transcript(tmp_path: Path, *requests: str) -> Path:
    path = tmp_path / "session.jsonl"
    with open(path, "a") as handle:
        handle.writelines(
            json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"
            for text in requests
        )
    return path


def held(path: Path):  # type: ignore[no-untyped-def]
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")  # noqa: SIM115 - closed by the caller
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def staged(repo: Path) -> list[str]:
    return git(repo, "diff", "--cached", "--name-only").split()


def test_a_relative_folder_handed_off_runs_where_the_hook_ran(project: Path, tmp_path: Path) -> None:
    (project / "src").mkdir()
    other = store(git_repo(tmp_path / "other"), "Bravo deadline from another repository")
    (other / "src").mkdir()
    (project / "notes").mkdir()
    transcript(project / "notes", "make the retry handler back off with jitter")
    session = "notes/session.jsonl"  # relative too, from the hook's folder
    lock = held(localstate.handoff_lock(project / ".git"))  # the background process waits
    try:
        hook(
            project,
            "pre-compact",
            {"session_id": "s-rel", "cwd": "src", "transcript_path": session},
            MEMGIT_HOOKS_BACKGROUND="1",
        )
        wait_until(lambda: no_job(project / ".git"), "the background process did not give up")
    finally:
        lock.close()
    # The compacted session's start runs the record, from a process whose folder is elsewhere.
    hook(
        other,
        "session-start",
        {
            "session_id": "s-rel",
            "cwd": str(project),
            "source": "compact",
            "transcript_path": str(project / session),
        },
        MEMGIT_HOOKS_BACKGROUND="1",
    )
    checkpoints = [p for p in staged(project) if p.startswith(".memory/checkpoint-")]
    assert checkpoints and "jitter" in (project / checkpoints[0]).read_text(), hooks_log(project)
    assert staged(other) == []


def test_nothing_handed_off_is_lost_when_the_background_process_is_killed(
    project: Path, tmp_path: Path
) -> None:
    git_dir = project / ".git"
    session = str(transcript(tmp_path, "make the retry handler back off with jitter"))
    writer = held(
        localstate.write_lock(git_dir)
    )  # another memgit writer: the background process waits for it
    try:
        hook(
            project,
            "pre-compact",
            {"session_id": "s-kill", "cwd": str(project), "transcript_path": session},
            MEMGIT_HOOKS_BACKGROUND="1",
        )
        drainer = localstate.handoff_lock(git_dir)
        wait_until(
            lambda: drainer.exists() and drainer.read_text().strip().isdigit(), "no background process"
        )
        os.kill(int(drainer.read_text()), signal.SIGKILL)
        assert len(os.listdir(localstate.handoffs(git_dir))) == 1  # still there for the next one
    finally:
        writer.close()
    hook(
        project,
        "session-start",
        {"session_id": "s-kill", "cwd": str(project), "source": "compact", "transcript_path": session},
        MEMGIT_HOOKS_BACKGROUND="1",
    )
    assert os.listdir(localstate.handoffs(git_dir)) == []
    assert [p for p in staged(project) if p.startswith(".memory/checkpoint-")], hooks_log(project)


# -- failing open ---------------------------------------------------------------------------

BAD = {
    "not-json": "{not json",
    "a-list": "[1, 2]",
    "no-session": json.dumps({"prompt": PROMPT}),
    "nul-in-cwd": json.dumps({"session_id": "s-bad", "cwd": "a\u0000b", "prompt": PROMPT}),
}


def test_bad_input_fails_open(project: Path) -> None:
    for case, event in [(case, event) for case in sorted(BAD) for event in ("user-prompt", "pre-compact")] + [
        ("not-json", "nonsense")
    ]:
        before = hooks_log(project).count("\n")
        assert hook(project, event, BAD[case], MEMGIT_HOOKS_BACKGROUND="1") == ("", ""), case
        wait_until(lambda: no_job(project / ".git"), "the background process hangs")
        assert spool.pending(project / ".git") == []
        assert hooks_log(project).count("\n") == before + 1, (case, event, hooks_log(project))


def test_a_crafted_record_runs_no_command_and_names_no_commit(project: Path, tmp_path: Path) -> None:
    git_dir = project / ".git"
    marker = tmp_path / "ran"
    spool.write(
        git_dir,
        {
            "agent": "claude",
            "event": "session-end",
            "cwd": str(project),
            "root": str(project),
            "head": f"--output={marker}",
            "branch": "--exec=touch " + str(marker),
            "payload": {"session_id": "s-crafted", "cwd": str(project), "reason": "exit"},
        },
    )
    done = subprocess.run(
        [sys.executable, "-I", "-m", "memgit.hookjob", str(git_dir)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and spool.pending(git_dir) == [] and not marker.exists()
    record = json.loads(localstate.sessions_log(git_dir).read_text().splitlines()[-1])
    assert (
        record["session_id"] == "s-crafted"
        and record["end_commit"] == git(project, "rev-parse", "HEAD").strip()
    )


# -- a worktree and a submodule --------------------------------------------------------------


def test_a_worktree_and_a_submodule_get_their_own_answers_served_or_not(
    project: Path, tmp_path: Path, warm: Any
) -> None:
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", "-b", "feature/linked", str(linked))
    library = store(git_repo(tmp_path / "library"), "Bravo deadline from the library")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "vendor/library")
    sub = project / "vendor" / "library"
    server_up(warm, project)
    for where, mine, theirs in ((linked, "Exponential", "Bravo"), (sub, "Bravo", "Exponential")):
        served, by_server = finish(
            start_hook(
                where, "user-prompt", {"session_id": f"s-{where.name}", "cwd": str(where), "prompt": PROMPT}
            )
        )
        here, _ = finish(
            start_hook(
                where,
                "user-prompt",
                {"session_id": f"h-{where.name}", "cwd": str(where), "prompt": PROMPT},
                MEMGIT_HOOKS_WARM="0",
            )
        )
        assert by_server and served == here and mine in here and theirs not in here, (where, here)
        # A session end handed off is recorded in that checkout's own git dir, with its own branch.
        hook(
            where,
            "session-end",
            {"session_id": f"e-{where.name}", "cwd": str(where), "reason": "exit"},
            MEMGIT_HOOKS_BACKGROUND="1",
        )
        git_dir = Path(git(where, "rev-parse", "--absolute-git-dir").strip())
        log = localstate.sessions_log(git_dir)
        wait_until(lambda: no_job(git_dir) and log.exists(), "no session")  # noqa: B023 - called at once
        record = json.loads(localstate.sessions_log(git_dir).read_text().splitlines()[-1])
        assert record["session_id"] == f"e-{where.name}"
        assert record["end_commit"] == git(where, "rev-parse", "HEAD").strip()
    assert not localstate.sessions_log(project / ".git").exists()


def test_two_sessions_compacting_at_once(project: Path, tmp_path: Path) -> None:
    sessions = {}
    for name, words in (
        ("s-one", "add jitter to the retry handler"),
        ("s-two", "cap the retry handler at ten tries"),
    ):
        (tmp_path / name).mkdir()
        sessions[name] = str(transcript(tmp_path / name, words))
    running = [
        subprocess.Popen(
            [sys.executable, "-I", "-m", "memgit.hookrun", "claude", "pre-compact"],
            cwd=project,
            stdin=subprocess.PIPE,
            env={**os.environ, "MEMGIT_HOOKS_BACKGROUND": "1"},
        )
        for _ in sessions
    ]
    for process, (name, path) in zip(running, sessions.items()):
        process.communicate(
            json.dumps({"session_id": name, "cwd": str(project), "transcript_path": path}).encode(),
            timeout=120,
        )
        assert process.returncode == 0
    outs = {
        name: hook(
            project,
            "session-start",
            {"session_id": name, "cwd": str(project), "source": "compact", "transcript_path": path},
            MEMGIT_HOOKS_BACKGROUND="1",
        )[0]
        for name, path in sessions.items()
    }
    wait_until(lambda: no_job(project / ".git"), "the background process hangs")
    assert spool.pending(project / ".git") == [] and hooks_log(project) == ""
    # Neither is lost: each compaction's checkpoint is staged, and a compacted session is given
    # its task's latest (a checkpoint is the task's, whichever session wrote it).
    texts = [(project / p).read_text() for p in staged(project) if p.startswith(".memory/checkpoint-")]
    assert len(texts) == 2 and any("jitter" in t for t in texts) and any("ten tries" in t for t in texts)
    assert all("Checkpoint fix/retry-backoff" in out for out in outs.values()), outs


# -- a repository's committed files ------------------------------------------------------------


def test_a_git_dir_committed_in_the_work_tree_is_never_used(project: Path) -> None:
    crafted = project / "sub"
    for folder in ("objects", "refs/heads", "memgit/handoff"):
        (crafted / folder).mkdir(parents=True)
    (crafted / "HEAD").write_text("ref: refs/heads/main\n")
    (crafted / "refs" / "heads" / "main").write_text(git(project, "rev-parse", "HEAD"))
    (crafted / "objects" / "keep").write_text("")
    (crafted / "config").write_text("[core]\n\tbare = false\n\tworktree = ..\n")
    # A record it holds, as if handed off: a session end for a session it names.
    (crafted / "memgit" / "handoff" / "00000000000000000001-1.json").write_text(
        json.dumps(
            {
                "agent": "claude",
                "event": "session-end",
                "cwd": str(project),
                "payload": {"session_id": "s-planted", "cwd": str(project), "reason": "exit"},
            }
        )
    )
    git(project, "add", "sub")
    git(project, "commit", "-q", "-m", "a folder that looks like a git dir")
    files = sorted(str(p) for p in crafted.rglob("*"))
    for event in ("session-start", "user-prompt", "pre-compact", "session-end"):
        out, _ = hook(
            crafted,
            event,
            {"session_id": "s-sub", "cwd": str(crafted), "prompt": PROMPT, "source": "startup"},
            MEMGIT_HOOKS_BACKGROUND="1",
        )
        assert out == ""
    hook(
        project,
        "session-start",
        {"session_id": "s-root", "cwd": str(project), "source": "startup"},
        MEMGIT_HOOKS_BACKGROUND="1",
    )
    wait_until(lambda: no_job(project / ".git") and no_job(crafted), "the background process hangs")
    assert sorted(str(p) for p in crafted.rglob("*")) == files  # nothing written into it, nothing run from it
    sessions = localstate.sessions_log(project / ".git")
    assert not sessions.exists() or "s-planted" not in sessions.read_text()


def test_a_checkpoint_run_after_a_checkout_is_the_task_the_hook_ran_in(project: Path, tmp_path: Path) -> None:
    git_dir = project / ".git"
    session = str(transcript(tmp_path, "make the retry handler back off with jitter"))
    hook(project, "session-start", {"session_id": "s-co", "cwd": str(project), "source": "startup"})
    lock = held(localstate.handoff_lock(git_dir))  # the background process is not there to run it
    try:
        hook(
            project,
            "pre-compact",
            {"session_id": "s-co", "cwd": str(project), "transcript_path": session},
            MEMGIT_HOOKS_BACKGROUND="1",
        )
        hook(
            project,
            "session-end",
            {"session_id": "s-co", "cwd": str(project), "reason": "exit"},
            MEMGIT_HOOKS_BACKGROUND="1",
        )
        wait_until(lambda: no_job(git_dir), "the background process did not give up")
    finally:
        lock.close()
    before = git(project, "rev-parse", "HEAD").strip()
    git(project, "checkout", "-q", "-b", "feature/other")
    (project / "other.py").write_text("x = 1\n")
    git(project, "add", "other.py")
    git(project, "commit", "-q", "-m", "other work")
    # The next session starts on another branch and runs what was handed off before the checkout.
    hook(
        project,
        "session-start",
        {"session_id": "s-next", "cwd": str(project), "source": "startup"},
        MEMGIT_HOOKS_BACKGROUND="1",
    )
    assert spool.pending(git_dir) == [] and hooks_log(project) == ""
    checkpoints = [p for p in staged(project) if p.startswith(".memory/checkpoint-")]
    assert len(checkpoints) == 1 and checkpoints[0].startswith(".memory/checkpoint-fix-retry-backoff-"), (
        checkpoints
    )
    record = json.loads(localstate.sessions_log(git_dir).read_text().splitlines()[-1])
    assert (
        record["session_id"] == "s-co"
        and record["task"] == "fix/retry-backoff"
        and record["end_commit"] == before
    )


def test_a_default_branch_named_like_an_option_is_a_branch_to_git(repo: Path, tmp_path: Path) -> None:
    # The remote names its default branch; a clone's origin/HEAD follows it.
    store(repo, "Exponential backoff capped at five minutes")
    git(repo, "update-ref", "refs/heads/--is-ancestor", "HEAD")
    git(repo, "symbolic-ref", "HEAD", "refs/heads/--is-ancestor")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert (
        git(clone, "symbolic-ref", "refs/remotes/origin/HEAD").strip() == "refs/remotes/origin/--is-ancestor"
    )
    git(clone, "checkout", "-q", "-b", "fix/retry-backoff")
    (clone / "retry.py").write_text("def backoff(n):\n    return 2 ** n\n")
    git(clone, "add", "retry.py")
    git(clone, "commit", "-q", "-m", "backoff")
    subprocess.run(
        [sys.executable, "-I", "-m", "memgit", "checkpoint", "--intent", "retry with jitter"],
        cwd=clone,
        check=True,
        capture_output=True,
        timeout=120,
    )
    checkpoints = [p for p in staged(clone) if p.startswith(".memory/checkpoint-")]
    # What the branch changed since it left the default branch: retry.py.
    assert len(checkpoints) == 1 and "retry.py" in (clone / checkpoints[0]).read_text(), hooks_log(clone)


def test_the_warm_server_runs_what_was_handed_off_before_a_compacted_session_starts(
    project: Path, tmp_path: Path, warm: Any
) -> None:
    git_dir = project / ".git"
    server_up(warm, project)
    session = str(transcript(tmp_path, "make the retry handler back off with jitter"))
    lock = held(localstate.handoff_lock(git_dir))
    try:
        hook(
            project,
            "pre-compact",
            {"session_id": "s-wc", "cwd": str(project), "transcript_path": session},
            MEMGIT_HOOKS_BACKGROUND="1",
        )
        wait_until(lambda: no_job(git_dir), "the background process did not give up")
    finally:
        lock.close()
    out, by_server = finish(
        start_hook(
            project,
            "session-start",
            {"session_id": "s-wc", "cwd": str(project), "source": "compact", "transcript_path": session},
            MEMGIT_HOOKS_BACKGROUND="1",
        )
    )
    assert by_server and "jitter" in out and spool.pending(git_dir) == [], hooks_log(project)


def test_the_background_process_outwaits_another_writer(project: Path, tmp_path: Path) -> None:
    git_dir = project / ".git"
    session = str(transcript(tmp_path, "make the retry handler back off with jitter"))
    writer = held(
        localstate.write_lock(git_dir)
    )  # another memgit writer, busy for longer than a hook may wait
    try:
        hook(
            project,
            "pre-compact",
            {"session_id": "s-wait", "cwd": str(project), "transcript_path": session},
            MEMGIT_HOOKS_BACKGROUND="1",
            MEMGIT_LOCK_TIMEOUT="0.1",
        )
        drainer = localstate.handoff_lock(git_dir)
        wait_until(
            lambda: drainer.exists() and drainer.read_text().strip().isdigit(), "no background process"
        )
        time.sleep(1.0)  # ten times what the hook itself would have waited: not a measurement
        assert not no_job(git_dir), hooks_log(project)  # still waiting, not given up
    finally:
        writer.close()
    wait_until(lambda: no_job(git_dir), "the background process hangs")
    assert spool.pending(git_dir) == [] and hooks_log(project) == ""
    assert [p for p in staged(project) if p.startswith(".memory/checkpoint-")]


def test_a_server_that_is_alive_but_not_serving_costs_a_hook_little(project: Path, warm: Any) -> None:
    server_up(warm, project)
    pid = warm.running()
    assert pid and pid > 0
    os.kill(pid, signal.SIGSTOP)  # stopped: its socket still takes connections, nobody answers
    try:
        process = start_hook(
            project, "user-prompt", {"session_id": "s-stop", "cwd": str(project), "prompt": PROMPT}
        )
        try:  # a deadline for a hook that hangs on the server (the agent's own is 60 s), not a measurement
            out, by_server = finish(process, timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    finally:
        os.kill(pid, signal.SIGCONT)
    assert not by_server and "Exponential backoff" in out
    # The request was never sent: the server, going on, runs nothing for it (the session holds
    # what the hook itself gave, and the same prompt again is left out either way).
    again, _ = finish(
        start_hook(project, "user-prompt", {"session_id": "s-stop", "cwd": str(project), "prompt": PROMPT})
    )
    assert "Exponential backoff" not in again
    assert hooks_log(project) == ""


def test_a_memory_folder_linked_to_another_repository_answers_nothing(repo: Path, tmp_path: Path) -> None:
    other = store(git_repo(tmp_path / "other"), "Bravo deadline from another repository")
    (repo / ".memory").symlink_to(other / ".memory")  # committed: a link out of the work tree
    git(repo, "add", ".memory")
    git(repo, "commit", "-q", "-m", "memories elsewhere")
    session = str(transcript(tmp_path, "make the retry handler back off with jitter"))
    out, _ = hook(repo, "user-prompt", {"session_id": "s-link", "cwd": str(repo), "prompt": PROMPT})
    assert out == "" and "Bravo" not in out
    hook(
        repo,
        "pre-compact",
        {"session_id": "s-link", "cwd": str(repo), "transcript_path": session},
        MEMGIT_HOOKS_BACKGROUND="1",
    )
    wait_until(lambda: no_job(repo / ".git"), "the background process hangs")
    assert git(other, "status", "--porcelain") == "" and staged(repo) == []  # nothing written there or here
