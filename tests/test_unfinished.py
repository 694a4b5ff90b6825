"""No memgit write leaves a half-done change in git: whatever fails, the change stays in memgit's
journal, nothing of it is staged, and `memgit finish` or `memgit abandon` settles it.

Everything runs as a user runs it: `python -m memgit` subprocesses, a real pre-commit hook,
a real SIGKILL, the user's own `git commit` with memgit's git hooks installed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import memgit
from memgit.git import hooks as githooks
from memgit.git import repo as gitrepo

from .conftest import git

COUNT = 600


def memgit_cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memgit", "-C", str(repo), *args],
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where `stale_store` keeps the stores it built once for this module."""
    return tmp_path_factory.mktemp("stale-stores")


def stale_store(repo: Path, count: int = COUNT, built: Path | None = None) -> None:
    """A store of `count` memories whose anchors point at files that do not exist, so reflect
    proposes one change (and a few lines of commit message) for each. With `built`, the
    repository is built once (under the first test's isolated git set-up, as every test's is)
    and each test gets its own copy of it."""
    if built is not None:
        kept = built / str(count)
        if kept.exists():
            shutil.rmtree(repo)
            shutil.copytree(kept, repo, symlinks=True)
        else:
            stale_store(repo, count)
            shutil.copytree(repo, kept, symlinks=True)
        return
    assert memgit_cli(repo, "init").returncode == 0
    lines = []
    for i in range(count):
        files = [f"src/package_{i}/subsystem/module_number_{i}_{j}.py" for j in range(3)]
        lines.append(json.dumps({"id": f"m-{i}", "title": f"Fact {i} about the ingest pipeline and its retries",
                                 "body": f"see {files[0]}", "files": files, "entity": f"{files[0]}::function_{i}"}))
    source = repo.parent / "stale.jsonl"
    source.write_text("\n".join(lines) + "\n")
    done = memgit_cli(repo, "import", str(source))
    assert done.returncode == 0, done.stderr


def journal(repo: Path) -> Path:
    return repo / ".git" / "memgit" / "changeset.json"


def staged(repo: Path) -> str:
    return git(repo, "diff", "--cached", "--name-only")


def reject_commits(repo: Path) -> Path:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'commits are frozen today' >&2\nexit 1\n")
    hook.chmod(0o755)
    return hook


def test_reflect_apply_commits_hundreds_of_proposals_with_a_summary_message(repo: Path, built: Path) -> None:
    stale_store(repo, built=built)
    done = memgit_cli(repo, "reflect", "--apply")
    assert done.returncode == 0, done.stderr[-2000:]
    message = git(repo, "log", "-1", "--format=%B")
    assert message.startswith(f"memory: reflect ({COUNT} change(s))\n")
    assert f"… and {COUNT - 20} more" in message and len(message) < 12_000
    assert len(git(repo, "show", "--name-only", "--format=", "HEAD").split()) == COUNT
    assert git(repo, "status", "--porcelain") == "" and not journal(repo).exists()


def test_reflect_branch_commits_hundreds_of_proposals(repo: Path, built: Path) -> None:
    stale_store(repo, built=built)
    head = git(repo, "rev-parse", "HEAD")
    done = memgit_cli(repo, "reflect", "--branch", "memory-upkeep")
    assert done.returncode == 0, done.stderr[-2000:]
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "log", "-1", "--format=%s", "memory-upkeep") == f"memory: reflect ({COUNT} change(s))\n"
    assert len(git(repo, "diff", "--name-only", "HEAD", "memory-upkeep").split()) == COUNT


