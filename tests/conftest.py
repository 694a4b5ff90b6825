"""Shared fixtures: every test runs against real git repositories, isolated from the machine."""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / ".memory-example"


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Keep the user's git config, hooks templates and HOME out of every test."""
    home = tmp_path_factory.mktemp("home")
    template = tmp_path_factory.mktemp("git-template")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))  # the user store's default home
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_TEMPLATE_DIR", str(template))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Committer")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    monkeypatch.delenv("GIT_INDEX_FILE", raising=False)
    for name in list(os.environ):
        if name.startswith("MEMGIT_"):
            monkeypatch.delenv(name)
    # Most tests don't need vectors; the end-to-end tests turn the real embedder on.
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", "none")
    # No background model servers from tests, except the one test of them.
    monkeypatch.setenv("MEMGIT_INDEX_WARM", "0")
    # No detached capture at session end either, except in the test of that hand-off.
    monkeypatch.setenv("MEMGIT_CAPTURE_COMMAND", "none")
    # No background embedding jobs either, except in tests/test_embedjob.py.
    monkeypatch.setenv("MEMGIT_INDEX_BACKGROUND", "0")
    # Hook events run where the hook runs, not handed off, except in tests/test_hook_latency_paths.py.
    monkeypatch.setenv("MEMGIT_HOOKS_BACKGROUND", "0")
    (home / "run").mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(home / "run"))
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
    yield


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository with one commit."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "README.md").write_text("project\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    return root


@pytest.fixture
def mem(repo: Path):  # type: ignore[no-untyped-def]
    """An initialised memory store in `repo`."""
    import memgit

    store = memgit.open(repo, warn=lambda message: None)
    store.init()
    return store


class PreCommit:
    """The pre-commit framework with memgit's `.pre-commit-hooks.yaml`, as a user's
    `.pre-commit-config.yaml` names it: `repo:` one clone of this checkout (its uncommitted
    changes to tracked files committed in the clone, as `pre-commit try-repo` does), `rev:`
    that commit. Every test shares one PRE_COMMIT_HOME, so the framework builds its virtualenv
    with memgit once for the run; `try-repo` makes a new repository, and so a new build, on
    every call. Under pytest-xdist the workers share one folder: the first to get here makes
    the clone, and the framework's own lock on its store has the others wait for its build."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._config: Path | None = None

    def config(self) -> Path:
        if self._config is None:
            with open(self.folder / "setup.lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # another worker making the clone: wait for it
                self._config = self._set_up()
        return self._config

    def _set_up(self) -> Path:
        config = self.folder / "pre-commit-config.yaml"
        if not config.exists():
            env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
            env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
                       GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
                       GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")

            def run(*args: str, cwd: Path, extra: dict[str, str] | None = None) -> str:
                return subprocess.run(["git", *args], cwd=cwd, env={**env, **(extra or {})}, check=True,
                                      capture_output=True, text=True).stdout.strip()

            shadow = self.folder / "memgit-checkout"
            head = run("rev-parse", "HEAD", cwd=ROOT)
            run("clone", "-q", str(ROOT), str(shadow), cwd=self.folder)
            run("checkout", "-q", head, "-b", "_pc_tmp", cwd=shadow)
            into = {"GIT_INDEX_FILE": str(shadow / ".git" / "index"),
                    "GIT_OBJECT_DIRECTORY": str(shadow / ".git" / "objects")}
            run("add", "-u", cwd=ROOT, extra=into)  # this checkout's changes, into the clone's index
            if run("diff", "--cached", "--name-only", cwd=shadow):
                run("commit", "-q", "--no-verify", "-m", "this checkout", cwd=shadow)
            rev = run("rev-parse", "HEAD", cwd=shadow)
            config.write_text(f"repos:\n- repo: {shadow}\n  rev: {rev}\n"
                              "  hooks:\n  - id: memgit-memory\n  - id: memgit-rules\n")
        return config

    def run(self, repo: Path, hook: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        """`pre-commit run HOOK` in `repo` on its staged files, as `git commit` would run it."""
        import sys

        env = {**env, "PRE_COMMIT_HOME": str(self.folder / "home")}
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--config", str(self.config()), hook],
                              cwd=repo, capture_output=True, text=True, env=env, check=False)


@pytest.fixture(scope="session")
def pre_commit(tmp_path_factory: pytest.TempPathFactory) -> PreCommit:
    """One pre-commit set-up for the whole run (`PreCommit`), shared by pytest-xdist's workers."""
    pytest.importorskip("pre_commit")
    if os.environ.get("PYTEST_XDIST_WORKER"):  # each worker's temporary folder is in the run's
        folder = tmp_path_factory.getbasetemp().parent / "pre-commit"
        folder.mkdir(exist_ok=True)
        return PreCommit(folder)
    return PreCommit(tmp_path_factory.mktemp("pre-commit"))


@pytest.fixture
def warm(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The warm hook server on; the ones the test started stopped after."""
    from memgit.agents import warmhooks

    from .hookwatch import stop_server

    monkeypatch.setenv("MEMGIT_INDEX_WARM", "1")
    monkeypatch.setenv("MEMGIT_WARM_IDLE", "10")  # one the test does not stop ends soon
    yield warmhooks
    stop_server(warmhooks)
