"""memgit's git hooks, installed into real repositories and run by git itself."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import memgit
from memgit.errors import MemgitError
from memgit.git import hooks as githooks
from memgit import githooks as hook_entry
from memgit.git import repo as gitrepo

from .conftest import PreCommit, git

FOREIGN = "#!/bin/sh\necho foreign-$(basename \"$0\") >> \"$(git rev-parse --git-common-dir)/foreign.log\"\nexit 0\n"


def repo_of(path: Path) -> gitrepo.Repo:
    return gitrepo.require(path)


def states(repo: Path) -> dict[str, str]:
    return {h.name: h.state for h in githooks.status(repo_of(repo))}


def commit_memory(repo: Path, name: str, text: str, *extra: str) -> subprocess.CompletedProcess[str]:
    (repo / ".memory" / name).write_text(text)
    git(repo, "add", ".memory")
    return subprocess.run(["git", "commit", "-m", f"add {name}", *extra], cwd=repo, capture_output=True, text=True)


def test_install_status_uninstall(repo: Path, mem: memgit.Memgit) -> None:
    assert set(states(repo).values()) == {"missing"}
    installed = githooks.install(repo_of(repo))
    assert {h.state for h in installed} == {"installed"}
    for hook in installed:
        assert hook.path.parent == repo / ".git" / "hooks" and os.access(hook.path, os.X_OK)
    githooks.install(repo_of(repo))  # again: the same
    assert set(states(repo).values()) == {"installed"}
    githooks.uninstall(repo_of(repo))
    assert sorted(p.name for p in (repo / ".git" / "hooks").iterdir()) == []


def test_a_foreign_hook_is_chained_and_restored_exactly(repo: Path, mem: memgit.Memgit) -> None:
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in ("pre-commit", "post-merge"):
        (hooks / name).write_text(FOREIGN)
        (hooks / name).chmod(0o750)
    githooks.install(repo_of(repo))
    assert states(repo) == {"post-checkout": "installed", "post-merge": "chained", "post-rewrite": "installed",
                            "pre-commit": "chained"}
    assert commit_memory(repo, "a.md", "# Deploys go through CI\n").returncode == 0
    assert (repo / ".git" / "foreign.log").read_text() == "foreign-pre-commit\n"  # its own name
    (hooks / "pre-commit.memgit-chained").write_text("#!/bin/sh\necho 'foreign says no' >&2\nexit 3\n")
    refused = commit_memory(repo, "b.md", "# Another\n")
    assert refused.returncode != 0 and "foreign says no" in refused.stderr  # its verdict stands
    (hooks / "pre-commit.memgit-chained").write_text(FOREIGN)
    githooks.uninstall(repo_of(repo))
    for name in ("pre-commit", "post-merge"):
        assert (hooks / name).read_text() == FOREIGN
        assert stat.S_IMODE((hooks / name).stat().st_mode) == 0o750
    assert not list(hooks.glob("*.memgit-chained")) and not (hooks / "post-checkout").exists()


#: husky 4's shape: every hook is the same script, which finds its helper next to itself
#: (`dirname "$0"`) and decides what to run from its own name (`basename "$0"`).
DISPATCHER = '#!{shell}\n. "$(dirname "$0")/lint.sh"\n'
LINT = (
    'hook="$(basename "$0")"\n'
    'echo "lint hook called as $hook with $# arguments" >&2\n'
    'if [ "$hook" = pre-commit ]; then echo "lint: trailing whitespace in app.py" >&2; exit 1; fi\n'
    'exit 0\n'
)


@pytest.mark.parametrize("shell", ["/bin/sh", "/usr/bin/env bash", "/bin/sh -e"])
def test_a_chained_hook_that_dispatches_on_its_name_still_blocks(repo: Path, mem: memgit.Memgit,
                                                                 shell: str) -> None:
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "lint.sh").write_text(LINT)
    for name in ("pre-commit", "post-checkout"):
        (hooks / name).write_text(DISPATCHER.format(shell=shell))
        (hooks / name).chmod(0o755)
    githooks.install(repo_of(repo))
    assert states(repo)["pre-commit"] == "chained"
    (repo / "app.py").write_text("x = 1   \n")
    git(repo, "add", "app.py")
    refused = subprocess.run(["git", "commit", "-m", "app"], cwd=repo, capture_output=True, text=True)
    assert refused.returncode == 1, refused.stderr
    assert "lint hook called as pre-commit with 0 arguments" in refused.stderr
    assert "lint: trailing whitespace in app.py" in refused.stderr
    switched = subprocess.run(["git", "checkout", "-b", "other"], cwd=repo, capture_output=True, text=True)
    assert switched.returncode == 0 and "lint hook called as post-checkout with 3 arguments" in switched.stderr


def test_a_chained_program_that_is_not_a_shell_script_runs_as_it_is(repo: Path, mem: memgit.Memgit) -> None:
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_text(f"#!{sys.executable}\nimport sys\nprint('python hook', file=sys.stderr)\n"
                                      "sys.exit(4)\n")
    (hooks / "pre-commit").chmod(0o755)
    githooks.install(repo_of(repo))
    (repo / "app.py").write_text("x = 1\n")
    git(repo, "add", "app.py")
    refused = subprocess.run(["git", "commit", "-m", "app"], cwd=repo, capture_output=True, text=True)
    assert refused.returncode == 1 and "python hook" in refused.stderr  # its verdict stands


def test_pre_commit_blocks_a_secret_and_only_warns_about_lint(repo: Path, mem: memgit.Memgit) -> None:
    githooks.install(repo_of(repo))
    secret = "---\ntitle: staging\n---\n\nthe staging password = \"Xk29!aa-Q71z\"\n"
    refused = commit_memory(repo, "staging.md", secret)
    assert refused.returncode == 1
    assert ".memory/staging.md:5: this looks like a secret (hard-coded password" in refused.stderr
    assert "git commit --no-verify" in refused.stderr
    allowed = subprocess.run(["git", "commit", "-m", "x"], cwd=repo, capture_output=True, text=True,
                             env={**os.environ, "MEMGIT_ALLOW_SECRET": "1"})
    assert allowed.returncode == 0
    odd = commit_memory(repo, "odd.md", "---\ntitle: Odd\nconfidence: high\n---\n\nBody.\n")
    assert odd.returncode == 0 and "odd.md:3: 'confidence' must be a number" in odd.stderr
    edited = commit_memory(repo, "staging.md", secret + "\nMore.\n")  # the secret was there already
    assert edited.returncode == 0


def test_post_hooks_fail_open_and_never_slow_git_with_errors(tmp_path: Path, repo: Path, mem: memgit.Memgit) -> None:
    githooks.install(repo_of(repo), python=str(tmp_path / "gone" / "python"))
    git(repo, "switch", "-q", "-c", "feature")
    mem.remember("feature memory about retries")
    git(repo, "switch", "-q", "main")
    merged = subprocess.run(["git", "merge", "--no-edit", "feature"], cwd=repo, capture_output=True, text=True)
    assert merged.returncode == 0 and merged.stderr == ""
    assert commit_memory(repo, "a.md", "# Deploys go through CI\n").returncode == 0  # pre-commit: Python gone


GATED = "tests.gated_embedder:GatedEmbedder"


def hook_python(tmp_path: Path) -> Path:
    """The interpreter the hooks are installed with: the real one, run as the hook runs it
    (`-I`), except that `tests/` joins the import path so the recording test embedder loads.
    It records each run's start and exit status, and the sync's stderr, so the test waits on
    the detached process itself instead of sleeping."""
    from .conftest import ROOT

    log = tmp_path / "hook-runs.log"
    wrapper = tmp_path / "hook-python"
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); import memgit.githooks as h; "
            "sys.exit(h.main(sys.argv[1:]))")
    wrapper.write_text(
        "#!/bin/sh\n"
        f'[ "$1 $2 $3" = "-I -m memgit.githooks" ] || {{ echo "unexpected call: $*" >> {log}; exit 9; }}\n'
        "shift 3\n"
        f'echo "start $*" >> {log}\n'
        f"{sys.executable} -I -c {shlex.quote(code)} \"$@\" 2>> {tmp_path / 'hook-stderr.log'}\n"
        f'echo "exit $?" >> {log}\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def wait_for_hook_runs(tmp_path: Path, count: int, timeout: float = 120.0) -> list[str]:
    """The hook runs' log once `count` of them have exited (polling, with a deadline)."""
    log = tmp_path / "hook-runs.log"
    deadline = time.monotonic() + timeout
    while True:
        lines = log.read_text().splitlines() if log.exists() else []
        if sum(line.startswith("exit ") for line in lines) >= count:
            return lines
        assert time.monotonic() < deadline, f"the detached hook did not finish: {lines}"
        time.sleep(0.1)