def test_a_rejected_commit_keeps_the_journal_and_stages_nothing_then_finish_commits_it(repo: Path,
                                                                                       built: Path) -> None:
    stale_store(repo, built=built)
    (repo / "notes.txt").write_text("the user's own work, staged\n")
    git(repo, "add", "notes.txt")
    hook = reject_commits(repo)
    head = git(repo, "rev-parse", "HEAD")

    done = memgit_cli(repo, "reflect", "--apply")
    assert done.returncode == 1
    assert "commits are frozen today" in done.stderr and "memgit finish" in done.stderr
    assert "memgit abandon" in done.stderr and "Traceback" not in done.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert journal(repo).exists()
    assert staged(repo) == "notes.txt\n"  # the user's staged work, and nothing of memgit's
    assert len(git(repo, "diff", "--name-only", "--", ".memory").split()) == COUNT  # written, not staged

    status = memgit_cli(repo, "status")
    line = next(x for x in status.stdout.splitlines() if x.startswith("interrupted_change:"))
    assert f"'memory: reflect ({COUNT} change(s))' ({COUNT} file(s): " in line and f"and {COUNT - 3} more)" in line
    assert len(line) < 400
    assert "'memgit finish' commits it, 'memgit abandon' undoes it" in status.stderr

    # Any other memgit write first tries to finish it, and with the hook still refusing says so.
    again = memgit_cli(repo, "remember", "something else")
    assert again.returncode == 1 and "could not finish an interrupted change" in again.stderr
    assert journal(repo).exists() and staged(repo) == "notes.txt\n"

    hook.unlink()
    finished = memgit_cli(repo, "finish")
    assert finished.returncode == 0, finished.stderr
    assert "finished an interrupted change 'memory: reflect" in finished.stderr
    assert git(repo, "log", "-1", "--format=%s") == f"memory: reflect ({COUNT} change(s))\n"
    assert len(git(repo, "show", "--name-only", "--format=", "HEAD").split()) == COUNT
    assert staged(repo) == "notes.txt\n" and not journal(repo).exists()
    assert memgit_cli(repo, "finish").stderr == "nothing to finish\n"


def test_abandon_after_a_rejected_commit_puts_every_file_back(repo: Path) -> None:
    stale_store(repo, 40)
    before = {p.name: p.read_bytes() for p in (repo / ".memory").iterdir() if p.is_file()}
    reject_commits(repo)
    assert memgit_cli(repo, "reflect", "--apply").returncode == 1
    assert journal(repo).exists()

    done = memgit_cli(repo, "abandon")
    assert done.returncode == 0, done.stderr
    assert "40 file(s) put back" in done.stderr
    assert {p.name: p.read_bytes() for p in (repo / ".memory").iterdir() if p.is_file()} == before
    assert git(repo, "status", "--porcelain") == "" and not journal(repo).exists()
    assert memgit_cli(repo, "abandon").stderr == "nothing to abandon\n"


def test_abandon_leaves_a_file_edited_by_hand_since_and_its_staged_state(repo: Path) -> None:
    stale_store(repo, 5)
    reject_commits(repo)
    assert memgit_cli(repo, "reflect", "--apply").returncode == 1
    edited = sorted((repo / ".memory").glob("*.md"))[0]
    edited.write_text(edited.read_text() + "\nA line written by hand.\n")
    git(repo, "add", str(edited))

    done = memgit_cli(repo, "abandon")
    assert done.returncode == 0, done.stderr
    assert f"left {edited.name} as it is" in done.stderr and "4 file(s) put back" in done.stderr
    assert "A line written by hand." in edited.read_text()
    assert git(repo, "status", "--porcelain") == f"M  .memory/{edited.name}\n"


