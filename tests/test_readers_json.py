"""The JSON-lines transcript formats memgit reads besides Claude Code and Codex (Gemini CLI's chat
recordings, pi's sessions, plain message re-exports), and the structured answers every reader
brings to capture: the user's choices among offered options and the plans they approved or
rejected. Each transcript here is small and hand-written in its format's shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memgit.agents import transcripts
from memgit.agents.events import Event
from memgit.agents.readers.exitcode import exit_code, failed
from memgit.errors import MemgitError


def write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def roles(events: list[Event]) -> list[str]:
    return [e.role for e in events]


# -- Gemini CLI ----------------------------------------------------------------------------------

def _shell(call_id: str, command: str, output: str, status: str = "success") -> dict[str, Any]:
    return {"id": call_id, "name": "run_shell_command", "args": {"command": command, "description": "run"},
            "result": [{"functionResponse": {"id": call_id, "name": "run_shell_command",
                                             "response": {"output": output}}}],
            "status": status, "timestamp": "2026-03-02T10:01:00Z", "displayName": "Shell"}


GEMINI = [
    {"sessionId": "5d1c-aa", "projectHash": "9f2e", "startTime": "2026-03-02T10:00:00Z",
     "lastUpdated": "2026-03-02T10:00:00Z", "kind": "main"},
    {"id": "u1", "timestamp": "2026-03-02T10:00:05Z", "type": "user",
     "content": [{"text": "The build fails in @src/app.ts, please fix it\n--- Content from referenced files ---\n"
                          "Content from @src/app.ts:\nconst a = 1;\n--- End of content ---"}],
     "displayContent": [{"text": "The build fails in @src/app.ts, please fix it"}]},
    {"$set": {"lastUpdated": "2026-03-02T10:00:06Z"}},
    # the same message written again as its tool calls come in: read once, in its last version
    {"id": "g1", "timestamp": "2026-03-02T10:00:07Z", "type": "gemini", "content": "", "model": "gemini-x",
     "toolCalls": [_shell("s1", "npm run build", "Command: npm run build\nOutput: src/app.ts(3,1): error TS2304"
                          "\nError: (none)\nExit Code: 2\nProcess Group PGID: 12")]},
    {"id": "g1", "timestamp": "2026-03-02T10:00:07Z", "type": "gemini", "content": "", "model": "gemini-x",
     "toolCalls": [_shell("s1", "npm run build", "Command: npm run build\nOutput: src/app.ts(3,1): error TS2304"
                          "\nError: (none)\nExit Code: 2\nProcess Group PGID: 12"),
                   {"id": "r1", "name": "replace", "args": {"file_path": "src/app.ts", "old_string": "cnst a",
                                                             "new_string": "const a", "instruction": "fix typo"},
                    "result": [{"functionResponse": {"id": "r1", "name": "replace",
                                                     "response": {"output": "Successfully modified file"}}}],
                    "status": "success", "timestamp": "2026-03-02T10:00:09Z"}]},
    {"id": "g2", "timestamp": "2026-03-02T10:00:10Z", "type": "gemini", "content": "", "model": "gemini-x",
     "toolCalls": [_shell("s2", "npm run build", "Command: npm run build\nOutput: done\nExit Code: 0")]},
    {"id": "u2", "timestamp": "2026-03-02T10:00:20Z", "type": "user", "content": [{"text": "System: Please continue."}],
     "displayContent": [{"functionResponse": {"id": "s2", "name": "run_shell_command",
                                              "response": {"output": "Output: (empty)"}}}]},
    {"id": "i1", "timestamp": "2026-03-02T10:00:21Z", "type": "info", "content": "Request cancelled."},
    {"id": "g3", "timestamp": "2026-03-02T10:00:22Z", "type": "gemini", "content": "Fixed the typo; the build passes."},
    {"id": "u3", "timestamp": "2026-03-02T10:01:00Z", "type": "user", "content": [{"text": "try another way"}]},
    {"id": "g4", "timestamp": "2026-03-02T10:01:01Z", "type": "gemini", "content": "Trying another way."},
    {"$rewindTo": "u3"},  # the user rewound: those two messages are gone
    {"id": "u4", "timestamp": "2026-03-02T10:02:00Z", "type": "user",
     "content": [{"text": "Never edit generated files under dist/"}]},
    {"id": "e1", "timestamp": "2026-03-02T10:02:01Z", "type": "error", "content": "[API Error: quota]"},
]


def test_gemini_recording_is_read_as_gemini_not_claude(tmp_path: Path) -> None:
    transcript = transcripts.read(write(tmp_path / "session.jsonl", GEMINI))
    assert transcript.format == "gemini" and transcript.session_id == "5d1c-aa" and transcript.skipped == 0
    assert [(e.role, e.text) for e in transcript.events if e.role in ("user", "assistant")] == [
        ("user", "The build fails in @src/app.ts, please fix it"),
        ("assistant", "Fixed the typo; the build passes."),
        ("user", "Never edit generated files under dist/"),
    ]


def test_gemini_tool_calls_carry_command_files_and_status(tmp_path: Path) -> None:
    events = transcripts.read(write(tmp_path / "session.jsonl", GEMINI)).events
    calls = [(e.tool, e.action, e.command, e.files) for e in events if e.role == "tool_call"]
    assert calls == [("run_shell_command", "run", "npm run build", ()),
                     ("replace", "edit", "", ("src/app.ts",)),
                     ("run_shell_command", "run", "npm run build", ())]
    assert [(e.call_id, e.error) for e in events if e.role == "tool_result"] == [
        ("s1", True), ("r1", False), ("s2", False)]


def test_gemini_denied_and_failed_calls_are_errors(tmp_path: Path) -> None:
    denied = _shell("s9", "rm -rf build", "")
    denied["status"] = "cancelled"
    denied["result"] = [{"functionResponse": {"id": "s9", "name": "run_shell_command",
                                              "response": {"error": "[Operation Cancelled] User denied execution."}}}]
    failed_edit = {"id": "r9", "name": "replace", "args": {"file_path": "a.py", "old_string": "x", "new_string": "y"},
                   "result": [{"functionResponse": {"id": "r9", "name": "replace",
                                                    "response": {"error": "Failed to edit, 0 occurrences found"}}}],
                   "status": "error"}
    running = {"id": "w9", "name": "write_file", "args": {"file_path": "b.py", "content": "def main():\n  pass\n"},
               "status": "executing"}
    path = write(tmp_path / "s.jsonl", [GEMINI[0], {"id": "u", "type": "user", "content": "go"},
                                        {"id": "g", "type": "gemini", "content": "",
                                         "toolCalls": [denied, failed_edit, running]}])
    events = transcripts.read(path).events
    assert [(e.role, e.tool or e.call_id, e.error) for e in events[1:]] == [
        ("tool_call", "run_shell_command", False), ("tool_result", "s9", True),
        ("tool_call", "replace", False), ("tool_result", "r9", True),
        ("tool_call", "write_file", False)]  # still running at the end: no result
    assert events[-1].files == ("b.py",) and events[-1].symbols == ("main",)


def test_gemini_ask_user_answers_are_choices(tmp_path: Path) -> None:
    ask = {"id": "a1", "name": "ask_user", "status": "success",
           "args": {"questions": [{"question": "Which database?", "header": "DB", "type": "choice",
                                   "options": [{"label": "Postgres", "description": "relational"},
                                               {"label": "SQLite", "description": "a file"}]}]},
           "result": [{"functionResponse": {"id": "a1", "name": "ask_user",
                                            "response": {"output": json.dumps({"answers": {"0": "SQLite"}})}}}]}
    path = write(tmp_path / "s.jsonl", [GEMINI[0], {"id": "u", "type": "user", "content": "set up storage"},
                                        {"id": "g", "type": "gemini", "content": "", "toolCalls": [ask]}])
    choice = [e for e in transcripts.read(path).events if e.role == "choice"]
    assert [(c.target, c.options, c.text) for c in choice] == [("Which database?", ("Postgres", "SQLite"), "SQLite")]


def test_gemini_plan_approved_and_rejected(tmp_path: Path) -> None:
    def call(call_id: str, name: str, args: dict[str, Any], output: str) -> dict[str, Any]:
        return {"id": call_id, "name": name, "args": args, "status": "success",
                "result": [{"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}}]}

    plan_text = "# Plan\n1. Move parsing into parser.py\n2. Add tests"
    path = write(tmp_path / "s.jsonl", [GEMINI[0], {"id": "u", "type": "user", "content": "plan the refactor"},
                                        {"id": "g", "type": "gemini", "content": "", "toolCalls": [
        call("w", "write_file", {"file_path": "/h/.gemini/tmp/p/plans/refactor.md", "content": plan_text}, "ok"),
        call("x", "exit_plan_mode", {"plan_path": "plans/refactor.md"},
             "Plan rejected. User feedback: keep parsing where it is\n\nThe plan is stored at: /h/refactor.md"),
        call("y", "exit_plan_mode", {"plan_path": "plans/refactor.md"},
             "Plan approved. Switching to default mode.\n\nThe approved implementation plan is stored at: x")]}])
    events = transcripts.read(path).events
    assert [(e.role, e.text, e.error) for e in events if e.role in ("plan", "user")] == [
        ("user", "plan the refactor", False), ("plan", plan_text, True),
        ("user", "keep parsing where it is", False), ("plan", plan_text, False)]


def test_gemini_recording_on_one_line(tmp_path: Path) -> None:
    whole = dict(GEMINI[0], messages=[{"id": "u", "type": "user", "content": "rename the module"},
                                      {"id": "g", "type": "gemini", "content": "Renamed."}])
    events = transcripts.read(write(tmp_path / "s.jsonl", [whole])).events
    assert [(e.line, e.role, e.text) for e in events] == [(1, "user", "rename the module"), (1, "assistant", "Renamed.")]


def test_gemini_subagent_recording_is_a_side_chain(tmp_path: Path) -> None:
    header = dict(GEMINI[0], kind="subagent")
    path = write(tmp_path / "s.jsonl", [header, {"id": "u", "type": "user", "content": "Investigate the parser"}])
    assert [(e.role, e.sidechain) for e in transcripts.read(path).events] == [("user", True)]


def test_gemini_header_alone_holds_no_messages(tmp_path: Path) -> None:
    with pytest.raises(MemgitError, match="holds no messages"):
        transcripts.read(write(tmp_path / "s.jsonl", [GEMINI[0], {"$set": {"lastUpdated": "x"}}]))


# -- pi ------------------------------------------------------------------------------------------

def _entry(kind: str, n: int, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": f"e{n}", "parentId": f"e{n - 1}" if n else None,
            "timestamp": f"2026-04-01T09:00:{n:02d}Z", **fields}


def _msg(n: int, role: str, content: Any, **fields: Any) -> dict[str, Any]:
    return _entry("message", n, message={"role": role, "content": content, "timestamp": 1775000000000 + n, **fields})


PI_V3 = [
    {"type": "session", "version": 3, "id": "0193-abc", "timestamp": "2026-04-01T09:00:00Z", "cwd": "/w/proj"},
    _entry("model_change", 1, provider="anthropic", modelId="claude-x"),
    _entry("thinking_level_change", 2, thinkingLevel="high"),
    _msg(3, "user", [{"type": "text", "text": '<skill name="testing" location="/h/.pi/skills/testing/SKILL.md">\n'
                                              'Always run the whole suite.\n</skill>\n\n'
                                              "Make the tests pass. We use pytest -q, never unittest."}]),
    _msg(4, "assistant", [{"type": "thinking", "thinking": "let me run them"},
                          {"type": "text", "text": "Running the tests."},
                          {"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"command": "pytest -q"}}],
         provider="anthropic", model="claude-x", stopReason="toolUse"),
    _msg(5, "toolResult", [{"type": "text", "text": "1 failed\n\n\nCommand exited with code 1"}],
         toolCallId="t1", toolName="bash", isError=True),
    _msg(6, "assistant", [{"type": "toolCall", "id": "t2", "name": "edit",
                           "arguments": {"path": "/w/proj/calc.py", "oldText": "def add(a, b):\n    return a - b",
                                         "newText": "def add(a, b):\n    return a + b"}}]),
    _msg(7, "toolResult", [{"type": "text", "text": "Successfully replaced text in /w/proj/calc.py."}],
         toolCallId="t2", toolName="edit", isError=False, details={"diff": "-2 return a - b\n+2 return a + b"}),
    _msg(8, "assistant", [{"type": "toolCall", "id": "t3", "name": "bash", "arguments": {"command": "pytest -q"}}]),
    _msg(9, "toolResult", [{"type": "text", "text": "3 passed"}], toolCallId="t3", toolName="bash", isError=False),
    _msg(10, "bashExecution", None, command="git status --short", output=" M calc.py\n", exitCode=0,
         cancelled=False, truncated=False),
    _msg(11, "custom", "an extension's note", customType="reminder", display=True),
    _entry("compaction", 12, summary="Fixed add() in calc.py; tests pass.", firstKeptEntryId="e8", tokensBefore=900),
    _entry("label", 13, targetId="e9", label="green"),
]


def test_pi_session_messages_tools_and_exit_status(tmp_path: Path) -> None:
    transcript = transcripts.read(write(tmp_path / "2026-04-01_0193-abc.jsonl", PI_V3))
    assert transcript.format == "pi" and transcript.cwd == "/w/proj" and transcript.skipped == 0
    events = transcript.events
    assert roles(events) == ["user", "assistant", "tool_call", "tool_result", "tool_call", "tool_result",
                             "tool_call", "tool_result", "tool_call", "tool_result", "summary"]
    assert [(e.tool, e.command, e.files, e.symbols) for e in events if e.role == "tool_call"] == [
        ("bash", "pytest -q", (), ()), ("edit", "", ("/w/proj/calc.py",), ("add",)),
        ("bash", "pytest -q", (), ()), ("bash", "git status --short", (), ())]
    assert [e.error for e in events if e.role == "tool_result"] == [True, False, False, False]
    assert transcript.edited_files == ["/w/proj/calc.py"]
    assert events[0].text == "Make the tests pass. We use pytest -q, never unittest."  # not the skill's body


def test_pi_result_exit_code_counts_when_the_error_flag_is_missing(tmp_path: Path) -> None:
    records = [PI_V3[0], _msg(1, "user", "run it"),
               _msg(2, "assistant", [{"type": "toolCall", "id": "b", "name": "bash", "arguments": {"command": "make"}}]),
               _msg(3, "toolResult", [{"type": "text", "text": "make: *** [all] Error 2\n\nCommand exited with code 2"}],
                    toolCallId="b", toolName="bash"),
               _msg(4, "bashExecution", None, command="make lint", output="ok\n", exitCode=1)]
    results = [e for e in transcripts.read(write(tmp_path / "s.jsonl", records)).events if e.role == "tool_result"]
    assert [e.error for e in results] == [True, True]


def test_pi_old_header_and_two_entries_on_one_line(tmp_path: Path) -> None:
    old = {"type": "session", "id": "5fd1-old", "timestamp": "2025-12-01T10:00:00Z", "cwd": "/w/p",
           "provider": "anthropic", "modelId": "claude-x", "thinkingLevel": "off"}
    first = {"type": "message", "timestamp": "2025-12-01T10:00:01Z",
             "message": {"role": "user", "content": [{"type": "text", "text": "document the settings"}]}}
    second = {"type": "message", "timestamp": "2025-12-01T10:00:02Z",
              "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}}
    path = write(tmp_path / "s.jsonl", [old, json.dumps(first) + json.dumps(second), "{torn", {"type": "weird"}])
    transcript = transcripts.read(path)
    assert transcript.format == "pi" and transcript.session_id == "5fd1-old"
    assert [(e.line, e.role, e.text) for e in transcript.events] == [
        (2, "user", "document the settings"), (2, "assistant", "Done.")]
    assert transcript.skipped == 2


def test_pi_ask_tool_answers_are_choices(tmp_path: Path) -> None:
    questions = {"questions": [
        {"id": "auth", "question": "Which auth model?", "options": [{"label": "JWT"}, {"label": "Session"}]},
        {"id": "cache", "question": "Which cache?", "options": ["Redis", "None"]}]}
    records = [PI_V3[0], _msg(1, "user", "add login"),
               _msg(2, "assistant", [{"type": "toolCall", "id": "q", "name": "AskQuestions", "arguments": questions}]),
               _msg(3, "toolResult", [{"type": "text", "text": "Which auth model?: Session\nWhich cache?: Redis"}],
                    toolCallId="q", toolName="AskQuestions", isError=False,
                    details={"answers": [{"id": "auth", "label": "Session", "note": "cookies only, no JWT"},
                                         {"id": "cache", "label": "Redis"}]}),
               _msg(4, "assistant", [{"type": "toolCall", "id": "q2", "name": "ask", "arguments": questions}]),
               _msg(5, "toolResult", [{"type": "text", "text": "Which auth model?: JWT\nWhich cache?: None"}],
                    toolCallId="q2", toolName="ask", isError=False),
               _msg(6, "assistant", [{"type": "toolCall", "id": "q3", "name": "ask", "arguments": questions}]),
               _msg(7, "toolResult", [{"type": "text", "text": "User cancelled"}], toolCallId="q3", toolName="ask",
                    isError=False, details={"cancelled": True})]
    choices = [e for e in transcripts.read(write(tmp_path / "s.jsonl", records)).events if e.role == "choice"]
    assert [(c.line, c.target, c.options, c.text) for c in choices] == [
        (4, "Which auth model?", ("JWT", "Session"), "Session\ncookies only, no JWT"),
        (4, "Which cache?", ("Redis", "None"), "Redis"),
        (6, "Which auth model?", ("JWT", "Session"), "JWT"),
        (6, "Which cache?", ("Redis", "None"), "None"),
    ]


# -- plain message re-exports ----------------------------------------------------------------------

def test_message_reexport(tmp_path: Path) -> None:
    path = write(tmp_path / "export.jsonl", [
        {"type": "message", "role": "system", "content": "You are a coding agent."},
        {"type": "message", "role": "user", "content": "Fix the failing lint. We always use ruff, not flake8."},
        {"type": "message", "role": "assistant",
         "content": [{"type": "text", "text": "Running ruff."},
                     {"type": "tool_use", "id": "c1", "name": "Bash", "input": {"command": "ruff check ."}}]},
        {"type": "message", "role": "tool", "tool_call_id": "c1", "content": "Exit code: 1\nE501 line too long"},
        {"type": "message", "role": "assistant", "content": "",
         "tool_calls": [{"id": "c2", "type": "function",
                         "function": {"name": "Edit", "arguments": json.dumps({"file_path": "app.py",
                                                                               "old_string": "x", "new_string": "y"})}}]},
        {"type": "message", "role": "tool", "tool_call_id": "c2", "content": "ok"},
    ])
    transcript = transcripts.read(path)
    assert transcript.format == "export" and transcript.skipped == 0
    assert [(e.role, e.tool, e.error) for e in transcript.events] == [
        ("user", "", False), ("assistant", "", False), ("tool_call", "Bash", False), ("tool_result", "", True),
        ("tool_call", "Edit", False), ("tool_result", "", False)]
    assert transcript.edited_files == ["app.py"]


def test_export_with_a_record_a_block_and_no_type(tmp_path: Path) -> None:
    """Exports that write each block as its own record (`role` + one `content` block, no `type`)
    and OpenAI-style chat lines are read as the message re-export: calls, results, exit status."""
    path = write(tmp_path / "blocks.jsonl", [
        {"timestamp": "2026-02-01T10:00:00Z", "role": "user", "content": {"type": "text", "text": "Fix the build."}},
        {"timestamp": "2026-02-01T10:00:01Z", "role": "assistant", "content": {"type": "thinking", "thinking": "…"}},
        {"timestamp": "2026-02-01T10:00:02Z", "role": "assistant",
         "content": {"type": "tool_use", "tool_name": "Bash", "tool_id": "t1", "input": {"command": "make"}}},
        {"timestamp": "2026-02-01T10:00:03Z", "role": "tool",
         "content": {"type": "tool_result", "tool_id": "t1", "output": "make: *** [all] Error 2", "is_error": True}},
        {"timestamp": "2026-02-01T10:00:04Z", "role": "assistant",
         "content": {"type": "tool_use", "tool_name": "Edit", "tool_id": "t2",
                     "input": {"file_path": "Makefile", "old_string": "a", "new_string": "b"}}},
        {"timestamp": "2026-02-01T10:00:05Z", "role": "user",
         "content": {"type": "tool_result", "tool_id": "t2", "output": "ok"}},
    ])
    transcript = transcripts.read(path)
    assert transcript.format == "export" and transcript.skipped == 0
    assert [(e.role, e.tool, e.call_id, e.error) for e in transcript.events] == [
        ("user", "", "", False), ("tool_call", "Bash", "t1", False), ("tool_result", "", "t1", True),
        ("tool_call", "Edit", "t2", False), ("tool_result", "", "t2", False)]
    assert transcript.started == "2026-02-01T10:00:00Z" and transcript.edited_files == ["Makefile"]
    chat = write(tmp_path / "chat.jsonl", [{"role": "user", "content": "We never commit generated files."},
                                          {"role": "assistant", "content": "Understood."}])
    assert [e.role for e in transcripts.read(chat).events] == ["user", "assistant"]


# -- structured answers in Claude Code and Codex ---------------------------------------------------

def _claude(n: int, kind: str, content: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": f"u{n}", "parentUuid": f"u{n - 1}", "sessionId": "cc-1", "cwd": "/w",
            "timestamp": f"2026-05-01T10:00:{n:02d}Z", "isSidechain": False,
            "message": {"role": kind, "content": content}, **fields}


ASK_INPUT = {"questions": [{"question": "The hook blocks on old lint errors. How should we proceed?",
                            "header": "Commit", "multiSelect": False,
                            "options": [{"label": "Skip the hook", "description": "commit with --no-verify"},
                                        {"label": "Fix the errors", "description": "fix them first"}]}]}


def test_claude_ask_user_question_answer_is_a_choice(tmp_path: Path) -> None:
    question = ASK_INPUT["questions"][0]["question"]
    text = f'User has answered your questions: "{question}"="Fix the errors; never skip hooks". You can now continue.'
    records = [
        _claude(1, "user", [{"type": "text", "text": "commit the work"}]),
        _claude(2, "assistant", [{"type": "tool_use", "id": "a1", "name": "AskUserQuestion", "input": ASK_INPUT}]),
        _claude(3, "user", [{"type": "tool_result", "tool_use_id": "a1", "content": text}],
                toolUseResult={"questions": ASK_INPUT["questions"],
                               "answers": {question: "Fix the errors; never skip hooks"}}),
        # the same answer when the record keeps no structured copy: read from the sentence
        _claude(4, "assistant", [{"type": "tool_use", "id": "a2", "name": "AskUserQuestion", "input": ASK_INPUT}]),
        _claude(5, "user", [{"type": "tool_result", "tool_use_id": "a2", "content": text}]),
        # a note the user typed next to the option picked
        _claude(6, "assistant", [{"type": "tool_use", "id": "a4", "name": "AskUserQuestion", "input": ASK_INPUT}]),
        _claude(7, "user", [{"type": "tool_result", "tool_use_id": "a4", "content": text}],
                toolUseResult={"answers": {question: "Fix the errors"},
                               "annotations": {question: {"notes": "the errors predate this branch"}}}),
        # declined: no answer
        _claude(8, "assistant", [{"type": "tool_use", "id": "a3", "name": "AskUserQuestion", "input": ASK_INPUT}]),
        _claude(9, "user", [{"type": "tool_result", "tool_use_id": "a3", "is_error": True,
                             "content": "The user doesn't want to proceed with this tool use."}]),
    ]
    records += [{"type": "permission-mode", "permissionMode": "plan", "sessionId": "cc-1"},
                {"type": "mode", "mode": "normal", "sessionId": "cc-1"}]  # bookkeeping: nothing to read
    transcript = transcripts.read(write(tmp_path / "s.jsonl", records))
    events = transcript.events
    assert transcript.skipped == 0
    choices = [(e.line, e.target, e.options, e.text) for e in events if e.role == "choice"]
    expected = (question, ("Skip the hook", "Fix the errors"), "Fix the errors; never skip hooks")
    assert choices == [(3, *expected), (5, *expected),
                       (7, question, expected[1], "Fix the errors\nthe errors predate this branch")]
    assert roles(events).count("tool_result") == 4  # the usual events are still there


def test_claude_exit_plan_mode_approved_and_rejected(tmp_path: Path) -> None:
    plan = "1. Add a cache layer\n2. Invalidate it on write"
    records = [
        _claude(1, "user", [{"type": "text", "text": "speed up reads"}]),
        _claude(2, "assistant", [{"type": "tool_use", "id": "p1", "name": "ExitPlanMode", "input": {"plan": plan}}]),
        _claude(3, "user", [{"type": "tool_result", "tool_use_id": "p1", "is_error": True,
                             "content": "The user doesn't want to proceed with this tool use. The tool use was "
                                        "rejected (eg. if it was a file edit, the new_string was NOT written to the "
                                        "file). To tell you how to proceed, the user said:\nno cache, add an index"}]),
        _claude(4, "assistant", [{"type": "tool_use", "id": "p2", "name": "ExitPlanMode",
                                  "input": {"plan": "1. Add an index on users.email"}}]),
        _claude(5, "user", [{"type": "tool_result", "tool_use_id": "p2",
                             "content": "User has approved your plan. You can now start coding."}]),
    ]
    events = transcripts.read(write(tmp_path / "s.jsonl", records)).events
    assert [(e.line, e.role, e.text, e.error) for e in events if e.role in ("plan", "user")] == [
        (1, "user", "speed up reads", False),
        (3, "plan", plan, True), (3, "user", "no cache, add an index", False),
        (5, "plan", "1. Add an index on users.email", False)]


def _codex(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-06-01T08:00:00Z", "type": kind, "payload": payload}


def test_codex_request_user_input_and_proposed_plan(tmp_path: Path) -> None:
    asked = {"questions": [
        {"header": "Store", "id": "store", "question": "Where should sessions live?",
         "options": [{"label": "Redis (Recommended)", "description": "fast"}, {"label": "Postgres", "description": "one db"}]},
        {"header": "Scope", "id": "scope", "question": "Include the admin UI?",
         "options": [{"label": "Yes"}, {"label": "No"}]},
        {"header": "Key", "id": "key", "question": "Paste the deploy token", "isOther": True, "isSecret": True,
         "options": None}]}
    answers = {"answers": {"scope": {"answers": ["No"]}, "key": {"answers": ["tok-123-secret"]},
                           "store": {"answers": ["Postgres", "user_note: we already run it; no new services"]}}}
    records = [
        _codex("session_meta", {"id": "cx-1", "cwd": "/w", "base_instructions": {"text": "x" * 20000}}),
        _codex("event_msg", {"type": "user_message", "message": "plan the session store"}),
        _codex("response_item", {"type": "function_call", "name": "request_user_input", "call_id": "c1",
                                 "arguments": json.dumps(asked)}),
        _codex("response_item", {"type": "function_call_output", "call_id": "c1", "output": json.dumps(answers)}),
        _codex("response_item", {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "<proposed_plan>\n# Session store\n1. Postgres table\n</proposed_plan>"}]}),
        _codex("event_msg", {"type": "agent_message",
                             "message": "<proposed_plan>\n# Session store\n1. Postgres table\n</proposed_plan>"}),
        _codex("response_item", {"type": "function_call", "name": "request_user_input", "call_id": "c2",
                                 "arguments": json.dumps(asked)}),
        _codex("response_item", {"type": "function_call_output", "call_id": "c2",
                                 "output": "request_user_input is unavailable in Default mode"}),
    ]
    events = transcripts.read(write(tmp_path / "rollout.jsonl", records)).events
    assert [(e.line, e.target, e.options, e.text) for e in events if e.role == "choice"] == [
        (4, "Where should sessions live?", ("Redis (Recommended)", "Postgres"),
         "Postgres\nwe already run it; no new services"),
        (4, "Include the admin UI?", ("Yes", "No"), "No")]
    assert [(e.line, e.text, e.error) for e in events if e.role == "plan"] == [
        (5, "# Session store\n1. Postgres table", False)]
    assert roles(events).count("assistant") == 1


# -- exit codes ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("output", "code"), [
    ("Exit code: 1\nWall time: 2s\nOutput:\nboom", 1),
    ("Chunk ID: 9\nWall time: 0.1s\nProcess exited with code 0\nOutput:\nok", 0),
    ("Command: make\nOutput: " + "x\n" * 300 + "Error: (none)\nExit Code: 3\nProcess Group PGID: 7", 3),
    ("lots of output\n" * 50 + "\nCommand exited with code 127", 127),
    ("the docs say: use exit code 0 for success\n" + "more\n" * 200, None),
])
def test_exit_code_wherever_the_format_puts_it(output: str, code: int | None) -> None:
    assert exit_code(output) == code


def test_a_worker_traceback_behind_a_rank_tag_is_a_failure() -> None:
    assert failed("[rank0]: Traceback (most recent call last):\n[rank0]:   File \"x.py\"\n[rank0]: ValueError: no")
    assert not failed("grep: 3 matches of Traceback in logs/")


# -- the command line ------------------------------------------------------------------------------

def test_capture_json_reads_gemini_and_pi(repo: Path, tmp_path: Path) -> None:
    memgit = [sys.executable, "-m", "memgit", "-C", str(repo)]
    subprocess.run([*memgit, "init"], check=True, capture_output=True)
    for name, records in (("gemini.jsonl", GEMINI), ("pi.jsonl", PI_V3)):
        done = subprocess.run([*memgit, "capture", "--json", str(write(tmp_path / name, records))],
                              check=False, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["format"] == name.split(".")[0]