def indexed(repo: Path) -> dict[str, tuple[str | None, bool]]:
    """What the index file holds, read with plain SQLite (no memgit call, which would sync):
    each memory id -> (the sha of the text its vector was made from, whether a vector row exists)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{repo / '.git' / 'memgit' / 'index.db'}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT m.id, m.vec_sha, v.doc IS NOT NULL FROM memories m "
                            "LEFT JOIN vectors v ON v.doc = m.doc").fetchall()
    finally:
        conn.close()
    return {row[0]: (row[1], bool(row[2])) for row in rows}


def test_post_merge_brings_the_index_up_to_date(
        tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As a user lives it: the hooks are installed, `git pull` brings a teammate's memory, and the
    detached post-merge hook alone puts it in the index, keywords and vector both."""
    from memgit.memory.format import Memory
    from memgit.store.folder import Store

    gate = tmp_path / "gate"
    gate.mkdir()
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", GATED)
    monkeypatch.setenv("MEMGIT_TEST_GATE", str(gate))  # the test embedder records what it embeds
    mem = memgit.open(repo, warn=lambda message: None)
    mem.init()
    mine = mem.remember("deploys go through the release workflow").memory
    assert [h.id for h in mem.recall("release workflow")] == [mine.id]  # the index exists, embedded
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(repo), str(teammate))
    Store(teammate / ".memory").write(Memory(id="m-0a11e7", title="The ingest queue is drained nightly",
                                             body="by the cron job in ops/drain.sh", path="ingest-queue.md"))
    git(teammate, "add", ".memory")
    git(teammate, "commit", "-q", "-m", "teammate's memory")
    mem.close()
    assert set(indexed(repo)) == {mine.id} and indexed(repo)[mine.id][1]
    (gate / "texts").unlink()

    githooks.install(repo_of(repo), python=str(hook_python(tmp_path)))
    pulled = subprocess.run(["git", "pull", "-q", "--no-rebase", str(teammate), "main"], cwd=repo,
                            check=False, capture_output=True, text=True)
    assert pulled.returncode == 0 and pulled.stderr == "", pulled.stderr
    runs = wait_for_hook_runs(tmp_path, 1)
    assert runs == ["start sync", "exit 0"]
    assert (tmp_path / "hook-stderr.log").read_text() == ""
    after = indexed(repo)
    assert set(after) == {mine.id, "m-0a11e7"}
    vec_sha, has_vector = after["m-0a11e7"]
    assert vec_sha and has_vector  # embedded by the hook, not left pending
    embedded = (gate / "texts").read_text().splitlines()
    assert any("ingest queue is drained nightly" in text for text in embedded)


