"""What reflect gives the people and agents reading it: `--check` that fails CI only for a
proposed change, MCP answers in pages within a byte budget, a progress bar on a terminal,
and `stats` counting the explanations a user had to repeat (`restated.jsonl`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

import memgit
from memgit.cli import cli
from memgit.git import localstate


def run(repo: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["-C", str(repo), *args], catch_exceptions=False)


# -- reflect --check ---------------------------------------------------------------------------


def test_check_passes_on_notes_for_a_person_and_strict_fails_on_them(repo: Path, mem: memgit.Memgit) -> None:
    # A vague title is a hygiene note: reflect proposes no change, a person may look at it.
    run(repo, "remember", "Some thoughts about the parser and its error recovery.", "--title", "Notes")
    result = run(repo, "reflect", "--check")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("## memgit reflect: 0 change(s) proposed, 1 for a person to review\n")
    result = run(repo, "reflect", "--check", "--strict")
    assert result.exit_code == 1
    assert "reflect --check --strict: 1 note(s) for a person to review" in result.stderr
    result = run(repo, "reflect", "--strict")
    assert result.exit_code == 1 and "--strict goes with --check" in result.stderr

    # Two memories that say the same thing: a merge is a proposed change, and fails --check.
    run(repo, "remember", "The parser recovers from a syntax error by skipping to the next statement.",
        "--title", "Parser error recovery skips to the next statement")
    run(repo, "remember", "The parser recovers from a syntax error by skipping to the next statement!",
        "--title", "Parser error recovery: skip to the next statement", "--source", "inferred")
    result = run(repo, "reflect", "--check")
    assert result.exit_code == 1, result.output
    assert "reflect --check: 1 change(s) proposed" in result.stderr


# -- MCP: reflect in pages, every answer within a byte budget ----------------------------------

TOPICS = [("cache key", "locale"), ("retry budget", "backoff"), ("upload size", "megabytes"),
          ("session cookie", "httponly"), ("log rotation", "weekly"), ("queue depth", "hundred"),
          ("thread pool", "sixteen")]


def _pairs(topics: list[tuple[str, str]], prefix: str = "p") -> list[str]:
    """Two memories per topic that say the same thing: reflect proposes one merge each."""
    lines = []
    for n, (topic, word) in enumerate(topics):
        for side in "ab":
            lines.append(json.dumps({
                "id": f"m-{prefix}{n}{side}",
                "title": f"The {topic} uses the {word} setting" + (" always" if side == "b" else ""),
                "body": f"The {topic} in this service depends on the {word} setting; change both together."
                        + (" Keep it so." if side == "b" else ""),
                "source": "user" if side == "a" else "inferred",
                "created": "2026-11-20T10:00:00+00:00",
            }))
    return lines


def _import(repo: Path, lines: list[str]) -> None:
    source = repo.parent / "import.jsonl"
    source.write_text("\n".join(lines) + "\n")
    result = run(repo, "import", str(source))
    assert result.exit_code == 0, result.output


def _mcp(repo: Path, steps: Any, **env: str) -> Any:
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "memgit", "mcp"], cwd=str(repo),
                                   env={**os.environ, **env})

    async def main() -> Any:
        async with Client(params) as client:
            return await steps(client)

    return anyio.run(main)


def _data(result: Any) -> Any:
    assert result.is_error is False, result.content
    return result.structured_content


def _error(result: Any) -> str:
    assert result.is_error is True
    return str(result.content[0].text)


def test_mcp_reflect_answers_in_pages_and_refuses_a_stale_cursor(repo: Path, mem: memgit.Memgit) -> None:
    import pytest

    pytest.importorskip("mcp")
    _import(repo, _pairs(TOPICS))
    whole = json.loads(run(repo, "reflect", "--json").stdout)["proposals"]
    assert len(whole) == 7 and {p["kind"] for p in whole} == {"merge"}
    limit = 6000

    async def steps(client: Any) -> tuple[list[dict[str, Any]], str, str, Any]:
        got: list[dict[str, Any]] = []
        cursor = None
        while True:
            args: dict[str, object] = {"page_size": 3, **({"cursor": cursor} if cursor else {})}
            answer = await client.call_tool("reflect", args)
            page = _data(answer)
            assert page["summary"] == {"proposals": 7, "changes": 7, "for_review": 0,
                                       "by_kind": {"merge": 7}, "malformed_files": 0}
            assert "truncated" not in page and 1 <= len(page["proposals"]) <= 3
            got.append(page)
            cursor = page["next_cursor"]
            if cursor is None:
                break
        first = _data(await client.call_tool("reflect", {"page_size": 3}))
        bad = _error(await client.call_tool("reflect", {"cursor": "page-2"}))
        # The store changes between two pages: the old cursor is refused, not read into a new list.
        _import(repo, _pairs([("build cache", "checksum")], prefix="q"))
        stale = _error(await client.call_tool(
            "reflect", {"cursor": first["next_cursor"], "page_size": 3}))
        again = _data(await client.call_tool("reflect", {"page_size": 3}))
        return got, bad, stale, again["summary"]

    pages, bad, stale, summary = _mcp(repo, steps, MEMGIT_MCP_MAX_BYTES=str(limit))
    # More than one page; each proposal exactly once, in the CLI's order.
    assert len(pages) >= 3
    numbers = [p["number"] for page in pages for p in page["proposals"]]
    assert numbers == list(range(1, 8))
    assert [p["ids"] for page in pages for p in page["proposals"]] == [p["ids"] for p in whole]
    assert all("text" not in json.dumps(p["files"]) for page in pages for p in page["proposals"])
    assert "not a cursor reflect gave" in bad
    assert "the memory store changed since this cursor was given" in stale and "without a cursor" in stale
    assert summary["proposals"] == 8
    assert all(len(json.dumps(page, ensure_ascii=False).encode()) <= limit for page in pages)
    # Each page's diff, applied in order, is the whole change; git accepts every one.
    for page in pages:
        for proposal in page["proposals"]:
            patch = repo.parent / "page.patch"
            patch.write_text(proposal["diff"])
            subprocess.run(["git", "apply", str(patch)], cwd=repo, check=True)
    left = sorted(memgit.open(repo, warn=lambda m: None).list(status=None), key=lambda m: m.id)
    assert [m.id for m in left] == sorted([p["ids"][0] for p in whole] + ["m-q0a", "m-q0b"])
    assert all(m.supersedes for m in left if m.id.startswith("m-p"))


def test_every_mcp_answer_stays_within_the_byte_budget_and_says_what_was_cut(
        repo: Path, mem: memgit.Memgit) -> None:
    import pytest

    pytest.importorskip("mcp")
    _import(repo, _pairs(TOPICS))

    async def steps(client: Any) -> tuple[Any, Any]:
        hits = _data(await client.call_tool(
            "recall", {"query": "which setting does the service depend on", "k": 14}))
        small = _data(await client.call_tool(
            "recall", {"query": "which setting does the cache key use", "k": 1}))
        return hits, small

    hits, small = _mcp(repo, steps, MEMGIT_MCP_MAX_BYTES="2000", MEMGIT_RECALL_MIN_SCORE="0")
    assert len(json.dumps(hits, ensure_ascii=False).encode()) <= 2000
    marker = hits["truncated"]
    assert marker["limit"] == 2000 and marker["bytes"] > 2000
    kept = len(hits["hits"])
    assert marker["cut"] == {"hits": f"{kept} of 14 items kept"} and 1 <= kept < 14
    assert "fewer memories (k)" in marker["ask"]
    assert "truncated" not in small and len(small["hits"]) == 1


# -- a progress bar on a terminal --------------------------------------------------------------


def _reflect_on(repo: Path, *args: str, tty: bool) -> tuple[str, str]:
    """Run `memgit reflect ARGS` as a person would: stderr a pseudo-terminal (`tty`) or a pipe.
    Returns (stdout, stderr)."""
    import pty

    command = [sys.executable, "-m", "memgit", "-C", str(repo), "reflect", *args]
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    if not tty:
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        return done.stdout, done.stderr
    master, slave = pty.openpty()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=slave, env=env) as process:
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the terminal's other end closed: the command has ended
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.stdout is not None
        out = process.stdout.read().decode()
    os.close(master)
    return out, b"".join(chunks).decode(errors="replace")


def test_a_progress_bar_on_a_terminal_only(repo: Path, mem: memgit.Memgit) -> None:
    _import(repo, _pairs(TOPICS[:2]))
    out, err = _reflect_on(repo, tty=True)
    assert out.startswith("## memgit reflect: 2 change(s) proposed")
    for stage in ("reading the store", "duplicates", "stale", "hygiene", "7/7"):
        assert stage in err
    assert "reflect  [" in err and "[" not in out.splitlines()[0]
    # Not in --json (stdout is for a program), and not when stderr is not a terminal.
    out, err = _reflect_on(repo, "--json", tty=True)
    assert json.loads(out)["proposals"] and "reflect  [" not in err and "duplicates" not in err
    out, err = _reflect_on(repo, tty=False)
    assert out.startswith("## memgit reflect: 2 change(s) proposed") and err == ""


# -- stats: how often the user had to explain again what memory held ---------------------------

SESSION = """# Session log

