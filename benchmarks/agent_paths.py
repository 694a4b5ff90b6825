#!/usr/bin/env python3
"""The paths an agent waits on, each as a ratio against the baseline it names, in one run.

    nice -n 10 python benchmarks/agent_paths.py [--hook-size 1000] [--recall-size 2000]
        [--remember-size 5000] [--runs 11] [--queries 40] [--no-minilm] [--only ROW ...]
        [--keep DIR]

With `--keep DIR` the recall and remember stores (and their index) are built once in DIR and
reused by later runs: building 100k memories (generated, committed with `git fast-import`,
indexed) takes minutes; a kept one, none.

Rows (sizes are options; the defaults are modest, the targets were set at 1k / 6-10k / 10k / 100k):

- `prompt-kw`, `prompt-vec`: the UserPromptSubmit hook (`python -I -m memgit.hookrun claude
  user-prompt`, a memory's title as the prompt, a new session each run) over a store of
  `--hook-size` generated memories, keywords only (MEMGIT_INDEX_EMBEDDER=none) and with the
  bundled MiniLM and its warm embedder process (started by a warm-up call). Baseline: a bare
  `python -c pass` of the same interpreter, measured in the same run.
- `start`: the SessionStart hook on the same store, keywords only; same baseline.
- `pre-compact`, `session-end`: the hooks that only hand off (a checkpoint from a short
  transcript; the session recorded); same baseline. The work they hand to the background
  (`memgit.hookjob`) is waited for after the runs, and the row refused if any of it failed.
- `background`: the UserPromptSubmit and SessionStart hooks (MiniLM) while the background
  embedding job embeds 400 memories that just arrived (as after a pull). Baseline: the same
  hooks on the same store with the job not running (`MEMGIT_INDEX_BACKGROUND=0`). Runs taken
  when the job had already finished are left out; too few left and the row is refused.
- `recall`: in-process `mem.recall(query)` p50 at `--recall-size`, vectors on (the stand-in
  embedder's vectors for memories, the real MiniLM for queries, loaded before timing).
  Baseline: a bare FTS5 table's query p50 over the same files (benchmarks/speed.py).
- `mcp-kw`, `mcp-vec`: recall through `memgit mcp`, timed by the MCP SDK's client
  (benchmarks/mcp.py), at `--recall-size`. Baseline: the same queries in process.
- `remember`: `mem.remember(text)` at `--remember-size`, memgit's own time (all but its git
  subprocesses). Baseline: git's own `git add` + `git commit --only` of one file in the same
  repository.

A figure is printed only from a run that worked: every hook exited 0 and wrote no line to
`hooks.log` (hooks fail open, so the log is where a failure shows), the hooks that answer
printed an answer, every recall returned hits, and the vector rows ran with every memory
embedded and the vector channel on. Otherwise the row says why it is refused.
Standard library, memgit and (for the MCP rows) the MCP SDK.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# Not this folder on sys.path: benchmarks/secret_gate.py and friends must not shadow anything.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]


def _load(name: str, as_name: str | None = None) -> Any:
    spec = importlib.util.spec_from_file_location(as_name or name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[as_name or name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


speed = _load("speed")
ROWS = ("prompt-kw", "prompt-vec", "start", "pre-compact", "session-end", "background", "recall",
        "mcp-kw", "mcp-vec", "remember")
TARGETS = {"prompt-kw": "<= 6x", "prompt-vec": "<= 8x", "start": "<= 7x", "pre-compact": "<= 8x",
           "session-end": "<= 8x", "background": "<= 1.5x", "recall": "<= 10 ms", "mcp-kw": "<= 15 ms",
           "mcp-vec": "<= 30 ms", "remember": "<= 150 ms"}


class Refused(Exception):
    """A run that failed, came back empty or ran degraded: no figure from it."""


# hooks.log holds a hook's failures (`<stamp> <agent> <event>: <ExceptionName>: message`) and
# its warnings; a warning that vectors are off or missing means a vector row ran degraded.
FAILED = re.compile(r"^\S+ \S+ \S+: [A-Za-z_.]*(Error|Exception|Interrupt|Exit|Refused)\b")
DEGRADED = re.compile(r"vectors are off|no vectors|in the background|embedder")


def log(message: str) -> None:
    print(f"[agent_paths] {message}", file=sys.stderr, flush=True)


def child_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMGIT_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")  # a bytecode cache, as an installed package has
    env["MEMGIT_WARM_IDLE"] = "120"  # the warm embedder exits soon after the benchmark
    for who in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{who}_NAME"], env[f"GIT_{who}_EMAIL"] = "memgit bench", "bench@example.invalid"
    return env


def python_pass(env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs + 1):
        wall, _rss, _out, status = speed.run_child([sys.executable, "-c", "pass"], env)
        if status:
            raise Refused("python -c pass failed")
        times.append(wall * 1000)
    return statistics.median(times[1:])


# -- hooks ---------------------------------------------------------------------------------


class HookStore:
    """A repository of generated memories (10 pinned), on a feature branch, indexed."""

    def __init__(self, root: Path, n: int, env: dict[str, str]) -> None:
        self.repo, self.env = root / "repo", env
        gen = speed.Generator(n)
        memories = [gen.memory(i) for i in range(n)]
        names = speed.make_repo(self.repo, n, memories)
        for m in memories[:10]:
            path = self.repo / ".memory" / names[m["id"]]
            path.write_text(path.read_text().replace("\n---\n", "\npinned: true\n---\n", 1))
        speed.git(self.repo, "commit", "-q", "-am", "pin 10 memories")
        speed.git(self.repo, "checkout", "-q", "-b", "fix/session-timeout-retry")
        self.prompts = [m["title"] for m in memories[10::max(1, n // 50)]]
        self.transcript = root / "session.jsonl"
        lines = [{"type": "user", "message": {"role": "user", "content": "make the retry handler back off"}},
                 {"type": "assistant", "message": {"role": "assistant", "content": [
                     {"type": "text", "text": "I will change the retry handler."}]}}]
        self.transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
        self.hooks_log = self.repo / ".git" / "memgit" / "hooks.log"

    def index(self, embedder: str) -> None:
        import memgit

        os.environ["MEMGIT_INDEX_EMBEDDER"] = embedder
        os.environ["MEMGIT_INDEX_WARM"] = "0"
        with memgit.open(self.repo, warn=lambda message: None) as mem:
            mem.reindex()

    def run(self, event: str, i: int, env: dict[str, str], *, vectors: bool = False) -> tuple[float, int]:
        """One hook run, new session; (wall ms, stdout bytes). Refuses a failed run, and with
        `vectors` one that says its vectors were off or missing."""
        payload: dict[str, Any] = {"session_id": f"bench-{event}-{i}-{time.time_ns()}", "cwd": str(self.repo),
                                   "transcript_path": str(self.transcript)}
        if event == "user-prompt":
            payload["prompt"] = self.prompts[i % len(self.prompts)]
        if event == "session-start":
            payload["source"] = "startup"
        before = self.hooks_log.stat().st_size if self.hooks_log.exists() else 0
        cmd = [sys.executable, "-I", "-m", "memgit.hookrun", "claude", event]
        start = time.perf_counter()
        done = subprocess.run(cmd, input=json.dumps(payload).encode(), env=env, cwd=self.repo,
                              capture_output=True, check=False)
        wall = (time.perf_counter() - start) * 1000
        after = self.hooks_log.stat().st_size if self.hooks_log.exists() else 0
        if done.returncode != 0:
            raise Refused(f"{event} hook exited {done.returncode}")
        if after != before:
            with open(self.hooks_log, "rb") as handle:
                handle.seek(before)
                lines = handle.read().decode("utf-8", "replace").splitlines()
            for line in lines:
                if FAILED.match(line) or (vectors and DEGRADED.search(line)):
                    raise Refused(f"{event} hook failed or ran degraded (hooks.log: {line[:200]})")
        if event in ("user-prompt", "session-start") and not done.stdout.strip():
            raise Refused(f"{event} hook gave the agent nothing")
        return wall, len(done.stdout)

    def median(self, event: str, env: dict[str, str], runs: int,
               keep: Callable[[], bool] = lambda: True, vectors: bool = False) -> tuple[float, int]:
        """Median wall ms over `runs` after one warm-up, counting only runs where `keep()` held
        before and after; (median, runs counted)."""
        times = []
        start = self.hooks_log.stat().st_size if self.hooks_log.exists() else 0
        self.run(event, -1, env, vectors=vectors)
        for i in range(runs):
            ok = keep()
            wall, _ = self.run(event, i, env, vectors=vectors)
            if ok and keep():
                times.append(wall)
        if not times:
            raise Refused(f"no {event} run counted")
        self.handed_off_work_done(event, start)
        return statistics.median(times), len(times)

    def handed_off_work_done(self, event: str, start: int) -> None:
        """A hook that hands its work to a background process (memgit.hookjob) returns before
        the work is done: wait for it, and refuse the row if any of it failed."""
        spool = self.repo / ".git" / "memgit" / "handoff"
        deadline = time.monotonic() + 300
        while spool.is_dir() and any(spool.iterdir()):
            if time.monotonic() > deadline:
                raise Refused(f"{event}: the work handed off was not done within 300 s")
            time.sleep(0.2)
        time.sleep(0.5)  # the last record is removed once it ran; its log line is written before
        if self.hooks_log.exists():
            with open(self.hooks_log, "rb") as handle:
                handle.seek(start)
                for line in handle.read().decode("utf-8", "replace").splitlines():
                    if FAILED.match(line) or "hookjob" in line:
                        raise Refused(f"{event}: the work handed off failed (hooks.log: {line[:200]})")


def hook_rows(args: argparse.Namespace, tmp: Path, env: dict[str, str], base: float) -> list[tuple]:
    rows: list[tuple] = []
    wanted = set(args.only)
    if not wanted & {"prompt-kw", "prompt-vec", "start", "pre-compact", "session-end", "background"}:
        return rows
    log(f"building a store of {args.hook_size} memories for the hooks")
    store = HookStore(tmp / "hooks", args.hook_size, env)
    store.index("none")
    kw = dict(env, MEMGIT_INDEX_EMBEDDER="none")
    for row, event in (("prompt-kw", "user-prompt"), ("start", "session-start"),
                       ("pre-compact", "pre-compact"), ("session-end", "session-end")):
        if row in wanted:
            rows.append(_ratio_row(row, f"{event} hook, {args.hook_size} memories, keywords only",
                                   lambda e=event: store.median(e, kw, args.runs), base, "python -c pass"))
    if args.no_minilm or not wanted & {"prompt-vec", "background"}:
        return rows
    log("embedding the hook store with MiniLM (once)")
    store.index("minilm")
    vec = dict(env, MEMGIT_INDEX_EMBEDDER="minilm")
    if "prompt-vec" in wanted:
        rows.append(_ratio_row("prompt-vec", f"user-prompt hook, {args.hook_size} memories, MiniLM warm",
                               lambda: store.median("user-prompt", vec, args.runs, vectors=True), base, "python -c pass"))
    if "background" in wanted:
        try:
            rows += background_rows(store, vec, args)
        except Refused as exc:
            rows.append(("background", "hooks while the embedding job runs", None, str(exc)))
    return rows


def _ratio_row(row: str, label: str, measure: Callable[[], tuple[float, int]], base: float,
               base_name: str) -> tuple:
    try:
        value, _ = measure()
    except Refused as exc:
        return (row, label, None, str(exc))
    return (row, label, value / base, f"{value:.0f} ms / {base_name} {base:.0f} ms")


def background_rows(store: HookStore, vec: dict[str, str], args: argparse.Namespace) -> list[tuple]:
    from memgit.index import embedjob
    from memgit.memory.format import Memory
    from memgit.store.folder import Store

    db = store.repo / ".git" / "memgit" / "index.db"
    folder = Store(store.repo / ".memory")
    for i in range(args.pulled):
        folder.write(Memory(id=f"m-pull{i:06x}", path=f"pulled-{i}.md", title=f"Pulled note {i} on retries",
                            body=f"Module mod_{i % 37}.py retries {i % 5} times; cache key cache_{i} expires "
                                 "after ten minutes unless the request sets no-cache. " * 3))
    speed.git(store.repo, "add", ".memory")
    speed.git(store.repo, "commit", "-q", "-m", "pull")
    idle_env = dict(vec, MEMGIT_INDEX_BACKGROUND="0")
    out = []
    idle = {}
    for event in ("user-prompt", "session-start"):
        try:
            idle[event], _ = store.median(event, idle_env, args.runs)
        except Refused as exc:
            out.append(("background", f"{event} hook while embedding", None, f"idle run: {exc}"))
    store.run("user-prompt", 0, vec)  # starts the job
    time.sleep(0.5)
    pid = embedjob.running(db)
    if pid is None:
        return out + [("background", "hooks while embedding", None, "the background job did not start")]
    try:
        for event in [e for e in ("user-prompt", "session-start") if e in idle]:
            label = f"{event} hook while the embedding job runs ({args.pulled} pending)"
            try:
                value, counted = store.median(event, vec, args.runs, keep=lambda: embedjob.running(db) is not None)
            except Refused as exc:
                out.append(("background", label, None, str(exc)))
                continue
            if counted < max(3, args.runs // 2):
                out.append(("background", label, None, f"the job finished too early ({counted} runs counted)"))
                continue
            out.append(("background", label, value / idle[event],
                        f"{value:.0f} ms / idle {idle[event]:.0f} ms ({counted} runs)"))
    finally:
        pid = embedjob.running(db)
        if pid and pid > 0:
            try:
                os.kill(pid, 15)  # the job this benchmark started
            except OSError:
                pass
    return out


# -- recall, MCP, remember -------------------------------------------------------------------


def recall_rows(args: argparse.Namespace, tmp: Path) -> list[tuple]:
    wanted = set(args.only)
    if not wanted & {"recall", "mcp-kw", "mcp-vec"}:
        return []
    mcp_bench = _load("mcp", "mcp_bench")  # not "mcp": that is the SDK; puts the stand-in embedder's folder on sys.path
    n = args.recall_size
    repo, queries = built_store(Path(args.keep) if args.keep else tmp, "recall", n, args.queries)
    rows: list[tuple] = []
    if "recall" in wanted:
        fts = speed.fts5_baseline(repo / ".memory", queries)["p50_ms"]
        try:
            p50 = in_process_recall(repo, queries)
            rows.append(("recall", f"in-process recall p50, {n} memories, vectors on", p50 / fts,
                         f"{p50:.1f} ms / bare FTS5 {fts:.2f} ms"))
        except Refused as exc:
            rows.append(("recall", f"in-process recall p50, {n} memories, vectors on", None, str(exc)))
    for row, embedder in (("mcp-kw", "none"), ("mcp-vec", speed.STANDIN)):
        if row not in wanted:
            continue
        label = f"MCP recall p50, {n} memories, {'keywords' if embedder == 'none' else 'vectors'}"
        try:
            r = mcp_bench.measure(repo, queries, embedder)
        except Exception as exc:  # noqa: BLE001 - a failed run is refused, with its reason
            rows.append((row, label, None, f"{type(exc).__name__}: {exc}"[:200]))
            continue
        rows.append((row, label, r["mcp_p50"] / r["local_p50"],
                     f"{r['mcp_p50']:.1f} ms / in-process {r['local_p50']:.1f} ms"))
    return rows


def _head(repo: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def built_store(base: Path, name: str, n: int, n_queries: int) -> tuple[Path, list[str]]:
    """A repository of `n` generated memories (speed.py's generator, one commit) at
    `base/<name>-<n>/repo`, and `n_queries` queries; with --keep, a store built by an earlier
    run is used as it is (its index too), so only the first run pays for building it."""
    folder = base / f"{name}-{n}"
    repo, saved = folder / "repo", folder / "queries.json"
    if saved.exists() and repo.is_dir():
        queries = json.loads(saved.read_text())
        if len(queries) >= n_queries:
            log(f"using the store of {n} memories kept in {folder}")
            return repo, queries[:n_queries]
    shutil.rmtree(folder, ignore_errors=True)
    log(f"building a store of {n} memories for {name} (once with --keep)")
    started = time.perf_counter()
    gen = speed.Generator(n)
    memories = [gen.memory(i) for i in range(n)]
    queries = gen.queries(memories, max(n_queries, 1))
    speed.make_repo(repo, n, memories)
    del memories
    speed.git(repo, "config", "user.name", "bench")
    speed.git(repo, "config", "user.email", "bench@example.invalid")
    saved.write_text(json.dumps(queries))  # last: a store without it is built again
    log(f"built in {time.perf_counter() - started:.0f} s")
    return repo, queries[:n_queries]


def in_process_recall(repo: Path, queries: list[str]) -> float:
    import memgit

    os.environ.update(MEMGIT_INDEX_EMBEDDER=speed.STANDIN, MEMGIT_INDEX_WARM="0", MEMGIT_INDEX_BACKGROUND="0")
    warnings: list[str] = []
    with memgit.open(repo, warn=warnings.append) as mem:
        mem.index.sync(embed="all")  # everything on a new store; nothing on one kept from a run before
        index = mem.index
        if not index.vectors.on or index.vectors.pending():
            raise Refused(f"vectors degraded: {index.vectors.reason() or 'memories pending'}")
        for q in queries[:3]:
            mem.recall(q)
        times, empty = [], 0
        for q in queries:
            start = time.perf_counter()
            hits = mem.recall(q)
            times.append((time.perf_counter() - start) * 1000)
            empty += not hits
        if empty * 2 > len(queries):  # the relevance floor leaves some out; most must answer
            raise Refused(f"{empty} of {len(queries)} queries found nothing")
        if not index.vectors.on or warnings:
            raise Refused(f"vectors degraded during the run: {warnings[:1] or index.vectors.reason()}")
    return statistics.median(times)


def remember_row(args: argparse.Namespace, tmp: Path) -> list[tuple]:
    if "remember" not in args.only:
        return []
    n = args.remember_size
    repo, _ = built_store(Path(args.keep) if args.keep else tmp, "remember", n, 0)
    label = f"remember, {n} memories, memgit's own time"
    base = _head(repo)
    try:
        r = speed.measure_remember(repo, 7)
        added = int(subprocess.run(["git", "rev-list", "--count", f"{base}..HEAD"], cwd=repo,
                                   capture_output=True, text=True, check=False).stdout.strip() or 0)
    except Exception as exc:  # noqa: BLE001 - refused, with its reason
        return [("remember", label, None, f"{type(exc).__name__}: {exc}"[:200])]
    finally:
        speed.git(repo, "reset", "-q", "--hard", base)  # the kept store as it was built, for the next run
    if added < 7 + 7:  # 7 baseline commits, 7 of remember's
        return [("remember", label, None, "remember did not commit every memory")]
    detail = (f"{r['remember_own_ms']:.0f} ms own (+{r['remember_in_git_ms']:.0f} ms in git) "
              f"/ git add+commit --only {r['git_commit_ms']:.0f} ms")
    return [("remember", label, r["remember_own_ms"] / r["git_commit_ms"], detail)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hook-size", type=int, default=1000)
    ap.add_argument("--recall-size", type=int, default=2000)
    ap.add_argument("--remember-size", type=int, default=5000)
    ap.add_argument("--pulled", type=int, default=400, help="memories the background job embeds")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--no-minilm", action="store_true", help="skip the rows that need the real model")
    ap.add_argument("--only", nargs="+", choices=ROWS, default=list(ROWS))
    ap.add_argument("--json", metavar="OUT", help="also write every row as JSON here")
    ap.add_argument("--keep", metavar="DIR", help="build the recall and remember stores here and reuse them "
                    "(and their index) on later runs")
    args = ap.parse_args(argv)
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="memgit-agent-paths-"))
    try:
        env = child_env(tmp)
        base = python_pass(env, args.runs)
        log(f"python -c pass: {base:.0f} ms; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        rows = hook_rows(args, tmp, env, base) + recall_rows(args, tmp) + remember_row(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"agent paths ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}); ratio = figure / its baseline")
    for row, label, ratio, detail in rows:
        figure = "refused" if ratio is None else f"{ratio:6.2f}x"
        print(f"{label:<62} {figure:>8}  {detail}  [target {TARGETS[row]}]")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "cores": os.cpu_count(), "load": os.getloadavg()[0], "python_pass_ms": base,
            "rows": [{"row": row, "label": label, "ratio": ratio, "detail": detail, "target": TARGETS[row]}
                     for row, label, ratio, detail in rows]}, indent=1))
    return 1 if any(r[2] is None for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