def test_the_hook_entry_point_fails_open_but_says_why(repo: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`main` returns 0 whatever happens (a hook never fails git), so what it printed is what
    a test can check."""
    monkeypatch.chdir(repo)
    assert hook_entry.main(["sync"]) == 0  # no memory folder: nothing to do, nothing said
    assert capsys.readouterr().err == ""
    assert hook_entry.main(["nonsense"]) == 0
    assert "memgit: unknown hook command ['nonsense']" in capsys.readouterr().err


def test_core_hooks_path(tmp_path: Path, repo: Path, mem: memgit.Memgit) -> None:
    git(repo, "config", "core.hooksPath", ".githooks")
    with pytest.raises(MemgitError, match=r"core.hooksPath points into the work tree \(.githooks/\)"):
        githooks.install(repo_of(repo))
    assert not (repo / ".githooks").exists()
    outside = tmp_path / "shared-hooks"
    git(repo, "config", "core.hooksPath", str(outside))
    githooks.install(repo_of(repo))
    assert (outside / "pre-commit").exists() and set(states(repo).values()) == {"installed"}


def test_worktrees_share_the_hooks(tmp_path: Path, repo: Path, mem: memgit.Memgit) -> None:
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", str(tree), "-b", "side")
    githooks.install(repo_of(tree))
    assert (repo / ".git" / "hooks" / "pre-commit").exists()
    assert set(states(repo).values()) == {"installed"}
    refused = commit_memory(tree, "s.md", "---\ntitle: s\n---\n\npassword = \"Xk29!aa-Q71z\"\n")
    assert refused.returncode == 1


REAL_PIP_CACHE = Path.home() / ".cache" / "pip"  # read before the fixture isolates HOME


def test_the_pre_commit_framework_runs_the_shipped_hook(repo: Path, pre_commit: PreCommit) -> None:
    """`pre-commit run` with this repository's .pre-commit-hooks.yaml (installs memgit into the
    framework's own virtualenv, as a user's pre-commit would)."""
    env = dict(os.environ)
    if REAL_PIP_CACHE.is_dir():
        env["PIP_CACHE_DIR"] = str(REAL_PIP_CACHE)
    (repo / ".memory").mkdir()
    (repo / ".memory" / "ok.md").write_text("# Deploys go through CI\n")
    git(repo, "add", ".memory")
    passed = pre_commit.run(repo, "memgit-memory", env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "memgit memory files (lint, secrets)" in passed.stdout and "Passed" in passed.stdout
    (repo / ".memory" / "s.md").write_text('---\ntitle: s\n---\n\npassword = "Xk29!aa-Q71z"\n')
    git(repo, "add", ".memory")
    failed = pre_commit.run(repo, "memgit-memory", env)
    assert failed.returncode == 1
    assert ".memory/s.md:5: this looks like a secret" in failed.stdout


def test_a_chained_post_rewrite_hook_gets_its_input_and_memgits_sync_still_runs(
        tmp_path: Path, repo: Path, mem: memgit.Memgit) -> None:
    """post-rewrite is the one hook git gives input (old and new shas): the chained hook reads
    all of it, with its argument, and memgit's sync still starts after it."""
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "post-rewrite").write_text(
        '#!/bin/sh\n{ echo "called as $(basename "$0") $*"; cat; } '
        '>> "$(git rev-parse --git-dir)/rewrites.log"\n')
    (hooks / "post-rewrite").chmod(0o755)
    githooks.install(repo_of(repo), python=str(hook_python(tmp_path)))
    assert states(repo)["post-rewrite"] == "chained"
    before = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "commit", "-q", "--amend", "-m", "initial, reworded")
    after = git(repo, "rev-parse", "HEAD").strip()
    logged = (repo / ".git" / "rewrites.log").read_text()
    assert logged == f"called as post-rewrite amend\n{before} {after}\n"
    runs = wait_for_hook_runs(tmp_path, 2)  # the amend's pre-commit, then post-rewrite's sync
    assert sorted(runs) == ["exit 0", "exit 0", "start pre-commit", "start sync"]


