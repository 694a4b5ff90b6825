#!/usr/bin/env python3
"""How long the agent's session-start hook takes, as the agent runs it.

    python benchmarks/hooks.py [--size 1000] [--runs 15] [--vectors none|minilm|both]

A temporary repository gets N generated memories (benchmarks/speed.py's generator; 10 of
them pinned), a feature branch with two changed files, and an index built beforehand (as
after any earlier memgit call). Then `python -m memgit.hookrun claude session-start` runs
as a subprocess with a SessionStart payload on stdin, R times after one warm-up, each run a
new session (a fresh known set); the figure is the median wall time from spawn to exit
(its output is complete then). Baseline: `python -c pass`, the interpreter's own start.

- keywords only: MEMGIT_INDEX_EMBEDDER=none;
- with vectors: the bundled MiniLM, its warm embedder process allowed (started by the
  warm-up call, as by the first CLI call of a day).

Targets: ≤ 150 ms keyword-only, ≤ 300 ms with the warm embedder. Standard library and memgit only.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, this folder comes first on sys.path, and its secrets.py would hide the
# standard library's: import speed.py by path instead.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
_spec = importlib.util.spec_from_file_location("speed", HERE / "speed.py")
speed = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(speed)  # type: ignore[union-attr]
Generator, git, make_repo = speed.Generator, speed.git, speed.make_repo
validity = speed.validity
require = validity.require


def one(payload: str, env: dict[str, str], cwd: Path, pinned: list[str]) -> tuple[float, int]:
    """One hook run: wall seconds and bytes of output. A hook fails open (exit 0, nothing said),
    so a broken one would time fast: the run counts only if it exited 0, said nothing on
    stderr and gave the session pinned memories."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memgit.hookrun", "claude", "session-start"],
        input=payload.encode(),
        env=env,
        cwd=cwd,
        capture_output=True,
        check=False,
    )
    wall = time.perf_counter() - start
    stderr = done.stderr.decode(errors="replace")[-300:]
    require(done.returncode == 0, f"the session-start hook exited {done.returncode}: {stderr}")
    require(not done.stderr, f"the session-start hook wrote to stderr: {stderr}")
    try:
        context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        raise validity.InvalidRun(f"the session-start hook gave no context: {done.stdout[:200]!r}") from None
    # The context has a token budget: it holds some of the pinned memories, never none.
    require(any(title in context for title in pinned),
            "the session-start context holds none of the pinned memories")
    return wall, len(done.stdout)


def measure(repo: Path, env: dict[str, str], runs: int, pinned: list[str]) -> tuple[float, int]:
    times, size = [], 0
    for i in range(runs + 1):
        payload = json.dumps(
            {
                "session_id": f"bench-{i}-{time.time_ns()}",
                "transcript_path": None,
                "cwd": str(repo),
                "hook_event_name": "SessionStart",
                "source": "startup",
            }
        )
        wall, size = one(payload, env, repo, pinned)
        if i:
            times.append(wall * 1000)
    return statistics.median(times), size


def main() -> int:
    return validity.refuse_on_invalid(measure_all, "hooks")


def measure_all() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--vectors", choices=["none", "minilm", "both"], default="both")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="memgit-hooks-") as tmp:
        repo = Path(tmp) / "repo"
        gen = Generator(args.size)
        memories = [gen.memory(i) for i in range(args.size)]
        names = make_repo(repo, args.size, memories)
        pinned = []
        for m in memories[:10]:  # the generator's files have no `pinned`: add it by hand
            path = repo / ".memory" / names[m["id"]]
            path.write_text(path.read_text().replace("\n---\n", "\npinned: true\n---\n", 1))
            pinned.append(m["title"])
        git(repo, "commit", "-q", "-am", "pin 10 memories")
        git(repo, "checkout", "-q", "-b", "fix/session-timeout-retry")
        (repo / "src").mkdir()
        for name in ("session.py", "retry.py"):
            (repo / "src" / name).write_text("def handler(request):\n    return request\n")
        # A bytecode cache, as an installed package has (PYTHONDONTWRITEBYTECODE would make
        # every run compile memgit's modules again).
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("MEMGIT_") and k != "PYTHONDONTWRITEBYTECODE"
        }
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        base = statistics.median(1000 * one_pass(env) for _ in range(args.runs))
        print(f"python -c pass: {base:.0f} ms")
        modes = ["none", "minilm"] if args.vectors == "both" else [args.vectors]
        for mode in modes:
            run_env = dict(env, MEMGIT_INDEX_EMBEDDER=mode)
            import memgit

            os.environ["MEMGIT_INDEX_EMBEDDER"] = mode
            mem = memgit.open(repo, warn=lambda message: None)
            mem.reindex()  # the index exists, as after any call
            if mode != "none":
                status = mem.status()
                require(status["vectors_on"], f"vectors did not load: {status.get('vectors_reason')}")
            mem.close()
            median, size = measure(repo, run_env, args.runs, pinned)
            if mode != "none":  # the warm-up run started the warm embedder; the label says it was used
                require(speed.warm_answers(mode), "the warm embedder server never answered")
            label = "keywords only" if mode == "none" else "MiniLM, warm embedder"
            target = 150 if mode == "none" else 300
            print(
                f"session-start hook, {args.size} memories, {label}: {median:.0f} ms median "
                f"({median / base:.1f}x python start; target {target} ms); {size} bytes of output"
            )
    return 0


def one_pass(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=False)
    return time.perf_counter() - start


if __name__ == "__main__":
    sys.exit(main())
