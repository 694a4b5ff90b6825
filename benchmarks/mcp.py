#!/usr/bin/env python3
"""Recall latency through `memgit mcp`, measured by the MCP SDK's own client over stdio.

    python benchmarks/mcp.py [--size 10000] [--queries 60] [--vectors none|stand-in|both]

Builds a temporary repository of N generated memories (benchmarks/speed.py's generator),
indexes it, starts `memgit mcp` as a subprocess and times each `recall` tool call from the
client's side (request written to the reply parsed: JSON-RPC, the server's validation, the
recall, the JSON result), after 5 warm-up calls. Baseline: the same queries through
`memgit.open(repo).recall()` in this process (no protocol). With `stand-in`, memories have
seeded random vectors (benchmarks/standin_embedder.py) and every query is embedded by the
real MiniLM model, already loaded in the server. Target: p50 <= 10 ms at 10k memories.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != BENCH]
# Not this folder on sys.path: benchmarks/secrets.py would shadow the standard library's
# `secrets` (which the MCP SDK imports). The stand-in embedder gets a folder of its own.
_spec = importlib.util.spec_from_file_location("speed", BENCH / "speed.py")
speed = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules["speed"] = speed
_spec.loader.exec_module(speed)  # type: ignore[union-attr]
STANDIN, Generator, make_repo = speed.STANDIN, speed.Generator, speed.make_repo
validity, require = speed.validity, speed.require
PLUGINS = Path(tempfile.mkdtemp(prefix="memgit-bench-"))
shutil.copy(BENCH / "standin_embedder.py", PLUGINS)
sys.path.insert(0, str(PLUGINS))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def measure(repo: Path, queries: list[str], embedder: str) -> dict[str, float]:
    import anyio
    from mcp import Client, StdioServerParameters

    import memgit

    env = dict(os.environ, MEMGIT_INDEX_EMBEDDER=embedder, MEMGIT_INDEX_WARM="0", MEMGIT_INDEX_BACKGROUND="0",
               PYTHONPATH=os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")])))
    os.environ.update({k: env[k] for k in ("MEMGIT_INDEX_EMBEDDER", "MEMGIT_INDEX_WARM", "MEMGIT_INDEX_BACKGROUND")})
    with memgit.open(repo, warn=lambda m: None) as mem:
        mem.index.sync(embed="all")  # everything on a new store; nothing on one kept from a run before
        status = mem.status()
        require(embedder == "none" or status["vectors_on"],
                f"vectors did not load: {status.get('vectors_reason')}")
        for q in queries[:5]:
            mem.recall(q, record=False)
        local, found = [], 0
        for q in queries:
            start = time.perf_counter()
            found += bool(mem.recall(q))
            local.append((time.perf_counter() - start) * 1000)
        require(found > len(queries) // 2,
                f"in-process recall found nothing for {len(queries) - found} queries")
    params = StdioServerParameters(command=sys.executable, args=["-m", "memgit", "mcp"], cwd=str(repo), env=env)
    remote: list[float] = []
    answered: list[bool] = []

    async def main() -> None:
        async with Client(params) as client:
            for q in queries[:5]:
                await client.call_tool("recall", {"query": q})
            for q in queries:
                start = time.perf_counter()
                result = await client.call_tool("recall", {"query": q})
                remote.append((time.perf_counter() - start) * 1000)
                require(not result.is_error, f"the MCP recall failed: {result.content}")
                answered.append(bool(result.structured_content.get("hits")))

    anyio.run(main)
    require(sum(answered) > len(queries) // 2,
            f"the MCP recall found nothing for {answered.count(False)} queries")
    return {"mcp_p50": statistics.median(remote), "mcp_p95": pct(remote, 0.95),
            "local_p50": statistics.median(local), "local_p95": pct(local, 0.95)}


def main() -> int:
    return validity.refuse_on_invalid(measure_all, "mcp")


def measure_all() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--vectors", choices=["none", "stand-in", "both"], default="both")
    args = ap.parse_args()
    gen = Generator(args.size)
    memories = [gen.memory(i) for i in range(args.size)]
    queries = gen.queries(memories, args.queries)
    modes = ["none", "stand-in"] if args.vectors == "both" else [args.vectors]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        print(f"building {args.size} memories…", file=sys.stderr)
        make_repo(repo, args.size, memories)
        subprocess.run(["git", "config", "user.name", "bench"], cwd=repo, check=True)
        subprocess.run(["git", "config", "user.email", "bench@example.com"], cwd=repo, check=True)
        print(f"recall latency at {args.size} memories, {len(queries)} queries (ms; target: MCP p50 <= 10)")
        print(f"{'vectors':<10} {'MCP p50':>8} {'MCP p95':>8} {'in-process p50':>15} {'p95':>6} {'protocol cost':>14}")
        for mode in modes:
            r = measure(repo, queries, "none" if mode == "none" else STANDIN)
            print(f"{mode:<10} {r['mcp_p50']:>8.1f} {r['mcp_p95']:>8.1f} {r['local_p50']:>15.1f} "
                  f"{r['local_p95']:>6.1f} {r['mcp_p50'] / r['local_p50']:>13.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
