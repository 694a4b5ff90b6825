#!/usr/bin/env python3
"""Recall quality of memgit on the shared development sets, per channel and fused.

    python benchmarks/quality.py [SET ...] [--data DIR] [--embedder minilm|none]
                                 [--after import|reindex|both|pull] [--keep DIR]
                                 [--limit-queries N] [--json OUT] [--deep] [--each-link]

SET is a folder of the development sets directory, passed with --data (default:
$MEMGIT_EVAL_DIR, else shared/eval in the folder that holds the checkout): codemem-pytest,
devmembench, devmembench/round-unit, cosqa (default: all four, cosqa last). docs/benchmarks.md
says what each set is, where it comes from and how to rebuild it.

Each set is measured in two states (--after, default both):

- "import": straight after `memgit import`, what a user gets out of the box: no
  `reindex`, so recall works with whatever vectors the import and recall's own
  in-call embedding (at most `AUTO_EMBED_MAX` pending memories) produced;
- "reindex": after every memory is embedded (step 2 below);
- "pull" (only when asked): every other memory imported and embedded, then the rest
  imported and not embedded, as after a `git pull` brings a teammate's memories.

What it does, per set and state:

1. Build a repository the way a user would, through the CLI: `git init`, `memgit init`,
   `memgit import --allow-secret memories.jsonl` (one commit; the sets quote code, so
   some memories look like credentials). The repository lives in a temporary folder, or
   in --keep DIR/<set>-<embedder>-<state>/repo so that a rerun reuses it and its index
   (<repo>/.git/memgit/index.db); a changed memories.jsonl rebuilds it.
2. After "reindex", index it in-process with the library: `mem.index.sync(embed="all")`
   embeds every memory (MiniLM, resumable; progress on stderr), or keywords + anchors
   only with --embedder none (MEMGIT_INDEX_EMBEDDER is set for this process). After
   "import", the repository is always imported afresh (a kept one would hold the
   vectors earlier recalls embedded) and nothing is indexed before the first recall.
3. Run every query (queries with an empty gold list are skipped, as the scorer does)
   through `memgit.open(repo).recall(query, k=10, min_score=0)` -> the fused ranking,
   and through `mem.index.search(query, limit=50)` -> each channel alone, ranked by
   that channel's own strengths (keyword = FTS5 bm25, vector = cosine KNN, anchor =
   exact path/symbol keys, title = the title lane's cosine KNN). A channel that is
   unavailable for a query (None: the anchor channel when the query names no path or
   symbol; vectors when off) scores as
   an empty ranking; the "avail" column counts the queries where it ran.
4. Score with the shared scorer's own definitions (score.py's `score_query`, imported
   by path): R@1/5/10 = fraction of gold in the top k, MRR@10, NDCG@10 (binary gains),
   overall and by the query's `type` field, and print them next to the FTS5 BM25
   baseline, computed in the same run by the sets' own `fts5_baseline.py` (loaded by
   path from --data) on the same queries and scored the same way, with fused/baseline
   ratios and the quality targets (fused R@5 >= 0.51 on cosqa and >= 0.55 on codemem
   natural, never below the baseline).

A run that cannot stand for what it claims prints no figure and exits 2, saying why: vectors
that did not load with --embedder minilm, no query scored, or a baseline that ranked nothing.

With --deep, a "deep" ranker is added: recall(..., deep=True) (memgit.recall.deep); with
--each-link also one ranker per link kind ("deep:entity", ...) following that kind alone, so
the table shows what each link adds per query type.

Every recall says whether it used vectors (`Hits.how.vectors`); a query that ran without
them, or with them for only some candidates, is counted and the set's header says how many
and why, and the run lists it among the misses: no figure is reported as if vectors had
been on when they were not.

With --keep, each ranking is also written as a score.py run file
(DIR/<set>-<embedder>-<state>/run-<ranker>.jsonl), so `python score.py queries.jsonl run.jsonl`
can cross-check the figures. Results go to stdout, progress to stderr. Standard library
and memgit only. Nothing is written into the memgit repository.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SETS = ["codemem-pytest", "devmembench", "devmembench/round-unit", "cosqa"]
RANKERS = ["keyword", "vector", "anchor", "title", "fused"]
SHOWN = ["R@1", "R@5", "R@10", "MRR@10", "NDCG@10"]
SEARCH_LIMIT = 50

#: The baseline every figure is set against: SQLite FTS5 bm25() over title/body/entity, query
#: words quoted and OR-ed, as the development sets' own `fts5_baseline.py` runs it. It is run
#: here, on the same queries, in the same run (`fts5_run`), never copied from a README.
BASE = "fts5"
# Quality targets memgit set itself: fused R@5 at these values,
# and never below the baseline on any set or query type.
TARGETS = {("cosqa", "ALL"): 0.51, ("codemem-pytest", "natural"): 0.55}


def log(message: str) -> None:
    print(f"[quality] {message}", file=sys.stderr, flush=True)


def eval_dir() -> Path:
    env = os.environ.get("MEMGIT_EVAL_DIR")
    return Path(env) if env else (REPO_ROOT.parent / "shared" / "eval")


def load_scorer(folder: Path, name: str = "score.py"):
    path = folder / name
    spec = importlib.util.spec_from_file_location(f"memgit_eval_{path.stem}", path)
    if spec is None or spec.loader is None:
        sys.exit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(Path(__file__).resolve().parent))  # this folder for this one import only
import validity  # noqa: E402  (benchmarks/validity.py: one module for every benchmark in a run)
sys.path.pop(0)

require = validity.require


def fts5_run(baseline, set_dir: Path, work: Path) -> dict[str, list[str]]:
    """The FTS5 BM25 baseline's ranking of every query of the set (top 10), by the sets' own
    `fts5_baseline.py` with its defaults; its one line of output goes to stderr."""
    import contextlib

    out = work / f"run-{BASE}.jsonl"
    with contextlib.redirect_stdout(sys.stderr):
        baseline.main([str(set_dir), str(out)])
    return {str(row["qid"]): row["ranked"] for row in read_jsonl(out)}


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def memgit_cli() -> list[str]:
    exe = Path(sys.executable).with_name("memgit")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "memgit"]


def run(cmd: list[str], cwd: Path) -> None:
    env = dict(os.environ)
    env.setdefault("GIT_AUTHOR_NAME", "memgit bench")
    env.setdefault("GIT_AUTHOR_EMAIL", "bench@example.invalid")
    env.setdefault("GIT_COMMITTER_NAME", "memgit bench")
    env.setdefault("GIT_COMMITTER_EMAIL", "bench@example.invalid")
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")


def build_repo(set_dir: Path, work: Path, reuse: bool = True, source: Path | None = None) -> Path:
    """A git repository with the set (or `source`) imported through the CLI; reused when
    up to date (and `reuse`)."""
    repo = work / "repo"
    stamp = work / "source.sha256"
    source = source or set_dir / "memories.jsonl"
    want = file_sha(source)
    if reuse and repo.is_dir() and stamp.is_file() and stamp.read_text().strip() == want:
        log(f"reusing {repo}")
        return repo
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    started = time.perf_counter()
    run(["git", "init", "-q"], repo)
    run(["git", "config", "user.name", "memgit bench"], repo)
    run(["git", "config", "user.email", "bench@example.invalid"], repo)
    run([*memgit_cli(), "init"], repo)
    log(f"memgit import --allow-secret {source} ...")
    run([*memgit_cli(), "import", "--allow-secret", str(source)], repo)
    stamp.write_text(want + "\n")
    log(f"imported in {time.perf_counter() - started:.1f}s")
    return repo


def progress_printer(label: str):
    state = {"last": 0.0, "t0": time.perf_counter()}

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if done == total or now - state["last"] > 5:
            state["last"] = now
            rate = done / max(now - state["t0"], 1e-9)
            log(f"{label}: embedded {done}/{total} ({rate:.1f}/s)")

    return progress


def recall_hits(mem, query: str, **deep):
    try:
        return mem.recall(query, k=10, min_score=0, record=False, **deep)
    except TypeError:  # an API without `record` or `deep`
        return mem.recall(query, k=10, min_score=0)


def deep_ids(mem, query: str, links) -> list[str]:
    """Deep recall following only `links` (all when None), through the recall module itself."""
    from memgit.recall import deep as deep_mod
    from memgit.recall import recall as recall_mod

    ws = mem.workspace
    hits = recall_mod.recall(ws.index, query, k=10, min_score=0, config=ws.config, deep=True, sync=False,
                             links=deep_mod.LINKS if links is None else links)
    return [h.id for h in hits]


def channel_ids(candidates) -> list[str] | None:
    if candidates is None:
        return None
    return [mid for mid, _strength in sorted(candidates, key=lambda c: -c[1])]


def evaluate(name: str, set_dir: Path, work: Path, embedder: str, limit: int | None, scorer,
             keep: bool, after: str = "reindex", baseline=None, deep: bool = False,
             each_link: bool = False) -> dict:
    """Every query of one set, in the state `after` ("import" or "reindex"), scored."""
    import memgit

    started = time.perf_counter()
    if after == "pull":  # every other memory embedded, then the rest arrive without vectors
        lines = (set_dir / "memories.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
        (work / "first.jsonl").write_text("".join(lines[0::2]), encoding="utf-8")
        (work / "second.jsonl").write_text("".join(lines[1::2]), encoding="utf-8")
        repo = build_repo(set_dir, work, reuse=False, source=work / "first.jsonl")
        memgit.open(repo).index.sync(embed="none" if embedder == "none" else "all",
                                     progress=progress_printer(name))
        run([*memgit_cli(), "import", "--allow-secret", str(work / "second.jsonl")], repo)
    else:
        repo = build_repo(set_dir, work, reuse=after == "reindex")
    mem = memgit.open(repo)
    if after == "reindex":
        report = mem.index.sync(embed="none" if embedder == "none" else "all",
                                progress=progress_printer(name))
    else:  # as imported (or pulled): recall's own sync (embed="auto") is all that runs
        report = mem.index.sync(embed="none")
    status = mem.index.status()
    vectors_on = status.get("vectors_reason") is None
    n_vectors = status["memories"] - status.get("pending_vectors", 0) if vectors_on else 0
    log(f"{name} after {after}: index ready in {time.perf_counter() - started:.1f}s "
        f"({status['memories']} memories, {n_vectors} vectors, "
        f"+{report.added} ~{report.changed} -{report.removed})")
    require(embedder == "none" or vectors_on,
            f"{name} after {after}: --embedder {embedder} but vectors are off "
            f"({status.get('vectors_reason')})")

    try:  # search the channels with the query exactly as recall() does
        from memgit.recall.recall import clean_query as clean
    except ImportError:
        def clean(text: str) -> str:
            return text
    queries = read_jsonl(set_dir / "queries.jsonl")
    skipped = sum(1 for q in queries if not q.get("gold"))
    queries = [q for q in queries if q.get("gold")]
    if limit:
        queries = queries[:limit]
    require(queries, f"{name}: no query with gold to score")
    rankers = list(RANKERS)
    links: list[str] = []
    if deep:
        rankers.append("deep")
        if each_link:
            from memgit.recall.deep import LINKS
            links = list(LINKS)
            rankers += [f"deep:{link}" for link in links]
    runs: dict[str, dict[str, list[str]]] = {r: {} for r in rankers}
    base_run = fts5_run(baseline, set_dir, work)
    runs[BASE] = {str(q["qid"]): base_run.get(str(q["qid"]), []) for q in queries}
    require(any(runs[BASE].values()), f"{name}: the FTS5 baseline ranked nothing for any query")
    avail = {r: 0 for r in rankers}
    recall_ms: list[float] = []
    degraded: dict[str, int] = {}
    for n, q in enumerate(queries, 1):
        qid, text = str(q["qid"]), q["query"]
        t0 = time.perf_counter()
        hits = recall_hits(mem, text)
        recall_ms.append((time.perf_counter() - t0) * 1000)
        runs["fused"][qid] = [h.id for h in hits]
        how = getattr(hits, "how", None)
        state = how.vectors.state if how is not None else "unknown"
        if state != "used":
            why = f"{state}: {how.vectors.detail}" if how is not None else "unknown (no Hits.how)"
            degraded[why] = degraded.get(why, 0) + 1
        avail["fused"] += 1
        if deep:
            runs["deep"][qid] = [h.id for h in recall_hits(mem, text, deep=True)]
            avail["deep"] += 1
            for link in links:
                runs[f"deep:{link}"][qid] = deep_ids(mem, text, [link])
                avail[f"deep:{link}"] += 1
        found = mem.index.search(clean(text), limit=SEARCH_LIMIT)
        for channel in ("keyword", "vector", "anchor", "title"):
            ids = channel_ids(getattr(found.channels, channel))
            if ids is not None:
                avail[channel] += 1
            runs[channel][qid] = ids or []
        if n % 100 == 0 or n == len(queries):
            log(f"{name}: {n}/{len(queries)} queries")

    end = mem.index.status()  # after "import", recalls may have embedded a few
    n_vectors_end = end["memories"] - end.get("pending_vectors", 0) if vectors_on else 0
    if embedder != "none":
        require(avail["vector"], f"{name} after {after}: the vector channel ran for no query")
    if keep:
        for ranker, ranked in runs.items():
            with open(work / f"run-{ranker}.jsonl", "w", encoding="utf-8") as fh:
                for qid, ids in ranked.items():
                    fh.write(json.dumps({"qid": qid, "ranked": ids}) + "\n")

    # Per query and ranker, the scorer's own metrics; then averages per group.
    groups: dict[str, list[dict]] = {"ALL": list(queries)}
    for q in queries:
        groups.setdefault(str(q.get("type", q.get("category", "all"))), []).append(q)
    table: dict[str, dict[str, dict[str, float]]] = {}
    for group, members in groups.items():
        table[group] = {}
        for ranker in [*rankers, BASE]:
            rows = [scorer.score_query(scorer.unique([str(g) for g in q["gold"]]),
                                       scorer.unique(runs[ranker][str(q["qid"])])) for q in members]
            table[group][ranker] = {m: sum(r[m] for r in rows) / len(rows) for m in scorer.METRICS}
        table[group]["n"] = len(members)  # type: ignore[assignment]
    return {
        "set": name, "after": after, "memories": status["memories"], "vectors": vectors_on, "vector_count": n_vectors,
        "vector_count_end": n_vectors_end,
        "vectors_reason": status.get("vectors_reason"), "embedder": embedder,
        "queries_scored": len(queries), "skipped_no_gold": skipped,
        "available": avail, "groups": table, "rankers": rankers, "degraded": degraded,
        "recall_ms": {"p50": statistics.median(recall_ms),
                      "p95": sorted(recall_ms)[int(0.95 * (len(recall_ms) - 1))]},
        "limited": bool(limit),
    }


def fmt(value: float | None, width: int = 7) -> str:
    return f"{value:{width}.3f}" if value is not None else " " * (width - 3) + "  -"


def print_set(result: dict) -> list[str]:
    name = result["set"]
    misses: list[str] = []
    vec = "on" if result["vectors"] else f"off ({result['vectors_reason']})"
    vec += f", {result['vector_count']} -> {result['vector_count_end']} vectors during the run"
    print(f"\n=== {name} after {result['after']}: {result['memories']} memories, "
          f"{result['queries_scored']} queries scored "
          f"({result['skipped_no_gold']} without gold skipped){' [--limit-queries]' if result['limited'] else ''}; "
          f"embedder {result['embedder']}, vectors {vec}; recall p50 {result['recall_ms']['p50']:.1f} ms, "
          f"p95 {result['recall_ms']['p95']:.1f} ms")
    for why, count in sorted(result.get("degraded", {}).items()):
        if not why.startswith("disabled"):
            misses.append(f"{name}: {count} queries ran degraded ({why})")
        print(f"DEGRADED: {count} of {result['queries_scored']} queries recalled without vectors for every "
              f"candidate: {why}")
    avail = result["available"]
    print("channel available for: " + ", ".join(f"{r} {avail[r]}/{result['queries_scored']}" for r in RANKERS[:4]))
    header = f"{'group':<24} {'n':>4}  {'ranker':<11}" + "".join(f"{m:>8}" for m in SHOWN)
    print(header)
    print("-" * len(header))
    order = ["ALL"] + sorted(g for g in result["groups"] if g != "ALL")
    for group in order:
        data = result["groups"][group]
        n = data["n"]
        first = True
        for ranker in result.get("rankers", RANKERS):
            label = f"{group[:24]:<24} {n:>4}" if first else " " * 29
            first = False
            print(f"{label}  {ranker:<11}" + "".join(f"{data[ranker][m]:8.3f}" for m in SHOWN))
        b = data[BASE]
        if b:
            print(" " * 29 + f"  {'FTS5 base':<11}" + "".join(f" {fmt(b.get(m))}" for m in SHOWN))
            ratios = []
            for m in SHOWN:
                bv = b.get(m)
                ratios.append(f"{data['fused'][m] / bv:7.2f}x" if bv else "       -")
            print(" " * 29 + f"  {'fused/base':<11}" + "".join(ratios))
            for m in SHOWN:
                bv = b.get(m)
                if bv is not None and data["fused"][m] < bv - 1e-9:
                    misses.append(f"{name} {group}: fused {m} {data['fused'][m]:.3f} < baseline {bv:.3f}")
        target = TARGETS.get((name, group))
        if target is not None:
            got = data["fused"]["R@5"]
            verdict = "MET" if got >= target else f"MISSED by {target - got:.3f}"
            print(" " * 29 + f"  target: fused R@5 >= {target:.2f}: {got:.3f} {verdict}")
            if got < target:
                misses.append(f"{name} {group}: fused R@5 {got:.3f} < target {target:.2f}")
    return misses


def print_summary(results: list[dict], states: list[str]) -> None:
    """R@5 of the fused ranking (and of deep recall, when measured) per set and query type,
    in each state, side by side."""
    by: dict[tuple[str, str], dict] = {(r["set"], r["after"]): r for r in results}
    names = list(dict.fromkeys(r["set"] for r in results))
    rankers = ["fused"] + (["deep"] if any("deep" in r.get("rankers", ()) for r in results) else [])
    columns = [(s, r) for s in states for r in rankers]
    header = f"{'R@5':<32}" + "".join(f"{r + ' after ' + s:>22}" for s, r in columns)
    print("\n" + header)
    print("-" * len(header))
    for name in names:
        groups = ["ALL"] + sorted(g for g in by[(name, states[0])]["groups"] if g != "ALL")
        for group in groups:
            label = name if group == "ALL" else f"  {group}"
            cells = [by[(name, s)]["groups"].get(group, {}).get(r, {}).get("R@5") for s, r in columns]
            print(f"{label[:32]:<32}" + "".join(f"{fmt(c, 22)}" for c in cells))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Recall quality of memgit on the shared eval sets (per channel and fused), "
                    "next to the FTS5 baselines. See the module docstring for the method.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="sets: " + ", ".join(DEFAULT_SETS))
    ap.add_argument("sets", nargs="*", metavar="SET", help="set folders (default: all four, cosqa last)")
    ap.add_argument("--data", metavar="DIR", type=Path, default=eval_dir(),
                    help="the development sets (with score.py); default $MEMGIT_EVAL_DIR, "
                         "else shared/eval in the folder that holds the checkout")
    ap.add_argument("--after", choices=["import", "reindex", "both", "pull"], default="both",
                    help="measure straight after `memgit import` (out of the box), after every "
                         "memory is embedded, or both (default); or after a pull: every other "
                         "memory embedded, the rest imported after and not embedded")
    ap.add_argument("--embedder", choices=["minilm", "none"], default="minilm",
                    help="minilm: all three channels (default); none: keywords + anchors only")
    ap.add_argument("--keep", metavar="DIR", help="build (or reuse) the repositories and indexes here, "
                    "and write the run files; without it everything goes in a temporary folder")
    ap.add_argument("--limit-queries", type=int, metavar="N", help="score only the first N queries of each set")
    ap.add_argument("--json", metavar="OUT", help="also write every figure as JSON here")
    ap.add_argument("--deep", action="store_true", help="also rank with recall's deep mode (ranker \"deep\")")
    ap.add_argument("--each-link", action="store_true",
                    help="with --deep, also one ranker per link kind, following that kind alone")
    args = ap.parse_args(argv)

    folder = args.data.resolve()
    if not (folder / "score.py").is_file():
        ap.error(f"no development sets at {folder} (no score.py): pass --data DIR")
    sets = args.sets or DEFAULT_SETS
    for s in sets:
        if not (folder / s / "memories.jsonl").is_file():
            ap.error(f"{folder / s} has no memories.jsonl")
    if not (folder / "fts5_baseline.py").is_file():
        ap.error(f"{folder} has no fts5_baseline.py: the FTS5 baseline is run, not copied")
    os.environ["MEMGIT_INDEX_EMBEDDER"] = args.embedder
    scorer = load_scorer(folder)
    baseline = load_scorer(folder, "fts5_baseline.py")
    if args.keep:
        try:
            Path(args.keep).resolve().relative_to(REPO_ROOT)
            ap.error("--keep must be outside the memgit repository (the eval data must not land in it)")
        except ValueError:
            pass
    return validity.refuse_on_invalid(lambda: measure(args, folder, sets, scorer, baseline), "quality")


def measure(args: argparse.Namespace, folder: Path, sets: list[str], scorer, baseline) -> int:
    """Every set in every state, printed as it is measured (each one valid, or none at all)."""

    temp = None
    if args.keep:
        base = Path(args.keep).resolve()
    else:
        temp = tempfile.mkdtemp(prefix="memgit-quality-")
        base = Path(temp)
    states = ["import", "reindex"] if args.after == "both" else [args.after]
    results, misses = [], []
    try:
        for s in sets:
            for after in states:
                work = base / f"{s.replace('/', '__')}-{args.embedder}-{after}"
                work.mkdir(parents=True, exist_ok=True)
                log(f"{s} after {after}: working in {work}")
                result = evaluate(s, folder / s, work, args.embedder, args.limit_queries, scorer,
                                  bool(args.keep), after, baseline, args.deep, args.each_link)
                results.append(result)
                misses += [f"after {after}: {m}" for m in print_set(result)]
                sys.stdout.flush()
    finally:
        if temp:
            shutil.rmtree(temp, ignore_errors=True)
    print_summary(results, states)
    print("\nbelow baseline or target (fused):" if misses else "\nfused is at or above every baseline and target")
    for line in misses:
        print(f"  - {line}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"eval_dir": str(folder), "embedder": args.embedder, "baseline": BASE,
                       "results": results, "misses": misses}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
