#!/usr/bin/env python3
"""Recall's report in one run: the paths an agent waits on, and recall quality per set and per
query type with and without deep mode, each figure next to the baseline it names.

    nice -n 10 python benchmarks/recall_report.py [--data DIR] [--keep DIR] [--sets SET ...]
        [--quick] [--no-latency] [--no-quality] [--baseline-rev REV | --against QUALITY.json]
        [--json OUT]

It runs the two benchmarks that measure these figures, each in its own process, and prints
their rows together:

- `agent_paths.py` (every row of the agent-path table: the hooks, in-process and MCP recall,
  `remember`), each as a ratio to the baseline that script names and measures in the same run
  (a bare `python -c pass` for the hooks, the same hooks with no embedding job for the
  background row, a bare FTS5 query, in-process recall for MCP, git's own commit for
  `remember`), with its target. `--quick` uses its small sizes; without it the sizes are the
  targets' own (1k memories for the hooks, 10k for recall and MCP, 100k for `remember`).
- `quality.py` on each set (default: codemem-pytest, devmembench, devmembench/round-unit,
  cosqa) after a full `reindex`, with `--deep`: R@5 of the fused ranking and of deep recall,
  overall and per query type, next to a baseline. `--baseline-rev REV` measures it in the same
  run: that commit's own quality.py and memgit, from a temporary `git worktree`, on the same
  sets. Otherwise `--against` takes an earlier run's `--json`, and without either the figures
  recorded at commit a7122b8 are shown, labelled "recorded" (`RECORDED`: the starting point of
  this work, measured the same way). `--keep DIR` reuses built repositories and their vectors
  between runs (the baseline's in DIR/baseline-REV).

A row that either benchmark refused (a failed, empty or degraded run) is printed as refused,
with the reason, and the exit status is 2: no figure stands in for one that was not measured.
Standard library only; the two benchmarks need memgit (and the MCP SDK for the MCP rows).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SETS = ("codemem-pytest", "devmembench", "devmembench/round-unit", "cosqa")
#: R@5 of the fused ranking per set and query type, measured at a7122b8 by quality.py after a
#: reindex (docs/benchmarks.md), the baseline the quality targets are stated against.
RECORDED = {
    ("codemem-pytest", "ALL"): 0.806, ("codemem-pytest", "natural"): 0.718,
    ("codemem-pytest", "mixed"): 0.951, ("codemem-pytest", "anchor"): 0.964,
    ("devmembench/round-unit", "ALL"): 0.762, ("devmembench", "ALL"): 0.930,
    ("cosqa", "ALL"): 0.686,
}
TARGETS = {("codemem-pytest", "ALL"): 0.85, ("devmembench/round-unit", "ALL"): 0.85, ("cosqa", "ALL"): 0.72}
#: No set and no query type may fall more than this below its baseline.
SLACK = 0.01


def log(message: str) -> None:
    print(f"[recall_report] {message}", file=sys.stderr, flush=True)


def run(cmd: list[str]) -> int:
    log(" ".join(cmd))
    return subprocess.run(cmd, check=False).returncode


def latency(args: argparse.Namespace, out: Path) -> dict | None:
    cmd = [sys.executable, str(HERE / "agent_paths.py"), "--json", str(out)]
    if not args.quick:
        cmd += ["--recall-size", "10000", "--remember-size", "100000"]
    if args.keep:
        cmd += ["--keep", str(args.keep / "agent-paths")]
    code = run(cmd)
    if not out.is_file():
        log(f"agent_paths.py exited {code} and wrote no figures")
        return None
    return json.loads(out.read_text())


def quality(args: argparse.Namespace, out: Path) -> dict | None:
    cmd = [sys.executable, str(HERE / "quality.py"), *args.sets, "--after", "reindex", "--deep",
           "--json", str(out)]
    if args.data:
        cmd += ["--data", str(args.data)]
    if args.keep:
        cmd += ["--keep", str(args.keep)]
    code = run(cmd)
    if not out.is_file():
        log(f"quality.py exited {code} and wrote no figures")
        return None
    return json.loads(out.read_text())


def baseline_run(args: argparse.Namespace, out: Path, tmp: Path) -> Path | None:
    """The fused figures of commit `args.baseline_rev`, measured now by its own code."""
    root = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=HERE, capture_output=True,
                               text=True, check=True).stdout.strip())
    tree = tmp / "baseline"
    if run(["git", "-C", str(root), "worktree", "add", "--detach", "-q", str(tree), args.baseline_rev]):
        return None
    try:
        cmd = [sys.executable, str(tree / "benchmarks" / "quality.py"), *args.sets, "--after", "reindex",
               "--json", str(out)]
        if args.data:
            cmd += ["--data", str(args.data)]
        if args.keep:
            cmd += ["--keep", str(args.keep / f"baseline-{args.baseline_rev}")]
        log("PYTHONPATH=" + str(tree))
        subprocess.run(cmd, env={**os.environ, "PYTHONPATH": str(tree)}, check=False)
    finally:
        subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(tree)], check=False)
    return out if out.is_file() else None


def r5(result: dict, group: str, ranker: str) -> float | None:
    value = result["groups"].get(group, {}).get(ranker, {}).get("R@5")
    return None if value is None else float(value)


def baselines(against: Path | None, name: str | None = None) -> tuple[str, dict[tuple[str, str], float]]:
    if against is None:
        return "a7122b8, recorded", dict(RECORDED)
    data = json.loads(against.read_text())
    found = {(r["set"], g): r5(r, g, "fused") for r in data["results"] if r["after"] == "reindex"
             for g in r["groups"]}
    return name or against.name, {key: value for key, value in found.items() if value is not None}


def print_latency(data: dict | None) -> bool:
    print("\n== Where an agent waits (ratio = figure / the baseline the row names) ==")
    if data is None:
        print("refused: agent_paths.py printed no figures")
        return False
    print(f"{data['cores']} cores, load {data['load']:.1f}, python -c pass {data['python_pass_ms']:.0f} ms")
    ok = True
    for row in data["rows"]:
        ratio = "refused" if row["ratio"] is None else f"{row['ratio']:6.2f}x"
        ok &= row["ratio"] is not None
        print(f"{row['label']:<62} {ratio:>8}  {row['detail']}  [target {row['target']}]")
    return ok


def print_quality(data: dict | None, name: str, base: dict[tuple[str, str], float]) -> bool:
    print(f"\n== Recall quality, R@5 after reindex (baseline: {name}) ==")
    if data is None:
        print("refused: quality.py printed no figures")
        return False
    print(f"{'set / query type':<34}{'baseline':>9}{'fused':>8}{'ratio':>8}{'deep':>8}{'ratio':>8}  target")
    ok = True
    for result in data["results"]:
        if result["after"] != "reindex":
            continue
        if result.get("degraded"):
            print(f"{result['set']}: refused, {result['degraded']} queries ran without vectors")
            ok = False
            continue
        for group in ["ALL"] + sorted(g for g in result["groups"] if g != "ALL"):
            key = (result["set"], group)
            fused, deep, was = r5(result, group, "fused"), r5(result, group, "deep"), base.get(key)
            cells = [f"{was:9.3f}" if was is not None else f"{'-':>9}"]
            for value in (fused, deep):
                cells.append(f"{value:8.3f}" if value is not None else f"{'-':>8}")
                cells.append(f"{value / was:7.2f}x" if value is not None and was else f"{'-':>8}")
            verdict = ""
            if key in TARGETS and fused is not None:
                best = max(fused, deep or 0.0)
                verdict = f">= {TARGETS[key]:.2f} {'met' if best >= TARGETS[key] else 'MISSED'}" + \
                    (" (deep)" if fused < TARGETS[key] <= best else "")
            if was is not None and fused is not None and fused < was - SLACK:
                verdict += f" {fused - was:+.3f} below its baseline"
            label = result["set"] if group == "ALL" else f"  {group}"
            print(f"{label[:34]:<34}" + "".join(cells) + f"  {verdict}")
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, help="the development sets' folder (quality.py's --data)")
    ap.add_argument("--keep", type=Path, help="reuse built repositories, stores and vectors here "
                    "(quality.py's --keep; agent_paths.py's in DIR/agent-paths)")
    ap.add_argument("--sets", nargs="+", default=list(SETS), metavar="SET")
    ap.add_argument("--quick", action="store_true", help="agent_paths.py at its small default sizes")
    ap.add_argument("--no-latency", action="store_true")
    ap.add_argument("--no-quality", action="store_true")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--baseline-rev", metavar="REV", help="measure this commit's quality in the same run")
    group.add_argument("--against", type=Path, help="an earlier quality.py --json to compare with")
    ap.add_argument("--json", metavar="OUT", help="also write both benchmarks' figures here")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memgit-recall-report-") as tmp:
        paths = None if args.no_latency else latency(args, Path(tmp) / "paths.json")
        recall = None if args.no_quality else quality(args, Path(tmp) / "quality.json")
        against, name = args.against, None
        if args.baseline_rev and not args.no_quality:
            against = baseline_run(args, Path(tmp) / "baseline.json", Path(tmp))
            name = f"{args.baseline_rev}, measured in this run"
            if against is None:
                log(f"the baseline {args.baseline_rev} printed no figures")
                return 2
        name, base = baselines(against, name)
    ok = True
    if not args.no_latency:
        ok &= print_latency(paths)
    if not args.no_quality:
        ok &= print_quality(recall, name, base)
    if args.json:
        Path(args.json).write_text(json.dumps({"agent_paths": paths, "quality": recall}, indent=1))
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
