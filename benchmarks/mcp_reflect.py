#!/usr/bin/env python3
"""The size of `reflect` through `memgit mcp`, page by page, measured by the MCP SDK's client.

    python benchmarks/mcp_reflect.py [--size 2000] [--page-size 20] [--pages 5]

Builds a temporary repository of N generated memories (benchmarks/speed.py's generator, no
vectors), starts `memgit mcp` and asks `reflect` for its first page, then walks the next pages
by their cursors (at most `--pages` in all). Baseline: the one answer `reflect` gave before it had pages (every proposal with
its files' texts and the whole diff), built in this process from the same reflection. Prints
the bytes of a page against that baseline, and the time of a page against an in-process
`reflect`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != BENCH]
# Not this folder on sys.path: benchmarks/secrets.py would shadow the standard library's `secrets`.
sys.path.insert(0, str(BENCH))  # this folder for this one import only
import validity  # noqa: E402
sys.path.pop(0)
speed = validity.load("speed")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=2000)
    ap.add_argument("--page-size", type=int, default=20)
    ap.add_argument("--pages", type=int, default=5)
    args = ap.parse_args()
    import anyio
    from mcp import Client, StdioServerParameters

    import memgit

    env = dict(os.environ, MEMGIT_INDEX_EMBEDDER="none", MEMGIT_INDEX_WARM="0", MEMGIT_INDEX_BACKGROUND="0")
    os.environ.update({k: env[k] for k in ("MEMGIT_INDEX_EMBEDDER", "MEMGIT_INDEX_WARM", "MEMGIT_INDEX_BACKGROUND")})
    gen = speed.Generator(args.size)
    memories = [gen.memory(i) for i in range(args.size)]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        print(f"building {args.size} memories…", file=sys.stderr)
        speed.make_repo(repo, args.size, memories)
        for key, value in (("user.name", "bench"), ("user.email", "bench@example.com")):
            subprocess.run(["git", "config", key, value], cwd=repo, check=True)
        with memgit.open(repo, warn=lambda m: None) as mem:
            mem.reflect()  # the index built once, as the server's would be
            start = time.perf_counter()
            found = mem.reflect().reflection
            local = time.perf_counter() - start
            before = len(json.dumps({**found.to_dict(), "diff": found.diff()}, ensure_ascii=False).encode())
        params = StdioServerParameters(command=sys.executable, args=["-m", "memgit", "mcp"], cwd=str(repo),
                                       env=env)
        sizes: list[int] = []
        times: list[float] = []

        async def walk() -> None:
            async with Client(params) as client:
                await client.call_tool("list_topics", {})  # the store opened and indexed
                cursor = None
                while True:
                    call: dict[str, object] = {"page_size": args.page_size, **({"cursor": cursor} if cursor else {})}
                    start = time.perf_counter()
                    result = await client.call_tool("reflect", call)
                    times.append(time.perf_counter() - start)
                    assert not result.is_error, result.content
                    page = result.structured_content or {}
                    sizes.append(len(json.dumps(page, ensure_ascii=False).encode()))
                    cursor = page.get("next_cursor")
                    if not cursor or len(sizes) >= args.pages:
                        break

        anyio.run(walk)
    print(f"reflect over MCP at {args.size} memories: {len(found.proposals)} proposals, "
          f"{len(sizes)} page(s) of at most {args.page_size}")
    print(f"  before (one answer):    {before:>10,} bytes; in-process reflect {local:.2f} s")
    print(f"  first page:             {sizes[0]:>10,} bytes ({sizes[0] / before:.4f}x), {times[0]:.2f} s "
          f"({times[0] / local:.2f}x in-process)")
    if len(sizes) > 1:
        later = sorted(times[1:])[len(times[1:]) // 2]
        print(f"  next pages (median):    {later:.2f} s ({later / local:.3f}x in-process: the first run reused)")
    print(f"  largest page:           {max(sizes):>10,} bytes")


if __name__ == "__main__":
    main()
