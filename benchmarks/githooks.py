#!/usr/bin/env python3
"""What memgit's git hooks add to a git command: `git checkout` with and without them.

    python benchmarks/githooks.py [--runs 10]

A temporary repository with a few memories and two branches; `git checkout` alternates
between them, one second apart (the detached index sync of the previous checkout has
finished, as when a person works), without memgit's hooks, with them, and without again.
Prints the medians and the difference (target: <= 50 ms added). With the hooks installed,
each checkout's detached sync must have brought the index to the branch checked out (the
memory only `main` has is in it or not) before the next checkout, and without them the
index must stay as it was: otherwise the hooks did not fire, or fired when absent, and no
figure is printed.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# This folder's secrets.py would shadow the standard library's `secrets`.
HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # this folder for this one import only
import validity  # noqa: E402  (benchmarks/validity.py: one module for every benchmark in a run)
sys.path.pop(0)
require = validity.require

#: The memory only `main` has: whether the index holds it says which branch it was synced to.
ONLY_ON_MAIN = "one more on main"


def run(cwd: Path, *args: str) -> None:
    done = subprocess.run(args, cwd=cwd, check=False, capture_output=True, text=True)
    require(done.returncode == 0, f"`{' '.join(args)}` exited {done.returncode}: {done.stderr[-300:]}")


def indexed_main(repo: Path) -> bool:
    """Whether the index file holds the memory only `main` has (plain SQLite: no memgit call,
    which would sync the index itself)."""
    conn = sqlite3.connect(f"file:{repo / '.git' / 'memgit' / 'index.db'}?mode=ro", uri=True, timeout=30)
    try:
        found = conn.execute("SELECT count(*) FROM memories WHERE title = ?", (ONLY_ON_MAIN,)).fetchone()
        return bool(found[0])
    finally:
        conn.close()


def synced_to(repo: Path, branch: str, timeout: float = 60.0) -> bool:
    """Wait (polling, with a deadline) until the index matches `branch`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if indexed_main(repo) == (branch == "main"):
            return True
        time.sleep(0.05)
    return False


def checkouts(repo: Path, runs: int, hooked: bool) -> float:
    times = []
    for _ in range(runs):
        for branch in ("other", "main"):
            time.sleep(1.0)
            start = time.perf_counter()
            run(repo, "git", "checkout", "-q", branch)
            times.append((time.perf_counter() - start) * 1000)
            if hooked:
                require(synced_to(repo, branch), f"no sync by the hooks after checking out {branch}")
            else:
                require(indexed_main(repo), f"the index changed, checking out {branch} without the hooks")
    return statistics.median(times)


def main() -> int:
    return validity.refuse_on_invalid(measure, "githooks")


def measure() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    os.environ.setdefault("MEMGIT_INDEX_EMBEDDER", "none")
    import memgit
    from memgit.git import hooks as githooks
    from memgit.git import repo as gitrepo

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        run(repo, "git", "init", "-q", "-b", "main")
        run(repo, "git", "-c", "user.name=bench", "-c", "user.email=b@example.com", "commit", "-q", "--allow-empty",
            "-m", "init")
        run(repo, "git", "config", "user.name", "bench")
        run(repo, "git", "config", "user.email", "bench@example.com")
        mem = memgit.open(repo, warn=lambda message: None)
        mem.init()
        for i in range(20):
            mem.remember(f"memory {i} about the build and the deploy")
        run(repo, "git", "branch", "other")
        mem.remember(ONLY_ON_MAIN)
        found = [h.title for h in mem.recall(ONLY_ON_MAIN)]
        require(found[:1] == [ONLY_ON_MAIN], f"recall did not find {ONLY_ON_MAIN!r}: {found}")
        mem.close()  # the index now holds main's memories
        handle = gitrepo.require(repo)
        before = checkouts(repo, args.runs, hooked=False)
        githooks.install(handle)
        hooked = checkouts(repo, args.runs, hooked=True)
        githooks.uninstall(handle)
        after = checkouts(repo, args.runs, hooked=False)
    base = (before + after) / 2
    print(f"git checkout p50: {base:.1f} ms without memgit's hooks ({before:.1f} / {after:.1f}), "
          f"{hooked:.1f} ms with them: {hooked - base:+.1f} ms (target: <= 50 ms added)")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
