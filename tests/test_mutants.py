"""Effects that a deliberately broken memgit (a "mutant") once left every other test green.

Each test here drives memgit as it runs for real (git runs the hooks; the warm embedder is its
own process answering on its socket) and observes the effect itself, so that the named change
to memgit makes it fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import memgit
from memgit.git import hooks as githooks
from memgit.git import repo as gitrepo
from memgit.index import warm

from .conftest import git

FAILING_POST_CHECKOUT = "#!/bin/sh\necho 'the team post-checkout failed' >&2\nexit 3\n"


def test_a_chained_post_checkout_hooks_failure_is_still_gits_exit_status(repo: Path, mem: memgit.Memgit) -> None:
    """git makes a post-checkout hook's exit status the exit status of `git checkout`. With
    memgit's hook installed over the team's, a failing team hook still fails the checkout, as
    it did before (mutant: memgit's post-* hooks always `exit 0`)."""
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "post-checkout").write_text(FAILING_POST_CHECKOUT)
    (hooks / "post-checkout").chmod(0o755)
    before = subprocess.run(["git", "checkout", "-q", "-b", "before"], cwd=repo, capture_output=True,
                            text=True, check=False)
    assert before.returncode != 0 and "the team post-checkout failed" in before.stderr

    githooks.install(gitrepo.require(repo))
    assert (hooks / "post-checkout.memgit-chained").read_text() == FAILING_POST_CHECKOUT
    after = subprocess.run(["git", "checkout", "-q", "-b", "after"], cwd=repo, capture_output=True,
                            text=True, check=False)
    assert after.returncode == before.returncode, after.stderr
    assert "the team post-checkout failed" in after.stderr
    assert git(repo, "branch", "--show-current").strip() == "after"  # the checkout itself happened


COUNTING_EMBEDDER = '''
import array, os

class Counting:
    id = "test-counting-8"
    dim = 8

    def __init__(self, **options):
        with open(os.environ["COUNTING_LOADS"], "a") as handle:
            handle.write(f"{os.getpid()}\\n")

    def embed(self, texts):
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text):
        values = [float(len(text) % 7 + i) for i in range(8)]
        row = array.array("f", values)

        class Row:
            def astype(self, *args):
                return self

            def tobytes(self):
                return row.tobytes()

        return Row()
'''


def test_the_warm_embedder_process_loads_its_model_once_for_every_query(tmp_path: Path) -> None:
    """The warm server exists so that a recall does not load the model: started as memgit starts
    it (its own process, on its private socket), it answers several queries from one load
    (mutant: the model loaded again for each query). Loads are counted by the embedder, not timed."""
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "countingembed.py").write_text(COUNTING_EMBEDDER)
    loads = tmp_path / "loads"
    name = "countingembed:Counting"
    code = (f"import sys; sys.path.insert(0, {str(plugin)!r}); from memgit.index.warm import serve; "
            f"serve({name!r}, 30)")
    server = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "COUNTING_LOADS": str(loads)})
    try:
        deadline = time.monotonic() + 60
        first = None
        while first is None and server.poll() is None:
            assert time.monotonic() < deadline, "the warm server never answered"
            time.sleep(0.05)
            first = warm.query_vector(name, "parse_config returns a tuple", "test-counting-8")
        answers = [warm.query_vector(name, f"query number {i}", "test-counting-8") for i in range(5)]
        assert all(blob is not None and len(blob) == 8 * 4 for blob in answers)
        assert loads.read_text().split() == [str(server.pid)]  # one load, in the server, for six queries
    finally:
        server.terminate()
        server.wait(timeout=30)


SESSION = """# Session log

### Human

We use pnpm, not npm, in this repo. Don't run npm install; it rewrites package-lock.json.

### Assistant

Understood, I'll use pnpm from now on.

### Human

Please add a retry to the upload client.

### Assistant

Done: the upload client retries three times.
"""


