#!/usr/bin/env python3
"""What the trust check (`memgit.recall.provenance`: is each hit on the default branch?) adds
to a recall, and what `recall --at REV` costs.

    python benchmarks/trust.py [--sizes 1000 [10000]] [--queries Q]

For each N, a temporary git repository gets N memories from benchmarks/speed.py's generator,
committed on `main`; then, on a branch `feature`, 20 of them are edited and 20 new ones
added, committed. Measured in one process, keywords and anchors only
(MEMGIT_INDEX_EMBEDDER=none):

- recall without the check (`ask.recall(..., mark=False)`) and with it (the default), each of
  Q queries once per round, the two alternating, 3 rounds after a warm-up; p50 and p95 of
  each and the ratio of the p50s: a long-lived process (an MCP server), where the tip is
  looked up again only when git's ref files change and the listing of the default branch
  (`git ls-tree`) is cached by the tip's id. A new process (a CLI call, a hook) pays both
  once: "first check" is `provenance.mark` on a cold cache.
- a cold CLI recall (`python -m memgit recall Q`) as a process, median of 7, for scale.
- `recall --at main` in a fresh process (reads the commit's blobs and indexes them) and the
  same question again in that process (the kept index), against an ordinary recall.

Results to stdout, progress to stderr. Standard library and memgit only.
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

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(BENCH_DIR.parent))

import speed  # the generator and the repository of benchmarks/speed.py


def log(message: str) -> None:
    print(f"[trust] {message}", file=sys.stderr, flush=True)


def p(values: list[float], q: float) -> float:
    return speed.pct(values, q) * 1000.0


def branch(repo: Path, memories: list[dict], names: dict[str, str]) -> None:
    """On `feature`: 20 memories edited, 20 new ones, committed."""
    speed.git(repo, "branch", "-M", "main")
    speed.git(repo, "checkout", "-q", "-b", "feature")
    folder = repo / ".memory"
    for m in memories[:20]:
        path = folder / names[m["id"]]
        path.write_text(path.read_text("utf-8") + "\nEdited on the feature branch.\n", encoding="utf-8")
    for i, m in enumerate(memories[20:40]):
        new = dict(m, id=f"m-feat{i:02d}", title=m["title"] + " (feature)")
        (folder / f"feature-{i:02d}.md").write_text(speed.memory_text(new), encoding="utf-8")
    speed.git(repo, "add", "-A", ".memory")
    speed.git(repo, "commit", "-q", "-m", "memory: feature branch")


def in_process(repo: Path, queries: list[str], rounds: int) -> dict[str, float]:
    import memgit
    from memgit.git import reviewed
    from memgit.recall import ask, provenance

    mem = memgit.open(repo, warn=lambda message: log(f"memgit: {message}"))
    ws = mem.workspace
    hits = next((found for query in queries if (found := ask.recall(ws, query, record=False, mark=False))), [])
    started = time.perf_counter()
    marked = provenance.mark(ws, hits)
    first = time.perf_counter() - started
    states = [h.review.state if h.review else "unknown" for h in marked]
    for query in queries[:5]:  # warm-up
        ask.recall(ws, query, record=False)
        ask.recall(ws, query, record=False, mark=False)
    without: list[float] = []
    with_check: list[float] = []
    for r in range(rounds):
        for i, query in enumerate(queries):
            order = (False, True) if (i + r) % 2 else (True, False)
            for mark in order:
                started = time.perf_counter()
                ask.recall(ws, query, record=False, mark=mark)
                (with_check if mark else without).append(time.perf_counter() - started)
    ls_started = time.perf_counter()
    line = reviewed.mainline(ws.repo, ".memory")  # refs unchanged: a stat of the ref files, no git
    ref_only = time.perf_counter() - ls_started
    mem.close()
    log(f"first marks: {states}; default branch {line.branch if line else None}")
    return {"without_p50": p(without, 0.5), "without_p95": p(without, 0.95),
            "with_p50": p(with_check, 0.5), "with_p95": p(with_check, 0.95),
            "first_check": first * 1000.0, "tip_cached": ref_only * 1000.0}


def process(repo: Path, args: list[str], runs: int = 7) -> float:
    env = dict(os.environ)
    times = []
    for _ in range(runs + 1):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "memgit", *args], cwd=repo, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times[1:]) * 1000.0


def at_revision(repo: Path, query: str) -> dict[str, float]:
    import memgit

    mem = memgit.open(repo, warn=lambda message: None)
    started = time.perf_counter()
    mem.recall(query, at="main", record=False)
    first = time.perf_counter() - started
    started = time.perf_counter()
    mem.recall(query, at="main", record=False)
    again = time.perf_counter() - started
    mem.close()
    return {"at_first": first * 1000.0, "at_again": again * 1000.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000], metavar="N")
    ap.add_argument("--queries", type=int, default=40, metavar="Q")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    os.environ.update(MEMGIT_INDEX_EMBEDDER="none", MEMGIT_INDEX_WARM="0", MEMGIT_INDEX_BACKGROUND="0",
                      MEMGIT_CAPTURE_COMMAND="none", GIT_AUTHOR_NAME="memgit bench",
                      GIT_AUTHOR_EMAIL="bench@example.invalid", GIT_COMMITTER_NAME="memgit bench",
                      GIT_COMMITTER_EMAIL="bench@example.invalid")
    print("| N | recall p50 without / with the check | p95 without / with | ratio of p50s | first check in a "
          "process (for-each-ref + ls-tree) | tip lookup, cached | cold CLI recall | --at first / again |")
    print("|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        with tempfile.TemporaryDirectory(prefix="memgit-trust-") as tmp:
            repo = Path(tmp) / "repo"
            gen = speed.Generator(n)
            memories = [gen.memory(i) for i in range(n)]
            log(f"N={n}: writing and committing")
            names = speed.make_repo(repo, n, memories)
            branch(repo, memories, names)
            queries = gen.queries(memories, args.queries)
            subprocess.run([sys.executable, "-m", "memgit", "reindex"], cwd=repo, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            log(f"N={n}: recall with and without the check")
            r = in_process(repo, queries, args.rounds)
            cli = process(repo, ["recall", queries[1]])
            at = at_revision(repo, queries[2])
            print(f"| {n:,} | {r['without_p50']:.1f} / {r['with_p50']:.1f} ms | {r['without_p95']:.1f} / "
                  f"{r['with_p95']:.1f} ms | {r['with_p50'] / r['without_p50']:.2f} | {r['first_check']:.1f} ms | "
                  f"{r['tip_cached']:.1f} ms | {cli:.0f} ms | {at['at_first']:.0f} / {at['at_again']:.1f} ms |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
