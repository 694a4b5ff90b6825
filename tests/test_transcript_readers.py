"""One transcript reader for capture and checkpoints: a reader per format in a registry, one
noise list, one exit-code parser; what a checkpoint reads is a view over the same events."""

from __future__ import annotations

import json
import pkgutil
from pathlib import Path

import pytest

from memgit.agents import agentlog, checkpoint, readers, transcripts

from .conftest import ROOT

DATA = ROOT / "tests" / "data" / "transcripts"
FORMATS = {"claude-session.jsonl": "claude", "claude-subagents.jsonl": "claude",
           "codex-rollout.jsonl": "codex", "codex-legacy.jsonl": "codex", "chat-log.md": "chat",
           "aider.chat.history.md": "aider", "chinese-chat.txt": "chat", "plain-session.txt": "chat"}


def lines(path: Path, *records: dict[str, object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def codex_run(output: str) -> list[dict[str, object]]:
    return [
        {"type": "session_meta", "payload": {"id": "s1", "cwd": "/work/app"}},
        {"type": "event_msg", "payload": {"type": "user_message", "message": "make the tests pass"}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command",
                                              "arguments": json.dumps({"cmd": "pytest -q"}),
                                              "call_id": "c1"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1",
                                              "output": output}},
    ]


def test_every_reader_module_is_in_the_registry() -> None:
    shared = {"reader", "noise", "exitcode", "toolcall", "questions", "markdown"}
    modules = {m.name for m in pkgutil.iter_modules(readers.__path__)} - shared
    assert modules == {r.__name__.rpartition(".")[2] for r in transcripts.READERS}  # type: ignore[attr-defined]
    assert len({r.FORMAT for r in transcripts.READERS}) == len(transcripts.READERS)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_capture_and_checkpoint_read_a_file_alike(name: str) -> None:
    """`read` (capture) and `tail` (a hook) give the same events for a file under the limit."""
    whole = transcripts.read(DATA / name)
    tail = transcripts.tail(DATA / name)
    assert whole.format == FORMATS[name] and tail is not None
    assert (tail.format, tail.events, tail.skipped) == (whole.format, whole.events, whole.skipped)


def test_the_tail_of_a_long_transcript_starts_at_a_whole_line(tmp_path: Path) -> None:
    records = [{"type": "user", "sessionId": "s", "message": {"content": f"request {i} " + "x" * 200}}
               for i in range(40)]
    path = lines(tmp_path / "long.jsonl", *records)
    tail = transcripts.tail(path, limit=1000)
    assert tail is not None and tail.format == "claude" and tail.skipped == 0
    assert [e.text.split()[1] for e in tail.events] == ["37", "38", "39"]
    assert agentlog.read(path).prompts[-1].startswith("request 39 ")


def test_a_codex_failure_stated_as_exit_code_colon_is_a_dead_end(mem, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    output = "Exit code: 1\nWall time: 0.4 seconds\nOutput:\nFAILED tests/test_a.py::test_x - assert 1 == 2\n"
    path = lines(tmp_path / "rollout.jsonl", *codex_run(output))
    made = checkpoint.write(mem.workspace, task="T-1", transcript=str(path))
    dead_end = "- dead end: tried `pytest -q` — failed: FAILED tests/test_a.py::test_x - assert 1 == 2"
    assert dead_end in made.body
    assert "- ran:" not in made.body


def test_a_passing_command_that_prints_error_lines_is_no_dead_end(tmp_path: Path) -> None:
    path = lines(tmp_path / "rollout.jsonl", *codex_run("Exit code: 0\nOutput:\nerror: nothing, all good\n"))
    assert [(a.kind, a.target, a.error) for a in agentlog.read(path).actions] == [("run", "pytest -q", None)]


def test_what_the_agent_put_in_the_users_turn_is_not_a_request(tmp_path: Path) -> None:
    path = lines(
        tmp_path / "session.jsonl",
        {"type": "user", "sessionId": "s", "message": {"content": [
            {"type": "text", "text": "<ide_selection>def f(): pass</ide_selection>"},
            {"type": "text", "text": "rename f to parse"}]}},
        {"type": "user", "sessionId": "s",
         "message": {"content": "## Memories recalled by memgit\n\n### Use ruff"}},
        {"type": "user", "sessionId": "s",
         "message": {"content": "<system-reminder>be brief</system-reminder>"}},
    )
    assert agentlog.read(path).prompts == ["rename f to parse"]
    assert [e.text for e in transcripts.read(path).events if e.role == "user"] == ["rename f to parse"]


def test_reads_and_delegations_are_actions_with_their_targets(tmp_path: Path) -> None:
    calls = [("Read", {"file_path": "src/a.py"}), ("Grep", {"pattern": "def parse"}),
             ("WebFetch", {"url": "https://docs.example/x"}),
             ("Task", {"description": "Find callers", "prompt": "…"}),
             ("Bash", {"command": "make test\nmake lint"}), ("TodoWrite", {"todos": []})]
    blocks = [{"type": "tool_use", "id": f"t{i}", "name": name, "input": data}
              for i, (name, data) in enumerate(calls)]
    path = lines(tmp_path / "session.jsonl",
                 {"type": "assistant", "sessionId": "s", "message": {"content": blocks}})
    assert [(a.kind, a.target) for a in agentlog.read(path).actions] == [
        ("read", "src/a.py"), ("read", "def parse"), ("read", "https://docs.example/x"),
        ("delegate", "Find callers"), ("run", "make test"), ("other", "TodoWrite")]


@pytest.mark.parametrize("content", [b"", b"\0\1\2", b"plain words, no turns\n"])
def test_a_file_in_no_format_is_no_log(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    assert transcripts.tail(path) is None and agentlog.read(path) == agentlog.Log()
    assert agentlog.read(tmp_path / "missing.jsonl") == agentlog.Log()
    assert agentlog.read(None) == agentlog.Log()


def test_a_heading_in_a_chat_logs_reply_is_no_aider_turn(tmp_path: Path) -> None:
    path = tmp_path / "log.md"
    path.write_text("### Human\n\nHow do I release?\n\n### Assistant\n\n#### Steps\n\nTag and push.\n")
    transcript = transcripts.read(path)
    assert transcript.format == "chat"
    assert [(e.role, e.text) for e in transcript.events] == [
        ("user", "How do I release?"), ("assistant", "#### Steps\n\nTag and push.")]


def test_an_aider_history_without_its_first_line_is_still_aider(tmp_path: Path) -> None:
    path = tmp_path / "history.md"
    path.write_text("#### use uv, not pip  \n\nNoted.\n\n> Applied edit to README.md  \n")
    transcript = transcripts.read(path)
    assert transcript.format == "aider"
    assert [(e.role, e.text) for e in transcript.events] == [("user", "use uv, not pip"),
                                                             ("assistant", "Noted."),
                                                             ("tool_call", "README.md")]  # the edit applied


@pytest.mark.parametrize("name", ["codex-rollout.jsonl", "claude-session.jsonl"])
def test_a_first_line_longer_than_the_sniffed_head_is_read(tmp_path: Path, name: str) -> None:
    # Current Codex rollouts open with a `session_meta` line of 15–22 KB (it carries the model's
    # `base_instructions`); a Claude Code file can open with a long summary line.
    lines = (DATA / name).read_text().splitlines()
    first = json.loads(lines[0])
    (first.get("payload") if isinstance(first.get("payload"), dict) else first)["base_instructions"] = (
        "You are a coding agent. " * 1000)  # about 24 KB
    path = tmp_path / name
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    long_first = transcripts.read(path)
    assert long_first.format == transcripts.read(DATA / name).format
    assert [e.text for e in long_first.events] == [e.text for e in transcripts.read(DATA / name).events]


def test_two_records_on_one_line_are_both_read(tmp_path: Path) -> None:
    """A write that lost its newline leaves two JSON records on one line: every JSON-lines
    reader reads both, and a torn record after them is skipped and counted."""
    first = {"type": "user", "sessionId": "s", "uuid": "1", "message": {"role": "user", "content": "Always pin deps."}}
    second = {"type": "assistant", "sessionId": "s", "uuid": "2", "message": {"role": "assistant",
                                                                              "content": [{"type": "text", "text": "Noted."}]}}
    path = tmp_path / "joined.jsonl"
    path.write_text(json.dumps(first) + json.dumps(second) + '{"type": "us\n', encoding="utf-8")
    transcript = transcripts.read(path)
    assert [(e.role, e.text) for e in transcript.events] == [("user", "Always pin deps."), ("assistant", "Noted.")]
    assert transcript.skipped == 1
