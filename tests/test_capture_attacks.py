"""Capture against hostile and broken input: transcripts with records of the wrong shape, JSON nested
past Python's recursion limit, lines built to make a regular expression backtrack, a judge that
answers nonsense, pending proposals edited by hand. Nothing may crash, hang or write outside
the memory folder. Every transcript here is small and hand-written in its format's shape."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memgit.agents import transcripts
from memgit.agents.events import Event
from memgit.agents.readers.questions import choices
from memgit.agents.readers.toolcall import symbols
from memgit.capture import judge
from memgit.capture.decisions import decisions
from memgit.capture.extract import extract
from memgit.cli import cli


def write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


GEMINI_HEADER = {"sessionId": "g-1", "projectHash": "abc", "startTime": "2026-04-01T09:00:00Z",
                 "directories": ["/w"]}
GEMINI_USER = {"id": "m1", "type": "user", "timestamp": "2026-04-01T09:00:01Z",
               "content": [{"text": "We always use uv, never pip."}]}
PI_HEADER = {"type": "session", "version": 3, "id": "p-1", "timestamp": "2026-04-01T09:00:00Z", "cwd": "/w"}
PI_USER = {"type": "message", "id": "e1", "parentId": None, "timestamp": "2026-04-01T09:00:01Z",
           "message": {"role": "user", "content": [{"type": "text", "text": "We always use uv, never pip."}]}}
CODEX_META = {"timestamp": "2026-06-01T08:00:00Z", "type": "session_meta", "payload": {"id": "cx", "cwd": "/w"}}
CODEX_USER = {"timestamp": "2026-06-01T08:00:01Z", "type": "event_msg",
              "payload": {"type": "user_message", "message": "We always use uv, never pip."}}
EXPORT_USER = {"type": "message", "role": "user", "content": "We always use uv, never pip."}


@pytest.mark.parametrize("records", [
    [GEMINI_HEADER, GEMINI_USER, {"id": "m2", "type": "gemini", "content": "ok", "toolCalls": 7}],
    [GEMINI_HEADER, GEMINI_USER, {"id": "m2", "type": "gemini", "content": "ok", "toolCalls": True}],
    [{"type": "message", "role": "assistant", "content": "ok", "tool_calls": 3}, EXPORT_USER],
    [PI_HEADER, {"type": ["message"], "id": "x"}, PI_USER],
    [PI_HEADER, {"type": {"a": 1}, "id": "x"}, PI_USER],
    [CODEX_META, {"type": [], "payload": {}}, CODEX_USER],
    [{"type": {}, "payload": {}}, CODEX_META, CODEX_USER],
], ids=["gemini-toolcalls-int", "gemini-toolcalls-bool", "export-tool-calls-int", "pi-type-list",
        "pi-type-dict", "codex-type-list", "sniffed-type-dict"])
def test_a_field_of_the_wrong_type_is_skipped_not_fatal(tmp_path: Path, records: list[Any]) -> None:
    transcript = transcripts.read(write(tmp_path / "s.jsonl", records))
    assert [e.text for e in transcript.events if e.role == "user"] == ["We always use uv, never pip."]
    extract(transcript)


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("records", [
    [GEMINI_HEADER, DEEP, GEMINI_USER],
    [PI_HEADER, DEEP, PI_USER],
    [CODEX_META, DEEP, CODEX_USER],
    [EXPORT_USER, '{"type": "message", "role": "user", "content": ' + DEEP + "}"],
    [CODEX_META, CODEX_USER,
     {"timestamp": "t", "type": "response_item",
      "payload": {"type": "function_call", "name": "shell", "call_id": "c", "arguments": DEEP}}],
    [EXPORT_USER, {"type": "message", "role": "tool", "tool_call_id": "c", "content": "{" + DEEP}],
], ids=["gemini", "pi", "codex", "export", "codex-arguments", "tool-output"])
def test_json_nested_past_the_recursion_limit_is_a_skipped_line(tmp_path: Path, records: list[Any]) -> None:
    transcript = transcripts.read(write(tmp_path / "s.jsonl", records))
    assert "We always use uv, never pip." in [e.text for e in transcript.events if e.role == "user"]
    extract(transcript)


# -- lines built to make a pattern backtrack -------------------------------------------------------
# Each input below kept a pattern busy for minutes (its time grew with the square of the run's
# length); read now, each takes milliseconds. No time is asserted: the result is.

RUN = 20_000


def test_an_offer_after_a_long_run_of_blank_lines_is_read() -> None:
    offer = Event(1, "assistant", "\n" * RUN + "Which do you prefer?\nA. Keep the cache\nB. Drop the cache\n"
                  + " \n" * RUN)
    found = decisions([offer, Event(2, "user", "Go with B: the cache is stale too often")])
    assert [c.kind for c in found] == ["decision"] and "cache" in found[0].body.lower()
    assert decisions([Event(1, "assistant", "\n" * RUN + "## Plan\n" + "\n" * RUN + "1. a\n"),
                      Event(2, "user", "note:" + "\n" * RUN)]) == []


def test_a_choice_with_long_padded_labels_and_notes() -> None:
    labels = tuple(f"Option {n}" + " " * 20 + "x" for n in range(500)) + ("Redis" + " " * 5000 + "cluster (Recommended)",)
    choice = Event(3, "choice", "Redis\nnote:" + "\n" * RUN + " we already run it", tool="AskUserQuestion",
                   target="Which cache?", options=labels)
    found = decisions([choice])
    assert len(found) <= 1
    assert all("\n" * 3 not in c.body for c in found)


@pytest.mark.parametrize("text", [
    "let's go with " + " " * RUN + "!",
    "we use " + " " * RUN + "instead",
    "use" + " a" * RUN + " instead of b",
    "#" + " " * RUN + "\n" * RUN + "go with this",
])
def test_a_user_sentence_padded_with_spaces_is_read(text: str) -> None:
    assert decisions([Event(1, "assistant", "Which do you prefer, A or B?"), Event(2, "user", text)]) == []


def test_a_tool_result_with_many_blank_lines_before_the_answer() -> None:
    asked = {"questions": [{"question": "Which cache?", "options": [{"label": "Redis"}, {"label": "None"}]}]}
    found = choices(1, "AskUserQuestion", asked, "\n" * RUN + "User selected: Redis" + " " * RUN + "\n" * RUN)
    assert [(e.target, e.text) for e in found] == [("Which cache?", "Redis")]
    assert choices(1, "AskUserQuestion", asked, "\n" * RUN + "the dialog closed" + "\n" * RUN) == []


def test_an_edit_of_a_file_of_blank_lines_names_its_symbols() -> None:
    assert symbols("\n" * RUN + "x = 1\ndef handler(event):\n    pass\n", "+" + "\t" * RUN + "x") == ("handler",)



# -- a judge that answers nonsense, text a memory file cannot hold ---------------------------------

def run(repo: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["-C", str(repo), *args], catch_exceptions=False)


@pytest.fixture
def store(repo: Path) -> Path:
    assert run(repo, "init").exit_code == 0
    return repo


def rules_session(tmp_path: Path) -> Path:
    return write(tmp_path / "s.jsonl", [
        {"type": "message", "role": "user", "content": "We always use uv, never pip."},
        {"type": "message", "role": "user", "content": "Remember that the staging database is read-only."}])


def stand_in_judge(tmp_path: Path, answer: str) -> str:
    """The LLM is faked: a stand-in command that reads the request and prints `answer`."""
    (tmp_path / "answer.json").write_text(answer)
    script = tmp_path / "judge.sh"
    script.write_text(f"#!/bin/sh\ncat >/dev/null\ncat '{tmp_path / 'answer.json'}'\n")
    script.chmod(0o755)
    return str(script)


@pytest.mark.parametrize("answer", [
    '{"candidates": [{"index": 1e999, "keep": false}, {"index": -1, "keep": false}]}',
    '{"candidates": [{"index": 0, "title": "   ", "body": " ", "kind": "  "}]}',
    '{"candidates": [1, null, [], {"index": [0]}, {"index": 0, "title": {"a": 1}, "body": ["x"], "kind": 3}]}',
], ids=["index-out-of-range", "blank-fields", "fields-of-the-wrong-type"])
def test_a_judge_answer_of_the_wrong_shape_keeps_the_rules_words(store: Path, tmp_path: Path, answer: str) -> None:
    result = run(store, "capture", str(rules_session(tmp_path)), "--json",
                 "--llm-cmd", stand_in_judge(tmp_path, answer))
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert sorted(c["title"] for c in data["candidates"]) == ["The staging database is read-only",
                                                              "We always use uv, never pip"]
    assert {c["kind"] for c in data["candidates"]} == {"convention"}


def test_a_judge_title_with_control_characters_and_a_path_is_written_inside_the_folder(
        store: Path, tmp_path: Path) -> None:
    answer = json.dumps({"candidates": [
        {"index": 0, "title": "../../../../tmp/uv\u0000 only\u001b[31m", "body": "---\nid: m-evil\n---\nx",
         "kind": "../../etc"}]})
    result = run(store, "capture", str(rules_session(tmp_path)), "--apply", "--llm-cmd",
                 stand_in_judge(tmp_path, answer))
    assert result.exit_code == 0, result.output
    written = sorted((store / ".memory").rglob("*.md"))
    assert written and all(p.resolve().is_relative_to((store / ".memory").resolve()) for p in written)
    listed = run(store, "list").output
    assert "../../../../tmp/uv only" in listed and "m-evil" not in listed
    assert run(store, "lint").exit_code == 0


def test_control_characters_and_cut_characters_in_a_session_do_not_stop_capture(
        store: Path, tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [
        {"type": "message", "role": "user", "content": "We always use uv\u001b[0m, never pip \ud83d for installs."},
        {"type": "message", "role": "user", "content": "Remember that the staging\u0007 database is read-only."}])
    result = run(store, "capture", str(path), "--apply")
    assert result.exit_code == 0, result.output
    assert "We always use uv, never pip \ufffd for installs" in run(store, "list").output
    assert run(store, "lint").exit_code == 0


# -- pending proposals edited by hand --------------------------------------------------------------

PENDING = {"kind": "convention", "title": "Use uv", "body": "We always use uv, never pip.", "source": "user",
           "confidence": 0.9, "evidence": {"lines": [1]}, "path": "../../../outside.md"}


def pending_folder(store: Path) -> Path:
    folder = store / ".git" / "memgit" / "capture"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_a_pending_id_edited_into_a_path_is_not_listed_and_writes_nothing_outside(store: Path) -> None:
    folder = pending_folder(store)
    (folder / "a.json").write_text(json.dumps({"id": "../../../../escaped", "candidates": [PENDING]}))
    assert "escaped" not in run(store, "capture", "--pending").output
    for ref in ("../", "../../../../escaped", ""):
        assert run(store, "capture", "--pending", ref, "--drop").exit_code != 0
    assert not list(store.parent.rglob("escaped*")) and (folder / "a.json").exists()


@pytest.mark.parametrize("candidate", [
    {"title": "x"}, "a string", None, dict(PENDING, evidence=[1], confidence="high"),
    dict(PENDING, kind="../../x"), dict(PENDING, files="abc", tags=None, symbols=[1, None]),
    dict(PENDING, title=["Use uv"]),
], ids=["fields-missing", "a-string", "null", "wrong-evidence-and-confidence", "unknown-kind",
        "lists-of-the-wrong-type", "title-a-list"])
def test_a_pending_candidate_edited_out_of_shape_is_skipped(store: Path, candidate: Any) -> None:
    pending = {"id": "abc123", "candidates": [candidate, dict(PENDING, title="The staging database is read-only",
                                                              body="Remember: staging is read-only.")],
               "lines": "many"}
    (pending_folder(store) / "abc123.json").write_text(json.dumps(pending))
    result = run(store, "capture", "--pending", "abc123", "--apply")
    assert result.exit_code == 0, result.output
    written = [p.name for p in (store / ".memory").rglob("*.md")]
    assert any(name.startswith("the-staging-database") for name in written)
    assert all(p.resolve().is_relative_to((store / ".memory").resolve()) for p in (store / ".memory").rglob("*"))


def test_a_judge_answer_full_of_braces_is_searched_once() -> None:
    # Before, each `{` that was no JSON cost a pass over the text before it: 2 MB of braces took hours.
    assert judge.find_answer("fn main() { if x {{ y }} }\n" * 70_000 + '{"candidates": []}') == {"candidates": []}
    with pytest.raises(ValueError):
        judge.find_answer("{" * 2_000_000)


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\ncat >/dev/null\n" + body)
    path.chmod(0o755)
    return str(path)


def test_a_judge_that_leaves_a_child_holding_its_output_is_not_waited_for(store: Path, tmp_path: Path) -> None:
    # The LLM is faked: a stand-in that answers, then leaves a background child with its output open.
    command = script(tmp_path, "judge.sh", '(sleep 60; echo) &\necho \'{"candidates": [{"index": 0, "keep": false}]}\'\n')
    subprocess.run(["git", "config", "memgit.capture.llm-timeout", "30"], cwd=store, check=True)
    result = run(store, "capture", str(rules_session(tmp_path)), "--json", "--llm-cmd", command)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["judge"].startswith("judged: 1 vetoed")


def test_a_judge_that_never_stops_printing_is_stopped(store: Path, tmp_path: Path) -> None:
    # The LLM is faked: a stand-in that prints braces forever (it is stopped, not read to the timeout).
    command = script(tmp_path, "judge.sh", "yes '{' | tr -d '\\n'\n")
    result = run(store, "capture", str(rules_session(tmp_path)), "--llm-cmd", command)
    assert result.exit_code == 1 and "printed more than" in result.output
