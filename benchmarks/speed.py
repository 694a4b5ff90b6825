#!/usr/bin/env python3
"""How fast memgit indexes and recalls, at N generated memories, against simple baselines.

    python benchmarks/speed.py [--sizes 1000 10000 [100000]]
                               [--vectors auto|minilm|stand-in|none] [--repeat R]
                               [--queries Q] [--keep DIR] [--json OUT]

For each N, a temporary git repository gets N generated memories: varied kinds, entities
and files that are code anchors (`src/<pkg>/mod_17.py::Class.method`), tags, 10 % with a
task id, 40-200 word bodies whose words come from a fixed, seeded vocabulary (a Zipf mix of
common English, programming words and made-up identifiers) with paths, symbols and
snake_case names in backticks. The files are written directly in memgit's format (front
matter + Markdown; a sample is checked with memgit's own parser) and committed as one
commit through `git fast-import` (one pack: no `gc --auto` of 100k loose objects running
beside the measurements). Q queries (natural, anchor, mixed; 60 by default) are generated from the
same vocabulary and memories.

Measured (medians; times are wall clock on whatever else the machine runs):

- full index: `memgit.open(repo).reindex()` on a deleted index, keywords + anchors
  (MEMGIT_INDEX_EMBEDDER=none; median of R runs) and with vectors (1 run):
  real MiniLM when --vectors minilm (auto: N <= 1000), else a stand-in
  (benchmarks/standin_embedder.py, loaded through memgit's own embedder plug-in
  interface): seeded random unit vectors of MiniLM's width for the memories, the real
  MiniLM for queries. With the stand-in, the index time excludes the model; the MiniLM
  time is extrapolated from the measured 1k rate when a MiniLM run was made.
- remember: `mem.remember(text)` in process (its duplicate check, id choice, journal, write
  and commit), median of 7, beside git's own `git add` + `git commit --only` of one file
  (--remember-only measures just this).
- one-memory re-index: rewrite one memory file the way memgit and most editors do
  (write a temporary file, rename it over), then time `mem.index.sync()`; with vectors
  this includes embedding that memory with the real model (already loaded). Median of R+4.
- change check: `mem.index.sync()` with nothing changed (taken > 2 s after the last write:
  memgit treats younger folder timestamps as racy and re-lists those folders). Median of 21.
- in-process recall: `mem.recall(query)` (defaults: k=5, relevance floor, includes the
  change check and the usage record), each query once after 3 warm-up calls; p50/p95.
  The model load is not in it (done by the warm-up); it is in the cold CLI figure.
- cold CLI: `memgit -C repo recall "<query>"` as a subprocess, from start to exit (its
  output is complete then), median of 7 after one warm-up, with vectors and with
  MEMGIT_INDEX_EMBEDDER=none; `memgit --help` likewise. With vectors it is measured with
  MEMGIT_INDEX_WARM=0 (every call loads the model) and, when memgit has its warm embedder
  server (memgit/warm.py), again with it allowed (the warm-up call starts it;
  MEMGIT_WARM_IDLE=60 makes it exit a minute after the benchmark). Subprocesses run with a bytecode
  cache under the temporary folder (PYTHONPYCACHEPREFIX; PYTHONDONTWRITEBYTECODE is
  removed), as an installed package would have; nothing is written into the repository.
- peak RSS of each cold recall process (`os.wait4` rusage of that child, the per-child
  form of `resource.getrusage(RUSAGE_CHILDREN)`), and index size on disk (db+wal+shm).
  Timed commands are started by a tiny launcher process that measures spawn-to-exit and
  the rusage itself: Linux reports a child's peak RSS as at least that of the process it
  was forked from, which for this benchmark process (model loaded) would be ~500 MB.

Baselines, run in the same script on the same files: `grep -ril WORD .memory` (latency
ratios), a bare stdlib-sqlite3 FTS5 table over title/body/entity (build time, and query
latency: the "FTS5 keyword-only" figure that memgit's fused recall must beat in quality
per millisecond; the quality side comes from benchmarks/quality.py), `os.scandir` + `stat`
of every file (change check), `python -c pass` (process start; --help), and the size of
.memory/ (index size). memgit's speed targets are printed next to the figures.

Results go to stdout, progress to stderr. Standard library and memgit only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent


sys.path.insert(0, str(Path(__file__).resolve().parent))  # this folder for this one import only
import validity  # noqa: E402  (benchmarks/validity.py: one module for every benchmark in a run)
sys.path.pop(0)

require = validity.require
STANDIN = "standin_embedder:StandInEmbedder"
SEED = 20260517

# memgit's speed targets, in ms, by N: what an agent calling recall on every turn needs.
TARGETS = {
    10_000: {"recall_p50_kw": 15, "recall_p50_vec": 15, "reindex_one_kw": 150, "reindex_one_vec": 150,
             "cli_vec": 500, "cli_kw": 150, "help": 120},
    100_000: {"recall_p50_kw": 60, "recall_p50_vec": 60, "noop_kw": 50, "noop_vec": 50, "help": 120,
              "remember_own": 150},
}


def log(message: str) -> None:
    print(f"[speed] {message}", file=sys.stderr, flush=True)


# -- generating memories -------------------------------------------------------------------

COMMON = ("the a to of and in is for that it on with as be this by not or when from but we if "
          "are was all use should so can only one at never always then than which must after "
          "before because instead keep make still do does new old first last same other every "
          "more less each why how what where there our its have has had been").split()
TECH = ("config parser cache token session request response handler retry timeout queue worker "
        "database migration schema index query transaction lock thread process async await "
        "callback event logger error exception traceback test fixture mock patch deploy build "
        "release version dependency import module package function method class field column "
        "table row key value string bytes encoding unicode path file folder directory stream "
        "buffer socket client server endpoint route middleware auth login password hash user "
        "account permission role admin api json yaml toml csv parse serialize validate "
        "normalize convert format render template cli flag option argument default env "
        "variable setting secret credential commit branch merge rebase review lint type "
        "annotation docstring warning deprecation regression crash leak memory cpu latency "
        "throughput benchmark profile optimize slow fast limit batch chunk page cursor "
        "offset sort filter search match pattern regex plugin hook signal shutdown startup "
        "container image volume network proxy dns tls certificate upload download export").split()
KIND_WEIGHTS = [("fact", 30), ("decision", 18), ("lesson", 20), ("convention", 10), ("preference", 6),
                ("skill", 6), ("checkpoint", 4), ("summary", 6)]
TEMPLATES = [
    "why does {sym} {w1} the {w2}?", "how do we {w1} {w2} {w3} in this project",
    "what was decided about {w1} {w2}", "{w1} {w2} fails with {w3} error after {w4}",
    "is there a convention for {w1} {w2}?", "where is the {w1} {w2} handled",
]


class Generator:
    """Deterministic memories and queries from a fixed, seeded vocabulary."""

    def __init__(self, n: int, seed: int = SEED) -> None:
        self.rng = random.Random(seed)
        rng = random.Random(seed + 1)
        syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"] + ["ar", "el", "on", "ix", "ul"]
        made_up: set[str] = set()
        while len(made_up) < 3000:
            made_up.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
        words = COMMON + TECH + sorted(made_up)
        rng.shuffle(words)
        words = sorted(set(COMMON), key=COMMON.index) + [w for w in words if w not in COMMON]
        self.words = words
        cum, total = [], 0.0
        for rank in range(1, len(words) + 1):
            total += 1.0 / rank ** 1.05
            cum.append(total)
        self.cum = cum
        self.n_pkgs = 12
        self.pkgs = [rng.choice(sorted(made_up)) for _ in range(self.n_pkgs)]
        self.n_mods = max(20, n // 8)  # ~8 memories per module file
        self.classes = [w.capitalize() + rng.choice(["Parser", "Store", "Client", "Handler", "Config", "Cache"])
                        for w in rng.sample(sorted(made_up), 200)]

    def word(self) -> str:
        x = self.rng.random() * self.cum[-1]
        lo, hi = 0, len(self.cum) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if self.cum[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        return self.words[lo]

    def content_word(self) -> str:
        while True:
            w = self.word()
            if w not in COMMON[:40]:
                return w

    def module(self) -> str:
        m = self.rng.randrange(self.n_mods)
        return f"src/{self.pkgs[m % self.n_pkgs]}/mod_{m}.py"

    def symbol(self) -> str:
        return f"{self.rng.choice(self.classes)}.{self.content_word()}_{self.content_word()}"

    def memory(self, i: int) -> dict:
        rng = self.rng
        kind = rng.choices([k for k, _ in KIND_WEIGHTS], [w for _, w in KIND_WEIGHTS])[0]
        path = self.module()
        sym = self.symbol()
        r = rng.random()
        entity = f"{path}::{sym}" if r < 0.65 else path if r < 0.85 else self.content_word()
        files = [path] + [self.module() for _ in range(rng.randint(0, 2))]
        if rng.random() < 0.4:
            files.append(f"tests/test_{path.rsplit('/', 1)[1]}")
        n_words = rng.randint(40, 200)
        out: list[str] = []
        count = 0
        while count < n_words:
            words = [self.word() for _ in range(min(rng.randint(6, 18), n_words - count + 2))]
            r = rng.random()
            if r < 0.15:
                words.insert(rng.randrange(len(words)), f"`{self.module()}`")
            elif r < 0.3:
                words.insert(rng.randrange(len(words)), f"`{sym if rng.random() < 0.5 else self.symbol()}`")
            elif r < 0.4:
                words.insert(rng.randrange(len(words)), f"`{self.content_word()}_{self.content_word()}()`")
            words[0] = words[0].capitalize()
            out.append(" ".join(words) + ".")
            out.append("\n\n" if len(out) % 8 == 0 else " ")
            count += len(words)
        body = "".join(out).strip()
        title = " ".join(self.word() if j else self.content_word() for j in range(rng.randint(4, 9)))
        title = title[0].upper() + title[1:]
        day = 1 + i % 28
        stamp = f"2025-{1 + (i // 28) % 12:02d}-{day:02d}T{i % 24:02d}:{i % 60:02d}:00+00:00"
        return {
            "id": f"m-{i:06x}{rng.getrandbits(16):04x}", "title": title, "kind": kind, "entity": entity,
            "confidence": rng.choice([0.5, 0.7, 0.9]), "source": rng.choice(["user", "user", "static", "inferred"]),
            "task_id": f"T-{rng.randint(1, 200)}" if rng.random() < 0.1 else None,
            "created": stamp, "updated": stamp,
            "tags": sorted({self.content_word() for _ in range(rng.randint(0, 2))}),
            "files": list(dict.fromkeys(files)), "symbols": [sym.split(".")[-1]] if rng.random() < 0.5 else [],
            "body": body,
        }

    def queries(self, memories: list[dict], count: int) -> list[str]:
        rng = random.Random(SEED + 7)
        out = []
        for q in range(count):
            m = rng.choice(memories)
            body_words = [w.strip(".,`()") for w in m["body"].split() if len(w) > 3]
            kind = q % 3
            if kind == 0:  # natural: a question in words partly from the memory
                picks = rng.sample(body_words, min(3, len(body_words))) + [self.content_word()]
                out.append(rng.choice(TEMPLATES).format(sym=picks[0], w1=picks[0], w2=picks[1 % len(picks)],
                                                        w3=picks[2 % len(picks)], w4=picks[-1]))
            elif kind == 1:  # anchor: the file or symbol about to be edited
                anchor = m["entity"] if "/" in m["entity"] else m["files"][0]
                out.append(f"editing {anchor} - anything I should know?")
            else:  # mixed
                sym = m["entity"].split("::")[-1] if "::" in m["entity"] else m["files"][0]
                out.append(f"why does {sym} {rng.choice(body_words)} {rng.choice(body_words)}?")
        return out


def _yaml_str(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 _./:+-]*", text) and ": " not in text else json.dumps(text)


def memory_text(m: dict) -> str:
    lines = ["---", f"id: {m['id']}", f"title: {_yaml_str(m['title'])}", f"kind: {m['kind']}",
             f"entity: {_yaml_str(m['entity'])}", f"confidence: {m['confidence']}", f"source: {m['source']}"]
    if m["task_id"]:
        lines.append(f"task_id: {m['task_id']}")
    lines += [f"created: {m['created']}", f"updated: {m['updated']}"]
    for name in ("tags", "files", "symbols"):
        if m[name]:
            lines.append(f"{name}:")
            lines += [f"- {_yaml_str(v)}" for v in m[name]]
    return "\n".join(lines) + "\n---\n\n" + m["body"] + "\n"


def git(repo: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="memgit bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="memgit bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL)


def commit_folder(repo: Path, folder: str, message: str) -> None:
    """Commit every file under `folder` as one commit through `git fast-import`, then make git's
    index match: one pack instead of N loose objects, so git starts no `gc --auto` that would
    repack 100k objects on both cores while the benchmark measures (`git add` of 100k files
    leaves them loose and triggers it)."""
    env = dict(os.environ, GIT_AUTHOR_NAME="memgit bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="memgit bench", GIT_COMMITTER_EMAIL="bench@example.invalid")
    branch = subprocess.run(["git", "symbolic-ref", "HEAD"], cwd=repo, env=env, check=True,
                            capture_output=True, text=True).stdout.strip()
    proc = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=repo, env=env,
                            stdin=subprocess.PIPE)
    assert proc.stdin is not None
    write = proc.stdin.write
    stamp = int(time.time())
    write(f"commit {branch}\ncommitter memgit bench <bench@example.invalid> {stamp} +0000\n".encode())
    data = message.encode()
    write(b"data %d\n%s\n" % (len(data), data))
    root = repo / folder
    for path in sorted(root.rglob("*")):
        if path.is_file():
            body = path.read_bytes()
            rel = path.relative_to(repo).as_posix()
            write(b"M 100644 inline %s\ndata %d\n%s\n" % (rel.encode(), len(body), body))
    write(b"\ndone\n")
    proc.stdin.close()
    if proc.wait():
        sys.exit("git fast-import failed")
    git(repo, "reset", "-q")  # git's index from the new commit (hashes each file once to refresh)


def make_repo(repo: Path, n: int, memories: list[dict]) -> dict[str, str]:
    """Write the files directly and commit them once; returns id -> file name."""
    from memgit.config import DEFAULT_TOML
    from memgit.memory.format import Memory, file_name
    from memgit.memory.lenient import check

    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    folder = repo / ".memory"
    folder.mkdir()
    (folder / "config.toml").write_text(DEFAULT_TOML, encoding="utf-8")
    names: dict[str, str] = {}
    for m in memories:
        name = file_name(Memory(id=m["id"], title=m["title"]))
        names[m["id"]] = name
        (folder / name).write_text(memory_text(m), encoding="utf-8")
    for m in memories[:50]:  # what we wrote must be what memgit reads
        parsed, problems = check((folder / names[m["id"]]).read_text("utf-8"), names[m["id"]])
        if parsed is None or problems or parsed.id != m["id"] or parsed.entity != m["entity"]:
            sys.exit(f"generated file {names[m['id']]} does not parse: {problems}")
    commit_folder(repo, ".memory", f"memory: {n} generated memories")
    return names


# -- measuring helpers ---------------------------------------------------------------------


def ms(seconds: float) -> float:
    return seconds * 1000.0


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    pos = (len(values) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


# A small launcher runs each timed command: the kernel gives a child the peak RSS of the
# process it was forked from, so children forked from this (large, model-loaded) process
# would all report its size. The launcher is small; it times the command from spawn to exit
# itself and reports the command's own rusage (os.wait4: that child only).
LAUNCHER = (
    "import json, os, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n"
    "out = p.stdout.read()\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "wall = time.perf_counter() - t\n"
    "sys.stderr.write(json.dumps({'wall': wall, 'rss': usage.ru_maxrss, "
    "'status': os.waitstatus_to_exitcode(status), 'out': len(out)}))\n"
)


def run_child(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, int, int, int]:
    """Run `cmd` through the launcher; (wall seconds spawn to exit, peak RSS KiB, stdout bytes, status)."""
    proc = subprocess.run([sys.executable, "-c", LAUNCHER, *cmd], env=env, cwd=cwd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        data = json.loads(proc.stderr.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        sys.exit(f"launcher failed for {cmd}: {proc.stderr.decode()[-500:]}")
    return data["wall"], int(data["rss"]), int(data["out"]), int(data["status"])


def timed_child(cmd: list[str], env: dict[str, str], runs: int = 7, cwd: Path | None = None,
                vary: list[str] | None = None, output: bool = True) -> tuple[float, int, list[float]]:
    """Median wall ms over `runs` after one warm-up, max peak RSS KiB. `vary` rotates the last arg.
    Every run must exit 0 and (with `output`) most must print something: a failed run, or one
    that answers nothing, is no figure."""
    times, rss, printed = [], 0, 0
    for i in range(runs + 1):
        args = cmd if vary is None else cmd + [vary[i % len(vary)]]
        wall, peak, out, status = run_child(args, env, cwd)
        require(status == 0, f"`{' '.join(args[:8])}` exited {status}")
        printed += out > 0
        if i:
            times.append(ms(wall))
            rss = max(rss, peak)
    require(not output or printed > runs // 2,
            f"`{' '.join(cmd[:8])}` printed nothing in {runs + 1 - printed} of {runs + 1} runs")
    return statistics.median(times), rss, times


def dir_bytes(folder: Path) -> int:
    return sum(e.stat().st_size for e in os.scandir(folder) if e.is_file())


def index_bytes(db: Path) -> int:
    return sum(os.path.getsize(str(db) + s) for s in ("", "-wal", "-shm") if os.path.exists(str(db) + s))


def delete_index(db: Path) -> None:
    for s in ("", "-wal", "-shm"):
        try:
            os.unlink(str(db) + s)
        except FileNotFoundError:
            pass


def rewrite_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(".tmp-bench-" + path.name)
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


WORD_RE = re.compile(r"\w+")


def fts5_baseline(folder: Path, queries: list[str]) -> dict[str, float]:
    """A bare FTS5 table (stdlib sqlite3, unicode61, title/body/entity) over the same files."""
    t0 = time.perf_counter()
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE m USING fts5(mid UNINDEXED, title, body, entity)")
    rows = []
    for entry in os.scandir(folder):
        if not entry.name.endswith(".md"):
            continue
        text = Path(entry.path).read_text("utf-8")
        _, front, body = text.split("---\n", 2)
        meta = dict(line.split(": ", 1) for line in front.splitlines() if ": " in line and not line.startswith("- "))
        rows.append((meta.get("id"), meta.get("title", ""), body, meta.get("entity", "")))
    db.executemany("INSERT INTO m VALUES (?, ?, ?, ?)", rows)
    build = time.perf_counter() - t0
    lat = []
    for q in queries * 2:
        words = list(dict.fromkeys(WORD_RE.findall(q.lower())))
        expr = " OR ".join('"%s"' % w for w in words)
        t = time.perf_counter()
        db.execute("SELECT mid FROM m WHERE m MATCH ? ORDER BY bm25(m) LIMIT 5", (expr,)).fetchall()
        lat.append(ms(time.perf_counter() - t))
    lat = lat[len(queries):]  # second pass: warm
    return {"build_ms": ms(build), "p50_ms": statistics.median(lat), "p95_ms": pct(lat, 0.95)}


# -- one configuration ---------------------------------------------------------------------


def warm_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("memgit.warm") is not None


def warm_answers(embedder: str, timeout: float = 120.0) -> bool:
    """Whether memgit's warm embedder server for `embedder` answers a query (polling, with a
    deadline), so that a "warm server allowed" row measures a server that exists."""
    from memgit.index import warm
    from memgit.index.embedders import load_embedder

    model = load_embedder(embedder)
    if model is None:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not warm.failure_path(embedder).exists():
        if warm.query_vector(embedder, "is the warm server there", model.id) is not None:
            return True
        time.sleep(0.2)
    return False


def open_store(repo: Path, embedder: str):
    import memgit

    os.environ["MEMGIT_INDEX_EMBEDDER"] = embedder
    os.environ["MEMGIT_INDEX_WARM"] = "0"  # in-process figures: the model is loaded here
    return memgit.open(repo, warn=lambda msg: log(f"memgit: {msg}"))


def measure_config(label: str, repo: Path, embedder: str, names: list[str], queries: list[str],
                   repeat: int, full_runs: int, child_env: dict[str, str], memgit_cmd: list[str],
                   progress_every: float = 10.0) -> dict:
    """Full index, one-memory re-index, change check, recall, cold CLI for one embedder."""
    res: dict = {"embedder": embedder}
    db = repo / ".git" / "memgit" / "index.db"
    folder = repo / ".memory"

    # Full index from nothing.
    fulls = []
    for run in range(full_runs):
        delete_index(db)
        state = {"t": time.perf_counter()}

        def progress(done: int, total: int) -> None:
            if time.perf_counter() - state["t"] > progress_every or done == total:
                state["t"] = time.perf_counter()
                log(f"{label}: embedded {done}/{total}")

        t0 = time.perf_counter()
        mem = open_store(repo, embedder)
        report = mem.reindex(progress=progress)
        fulls.append(ms(time.perf_counter() - t0))
        log(f"{label}: full index run {run + 1}/{full_runs}: {fulls[-1] / 1000:.1f} s "
            f"({report.added} memories, {report.embedded} embedded)")
        mem.index.close()
    res["full_index_ms"] = statistics.median(fulls)
    res["full_index_runs_ms"] = fulls
    res["index_bytes"] = index_bytes(db)

    mem = open_store(repo, embedder)
    st = mem.index.status()
    res["vectors_on"], res["vectors_reason"] = st.get("vectors_reason") is None, st.get("vectors_reason")
    res["vectors_stored"] = st["memories"] - st.get("pending_vectors", 0) if res["vectors_on"] else 0
    if embedder != "none":  # a "with vectors" row from a run without them would be a keyword figure
        require(res["vectors_on"], f"{label}: vectors did not load ({res['vectors_reason']})")
        require(res["vectors_stored"] == st["memories"],
                f"{label}: {res['vectors_stored']} of {st['memories']} memories have a vector "
                "after a full index")

    # Warm up: load the model (timed: it is part of every cold call with vectors).
    t0 = time.perf_counter()
    for q in queries[:3]:
        mem.recall(q)
    res["warmup_3_recalls_ms"] = ms(time.perf_counter() - t0)

    # In-process recall latency.
    lat, found, by_vector = [], 0, 0
    for q in queries:
        t = time.perf_counter()
        hits = mem.recall(q)
        lat.append(ms(time.perf_counter() - t))
        found += bool(hits)
        by_vector += any("vector" in h.channels for h in hits)
    require(found >= len(queries) // 2, f"{label}: recall found nothing for {len(queries) - found} of "
                                        f"{len(queries)} queries")
    require(embedder == "none" or by_vector, f"{label}: no recall used the vector channel")
    res["recall_p50_ms"] = statistics.median(lat)
    res["recall_p95_ms"] = pct(lat, 0.95)

    # One-memory re-index (the model is loaded already; with stand-in vectors, the edited
    # memory is embedded by the real model).
    real_docs = os.environ.get("MEMGIT_BENCH_REAL_DOCS")
    os.environ["MEMGIT_BENCH_REAL_DOCS"] = "1"
    rng = random.Random(SEED + 3)
    one = []
    for i in range(repeat + 4):
        name = rng.choice(names)
        path = folder / name
        text = path.read_text("utf-8")
        rewrite_atomically(path, text.rstrip("\n") + f" Edited by the benchmark, run {i} {time.time_ns()}.\n")
        t = time.perf_counter()
        report = mem.index.sync()
        one.append(ms(time.perf_counter() - t))
        require(report.changed == 1, f"{label}: the one-memory re-index saw {report.changed} changed, "
                                     f"{report.added} added")
    if real_docs is None:
        os.environ.pop("MEMGIT_BENCH_REAL_DOCS", None)
    else:
        os.environ["MEMGIT_BENCH_REAL_DOCS"] = real_docs
    res["reindex_one_ms"] = statistics.median(one)
    res["reindex_one_runs_ms"] = one

    # Change check with nothing changed (after the racy window of the last edit).
    time.sleep(2.2)
    mem.index.sync()
    noop = []
    for _ in range(21):
        t = time.perf_counter()
        report = mem.index.sync()
        noop.append(ms(time.perf_counter() - t))
        require(not report.touched, f"{label}: the no-op change check touched {report.touched}")
    res["noop_sync_ms"] = statistics.median(noop)
    res["noop_sync_p95_ms"] = pct(noop, 0.95)
    mem.index.close()

    # Cold CLI recall: the model loaded by each call (no warm server).
    env = dict(child_env, MEMGIT_INDEX_EMBEDDER=embedder, MEMGIT_INDEX_WARM="0")
    med, rss, runs = timed_child([*memgit_cmd, "-C", str(repo), "recall"], env, vary=queries[:8])
    res["cli_recall_ms"], res["cli_recall_rss_kib"], res["cli_recall_runs_ms"] = med, rss, runs
    if embedder == STANDIN:  # a plug-in on PYTHONPATH: the isolated (-I) warm server cannot import it
        res["cli_recall_warm_skipped"] = "the stand-in embedder is a plug-in the isolated server cannot load"
    elif embedder != "none" and warm_available():
        # With memgit's warm embedder server allowed: the warm-up call starts it (it exits
        # by itself after MEMGIT_WARM_IDLE seconds idle); the timed calls may use it.
        env = dict(child_env, MEMGIT_INDEX_EMBEDDER=embedder, MEMGIT_INDEX_WARM="1", MEMGIT_WARM_IDLE="60")
        _, _, out, status = run_child([*memgit_cmd, "-C", str(repo), "recall", queries[0]], env)
        require(status == 0 and out, f"{label}: the warm-up recall exited {status}, {out} bytes of output")
        require(warm_answers(embedder), f"{label}: the warm embedder server never answered")
        med, rss, runs = timed_child([*memgit_cmd, "-C", str(repo), "recall"], env, vary=queries[8:16])
        res["cli_recall_warm_ms"], res["cli_recall_warm_rss_kib"], res["cli_recall_warm_runs_ms"] = med, rss, runs
    res["index_bytes_after"] = index_bytes(db)
    return res


def measure_remember(repo: Path, runs: int) -> dict:
    """`mem.remember(text)` in process, beside git's own cost of the same commit.

    The baseline is what any tool committing one new file pays: `git add` + `git commit
    --only` of one file, run the way memgit runs them. memgit's own share is the difference.
    """
    from memgit.git import runner as gitrunner

    in_git = [0.0]

    def timed(fn):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                in_git[0] += time.perf_counter() - t
        return wrapper

    original = gitrunner.run
    gitrunner.run = timed(gitrunner.run)
    mem = open_store(repo, "none")
    mem.index.sync(embed="none")
    mine, plain, gits = [], [], []
    for i in range(runs):
        text = f"Benchmark memory {i} written at {time.time_ns()}: remember checks for the same text first."
        in_git[0] = 0.0
        t = time.perf_counter()
        mem.remember(text, kind="fact")
        mine.append(ms(time.perf_counter() - t))
        gits.append(ms(in_git[0]))
        path = repo / "baseline" / f"git-baseline-{i}-{time.time_ns()}.md"  # outside .memory/
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"---\nid: gb-{i}\ntitle: {json.dumps(text)}\n---\n", encoding="utf-8")
        t = time.perf_counter()
        git(repo, "add", "--", str(path))
        git(repo, "commit", "-q", "--only", "-m", "baseline", "--", str(path))
        plain.append(ms(time.perf_counter() - t))
    mem.index.close()
    gitrunner.run = original
    own = [total - g for total, g in zip(mine, gits)]
    return {"remember_ms": statistics.median(mine), "git_commit_ms": statistics.median(plain),
            "remember_in_git_ms": statistics.median(gits), "remember_own_ms": statistics.median(own),
            "remember_runs_ms": mine}


def measure_size(n: int, args: argparse.Namespace, base: Path, child_env: dict[str, str],
                 memgit_cmd: list[str], minilm_rate: dict) -> dict:
    log(f"== N = {n}")
    repo = base / f"n{n}" / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    gen = Generator(n)
    t0 = time.perf_counter()
    memories = [gen.memory(i) for i in range(n)]
    queries = gen.queries(memories, args.queries)
    names_by_id = make_repo(repo, n, memories)
    names = list(names_by_id.values())
    out: dict = {"n": n, "generate_and_commit_s": time.perf_counter() - t0,
                 "memory_bytes": dir_bytes(repo / ".memory"),
                 "body_words_mean": statistics.mean(len(m["body"].split()) for m in memories)}
    log(f"N={n}: generated and committed in {out['generate_and_commit_s']:.1f} s "
        f"({out['memory_bytes'] / 1e6:.1f} MB)")
    del memories

    # Baselines.
    word = gen.words[len(gen.words) // 3]  # a mid-frequency word
    out["grep_word"] = word
    out["grep_ms"], out["grep_rss_kib"], _ = timed_child(["grep", "-ril", word, ".memory"], child_env, cwd=repo)
    out["fts5"] = fts5_baseline(repo / ".memory", queries)
    t = time.perf_counter()
    for entry in os.scandir(repo / ".memory"):
        entry.stat()
    out["stat_all_ms"] = ms(time.perf_counter() - t)
    log(f"N={n}: baselines: grep {out['grep_ms']:.1f} ms, bare FTS5 build {out['fts5']['build_ms']:.0f} ms, "
        f"query p50 {out['fts5']['p50_ms']:.2f} ms")

    big = n >= 100_000
    repeat = args.repeat if args.repeat else (1 if big else 3)
    kw_label = f"N={n} keywords"
    if args.remember_only:
        open_store(repo, "none").reindex()
        out["remember"] = measure_remember(repo, 7)
        log(f"N={n}: remember {json.dumps(out['remember'])}")
        if not args.keep:
            shutil.rmtree(base / f"n{n}", ignore_errors=True)
        return out
    out["keywords"] = measure_config(kw_label, repo, "none", names, queries, repeat, repeat, child_env, memgit_cmd)
    out["remember"] = measure_remember(repo, 7)
    log(f"{kw_label}: {json.dumps({k: v for k, v in out['keywords'].items() if not k.endswith('runs_ms')})}")

    mode = args.vectors
    if mode == "auto":
        mode = "minilm" if n <= 1000 else ("none" if big else "stand-in")
    out["vector_mode"] = mode
    if mode != "none":
        embedder = "minilm" if mode == "minilm" else STANDIN
        label = f"N={n} vectors ({mode})"
        vec = measure_config(label, repo, embedder, names, queries, repeat, 1, child_env, memgit_cmd)
        out["vectors"] = vec
        if mode == "minilm":
            minilm_rate["ms_per_memory"] = (vec["full_index_ms"] - out["keywords"]["full_index_ms"]) / n
        log(f"{label}: {json.dumps({k: v for k, v in vec.items() if not k.endswith('runs_ms')})}")
    if not args.keep:
        shutil.rmtree(base / f"n{n}", ignore_errors=True)
    return out


# -- report --------------------------------------------------------------------------------


def print_remember(r: dict) -> None:
    rem = r["remember"]
    own = rem["remember_own_ms"]
    print(f"N = {r['n']}: remember {rem['remember_ms']:.0f} ms: in git commands {rem['remember_in_git_ms']:.0f} ms "
          f"(baseline: git add + commit --only of one file {rem['git_commit_ms']:.0f} ms), memgit's own "
          f"{own:.0f} ms (target: own <= 150 ms: {'MET' if own <= 150 else 'MISSED'})")


def print_table(r: dict, help_ms: float, python_ms: float, python_rss: int, minilm_rate: dict) -> None:
    n = r["n"]
    if "keywords" not in r:
        print_remember(r)
        return
    targets = TARGETS.get(n, {})
    kw, vec = r["keywords"], r.get("vectors")
    grep = r["grep_ms"]
    fts = r["fts5"]
    rows: list[tuple[str, float | None, str, float | None, str, float | None]] = []
    # (name, value, unit, baseline value, baseline name, target)

    def add(name: str, value: float | None, unit: str, base: float | None, base_name: str, key: str | None) -> None:
        rows.append((name, value, unit, base, base_name, targets.get(key) if key else None))

    add("full index, keywords+anchors", kw["full_index_ms"] / 1000, "s", fts["build_ms"] / 1000, "bare FTS5 build", None)
    if vec:
        note = "real MiniLM" if r["vector_mode"] == "minilm" else "stand-in vectors, no model"
        add(f"full index, with vectors ({note})", vec["full_index_ms"] / 1000, "s", fts["build_ms"] / 1000,
            "bare FTS5 build", None)
        if r["vector_mode"] != "minilm" and minilm_rate.get("ms_per_memory"):
            est = kw["full_index_ms"] / 1000 + minilm_rate["ms_per_memory"] * n / 1000
            add("  est. full index with MiniLM (1k rate)", est, "s", fts["build_ms"] / 1000, "bare FTS5 build", None)
    add("one-memory re-index, keywords", kw["reindex_one_ms"], "ms", grep, "grep -ril", "reindex_one_kw")
    if vec:
        add("one-memory re-index, with vectors", vec["reindex_one_ms"], "ms", grep, "grep -ril", "reindex_one_vec")
    add("change check, nothing changed (kw)", kw["noop_sync_ms"], "ms", r["stat_all_ms"], "stat every file", "noop_kw")
    if vec:
        add("change check, nothing changed (vec)", vec["noop_sync_ms"], "ms", r["stat_all_ms"], "stat every file",
            "noop_vec")
    add("in-process recall p50, keywords", kw["recall_p50_ms"], "ms", grep, "grep -ril", "recall_p50_kw")
    add("  same, vs bare FTS5 query p50", kw["recall_p50_ms"], "ms", fts["p50_ms"], "FTS5 kw-only", None)
    add("in-process recall p95, keywords", kw["recall_p95_ms"], "ms", grep, "grep -ril", None)
    if vec:
        add("in-process recall p50, with vectors", vec["recall_p50_ms"], "ms", grep, "grep -ril", "recall_p50_vec")
        add("  same, vs bare FTS5 query p50", vec["recall_p50_ms"], "ms", fts["p50_ms"], "FTS5 kw-only", None)
        add("in-process recall p95, with vectors", vec["recall_p95_ms"], "ms", grep, "grep -ril", None)
        add("cold CLI recall, with vectors (model loaded per call)", vec["cli_recall_ms"], "ms", grep, "grep -ril",
            "cli_vec")
        if "cli_recall_warm_skipped" in vec:
            log(f"N={n}: no 'warm server allowed' row: {vec['cli_recall_warm_skipped']}")
        if "cli_recall_warm_ms" in vec:
            add("cold CLI recall, with vectors, warm server allowed", vec["cli_recall_warm_ms"], "ms", grep,
                "grep -ril", "cli_vec")
    add("cold CLI recall, keywords only", kw["cli_recall_ms"], "ms", grep, "grep -ril", "cli_kw")
    add("memgit --help", help_ms, "ms", python_ms, "python -c pass", "help")
    add("index size on disk, keywords", kw["index_bytes_after"] / 1e6, "MB", r["memory_bytes"] / 1e6, ".memory/ size", None)
    if vec:
        add("index size on disk, with vectors", vec["index_bytes_after"] / 1e6, "MB", r["memory_bytes"] / 1e6,
            ".memory/ size", None)
        add("peak RSS, cold recall with vectors", vec["cli_recall_rss_kib"] / 1024, "MiB", python_rss / 1024,
            "python -c pass", None)
        if "cli_recall_warm_rss_kib" in vec:
            add("peak RSS, cold recall, warm server allowed", vec["cli_recall_warm_rss_kib"] / 1024, "MiB",
                python_rss / 1024, "python -c pass", None)
    add("peak RSS, cold recall keywords", kw["cli_recall_rss_kib"] / 1024, "MiB", python_rss / 1024,
        "python -c pass", None)
    rem = r["remember"]
    add("remember, in process", rem["remember_ms"], "ms", rem["git_commit_ms"], "git add+commit", None)
    add("  of which memgit's own (outside git commands)", rem["remember_own_ms"], "ms", None, "", "remember_own")

    vec_note = {"minilm": "real MiniLM", "stand-in": "stand-in random unit vectors for memories, real MiniLM for queries",
                "none": "none"}[r.get("vector_mode", "none")]
    print(f"\n=== N = {n} memories ({r['memory_bytes'] / 1e6:.1f} MB of .memory/, mean body "
          f"{r['body_words_mean']:.0f} words); vectors: {vec_note}")
    print(f"baselines: grep -ril {r['grep_word']!r} .memory = {grep:.1f} ms; bare FTS5 query p50 "
          f"{fts['p50_ms']:.2f} ms; python -c pass = {python_ms:.1f} ms")
    head = f"{'measure':<52} {'value':>10}  {'baseline':>10}  {'(what)':<18} {'ratio':>8}  {'target':>8}  verdict"
    print(head)
    print("-" * len(head))
    for name, value, unit, base, base_name, target in rows:
        v = f"{value:.1f} {unit}" if value is not None and value >= 10 else f"{value:.2f} {unit}"
        b = f"{base:.1f}" if base is not None and base >= 10 else f"{base:.2f}" if base is not None else "-"
        ratio = "-" if not base else f"{value / base:.1f}x" if value / base >= 0.1 else f"{value / base:.3f}x"
        if target is not None:
            t = f"<= {target}"
            verdict = "MET" if value <= target else f"MISSED by {value - target:.0f} {unit} ({value / target:.1f}x)"
        else:
            t, verdict = "", ""
        print(f"{name:<52} {v:>10}  {b:>10}  {base_name:<18} {ratio:>8}  {t:>8}  {verdict}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Index and recall speed of memgit at N generated memories, against grep and bare FTS5 "
                    "baselines, with memgit's targets. See the module docstring for the method.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000], metavar="N",
                    help="numbers of memories (default: 1000 10000; 100000 takes ~10+ minutes)")
    ap.add_argument("--vectors", choices=["auto", "minilm", "stand-in", "none"], default="auto",
                    help="vector channel: auto = real MiniLM up to 1k, stand-in vectors above, none at "
                         ">= 100k (default); minilm everywhere (slow: ~25-35 ms per memory); "
                         "stand-in everywhere; none = keywords + anchors only")
    ap.add_argument("--repeat", type=int, default=0, metavar="R",
                    help="runs of the full keyword index (default 3, 1 at >= 100k); re-index runs = R+4")
    ap.add_argument("--queries", type=int, default=60, metavar="Q", help="recall queries (default 60)")
    ap.add_argument("--keep", metavar="DIR", help="build the repositories here and keep them")
    ap.add_argument("--json", metavar="OUT", help="also write every figure as JSON here")
    ap.add_argument("--remember-only", action="store_true",
                    help="only index (keywords) and time `remember` against git's own commit time")
    args = ap.parse_args(argv)

    if args.keep:
        base = Path(args.keep).resolve()
        try:
            base.relative_to(REPO_ROOT)
            ap.error("--keep must be outside the memgit repository")
        except ValueError:
            pass
        base.mkdir(parents=True, exist_ok=True)
    else:
        base = Path(tempfile.mkdtemp(prefix="memgit-speed-"))
    return validity.refuse_on_invalid(lambda: measure_all(args, base), "speed")


def measure_all(args: argparse.Namespace, base: Path) -> int:
    """Every size, each table printed once its figures are all valid."""
    exe = Path(sys.executable).with_name("memgit")
    memgit_cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "memgit"]
    child_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    child_env["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
    child_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BENCH_DIR), os.environ.get("PYTHONPATH")]))
    sys.path.insert(0, str(BENCH_DIR))

    results = []
    try:
        python_ms, python_rss, _ = timed_child([sys.executable, "-c", "pass"], child_env, output=False)
        help_ms, help_rss, _ = timed_child([*memgit_cmd, "--help"], child_env)
        log(f"python -c pass {python_ms:.1f} ms; memgit --help {help_ms:.1f} ms")
        minilm_rate: dict = {}
        for n in sorted(args.sizes):
            r = measure_size(n, args, base, child_env, memgit_cmd, minilm_rate)
            results.append(r)
            print_table(r, help_ms, python_ms, python_rss, minilm_rate)
            sys.stdout.flush()
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    print("\nnotes: times are medians (wall clock); the in-process recall includes memgit's change check "
          "and usage record; cold CLI = process start to exit; ratios are value / baseline.")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"help_ms": help_ms, "python_ms": python_ms, "python_rss_kib": python_rss,
                       "minilm_ms_per_memory": minilm_rate.get("ms_per_memory"), "results": results}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
