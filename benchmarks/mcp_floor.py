#!/usr/bin/env python3
"""The floor under `memgit mcp`'s recall: what the MCP SDK costs a call, and what is memgit's.

    nice -n 10 python benchmarks/mcp_floor.py --keep DIR [--size 10000] [--queries 40] [--runs 3]

DIR is an `agent_paths.py --keep DIR` folder holding `recall-<size>/` (a store of generated
memories, indexed, and its queries). Four servers, each timed by the SDK's own client over
stdio on the same queries (p50 of `--runs` passes, after 5 warm-up calls), keywords only:

- `bare, short text`: an MCPServer (the SDK's, as memgit builds it) whose one tool returns a
  short string: the protocol's own cost, request to parsed reply;
- `bare, a recall's answer`: the same, its tool returning a recall's answer recorded
  beforehand (the same ~10 KB dicts memgit returns, validated and sent twice, as data and
  as text): the protocol's cost for memgit's answer;
- `memgit mcp`: the real server;
- and, inside memgit's server, `Memgit.recall` alone and the tool's own code around it
  (the answer's dicts and the byte-budget check), timed in that process.

memgit mcp minus `bare, a recall's answer` is memgit's recall and tool code; the bare rows are
the SDK's. Standard library, memgit and the MCP SDK.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# Not this folder on sys.path: benchmarks/secrets.py would shadow the standard library's
# `secrets`, which the MCP SDK imports.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

BARE = '''
import json, sys
from typing import Any
from mcp.server.mcpserver import MCPServer
ANSWERS = json.load(open(sys.argv[1]))
server = MCPServer("bare")
calls = [0]

@server.tool()
def short(query: str) -> str:
    """A short text."""
    return "nothing relevant found"

@server.tool()
def recall(query: str) -> dict[str, Any]:
    """A recall's answer, recorded beforehand."""
    calls[0] += 1
    return ANSWERS[calls[0] % len(ANSWERS)]

server.run("stdio")
'''

#: Run as the server: memgit's own, with `Memgit.recall` and the tool around it timed.
TIMED = '''
import atexit, json, sys, time
from memgit import mcpserver
from memgit.api import Memgit
spent = {"recall": [], "tool": []}
recall, capped = Memgit.recall, mcpserver.capped

def timed_recall(self, *args, **kwargs):
    start = time.perf_counter()
    try:
        return recall(self, *args, **kwargs)
    finally:
        spent["recall"].append(time.perf_counter() - start)

def timed_capped(result, *args):
    start = time.perf_counter()
    try:
        return capped(result, *args)
    finally:
        spent["tool"].append(time.perf_counter() - start)

Memgit.recall, mcpserver.capped = timed_recall, timed_capped
atexit.register(lambda: open(sys.argv[1], "w").write(json.dumps(spent)))
mcpserver.serve(".")
'''


def answers(repo: Path, queries: list[str]) -> list[dict[str, Any]]:
    """What memgit's `recall` tool answers each query (its dict, as `memgit.mcpserver` builds it)."""
    import memgit

    out = []
    with memgit.open(repo, warn=lambda message: None) as mem:
        for q in queries:
            found = mem.recall(q, record=False)
            how = found.how.to_dict() if found.how is not None else None
            out.append({"hits": [hit.to_dict() for hit in found],
                        **({"vectors": how["vectors"], "how": how} if how else {})})
    return out


def timed(repo: Path, args: list[str], tool: str, queries: list[str], runs: int, env: dict[str, str]) -> float:
    """p50 ms of `tool` over `runs` passes of `queries`, through the SDK's client."""
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(repo), env=env)
    times: list[float] = []

    async def main() -> None:
        async with Client(params) as client:
            for q in queries[:5]:
                await client.call_tool(tool, {"query": q})
            for _ in range(runs):
                for q in queries:
                    start = time.perf_counter()
                    result = await client.call_tool(tool, {"query": q})
                    times.append((time.perf_counter() - start) * 1000)
                    if result.is_error:
                        raise SystemExit(f"{tool} failed: {result.content}")

    anyio.run(main)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", required=True, metavar="DIR", help="an agent_paths.py --keep folder")
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    folder = Path(args.keep) / f"recall-{args.size}"
    repo = folder / "repo"
    if not (folder / "queries.json").is_file() or not repo.is_dir():
        ap.error(f"{folder} holds no kept store: run agent_paths.py --only recall --recall-size {args.size} "
                 f"--keep {args.keep} first")
    queries = json.loads((folder / "queries.json").read_text())[: args.queries]
    os.environ.update(MEMGIT_INDEX_EMBEDDER="none", MEMGIT_INDEX_WARM="0", MEMGIT_INDEX_BACKGROUND="0")
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="memgit-mcp-floor-") as tmp:
        recorded, bare, inside = Path(tmp) / "answers.json", Path(tmp) / "bare.py", Path(tmp) / "spent.json"
        recorded.write_text(json.dumps(answers(repo, queries)))
        bare.write_text(BARE)
        timing = Path(tmp) / "timed.py"
        timing.write_text(TIMED)
        rows = [("bare, short text", timed(repo, [str(bare), str(recorded)], "short", queries, args.runs, env)),
                ("bare, a recall's answer", timed(repo, [str(bare), str(recorded)], "recall", queries, args.runs,
                                                  env)),
                ("memgit mcp", timed(repo, [str(timing), str(inside)], "recall", queries, args.runs, env))]
        spent = json.loads(inside.read_text())
    recall_ms = statistics.median(spent["recall"]) * 1000
    tool_ms = statistics.median(spent["tool"]) * 1000
    print(f"MCP recall's floor at {args.size} memories, keywords only, {len(queries)} queries x {args.runs} "
          f"(p50 ms; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    for label, value in rows:
        print(f"{label:<40} {value:7.2f}")
    print(f"{'  in memgit mcp: Memgit.recall':<40} {recall_ms:7.2f}")
    print(f"{'  in memgit mcp: the byte-budget check':<40} {tool_ms:7.2f}")
    sdk = rows[1][1]
    print(f"memgit's share (memgit mcp - bare, a recall's answer): {rows[2][1] - sdk:.2f} ms; "
          f"the SDK's: {sdk:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
