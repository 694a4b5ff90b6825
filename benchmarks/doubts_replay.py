#!/usr/bin/env python3
"""`memgit doubts` replayed over a real repository's pull requests.

    python benchmarks/doubts_replay.py --data DIR --git GIT_DIR [--prs 200]

DIR is the code-memory development set (codemem-pytest: `memories.jsonl`, each memory taken
from one pytest commit, `id` "c" + its first 10 hex, anchored by `entity` and `files`); GIT_DIR
is a clone of pytest's repository (only read: every git command here reads objects). For each
memory, what it was written against is recorded as memgit records it, at its own commit
(`memgit.git.codeprint.prints_at`). Then the last `--prs` merge commits of the first-parent
history are taken as pull requests (`M^1..M`), and `memgit.reflect.doubts.check` runs on each
with the memories written before the pull request's base (by commit date).

Printed: how many pull requests made at least one memory doubtful, how many memories were
flagged in all and per PR (mean, max), by change (changed, renamed, moved, deleted); how many
anchors' files the PRs changed while the anchored symbol stayed the same (what checking by
symbol spares, against checking by file); and the cost per PR (seconds, p50/p95/max), beside
recording the memories' fingerprints.

Standard library and memgit only; results on stdout, progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))  # this folder for this one import only
import validity  # noqa: E402  (benchmarks/validity.py: one module for every benchmark in a run)
sys.path.pop(0)

require = validity.require


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True,
                          text=True).stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="the codemem-pytest folder")
    ap.add_argument("--git", type=Path, required=True, help="a clone of pytest (its git dir)")
    ap.add_argument("--prs", type=int, default=200, help="how many of the latest merges to replay")
    args = ap.parse_args(argv)

    from memgit.git import codeprint
    from memgit.git.repo import Repo
    from memgit.memory import against
    from memgit.memory.format import Memory
    from memgit.reflect import doubts

    git_dir = args.git.resolve()
    found = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "--verify", "--quiet", "HEAD"],
                           capture_output=True, check=False)
    require(found.returncode == 0, f"{git_dir} is not a git dir with a HEAD")
    repo = Repo(root=git_dir, git_dir=git_dir)
    text = (args.data / "memories.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    # Each memory's commit and its date.
    shas = {}
    for row in rows:
        found = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "--verify", "--quiet",
                                row["id"][1:] + "^{commit}"], capture_output=True, text=True)
        if found.returncode == 0:
            shas[row["id"]] = found.stdout.strip()
    dates = dict(line.split(" ", 1)[::-1]
                 for line in git(git_dir, "log", "--all", "--format=%ct %H").splitlines())
    log(f"{len(shas)} of {len(rows)} memories' commits found")
    require(len(shas) > len(rows) // 2, f"only {len(shas)} of {len(rows)} memories' commits are in {git_dir}")

    start = time.perf_counter()
    memories: list[tuple[Memory, str, int]] = []
    for row in rows:
        sha = shas.get(row["id"])
        if sha is None:
            continue
        memory = Memory(id=row["id"], title=row["title"], body=row.get("body") or "", kind=row["kind"],
                        entity=row.get("entity") or "", files=tuple(row.get("files") or ()), pinned=False,
                        path=f"{row['id']}.md")
        record = codeprint.prints_at(git_dir, sha, against.code_anchors(memory))
        memories.append((against.with_record(memory, record), f".memory/{row['id']}.md", int(dates[sha])))
    stamp_s = time.perf_counter() - start
    anchors = sum(len(against.code_anchors(m)) for m, _, _ in memories)
    log(f"recorded {anchors} anchors of {len(memories)} memories in {stamp_s:.1f} s")

    merges = git(git_dir, "log", "--first-parent", "--merges", f"-n{args.prs}", "--format=%H %P %ct",
                 "HEAD").splitlines()
    costs, flagged, changes, spared, any_pr, by_symbol = [], [], Counter(), 0, 0, 0
    distinct: set[str] = set()
    for i, line in enumerate(merges):
        merge, parent = line.split()[:2]
        base_time = int(git(git_dir, "log", "-1", "--format=%ct", parent).strip())
        written = [(m, p) for m, p, when in memories if when <= base_time]
        t0 = time.perf_counter()
        found = doubts.check(repo, written, f"{parent}..{merge}")
        costs.append(time.perf_counter() - t0)
        files = doubts.file_changes(repo, parent, merge)
        touched = sum(1 for m, _ in written for a in against.code_anchors(m)
                      if "::" in a and a.partition("::")[0] in files)
        flagged_symbols = sum(1 for d in found.memories for c in d.changes if "::" in c.anchor)
        spared += touched - flagged_symbols
        flagged.append(len(found.memories))
        any_pr += bool(found.memories)
        for d in found.memories:
            by_symbol += any("::" in c.anchor for c in d.changes)
            distinct.add(d.memory.id)
            changes.update(c.change for c in d.changes)
        if (i + 1) % 25 == 0:
            log(f"{i + 1}/{len(merges)} pull requests")

    require(len(costs) == len(merges) > 0, "no pull request (merge commit) to replay")
    require(sum(flagged) > 0, "no pull request made any memory doubtful: nothing was measured")

    def pct(values: list[float], q: float) -> float:
        values = sorted(values)
        return values[min(len(values) - 1, round(q * (len(values) - 1)))]

    print(f"doubts replayed over {len(merges)} pull requests (the latest first-parent merges of "
          f"{git(git_dir, 'rev-parse', '--short', 'HEAD').strip()}), {len(memories)} memories")
    print(f"  PRs that made at least one memory doubtful: {any_pr} of {len(merges)}")
    print(f"  memories flagged: {sum(flagged)} in all ({len(distinct)} distinct), per PR mean "
          f"{statistics.mean(flagged):.2f}, max {max(flagged)}")
    print(f"  of them flagged by a symbol's definition: {by_symbol}; by a file anchor only: "
          f"{sum(flagged) - by_symbol}")
    print(f"  anchor changes: {dict(changes)}")
    print("  symbol anchors whose file a PR changed but whose definition it left alone (not flagged): "
          f"{spared}")
    print(f"  cost per PR: p50 {statistics.median(costs):.3f} s, p95 {pct(costs, 0.95):.3f} s, "
          f"max {max(costs):.3f} s")
    print(f"  recording what {len(memories)} memories were written against ({anchors} anchors): "
          f"{stamp_s:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(validity.refuse_on_invalid(main, "doubts_replay"))