def test_a_failure_before_staging_keeps_the_journal(repo: Path) -> None:
    """git cannot even stage (its index is locked by a process that died): the change stays
    journaled, nothing is staged, and `memgit finish` commits it once the lock is gone."""
    stale_store(repo, 5)
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    done = subprocess.run([sys.executable, "-c", "import memgit.git.runner as g; g.LOCK_RETRY_SECONDS = 0; "
                           "from memgit.cli import main; main()", "-C", str(repo), "reflect", "--apply"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1 and "index.lock" in done.stderr and "memgit finish" in done.stderr
    assert journal(repo).exists()
    lock.unlink()
    assert staged(repo) == ""
    assert memgit_cli(repo, "finish").returncode == 0
    assert git(repo, "log", "-1", "--format=%s") == "memory: reflect (5 change(s))\n"
    assert git(repo, "status", "--porcelain") == ""


# -- an import killed while git commits, then the user's own commit ---------------------------


def killed_import(repo: Path, tmp_path: Path, count: int = 300) -> None:
    """Kill `memgit import` inside git's commit (its files written and staged), the way a
    closed terminal does; memgit's git hooks are installed, chaining a slow foreign hook."""
    assert memgit_cli(repo, "init").returncode == 0
    marker = tmp_path / "in-hook"
    slow = repo / ".git" / "hooks" / "pre-commit"
    slow.parent.mkdir(parents=True, exist_ok=True)
    slow.write_text(f"#!/bin/sh\nif [ -e '{tmp_path / 'slow'}' ]; then touch '{marker}'; sleep 120; fi\n")
    slow.chmod(0o755)
    githooks.install(gitrepo.require(repo))
    (tmp_path / "slow").touch()
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"title": f"Fact {i}", "body": f"f_{i}() returns {i}."}) + "\n"
                              for i in range(count)))
    proc = subprocess.Popen([sys.executable, "-m", "memgit", "-C", str(repo), "import", str(source)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert marker.exists(), "the import never reached git's commit"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    (tmp_path / "slow").unlink()
    # The killed git left its lock behind; git tells the user to remove it, as they would.
    (repo / ".git" / "index.lock").unlink(missing_ok=True)


def user_commit(repo: Path) -> subprocess.CompletedProcess[str]:
    (repo / "app.py").write_text("print('unrelated work')\n")
    git(repo, "add", "app.py")
    return subprocess.run(["git", "commit", "-m", "x"], cwd=repo, capture_output=True, text=True)


@pytest.mark.parametrize("settle", ["finish", "abandon"])
def test_the_users_commit_does_not_take_a_killed_imports_staged_files(repo: Path, tmp_path: Path,
                                                                        settle: str) -> None:
    killed_import(repo, tmp_path)
    assert len(git(repo, "diff", "--cached", "--name-only", "--", ".memory").split()) == 300  # staged by the kill
    head = git(repo, "rev-parse", "HEAD")

    refused = user_commit(repo)
    assert refused.returncode == 1
    assert "commit refused: 300 staged file(s)" in refused.stderr
    assert "memgit finish" in refused.stderr and "memgit abandon" in refused.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert "a memgit change did not finish" in memgit_cli(repo, "status").stderr

    done = memgit_cli(repo, settle)
    assert done.returncode == 0, done.stderr
    if settle == "finish":
        assert git(repo, "log", "-1", "--format=%s") == "memory: import 300 memories\n"
        assert len(git(repo, "ls-files", ".memory").split()) == 301  # with config.toml
    else:
        assert "300 file(s) put back" in done.stderr
        assert sorted(p.name for p in (repo / ".memory").iterdir()) == ["config.toml"]
        assert git(repo, "rev-parse", "HEAD") == head
    assert staged(repo) == "app.py\n"

    ok = subprocess.run(["git", "commit", "-m", "x"], cwd=repo, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert git(repo, "show", "--name-only", "--format=", "HEAD") == "app.py\n"
    assert git(repo, "status", "--porcelain") == "" and not journal(repo).exists()


def test_memgits_own_commit_is_not_refused_by_its_hook(repo: Path, tmp_path: Path) -> None:
    """While memgit commits a change its journal names, the same hook runs for that commit:
    the write lock tells it this is memgit landing the change, not a user's commit taking it."""
    assert memgit_cli(repo, "init").returncode == 0
    githooks.install(gitrepo.require(repo))
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"title": f"Fact {i}"}) + "\n" for i in range(20)))
    done = memgit_cli(repo, "import", str(source))
    assert done.returncode == 0, done.stderr
    assert git(repo, "log", "-1", "--format=%s") == "memory: import 20 memories\n"
    assert git(repo, "status", "--porcelain") == ""


# -- forget --hard / rollback do not drop uncommitted edits --------------------------------------


def one_memory(repo: Path) -> tuple[str, Path]:
    assert memgit_cli(repo, "init").returncode == 0
    done = memgit_cli(repo, "remember", "the api base url is /v2", "--json")
    assert done.returncode == 0, done.stderr
    memory_id = json.loads(done.stdout)["id"]
    path = next(p for p in (repo / ".memory").glob("*.md"))
    return memory_id, path


def test_forget_hard_refuses_to_drop_an_uncommitted_edit(repo: Path) -> None:
    memory_id, path = one_memory(repo)
    path.write_text(path.read_text() + "\nA paragraph written by hand, not committed.\n")
    refused = memgit_cli(repo, "forget", "--hard", memory_id)
    assert refused.returncode == 1
    assert "has changes that are not committed" in refused.stderr and "--force" in refused.stderr
    assert "A paragraph written by hand" in path.read_text()

    forced = memgit_cli(repo, "forget", "--hard", "--force", memory_id)
    assert forced.returncode == 0, forced.stderr
    assert not path.exists() and git(repo, "status", "--porcelain") == ""


def test_rollback_refuses_to_drop_an_uncommitted_edit(repo: Path) -> None:
    memory_id, path = one_memory(repo)
    first = git(repo, "rev-parse", "HEAD").strip()
    assert memgit_cli(repo, "edit", memory_id, "--title", "the api base url is /v3").returncode == 0
    path.write_text(path.read_text() + "\nStaged by hand.\n")
    git(repo, "add", str(path))
    refused = memgit_cli(repo, "rollback", memory_id, "--to", first)
    assert refused.returncode == 1 and "--force" in refused.stderr
    assert "Staged by hand." in path.read_text()

    forced = memgit_cli(repo, "rollback", memory_id, "--to", first, "--force")
    assert forced.returncode == 0, forced.stderr
    assert "Staged by hand." not in path.read_text() and "/v2" in path.read_text()


