#!/usr/bin/env python3
"""How a recall after a big pull behaves: it answers at once and vectors catch up in the background.

    python benchmarks/background.py [--n 300] [--embedder minilm]

A temporary git repository gets an index (one recall on an empty store), then N memories
arrive at once (written and committed, as a `git pull` brings them). Measured, wall clock
on whatever else the machine runs:

- the recall that finds them: `memgit recall` as a subprocess, start to exit. Past
  AUTO_EMBED_MAX pending memories it embeds none itself and starts the background job;
- catch-up: from that recall's start until the index has no pending vector (read with
  the standard library's sqlite3 every 0.2 s), the job running at nice 10;
- baseline: `memgit reindex` of the same N memories in the foreground (a fresh index),
  which is what a user had to run before.

Prints the figures and the ratio catch-up / reindex (the price of low priority and of a
separate process loading the model). Standard library and memgit only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))  # this folder for this one import only
import validity  # noqa: E402  (benchmarks/validity.py: one module for every benchmark in a run)
sys.path.pop(0)

require = validity.require


def run(cwd: Path, env: dict[str, str], *args: str, said: str = "") -> float:
    """Seconds `memgit ARGS` took; it must exit 0 (and say `said` on stderr)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "memgit", *args], cwd=cwd, env=env, check=False,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - started
    require(done.returncode == 0, f"memgit {' '.join(args)} exited {done.returncode}: {done.stderr[-300:]}")
    require(said in done.stderr, f"memgit {' '.join(args)} did not say {said!r}: {done.stderr[-300:]}")
    return took


def vectors(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT count(*) FROM vectors").fetchone()[0])


def pending(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT count(*) FROM memories WHERE vec_sha IS NULL").fetchone()[0])


def make_repo(root: Path, env: dict[str, str]) -> None:
    root.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    run(root, env, "init")
    run(root, env, "recall", "anything")


def pull(root: Path, env: dict[str, str], n: int) -> None:
    from memgit.memory.format import Memory
    from memgit.store.folder import Store

    store = Store(root / ".memory")
    for i in range(n):
        store.write(Memory(id=f"m-{i:06x}", path=f"pulled-{i}.md",
                           title=f"Service note {i}: retries and caching",
                           body=f"Module mod_{i % 37}.py retries {i % 5} times; cache key cache_{i} expires "
                                "after ten minutes unless the request sets no-cache."))
    subprocess.run(["git", "add", ".memory"], cwd=root, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "pull"], cwd=root, env=env, check=True)


def main() -> int:
    return validity.refuse_on_invalid(measure, "background")


def measure() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds the catch-up may take")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="memgit-bg-"))
    env = {**os.environ, "MEMGIT_INDEX_EMBEDDER": args.embedder, "MEMGIT_INDEX_WARM": "0",
           "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
    try:
        repo = tmp / "bg"
        make_repo(repo, env)
        pull(repo, env, args.n)
        db = repo / ".git" / "memgit" / "index.db"
        started = time.perf_counter()
        # The recall must hand the embedding to a background job, and the job must finish it.
        recall = run(repo, env, "recall", "how long are cached entries kept?", said="in the background")
        deadline = time.monotonic() + args.timeout
        while pending(db):
            require(time.monotonic() < deadline, f"{pending(db)} memories still without a vector after "
                                                 f"{args.timeout:.0f} s: the background job did not finish")
            time.sleep(0.2)
        catch_up = time.perf_counter() - started
        require(vectors(db) >= args.n, f"{vectors(db)} vectors stored for {args.n} pulled memories")

        base = tmp / "fg"
        make_repo(base, env)
        pull(base, env, args.n)
        reindex = run(base, env, "reindex")
        require(not pending(base / ".git" / "memgit" / "index.db"),
                "`memgit reindex` left memories without a vector")
        print(f"{args.n} memories pulled, embedder {args.embedder}, {os.cpu_count()} cores, "
              f"load {os.getloadavg()[0]:.1f}")
        print(f"recall that starts the job: {recall * 1000:.0f} ms")
        print(f"background catch-up:        {catch_up:.1f} s")
        print(f"baseline `memgit reindex`:  {reindex:.1f} s  (catch-up / reindex = {catch_up / reindex:.2f})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
