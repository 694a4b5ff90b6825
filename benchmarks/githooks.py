#!/usr/bin/env python3
"""What memgit's git hooks add to a git command: `git checkout` with and without them.

    python benchmarks/githooks.py [--runs 10]

A temporary repository with a few memories and two branches; `git checkout` alternates
between them, one second apart (the detached index sync of the previous checkout has
finished, as when a person works), without memgit's hooks, with them, and without again.
Prints the medians and the difference (target: <= 50 ms added).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# This folder's secrets.py would shadow the standard library's `secrets`.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

def run(cwd: Path, *args: str) -> None:
    subprocess.run(args, cwd=cwd, check=True, capture_output=True)


def checkouts(repo: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        for branch in ("other", "main"):
            time.sleep(1.0)
            start = time.perf_counter()
            run(repo, "git", "checkout", "-q", branch)
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
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
        mem.remember("one more on main")
        handle = gitrepo.require(repo)
        before = checkouts(repo, args.runs)
        githooks.install(handle)
        hooked = checkouts(repo, args.runs)
        githooks.uninstall(handle)
        after = checkouts(repo, args.runs)
    base = (before + after) / 2
    print(f"git checkout p50: {base:.1f} ms without memgit's hooks ({before:.1f} / {after:.1f}), "
          f"{hooked:.1f} ms with them: {hooked - base:+.1f} ms (target: <= 50 ms added)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
