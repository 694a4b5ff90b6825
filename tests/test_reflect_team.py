"""reflect used by a team and against a hostile branch: the "no" a revert or a person writes,
what a forged history can and cannot do, and what the MCP server answers within its budget."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import memgit

from .conftest import git


def memgit_cli(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "memgit", *args], cwd=repo, capture_output=True, text=True)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def mcp_call(repo: Path, tool: str, arguments: dict[str, Any]) -> Any:
    """One call of `tool` through the MCP SDK's client over real stdio."""
    pytest.importorskip("mcp")
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "memgit", "mcp"], cwd=str(repo),
                                   env=dict(os.environ))

    async def main() -> Any:
        async with Client(params) as client:
            return await client.call_tool(tool, arguments)

    return anyio.run(main)


def test_an_answer_cut_to_the_budget_keeps_what_fits(repo: Path, mem: memgit.Memgit) -> None:
    """A memory whose body alone is over `[mcp] max_bytes`: `show` cuts the body and keeps the
    id, title and the other small fields, rather than cutting everything."""
    made = mem.remember("A long note. " + "word " * 14_000, title="A very long note", force=True)
    result = mcp_call(repo, "show", {"ref": made.memory.id})
    assert result.is_error is False
    shown = result.structured_content
    assert shown["id"] == made.memory.id and shown["title"] == "A very long note"
    assert shown["body"].startswith("A long note. word")
    assert shown["truncated"]["cut"] == {"body": shown["truncated"]["cut"]["body"]}
    assert len(__import__("json").dumps(shown, ensure_ascii=False).encode("utf-8")) <= 60_000
