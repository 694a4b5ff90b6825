#!/usr/bin/env python3
"""Duplicate detection of `memgit reflect` on the dupes-pytest set, and reflect's speed.

    python benchmarks/reflect.py --data DIR [--no-vectors] [--sizes 1000 10000] [--keep DIR]

DIR is the dupes-pytest folder (memories.jsonl, pairs.jsonl, baseline.py, baseline.json),
or a folder holding it. What it does:

1. Builds a repository the way a user would: `git init`, `memgit init`,
   `memgit import --allow-secret memories.jsonl`, `memgit reindex` (MiniLM vectors;
   skipped with --no-vectors). With --keep DIR the repository is kept and reused.
2. Runs `Memgit.reflect(only=["duplicates"])` in-process and writes each proposed merge as
   a pair to proposals.jsonl; the same detector is also run on words alone.
3. Scores both with the set's own scorer (`baseline.py DIR --score proposals.jsonl`) and
   prints them next to the set's best lexical baseline (BM25 cosine over every pair,
   precision at recall 0.6, from baseline.json).
4. Times `reflect` (read-only) on that store (about 1k memories, with vectors), whole
   (every kind of proposal) and duplicates only, median of 3 runs; then the same on a
   larger store per --sizes entry, keywords only: the memories of every set in the folder
   that holds dupes-pytest (codemem-pytest, cosqa, devmembench: 8,205 real memories with
   dupes-pytest), topped up with stand-ins (title from one memory, body from sentences of
   two to six others, seeded). None of these repositories holds the code the memories
   name, so every path anchor is stale and "stale" proposes a change for most memories:
   the whole-reflect time includes writing those.

Ids and creation times are not used by the detector. Standard library and memgit only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def memgit_cli(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "memgit", "-C", str(repo), *args], capture_output=True, text=True, env=env
    )
    if done.returncode != 0:
        raise SystemExit(f"memgit {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def make_repo(folder: Path, records: list[dict], env: dict[str, str]) -> Path:
    repo = folder / "repo"
    if (repo / ".memory").is_dir():
        return repo
    repo.mkdir(parents=True)
    for args in (
        ["init", "-q"],
        ["config", "user.email", "bench@example.com"],
        ["config", "user.name", "bench"],
        ["commit", "-q", "--allow-empty", "-m", "initial"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    memgit_cli(repo, "init", env=env)
    source = folder / "memories.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    memgit_cli(repo, "import", "--allow-secret", str(source), env=env)
    return repo


def larger(set_dir: Path, records: list[dict], size: int, seed: int = 7) -> list[dict]:
    """Real memories of every set beside dupes-pytest, then stand-ins up to `size`."""
    from memgit.reflect.duplicates import sentences

    out: list[dict] = []
    for memories in sorted(set_dir.parent.glob("*/memories.jsonl")):
        for line in open(memories):
            record = json.loads(line)
            record["id"] = f"{memories.parent.name}-{record.get('id') or len(out)}"
            out.append(record)
    out = out[:size]
    rng = random.Random(seed)
    pool = [s for r in records for s in sentences(r.get("body") or "")] or ["text"]
    for i in range(size - len(out)):
        base = records[rng.randrange(len(records))]
        out.append(
            {
                "id": f"s-{i:06d}",
                "title": base["title"],
                "kind": base.get("kind", "fact"),
                "entity": base.get("entity") or "",
                "files": base.get("files") or [],
                "body": " ".join(rng.choice(pool) for _ in range(rng.randint(2, 6))),
            }
        )
    return out


def time_reflect(repo: Path, only: list[str] | None = None, runs: int = 3) -> float:
    """Median seconds of `Memgit.reflect` on a freshly opened store (index in step)."""
    import memgit

    times = []
    for _ in range(runs):
        mem = memgit.open(repo, warn=lambda m: None)
        started = time.perf_counter()
        mem.reflect(only=only or ())
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def score(set_dir: Path, pairs: list[tuple[str, str]], out: Path) -> str:
    out.write_text("".join(json.dumps({"a": a, "b": b}) + "\n" for a, b in pairs))
    done = subprocess.run(
        [sys.executable, str(set_dir / "baseline.py"), str(set_dir), "--score", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="the dupes-pytest folder, or a folder holding it")
    parser.add_argument("--no-vectors", action="store_true", help="keywords and anchors only")
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--keep", help="keep the repositories here and reuse them")
    args = parser.parse_args()
    set_dir = Path(args.data)
    if not (set_dir / "memories.jsonl").exists():
        set_dir = set_dir / "dupes-pytest"
    records = [json.loads(line) for line in open(set_dir / "memories.jsonl")]
    baseline = json.loads((set_dir / "baseline.json").read_text())["store_wide_bm25cos"]
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="memgit-reflect-bench-"))
    env = {**os.environ, "MEMGIT_INDEX_WARM": "0"}
    if args.no_vectors:
        env["MEMGIT_INDEX_EMBEDDER"] = os.environ["MEMGIT_INDEX_EMBEDDER"] = "none"
    os.environ["MEMGIT_INDEX_WARM"] = "0"

    repo = make_repo(work / ("dupes-" + ("words" if args.no_vectors else "minilm")), records, env)
    if not args.no_vectors:
        print("embedding the set (memgit reindex)…", file=sys.stderr)
        memgit_cli(repo, "reindex", env=env)

    import memgit
    from memgit.reflect import upkeep
    from memgit.reflect.duplicates import Detector

    mem = memgit.open(repo, warn=lambda m: None)
    if not args.no_vectors:  # a "with vectors" figure from a store without them would be the words-only one
        status = mem.status()
        if not status["vectors_on"] or status.get("pending_vectors"):
            print(f"reflect: no figure: vectors are not all there ({status.get('vectors_reason')}, "
                  f"{status.get('pending_vectors')} pending)", file=sys.stderr)
            raise SystemExit(2)
    started = time.perf_counter()
    found = mem.reflect(only=["duplicates"]).reflection
    dup_seconds = time.perf_counter() - started
    merged = [p.ids for p in found.proposals if p.kind == "merge"]
    if not merged:  # 250 labelled pairs: a run that proposes no merge measured nothing
        print("reflect: no figure: no merge proposed on dupes-pytest", file=sys.stderr)
        raise SystemExit(2)
    inputs = upkeep.gather(mem.workspace, upkeep.usage_mod.utc_now(), anchors=False)
    words = [(p.a, p.b) for p in Detector([m for m in inputs.memories if m.active], None).duplicates()]

    print(f"dupes-pytest: {len(records)} memories, 250 labelled duplicate pairs")
    print(
        "baseline (BM25 cosine over every pair, store-wide): "
        f"precision {baseline['p_at_r60']:.3f} at recall 0.6"
    )
    label = "reflect (words + MiniLM vectors)" if not args.no_vectors else "reflect (words only)"
    print(f"\n{label}: {len(merged)} merges proposed in {dup_seconds:.2f} s")
    print(score(set_dir, [tuple(ids) for ids in merged], work / "proposals.jsonl"))  # type: ignore[misc]
    print(f"\nthe same detector on words alone: {len(words)} pairs")
    print(score(set_dir, words, work / "proposals-words.jsonl"))

    print("\nspeed of `memgit reflect` (read-only), median of 3: whole / duplicates only")
    print(
        f"  {len(records)} memories ({'keywords only' if args.no_vectors else 'with vectors'}): "
        f"{time_reflect(repo):.2f} s / {time_reflect(repo, ['duplicates']):.2f} s (target <= 3 s at 1k)"
    )
    for size in args.sizes:
        if size <= len(records):
            continue
        os.environ["MEMGIT_INDEX_EMBEDDER"] = env["MEMGIT_INDEX_EMBEDDER"] = "none"
        print(f"  building a {size}-memory store…", file=sys.stderr)
        big = make_repo(work / f"larger-{size}", larger(set_dir, records, size), env)
        memgit.open(big, warn=lambda m: None).index.sync(embed="none")
        print(
            f"  {size} memories (real sets + stand-ins, keywords only): {time_reflect(big):.2f} s / "
            f"{time_reflect(big, ['duplicates']):.2f} s (target <= 30 s at 10k)"
        )


if __name__ == "__main__":
    main()