### Human

We use pnpm, not npm, in this repo. Don't run npm install; it rewrites package-lock.json.

### Assistant

Understood, I'll use pnpm from now on.

### Human

Please add a retry to the upload client.

### Assistant

Done: the upload client retries three times.
"""


def test_stats_counts_what_a_capture_found_the_user_explaining_again(repo: Path, mem: memgit.Memgit) -> None:
    result = run(repo, "remember", "Use pnpm, never npm", "--kind", "convention")
    assert result.exit_code == 0, result.output
    pnpm = result.stdout.strip()
    before = json.loads(run(repo, "stats", "--json").stdout)
    assert (before["restated"], before["restated_memories"], before["most_restated"]) == (0, 0, {})
    transcript = repo.parent / "session.md"
    transcript.write_text(SESSION)
    captured = json.loads(run(repo, "capture", str(transcript), "--json").stdout)
    assert [k["duplicate_of"] for k in captured["known"]] == [pnpm]
    for _ in range(2):  # the same session applied twice still counts once
        assert run(repo, "capture", str(transcript), "--apply").exit_code == 0
    # The log itself says it once: not once per planning, and not for the memory the first
    # capture of this session wrote.
    log = localstate.restated(repo / ".git")
    assert [json.loads(line)["memory"] for line in log.read_text().splitlines()] == [pnpm, pnpm]
    stats = json.loads(run(repo, "stats", "--json").stdout)
    assert (stats["restated"], stats["restated_memories"], stats["restated_sessions"]) == (1, 1, 1)
    assert stats["most_restated"] == {pnpm: 1}
    assert json.loads(run(repo, "stats", "--since", "1d", "--json").stdout)["restated"] == 1
    assert json.loads(run(repo, "stats", "--since", "2999-01-01", "--json").stdout)["restated"] == 0
    text = run(repo, "stats").stdout
    assert f"{'restated:':<24} 1\n" in text and f"{'most_restated:':<24} {{'{pnpm}': 1}}\n" in text
