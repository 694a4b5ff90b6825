"""A memory's body comes back as it was written: the indentation of its first line included.

A body that starts with indented code (`    return x`) or a list item nested under another
must not lose that indentation anywhere memgit writes or reads it: `remember` (CLI, API), the
file writer (`dump`), the reader (`lenient.check`), the surgical patcher (`edit`, `update`),
the merge driver git runs, and the index recall reads. Only blank lines before a body and
whitespace after it are dropped.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import memgit
from memgit.memory import format as fmt
from memgit.memory import lenient
from memgit.memory.format import Memory

from .conftest import git

CODE = "    def parse(path):\n        return Config(path)\n\nCallers unpack it."
NESTED = "  - nested under the list above\n  - and its sibling\n\nEnd."


def file_of(repo: Path, memory_id: str) -> Path:
    suffix = memory_id.removeprefix("m-")
    (path,) = [p for p in (repo / ".memory").rglob("*.md") if p.stem.endswith(suffix)]
    return path


def test_remember_on_the_command_line_keeps_the_first_lines_indentation(repo: Path,
                                                                        mem: memgit.Memgit) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memgit", "remember", "--title", "parse returns a Config"],
        input="\n\n" + CODE + "\n\n", cwd=repo, capture_output=True, text=True, check=False,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    memory_id = done.stdout.strip()
    text = file_of(repo, memory_id).read_text(encoding="utf-8")
    assert text.endswith("---\n\n" + CODE + "\n")
    assert mem.get(memory_id).body == CODE
    assert mem.index.memory(memory_id).body == CODE  # what recall shows and searches


def test_remember_with_the_title_on_the_first_line(repo: Path, mem: memgit.Memgit) -> None:
    result = mem.remember("Deploy steps\n" + NESTED)
    assert result.memory.title == "Deploy steps"
    assert result.memory.body == NESTED
    assert file_of(repo, result.memory.id).read_text(encoding="utf-8").endswith("---\n\n" + NESTED + "\n")
    assert mem.get(result.memory.id).body == NESTED
    hits = mem.recall("nested sibling")
    assert [h.id for h in hits] == [result.memory.id]
    assert mem.index.memory(result.memory.id).body == NESTED


def test_the_mcp_remember_tool_keeps_the_first_lines_indentation(repo: Path, mem: memgit.Memgit) -> None:
    from .test_mcpserver import data, session  # the SDK's own client over real stdio

    async def steps(client: Any) -> Any:
        made = data(await client.call_tool("remember", {"text": CODE, "title": "parse returns a Config"}))
        shown = data(await client.call_tool("show", {"ref": made["id"]}))
        return made["id"], shown["body"]

    memory_id, shown = session(repo, steps)
    assert shown == CODE
    assert file_of(repo, memory_id).read_text(encoding="utf-8").endswith("---\n\n" + CODE + "\n")


def test_an_edit_and_an_update_keep_the_body(repo: Path, mem: memgit.Memgit) -> None:
    made = mem.remember(CODE, title="parse returns a Config").memory
    mem.update(made.id, confidence=0.5, tags=["config"])
    assert mem.get(made.id).body == CODE
    path = file_of(repo, made.id)
    assert path.read_text(encoding="utf-8").endswith("\n\n" + CODE + "\n")
    changed = path.read_text(encoding="utf-8").replace("Callers unpack it.", "Callers unpack both.")
    edited = mem.edit_text(made.id, changed)
    assert edited is not None and edited.body == CODE.replace("unpack it", "unpack both")
    assert path.read_text(encoding="utf-8").endswith(
        "\n\n    def parse(path):\n        return Config(path)\n\nCallers unpack both.\n")


def test_a_file_written_by_an_older_memgit_reads_and_writes_as_before() -> None:
    # What memgit wrote before bodies kept their first line's indentation: it had stripped it.
    old = ("---\nid: m-abc123\ntitle: parse returns a Config\nkind: fact\nconfidence: 0.9\nsource: user\n"
           "created: 2026-11-01T10:00:00+00:00\nupdated: 2026-11-01T10:00:00+00:00\n---\n\n"
           "def parse(path):\n        return Config(path)\n\n---\n\nAfter a rule.\n")
    memory, problems = lenient.check(old, "parse-returns-a-config-abc123.md")
    assert problems == [] and memory is not None
    assert memory.body == "def parse(path):\n        return Config(path)\n\n---\n\nAfter a rule."
    assert fmt.dump(memory) == old


def test_a_hand_written_file_without_front_matter_keeps_its_text() -> None:
    # Two `---` rules in a file without front-matter are rules, not a front-matter block.
    text = "# Release notes\n\nBuild first.\n\n---\n\nthen: tag\n\n---\n\n    make release\n"
    memory, problems = lenient.check(text, "release.md")
    assert memory is not None and problems == []
    assert memory.title == "Release notes"
    assert memory.body == text.rstrip()
    indented = "    make release\nfrom the root\n"
    memory, _ = lenient.check(indented, "make.md")
    assert memory is not None and memory.body == indented.rstrip()


def test_the_merge_driver_keeps_the_indentation_and_the_index_agrees(repo: Path, mem: memgit.Memgit) -> None:
    start = mem.remember(CODE, title="parse returns a Config").memory
    path = file_of(repo, start.id)
    git(repo, "branch", "feature")
    mem.update(start.id, tags=["ours"])
    git(repo, "switch", "-q", "feature")
    text = path.read_text(encoding="utf-8").replace("Callers unpack it.", "Callers unpack it twice.")
    path.write_text(text, encoding="utf-8")
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "switch", "-q", "main")
    done = subprocess.run(["git", "merge", "--no-edit", "feature"], cwd=repo, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    merged, problems = lenient.check(path.read_bytes(), path.name)
    assert problems == [] and merged is not None
    assert merged.body == CODE.replace("unpack it.", "unpack it twice.")
    assert merged.tags == ("ours",)
    assert fmt.dump(merged) == path.read_text(encoding="utf-8")
    fresh = memgit.open(repo, warn=lambda message: None)
    assert [h.id for h in fresh.recall("unpack twice")] == [start.id]  # recall brings the index up to date
    assert fresh.index.memory(start.id).body == merged.body


# -- the property: write -> read -> write is byte-stable ----------------------------------

LINES = st.lists(
    st.one_of(
        st.text(alphabet=" \tab-#:`*>|", max_size=12),
        st.sampled_from(["---", "----", "  ---", "\t- item", "    return x", "key: value", "```", "", "  "]),
    ),
    min_size=1, max_size=6,
)


@settings(max_examples=200, deadline=None)
@given(lines=LINES, crlf=st.booleans(), lead=st.sampled_from(["", "\n", "  \n", "\n\t\n"]))
def test_a_body_round_trips(lines: list[str], crlf: bool, lead: str) -> None:
    body = lead + "\n".join(lines)
    memory = Memory(id="m-abc123", title="a title", body=body.replace("\n", "\r\n") if crlf else body,
                    created="2026-11-01T10:00:00+00:00", updated="2026-11-01T10:00:00+00:00")
    written = fmt.dump(memory)
    read, problems = lenient.check(written, "a-title-abc123.md")
    assert read is not None and problems == []
    expected = re.sub(r"\A(?:[ \t]*\n)+", "", body).rstrip()  # only blank lines before and the end go
    assert read.body == expected  # CRLF is read as LF
    assert fmt.dump(read) == fmt.dump(replace(memory, body=read.body))
    again, _ = lenient.check(fmt.dump(read), "a-title-abc123.md")
    assert again == read
    if crlf:
        as_crlf = written.replace("\n", "\r\n").replace("\r\r\n", "\r\n")
        crlf_read, _ = lenient.check(as_crlf, "a-title-abc123.md")
        assert crlf_read is not None and crlf_read.body == read.body