def test_install_over_a_chained_hook_left_in_place(repo: Path, mem: memgit.Memgit) -> None:
    """memgit's own hook with its chained one: installing again keeps both. A foreign hook and a
    `.memgit-chained` file already there: nothing is moved, the error says what to do."""
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_text(FOREIGN)
    (hooks / "pre-commit").chmod(0o755)
    githooks.install(repo_of(repo))
    githooks.install(repo_of(repo))
    assert (hooks / "pre-commit.memgit-chained").read_text() == FOREIGN
    assert states(repo)["pre-commit"] == "chained"

    githooks.uninstall(repo_of(repo))
    other = "#!/bin/sh\necho other >&2\n"
    (hooks / "pre-commit.memgit-chained").write_text(other)
    with pytest.raises(MemgitError, match=r"pre-commit.memgit-chained already exists; move it away"):
        githooks.install(repo_of(repo))
    assert (hooks / "pre-commit").read_text() == FOREIGN
    assert (hooks / "pre-commit.memgit-chained").read_text() == other


def test_uninstall_after_someone_replaced_memgits_hook_leaves_theirs(repo: Path, mem: memgit.Memgit) -> None:
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "post-merge").write_text(FOREIGN)
    (hooks / "post-merge").chmod(0o755)
    githooks.install(repo_of(repo))
    replacement = "#!/bin/sh\necho 'the team lint, written over memgit' >&2\n"
    (hooks / "post-merge").write_text(replacement)
    githooks.uninstall(repo_of(repo))
    assert (hooks / "post-merge").read_text() == replacement  # theirs now: not removed nor overwritten
    assert (hooks / "post-merge.memgit-chained").read_text() == FOREIGN  # not lost either
    assert not (hooks / "pre-commit").exists() and not (hooks / "post-checkout").exists()
    assert states(repo)["post-merge"] == "foreign"