def test_edit_keeps_an_uncommitted_hand_edit(repo: Path) -> None:
    """`edit` with options edits the fields' lines in place: a paragraph added by hand stays (and is
    committed with the edit, which is what the user sees in the diff)."""
    memory_id, path = one_memory(repo)
    path.write_text(path.read_text() + "\nA paragraph written by hand.\n")
    assert memgit_cli(repo, "edit", memory_id, "--kind", "decision").returncode == 0
    assert "A paragraph written by hand." in path.read_text() and "kind: decision" in path.read_text()


def test_abandon_after_a_kill_once_git_had_committed_the_change_keeps_the_commit(repo: Path,
                                                                                  tmp_path: Path) -> None:
    """memgit killed after git made its commit, before it dropped the journal: the change is in
    HEAD. `abandon` must not delete those files and stage their deletion for the next commit."""
    assert memgit_cli(repo, "init").returncode == 0
    hook = repo / ".git" / "hooks" / "post-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    # git's parent is memgit: kill it the moment the commit exists (field 4 of stat is the ppid).
    hook.write_text(f"#!/bin/sh\n[ -e '{tmp_path / 'kill'}' ] || exit 0\n"
                    "kill -9 \"$(sed 's/.*) //' /proc/$PPID/stat | cut -d' ' -f2)\"\n")
    hook.chmod(0o755)
    (tmp_path / "kill").touch()
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"title": f"Fact {i}", "body": f"f_{i}() returns {i}."}) + "\n"
                              for i in range(30)))
    killed = memgit_cli(repo, "import", str(source))
    assert killed.returncode == -signal.SIGKILL
    (tmp_path / "kill").unlink()
    assert git(repo, "log", "-1", "--format=%s") == "memory: import 30 memories\n"
    assert journal(repo).exists() and git(repo, "status", "--porcelain") == ""

    assert "did not finish" not in memgit_cli(repo, "status").stderr
    done = memgit_cli(repo, "abandon")
    assert done.returncode == 0, done.stderr
    assert "already committed" in done.stderr and "git revert" in done.stderr
    assert len(list((repo / ".memory").glob("*.md"))) == 30
    assert git(repo, "status", "--porcelain") == "" and not journal(repo).exists()


def test_a_change_killed_on_one_branch_does_not_land_on_another_unasked(repo: Path, tmp_path: Path) -> None:
    """An import killed on a feature branch, then `git switch main`: the next memgit write there
    refuses instead of committing the import on main; back on the branch it finishes."""
    git(repo, "switch", "-q", "-c", "feature")
    killed_import(repo, tmp_path, count=30)
    git(repo, "switch", "-q", "main")  # the staged new files come along, as git carries them
    main = git(repo, "rev-parse", "main")

    refused = memgit_cli(repo, "remember", "deploys go through CI")
    assert refused.returncode == 1
    assert "made on branch 'feature' did not finish" in refused.stderr
    assert "switch back to feature and run 'memgit finish'" in refused.stderr
    assert "memgit abandon" in refused.stderr
    assert git(repo, "rev-parse", "main") == main and journal(repo).exists()

    git(repo, "switch", "-q", "feature")
    done = memgit_cli(repo, "remember", "deploys go through CI")
    assert done.returncode == 0, done.stderr
    assert git(repo, "log", "-2", "--format=%s", "feature") == ("memory: add \"deploys go through CI\"\n"
                                                              "memory: import 30 memories\n")
    assert git(repo, "rev-parse", "main") == main and not journal(repo).exists()


def test_finish_asked_for_on_another_branch_commits_there(repo: Path, tmp_path: Path) -> None:
    git(repo, "switch", "-q", "-c", "feature")
    killed_import(repo, tmp_path, count=30)
    git(repo, "switch", "-q", "main")
    done = memgit_cli(repo, "finish")
    assert done.returncode == 0, done.stderr
    assert git(repo, "log", "-1", "--format=%s", "main") == "memory: import 30 memories\n"


def test_a_killed_commands_message_file_is_removed_by_the_next_commit(repo: Path, mem: memgit.Memgit) -> None:
    folder = repo / ".git" / "memgit"
    stale, fresh = folder / "commit-message-k1ll3d.txt", folder / "commit-message-n0w.txt"
    for path in (stale, fresh):
        path.write_text("memory: import 400 memories")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))  # as a command killed two hours ago left it
    mem.remember("deploys run from tools/deploy.sh")
    assert not stale.exists()
    assert fresh.exists()  # perhaps another command's, still committing
