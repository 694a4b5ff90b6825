"""A forget survives a merge: two clones of one origin, the merge driver installed, real `git pull`.

Alice forgets (archives) a memory and Bob edits a tag on it; whoever edited last and whoever
pulls, the memory stays archived and keeps Bob's tag. Only an explicit restore (archived ->
active) on one side brings it back.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import memgit
from memgit.memory import format as fmt
from memgit.memory import lenient

from .conftest import git

EARLY, LATE = "2026-11-02T10:00:00+00:00", "2026-11-03T10:00:00+00:00"


def memgit_cli(clone: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "memgit", *args], cwd=clone, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def clone(origin: Path, where: Path, name: str) -> Path:
    git(where, "clone", "-q", str(origin), name)
    path = where / name
    git(path, "config", "user.name", name)
    git(path, "config", "pull.rebase", "false")
    memgit_cli(path, "hooks", "install", "git")  # registers the merge driver in this clone
    assert "memgit.mergedriver" in git(path, "config", "merge.memgit.driver")
    return path


def stamp(repo: Path, rel: str, when: str) -> None:
    """Set the memory's `updated` clock and amend the last commit: who edited later is fixed."""
    path = repo / ".memory" / rel
    path.write_text(re.sub(r"(?m)^updated: .*$", f"updated: '{when}'", path.read_text()))
    git(repo, "commit", "-q", "--amend", "--no-edit", "-a")


def state(repo: Path, rel: str) -> fmt.Memory:
    memory, problems = lenient.check((repo / ".memory" / rel).read_bytes(), rel)
    assert memory is not None and problems == []
    return memory


@pytest.fixture
def shared(tmp_path: Path, repo: Path) -> tuple[Path, Path, str, str]:
    """A bare origin holding one memory, and Alice's and Bob's clones of it."""
    mem = memgit.open(repo, warn=lambda message: None)
    mem.init()
    made = mem.remember("Builds cache the wheel folder between CI runs", tags=["ci"]).memory
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(origin))
    return clone(origin, tmp_path, "alice"), clone(origin, tmp_path, "bob"), made.id, made.path


@pytest.mark.parametrize("forget_last", [False, True], ids=["edit-later", "forget-later"])
@pytest.mark.parametrize("puller", ["bob", "alice"])
def test_a_forget_is_not_undone_by_an_edit_on_the_other_side(
        shared: tuple[Path, Path, str, str], forget_last: bool, puller: str) -> None:
    alice, bob, memory_id, rel = shared
    memgit_cli(alice, "forget", memory_id)
    stamp(alice, rel, LATE if forget_last else EARLY)
    memgit_cli(bob, "edit", memory_id, "--tag", "ci", "--tag", "cache")
    stamp(bob, rel, EARLY if forget_last else LATE)
    first, second = (alice, bob) if puller == "bob" else (bob, alice)
    git(first, "push", "-q", "origin", "main")
    pulled = subprocess.run(["git", "pull", "--no-edit", "origin", "main"], cwd=second, capture_output=True,
                            text=True, check=False)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    merged = state(second, rel)
    assert merged.status == "archived"
    assert merged.tags == ("ci", "cache")  # Bob's edit is kept in the archived file
    assert memory_id not in memgit_cli(second, "list")
    assert "Builds cache the wheel" not in memgit_cli(second, "recall", "wheel folder cache CI")


@pytest.mark.parametrize("puller", ["bob", "alice"])
def test_an_explicit_restore_wins_over_an_edit(shared: tuple[Path, Path, str, str], puller: str) -> None:
    alice, bob, memory_id, rel = shared
    memgit_cli(alice, "forget", memory_id)
    git(alice, "push", "-q", "origin", "main")
    git(bob, "pull", "-q", "--no-edit", "origin", "main")
    # Bob restores it; Alice, later, edits the archived memory's tags.
    path = bob / ".memory" / rel
    path.write_text(path.read_text().replace("status: archived\n", ""))
    git(bob, "commit", "-q", "-a", "-m", "restore")
    stamp(bob, rel, EARLY)
    memgit_cli(alice, "edit", memory_id, "--tag", "ci", "--tag", "restored-elsewhere")
    stamp(alice, rel, LATE)
    first, second = (alice, bob) if puller == "bob" else (bob, alice)
    git(first, "push", "-q", "origin", "main")
    pulled = subprocess.run(["git", "pull", "--no-edit", "origin", "main"], cwd=second, capture_output=True,
                            text=True, check=False)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    merged = state(second, rel)
    assert merged.status == "active" and merged.tags == ("ci", "restored-elsewhere")
    assert memory_id in memgit_cli(second, "list")
