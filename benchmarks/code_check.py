#!/usr/bin/env python3
"""What checking recalled memories against the code costs recall, at N memories.

    python benchmarks/code_check.py [--size 10000] [--queries 60] [--changed 0.1]

A temporary git repository gets the Python modules that benchmarks/speed.py's generated
memories anchor to (each class and method they name, among filler functions: ~150-400 lines a
module), committed; then N generated memories, each recording the code it was written against
(`written_against`, as `memgit remember` records it), committed; then a share (--changed) of
the modules get one method edited, committed, so some recalled memories are "changed".

Measured in one process, keywords and anchors (MEMGIT_INDEX_EMBEDDER=none), each query once
after warm-ups, p50 and p95:

- the check alone the first time it sees each hit's files (nothing cached: each file read,
  hashed and its symbols parsed), once per query;
- then, every file seen once (the steady state: the cache lives in `<git-dir>/memgit/`),
  recall with the check (`mem.recall(query)` as shipped) and without it (the same call with
  `memgit.recall.codecheck.annotate` replaced by the identity), each query run both ways one
  after the other, three rounds: the ratio is the figure;
- the check alone (`codecheck.annotate` on the hits recall returned), warm (its cache in
  memory) and cold (a fresh `Prints`, read from `<git-dir>/memgit/codeprints.json` as a new
  process does);
- how many hits were said changed, gone or unknown.

Standard library and memgit only; results on stdout, progress on stderr.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import speed  # benchmarks/speed.py: the generated memories

require = speed.require


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def module_text(symbols: set[str], rng: random.Random, version: int = 0) -> str:
    """A Python module defining `symbols` (`Class.method` or `name`) among filler functions."""
    classes: dict[str, list[str]] = {}
    plain: list[str] = []
    for s in sorted(symbols):
        if "." in s:
            cls, _, meth = s.partition(".")
            classes.setdefault(cls, []).append(meth)
        else:
            plain.append(s)
    out = ['"""Generated module."""', "", "import os", ""]
    for i in range(rng.randint(10, 30)):
        out += ["", f"def helper_{i}(value):", f"    total = value * {i} + {version}", "    return total", ""]
    for cls, methods in classes.items():
        out += ["", f"class {cls}:", f'    """The {cls}."""', ""]
        for meth in dict.fromkeys(methods):
            out += [f"    def {meth}(self, value):", f"        result = value + {len(meth)}",
                    "        return result", ""]
    for name in plain:
        out += ["", f"def {name}(value):", "    return value", ""]
    return "\n".join(out) + "\n"


def build(repo: Path, n: int, changed: float) -> tuple[list[str], int]:
    from memgit.git.codeprint import Prints
    from memgit.memory import against
    from memgit.memory.format import Memory

    gen = speed.Generator(n)
    memories = [gen.memory(i) for i in range(n)]
    queries = gen.queries(memories, 60)
    symbols: dict[str, set[str]] = {}
    for m in memories:
        for f in m["files"]:
            symbols.setdefault(f, set())
        if "::" in m["entity"]:
            path, _, sym = m["entity"].partition("::")
            symbols.setdefault(path, set()).add(sym)
    rng = random.Random(5)
    repo.mkdir(parents=True)
    speed.git(repo, "init", "-q")
    for path, syms in symbols.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(module_text(syms, random.Random(path)), encoding="utf-8")
    speed.git(repo, "add", "-A")
    speed.git(repo, "commit", "-q", "-m", "code")
    log(f"{len(symbols)} modules written")
    # The memories, each recording the code it was written against (as `remember` does).
    prints = Prints(repo)
    folder = repo / ".memory"
    folder.mkdir()
    from memgit.config import DEFAULT_TOML
    from memgit.memory.format import file_name

    (folder / "config.toml").write_text(DEFAULT_TOML, encoding="utf-8")
    for m in memories:
        memory = Memory(id=m["id"], title=m["title"], entity=m["entity"], files=tuple(m["files"]),
                        symbols=tuple(m["symbols"]))
        lines = [f"- {line}" for line in against.with_record(
            memory, {a: prints.of(a) for a in against.code_anchors(memory)}).extra.get(against.FIELD, [])]
        text = speed.memory_text(m).replace("\n---\n\n", "\n" + "".join(x + "\n" for x in
                                            (["written_against:"] + lines if lines else [])) + "---\n\n", 1)
        (folder / file_name(Memory(id=m["id"], title=m["title"]))).write_text(text, encoding="utf-8")
    speed.git(repo, "add", "-A", ".memory")
    speed.git(repo, "commit", "-q", "-m", "memories")
    # Then the code moves on: a share of the modules get a method edited.
    edited = [p for p in sorted(symbols) if symbols[p] and rng.random() < changed]
    for path in edited:
        text = (repo / path).read_text(encoding="utf-8")
        (repo / path).write_text(text.replace("        result = value + ", "        result = value - ", 1),
                                 encoding="utf-8")
    speed.git(repo, "commit", "-q", "-am", "edit some methods")
    log(f"{n} memories written; {len(edited)} modules edited since")
    return queries, len(edited)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=10000, metavar="N")
    ap.add_argument("--queries", type=int, default=60, metavar="Q")
    ap.add_argument("--changed", type=float, default=0.1, help="share of modules edited after the memories")
    args = ap.parse_args(argv)
    import os

    os.environ["MEMGIT_INDEX_EMBEDDER"] = "none"
    os.environ["MEMGIT_INDEX_WARM"] = "0"
    os.environ["MEMGIT_INDEX_BACKGROUND"] = "0"
    import memgit
    from memgit.git.codeprint import Prints
    from memgit.recall import ask, codecheck

    with tempfile.TemporaryDirectory(prefix="memgit-codecheck-") as tmp:
        repo = Path(tmp) / "repo"
        queries, edited = build(repo, args.size, args.changed)
        queries = (queries * (args.queries // len(queries) + 1))[: args.queries]
        mem = memgit.open(repo, warn=lambda m: None)
        mem.reindex()
        shipped = codecheck.annotate

        def without(ws, hits):  # type: ignore[no-untyped-def]
            return list(hits)

        def once(check: bool, q: str) -> float:
            ask.codecheck.annotate = shipped if check else without  # type: ignore[attr-defined]
            start = time.perf_counter()
            mem.recall(q, record=False)
            return (time.perf_counter() - start) * 1000

        first_sight: list[float] = []  # the check the first time it sees each hit's files: nothing cached yet
        for q in queries:
            hits = mem.recall(q, record=False)
            start = time.perf_counter()
            codecheck.annotate(mem.workspace, [codecheck.replace(h, code=None) for h in hits])
            first_sight.append((time.perf_counter() - start) * 1000)
        for q in queries[:5]:
            once(True, q), once(False, q)
        on, off = [], []
        for rep in range(3):  # interleaved, each order half the time, so drift hits both alike
            for i, q in enumerate(queries):
                first = (i + rep) % 2 == 0
                a = once(first, q)
                b = once(not first, q)
                (on if first else off).append(a)
                (off if first else on).append(b)
        ask.codecheck.annotate = shipped  # type: ignore[attr-defined]
        hits_of = {q: mem.recall(q, record=False) for q in queries}
        warm, cold, states = [], [], {"fresh": 0, "changed": 0, "gone": 0, "unknown": 0, "no anchors": 0}
        ws = mem.workspace
        plain = {q: [codecheck.replace(h, code=None) for h in hits] for q, hits in hits_of.items()}
        for q in queries:
            start = time.perf_counter()
            done = codecheck.annotate(ws, plain[q])
            warm.append((time.perf_counter() - start) * 1000)
            for h in done:
                states[h.code.status if h.code else "no anchors"] += 1
        for q in queries:
            codecheck._PRINTS.clear()  # a new process: the cache is read from its file
            start = time.perf_counter()
            codecheck.annotate(ws, plain[q])
            cold.append((time.perf_counter() - start) * 1000)
        require(all(hits_of.values()), "a query recalled nothing: there is no check to time")
        require(states["changed"] > 0 and states["no anchors"] == 0,
                f"the hits are not what the figure claims (changed and fresh code anchors): {states}")
        cache = Prints(repo, repo / ".git").cache_file
        size = cache.stat().st_size if cache is not None and cache.exists() else 0

    p50_on, p50_off = statistics.median(on), statistics.median(off)
    print(f"recall at {args.size} memories, {len(queries)} queries x3, keywords + anchors, "
          f"{edited} modules edited after the memories were written")
    print(f"  recall p50 with the check    {p50_on:8.2f} ms   p95 {pct(on, 0.95):8.2f} ms")
    print(f"  recall p50 without the check {p50_off:8.2f} ms   p95 {pct(off, 0.95):8.2f} ms")
    print(f"  ratio with / without (p50)   {p50_on / p50_off:8.3f}")
    print(f"  the check alone, warm: p50 {statistics.median(warm):.3f} ms, p95 {pct(warm, 0.95):.3f} ms; "
          f"cold (cache read from its file, {size} bytes): p50 {statistics.median(cold):.3f} ms, "
          f"p95 {pct(cold, 0.95):.3f} ms")
    print(f"  the check alone, first sight of each file (read, hashed, parsed; nothing cached): "
          f"p50 {statistics.median(first_sight):.3f} ms, p95 {pct(first_sight, 0.95):.3f} ms")
    print(f"  hits: {states}")
    return 0


if __name__ == "__main__":
    sys.exit(speed.validity.refuse_on_invalid(main, "code_check"))