def memgit_cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The memgit command, run as the user runs it."""
    return subprocess.run([sys.executable, "-m", "memgit", "-C", str(repo), *args], capture_output=True,
                          text=True, check=False)


def test_a_capture_applied_on_a_branch_still_counts_what_the_user_said_again(repo: Path) -> None:
    """`capture --apply --branch` commits the proposal on a new branch; the user's repeating an
    existing memory is logged all the same, and `stats` counts it (mutant: only the staged path
    of `--apply` logs it)."""
    assert memgit_cli(repo, "init").returncode == 0
    remembered = memgit_cli(repo, "remember", "Use pnpm, never npm", "--kind", "convention")
    assert remembered.returncode == 0, remembered.stderr
    pnpm = remembered.stdout.strip()
    transcript = repo.parent / "session.md"
    transcript.write_text(SESSION)
    applied = memgit_cli(repo, "capture", str(transcript), "--apply", "--branch", "memgit/capture-session")
    assert applied.returncode == 0, applied.stderr
    assert git(repo, "branch", "--list", "memgit/capture-session").strip()
    stats = json.loads(memgit_cli(repo, "stats", "--json").stdout)
    assert (stats["restated"], stats["restated_memories"], stats["most_restated"]) == (1, 1, {pnpm: 1})


def _stop_on_a_conflict(repo: Path, operation: str) -> subprocess.CompletedProcess[str]:
    """`git rebase` or `git cherry-pick` of a commit that conflicts with main, stopped there."""
    git(repo, "switch", "-q", "-c", "theirs")
    (repo / "README.md").write_text("their project\n")
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "switch", "-q", "main")
    (repo / "README.md").write_text("our project\n")
    git(repo, "commit", "-q", "-am", "ours")
    if operation == "rebase":
        git(repo, "switch", "-q", "theirs")
        return subprocess.run(["git", "rebase", "main"], cwd=repo, capture_output=True, text=True, check=False)
    return subprocess.run(["git", "cherry-pick", "theirs"], cwd=repo, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("operation", ["rebase", "cherry-pick"])
def test_memgit_writes_nothing_into_a_rebase_or_cherry_pick_stopped_on_a_conflict(repo: Path,
                                                                                 operation: str) -> None:
    """A real `git rebase` / `git cherry-pick` stopped on a conflict: `memgit remember` refuses,
    saying what is in progress and how to end it, and commits nothing into it; once aborted, it
    writes again (mutant: only a merge counts as in progress)."""
    assert memgit_cli(repo, "init").returncode == 0
    stopped = _stop_on_a_conflict(repo, operation)
    assert stopped.returncode != 0 and "CONFLICT (content)" in stopped.stdout + stopped.stderr
    head = git(repo, "rev-parse", "HEAD")
    refused = memgit_cli(repo, "remember", "the cache key includes the locale")
    assert refused.returncode == 1
    assert f"{operation} is in progress; finish it (git {operation} --continue or --abort)" in refused.stderr
    assert not list((repo / ".memory").glob("the-cache-key-*.md"))
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "diff", "--name-only", "--diff-filter=U") == "README.md\n"  # the conflict, untouched
    git(repo, operation, "--abort")
    written = memgit_cli(repo, "remember", "the cache key includes the locale")
    assert written.returncode == 0, written.stderr
    assert len(list((repo / ".memory").glob("the-cache-key-*.md"))) == 1


def test_the_user_settings_command_runs_through_sh_with_a_real_payload(repo: Path) -> None:
    """`memgit hooks install claude --user` writes a command naming this interpreter (not
    `memgit-hook` on PATH); run as Claude Code runs it (`sh -c`, the payload on stdin), it gives
    the session its pinned memory (mutant: the command names a module that does not exist, which
    `2>/dev/null || true` would hide)."""
    assert memgit_cli(repo, "init").returncode == 0
    remembered = memgit_cli(repo, "remember", "Deploys go through the release workflow", "--kind", "convention")
    assert remembered.returncode == 0, remembered.stderr
    pinned = memgit_cli(repo, "edit", remembered.stdout.strip(), "--pin")
    assert pinned.returncode == 0, pinned.stderr
    assert memgit_cli(repo, "hooks", "install", "claude", "--user").returncode == 0
    settings = json.loads((Path.home() / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    payload = {"session_id": "user-settings-1", "transcript_path": None, "cwd": str(repo),
               "hook_event_name": "SessionStart", "source": "startup"}
    done = subprocess.run(["sh", "-c", command], cwd=repo, input=json.dumps(payload), capture_output=True,
                          text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Deploys go through the release workflow" in context


def test_a_pull_refreshes_the_rules_files_block_through_the_post_merge_hook(tmp_path: Path, repo: Path) -> None:
    """The project keeps a memgit block in AGENTS.md; a teammate's convention arrives with
    `git pull`, and the detached post-merge hook alone brings the block up to date (mutant: the
    hooks' sync leaves the rules files as they were)."""
    from memgit.memory.format import Memory
    from memgit.store.folder import Store

    from .test_githooks import hook_python, wait_for_hook_runs

    assert memgit_cli(repo, "init").returncode == 0
    assert memgit_cli(repo, "remember", "Run the tests with pytest -q", "--kind", "convention").returncode == 0
    assert memgit_cli(repo, "rules").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "rules block")
    assert "Run the tests with pytest -q" in (repo / "AGENTS.md").read_text()
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(repo), str(teammate))
    Store(teammate / ".memory").write(Memory(id="m-0a11e7", title="Format the code with black before a commit",
                                             body="the CI checks it", kind="convention", path="black.md"))
    git(teammate, "add", ".memory")
    git(teammate, "commit", "-q", "-m", "teammate's convention")

    githooks.install(gitrepo.require(repo), python=str(hook_python(tmp_path)))
    pulled = subprocess.run(["git", "pull", "-q", "--no-rebase", str(teammate), "main"], cwd=repo,
                            capture_output=True, text=True, check=False)
    assert pulled.returncode == 0, pulled.stderr
    assert wait_for_hook_runs(tmp_path, 1) == ["start sync", "exit 0"]
    assert "Format the code with black before a commit" in (repo / "AGENTS.md").read_text()
