"""Lessons from sessions shaped like real ones: commands wrapped in `cd … &&`, variables, pipes
into `tail`, `timeout`, `bash -lc`; exit codes printed in the output; fixes that are a pinned
install or a new flag; outputs whose last line says nothing. Transcripts are written here in
Claude Code's and Codex's JSONL shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memgit.agents import transcripts
from memgit.capture.candidate import Candidate
from memgit.capture.commands import is_install, is_trivial, parse
from memgit.capture.extract import extract
from memgit.capture.lessons import key_line
from memgit.cli import cli

CWD = "/home/dev/shop"


# -- transcript writers ------------------------------------------------------------------------


def claude(tmp_path: Path, steps: list[tuple[Any, ...]]) -> Path:
    """A Claude Code session: ("user", text), ("say", text), ("bash", command, output, failed),
    ("edit", path)."""
    records: list[dict[str, Any]] = []

    def add(kind: str, message: dict[str, Any]) -> None:
        records.append({"type": kind, "message": message, "uuid": f"u{len(records)}", "isSidechain": False,
                        "cwd": CWD, "sessionId": "5f1e0c2a-1111-4d3e-8f40-abcdefabcdef",
                        "timestamp": f"2026-09-01T10:00:{len(records):02d}.000Z", "version": "2.1.0"})

    for n, step in enumerate(steps):
        if step[0] == "user":
            add("user", {"role": "user", "content": step[1]})
        elif step[0] == "say":
            add("assistant", {"role": "assistant", "content": [{"type": "text", "text": step[1]}]})
        elif step[0] == "bash":
            add("assistant", {"role": "assistant", "content": [
                {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": step[1]}}]})
            add("user", {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": step[2], "is_error": step[3]}]})
        elif step[0] == "edit":
            add("assistant", {"role": "assistant", "content": [
                {"type": "tool_use", "id": f"toolu_{n}", "name": "Edit",
                 "input": {"file_path": f"{CWD}/{step[1]}", "old_string": "a", "new_string": "b"}}]})
            add("user", {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{n}",
                 "content": f"The file {CWD}/{step[1]} has been updated successfully."}]})
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def codex(tmp_path: Path, steps: list[tuple[Any, ...]]) -> Path:
    """A Codex rollout: ("user", text), ("say", text), ("exec", command, exit code, output),
    ("patch", path)."""
    lines: list[dict[str, Any]] = [
        {"timestamp": "2026-09-01T10:00:00.000Z", "type": "session_meta",
         "payload": {"id": "019aad50-0000-7422-b7a8-0b384290624f", "cwd": CWD, "originator": "codex_cli_rs",
                     "cli_version": "0.150.0", "base_instructions": {"text": "You are Codex. " * 2000}}}]

    def add(kind: str, payload: dict[str, Any]) -> None:
        lines.append({"timestamp": "2026-09-01T10:00:01.000Z", "type": kind, "payload": payload})

    for n, step in enumerate(steps):
        if step[0] == "user":
            add("event_msg", {"type": "user_message", "message": step[1]})
        elif step[0] == "say":
            add("event_msg", {"type": "agent_message", "message": step[1]})
        elif step[0] == "exec":
            add("response_item", {"type": "function_call", "name": "exec_command", "call_id": f"c{n}",
                                  "arguments": json.dumps({"cmd": step[1], "workdir": CWD})})
            add("response_item", {"type": "function_call_output", "call_id": f"c{n}", "output": (
                f"Chunk ID: a{n}\nWall time: 1.2 seconds\nProcess exited with code {step[2]}\n"
                f"Original token count: 40\nOutput:\n{step[3]}")})
        elif step[0] == "patch":
            add("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": f"p{n}",
                                  "input": f"*** Begin Patch\n*** Update File: {step[1]}\n@@\n-a\n+b\n*** End Patch"})
            add("response_item", {"type": "custom_tool_call_output", "call_id": f"p{n}",
                                  "output": f"Success. Updated the following files:\nM {step[1]}\n"})
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def lessons(path: Path) -> list[Candidate]:
    return [c for c in extract(transcripts.read(path)) if c.kind == "lesson"]


HARDHAT_FAIL = ("Exit code 1\n\x1b[31mError HH8:\x1b[39m There's one or more errors in your config file:\n\n"
                "  * Invalid account: #0 for network: sepolia - private key too short, expected 32 bytes\n\n"
                "For more info go to https://hardhat.org/HH8 or run Hardhat with --show-stack-traces")


# -- wrapped commands, exit codes, useless last lines --------------------------------------------


def test_a_wrapped_failure_and_a_plain_pass_are_one_command(tmp_path: Path) -> None:
    path = claude(tmp_path, [
        ("user", "Deploy script fails, please fix"),
        ("bash", "cd contracts && npx hardhat compile 2>&1 | tail -40", HARDHAT_FAIL, True),
        ("say", "The `.env` still holds the placeholder key. Let me make the config skip it."),
        ("edit", "contracts/hardhat.config.js"),
        ("bash", "npx hardhat compile", "Compiled 3 Solidity files successfully", False),
    ])
    [lesson] = lessons(path)
    assert lesson.title == ("hardhat compile: Error HH8: There's one or more errors in your config file: Invalid "
                            "account: #0 for network:…")
    assert lesson.body == (
        "`hardhat compile` failed with:\n"
        "    Error HH8: There's one or more errors in your config file: Invalid account: #0 for network: sepolia "
        "- private key too short, expected 32 bytes\n"
        "Why: The `.env` still holds the placeholder key.\n"
        "Fixed by changing contracts/hardhat.config.js; then it passed.")
    assert lesson.files == ("contracts/hardhat.config.js",)


KEY_LINES = [
    # Next.js: the type error, not the build worker's exit line
    (("Exit code 1\n> build\n> next build\n\n./src/app/page.tsx:63:53\nType error: BigInt literals are not "
     "available when targeting lower than ES2020.\n\n  61 |   const x = 0n;\nNext.js build worker exited with "
     "code: 1 and signal: null"),
     "Type error: BigInt literals are not available when targeting lower than ES2020."),
    # a traceback's exception, not the warning printed after it
    (("Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n    main()\nValueError: "
     "max seq len (40960) is larger than the KV cache\n[rank0]: Warning: destroy_process_group() was not called\n"),
     "ValueError: max seq len (40960) is larger than the KV cache"),
    # npm: the line that says what, not its code or its log file
    (("npm error code ERESOLVE\nnpm error ERESOLVE unable to resolve dependency tree\nnpm error\n"
     "npm error A complete log of this run can be found in: /tmp/x.log"),
     "npm error ERESOLVE unable to resolve dependency tree"),
    # Gradle/Kotlin: not the closing brace nor the hint
    (("e: file:///w/app/src/Chips.kt:12:5 Unresolved reference: chips\n\nFAILURE: Build failed with an exception."
     "\n\n* Try:\n> Run with --stacktrace option to get the stack trace.\n}"),
     "e: file:///w/app/src/Chips.kt:12:5 Unresolved reference: chips"),
    # a git hook's output with escaped newlines; a diagnostic without a message takes the next line
    (("Pre-commit validation failed:\\n\\n[DIALYZER]\\nlib/app/summary.ex:120:18:pattern_match\\nThe pattern "
     "can never match the type.\\n\\nFix these issues before committing."),
     "lib/app/summary.ex:120:18:pattern_match The pattern can never match the type."),
    # no named error: the first line that says something, not the last hint
    (("Process exited with code 1\nOutput:\n  0%|          | 0/3\nHardhat only supports ESM projects.\n\n"
     "You can set it automatically by running:\n\nnpm pkg set type=\"module\"\n"),
     "Hardhat only supports ESM projects."),
    ("\n}\n", "it failed"),
]


@pytest.mark.parametrize("output, line", KEY_LINES)
def test_the_key_line_names_the_error(output: str, line: str) -> None:
    assert key_line(output) == line


def test_codex_exec_with_exit_code_in_the_output(tmp_path: Path) -> None:
    path = codex(tmp_path, [
        ("user", "Make the type check pass."),
        ("exec", "timeout 120 bash -lc 'cd web && npx tsc --noEmit'", 2,
         "src/schema.ts(4,21): error TS2339: Property 'pipe' does not exist on type 'ZodString'.\n"),
        ("say", ("The lockfile resolved zod 3.20, which predates `.pipe()`; the schema code was written for 3.23. "
                 "I'll pin that version.")),
        ("exec", "cd web && npm install zod@^3.23.8 2>&1 | tail -5", 0, "changed 1 package in 1s\n"),
        ("exec", "npx tsc --noEmit", 0, ""),
    ])
    [lesson] = lessons(path)
    assert lesson.title.startswith("tsc --noEmit: src/schema.ts(4,21): error TS2339: Property 'pipe' does not exist")
    assert "Why: The lockfile resolved zod 3.20, which predates `.pipe()`; the schema code was written for 3.23." \
        in lesson.body
    assert lesson.body.endswith("Fixed by installing `npm install zod@^3.23.8`; then it passed.")


def test_installing_what_the_error_said_is_missing_is_no_lesson(tmp_path: Path) -> None:
    path = codex(tmp_path, [
        ("exec", "pytest -q", 2, "E   ModuleNotFoundError: No module named 'httpx'\n"),
        ("say", "httpx is not installed in this virtualenv."),
        ("exec", "uv pip install httpx", 0, "Installed 1 package in 3ms\n"),
        ("exec", "pytest -q", 0, "12 passed in 0.3s\n"),
    ])
    assert lessons(path) == []


def test_a_pinned_install_that_gets_past_the_first_error_is_a_lesson_too(tmp_path: Path) -> None:
    path = claude(tmp_path, [
        ("bash", "cd contracts && npx hardhat compile 2>&1", ("Exit code 1\nHardhat only supports ESM projects.\n\n"
                 "Please make sure you have `\"type\": \"module\"` in your package.json."), True),
        ("say", "npm pulled the latest Hardhat, which is ESM-only. Pinning the previous major instead."),
        ("bash", "cd contracts && npm install --save-dev hardhat@^2.22.0 2>&1", "added 312 packages in 9s", False),
        ("bash", "cd contracts && npx hardhat compile 2>&1", HARDHAT_FAIL, True),
        ("say", "The private key in `.env` is a placeholder."),
        ("edit", "contracts/hardhat.config.js"),
        ("bash", "cd contracts && npx hardhat compile 2>&1", "Compiled 3 Solidity files successfully", False),
    ])
    found = lessons(path)
    assert [c.title for c in found] == [
        ("hardhat compile: Error HH8: There's one or more errors in your config file: Invalid account: #0 for "
         "network:…"),
        "hardhat compile: Hardhat only supports ESM projects"]
    assert found[1].body == (
        "`hardhat compile` failed with:\n    Hardhat only supports ESM projects.\n"
        "Why: npm pulled the latest Hardhat, which is ESM-only.\n"
        "Fixed by installing `npm install --save-dev hardhat@^2.22.0`; then it got past that error.")


def test_a_new_variable_is_the_fix(tmp_path: Path) -> None:
    path = claude(tmp_path, [
        ("bash", "uv run pytest -q tests/test_cli.py 2>&1 | tail -20",
         "E   ModuleNotFoundError: No module named 'shop'\nFAILED tests/test_cli.py::test_help\n1 failed", False),
        ("bash", "PYTHONPATH=src uv run pytest -q tests/test_cli.py 2>&1 | tail -20", "3 passed in 0.2s", False),
    ])
    [lesson] = lessons(path)
    assert lesson.body == ("`pytest -q tests/test_cli.py` failed with:\n"
                           "    ModuleNotFoundError: No module named 'shop'\n"
                           "Fixed by adding the variable `PYTHONPATH`; then it passed.")


def test_the_cli_proposes_the_lesson(tmp_path: Path, repo: Path) -> None:
    path = claude(tmp_path, [
        ("bash", "cd /home/dev/shop && source .venv/bin/activate && python -m pytest -x 2>&1 | tail -30",
         "Exit code 1\nE   KeyError: 'currency'\nFAILED tests/test_orders.py::test_total - KeyError: 'currency'",
         True),
        ("say", "The order fixture has no currency since the schema change; `total()` must default it."),
        ("edit", "src/orders.py"),
        ("bash", "python -m pytest -x", "12 passed in 0.4s", False),
    ])
    assert CliRunner().invoke(cli, ["-C", str(repo), "init"]).exit_code == 0
    result = CliRunner().invoke(cli, ["-C", str(repo), "capture", "--json", str(path)], catch_exceptions=False)
    [lesson] = [c for c in json.loads(result.stdout)["candidates"] if c["kind"] == "lesson"]
    assert lesson["title"] == "pytest -x: KeyError: 'currency'"
    assert lesson["files"] == ["src/orders.py"]
    assert lesson["evidence"]["lines"] == [2, 4, 7]  # the failure, the fixing edit, the passing run


# -- what is not a lesson ----------------------------------------------------------------------


@pytest.mark.parametrize("steps", [
    # looking around: a failing grep teaches nothing
    [("bash", "cd src && grep -rn TODO . | head", "Exit code 1", True), ("edit", "src/a.py"),
     ("bash", "grep -rn TODO src", "src/a.py:1: TODO", False)],
    # a network hiccup, passed on retry
    [("bash", "npm test", "Exit code 1\nError: connect ECONNREFUSED 127.0.0.1:5432", True),
     ("say", "The database container was not up yet."), ("edit", "docker-compose.yml"),
     ("bash", "npm test", "4 passing", False)],
    # a rate limit
    [("bash", "python scripts/sync.py", "Exit code 1\nopenai.RateLimitError: Error code: 429 - quota exceeded", True),
     ("say", "The API key hit its quota."), ("edit", "scripts/sync.py"),
     ("bash", "python scripts/sync.py", "synced 40 rows", False)],
    # never fixed in the session
    [("bash", "cargo test", "Exit code 101\nerror[E0308]: mismatched types", True),
     ("say", "The parser returns a String where a &str is expected."), ("edit", "src/parse.rs"),
     ("bash", "cargo test", "Exit code 101\nerror[E0308]: mismatched types", True)],
    # passed again with nothing changed: flaky
    [("bash", "npm test", "Exit code 1\nError: Timeout of 2000ms exceeded", True),
     ("bash", "npm test", "4 passing", False)],
    # a fix nobody explained, or only guessed at
    [("bash", "make build", "Exit code 2\nmain.c:3:10: error: unknown type name 'size_t'", True),
     ("say", "Maybe a header is missing, I think."), ("edit", "main.c"),
     ("bash", "make build", "ok", False)],
    # a test the session wrote, then corrected
    [("bash", "npx jest", "Exit code 1\nFAIL tests/cart.test.ts\n  Expected: 3\n  Received: 2", True),
     ("say", "The test expected the wrong count: the cart dedupes items."), ("edit", "tests/cart.test.ts"),
     ("bash", "npx jest", "Tests: 8 passed", False)],
    # a formatter's complaint
    [("bash", "git commit -m 'wip'", "Exit code 1\n[FORMAT] Code is not formatted. Run 'mix format'.", True),
     ("say", "The hook runs the formatter check."), ("edit", "lib/app.ex"),
     ("bash", "git commit -m 'wip'", "[main 1a2b3c4] wip", False)],
    # an install for another ecosystem does not fix a Rust build
    [("bash", "cargo check", "Exit code 101\nerror[E0599]: no method named `context` found", True),
     ("bash", "cd web && npm install", "added 46 packages", False),
     ("bash", "cargo check", "Finished `dev` profile", False)],
    # a linter's rule, fixed: the linter names the rule itself
    [("bash", "cd api && ruff check src/", "Exit code 1\nsrc/a.py:3:1: I001 Import block is un-sorted", True),
     ("say", "The imports are not sorted the way ruff's isort rule wants."), ("edit", "api/src/a.py"),
     ("bash", "ruff check src/", "All checks passed!", False)],
    [("bash", "npm run lint", "Exit code 1\n  3:7  error  'x' is never reassigned  prefer-const", True),
     ("say", "ESLint's prefer-const rule flags the `let`."), ("edit", "web/a.ts"),
     ("bash", "npm run lint", "ok", False)],
])
def test_not_a_lesson(tmp_path: Path, steps: list[tuple[Any, ...]]) -> None:
    assert lessons(claude(tmp_path, [("user", "Fix the build."), *steps])) == []


def test_a_refused_tool_call_and_a_missing_runner_are_not_what_was_learned(tmp_path: Path) -> None:
    """The agent's tool refused the first call (it never ran), and the test runner was missing and
    installed: neither is the lesson; the assertion the agent explained and fixed is."""
    [lesson] = lessons(claude(tmp_path, [
        ("user", "Fix the tests."),
        ("bash", "pytest tests/", "<tool_use_error>Sibling tool call errored</tool_use_error>", True),
        ("bash", "pytest tests/", "Exit code 1\n/w/.venv/bin/python3: No module named pytest", True),
        ("say", "The test runner is not installed in the virtual environment."),
        ("bash", "uv pip install pytest", "Installed 1 package", False),
        ("bash", "pytest tests/", "Exit code 1\nFAILED tests/test_a.py::test_x - AssertionError: assert 2 == 3", True),
        ("say", "The total skips the last item: the loop stops one short."), ("edit", "src/total.py"),
        ("bash", "pytest tests/", "3 passed", False),
    ]))
    assert "AssertionError" in lesson.body and "src/total.py" in lesson.body
    assert "tool_use_error" not in lesson.body + lesson.title and "No module named" not in lesson.body + lesson.title


def test_a_tally_is_no_diagnosis_and_a_separator_is_no_error(tmp_path: Path) -> None:
    """"8 tests failing." says how many, not why: the sentence that gives the cause is the one
    kept; a pytest failure's `file:line: AssertionError` is quoted without the separator after it."""
    output = ("Exit code 1\n=== FAILURES ===\ntests/test_size.py:12: AssertionError\n"
              "__________________ test_parse_megabytes __________________\n1 failed, 7 passed")
    [lesson] = lessons(claude(tmp_path, [
        ("user", "The size tests fail."),
        ("bash", "pytest tests/test_size.py", output, True),
        ("say", "8 tests failing."),
        ("say", "The size parser matches the unit table in order, so the `b` suffix wins over `mb`."),
        ("edit", "src/size.py"),
        ("bash", "pytest tests/test_size.py", "8 passed", False),
    ]))
    assert "Why: The size parser matches the unit table in order" in lesson.body and "8 tests failing" not in lesson.body
    assert "tests/test_size.py:12: AssertionError" in lesson.body and "____" not in lesson.body


# -- command normalisation ---------------------------------------------------------------------


@pytest.mark.parametrize("command, key", [
    ("cd /repo && ENV=1 npx jest --ci 2>&1 | tail -50", "jest"),
    ("timeout 60 uv run pytest -q tests/test_a.py", "pytest tests/test_a.py"),
    ("bash -lc \"source .venv/bin/activate && poetry run python -m mypy src\"", "mypy src"),
    ("CUDA_VISIBLE_DEVICES=0,1 /opt/app/.venv/bin/python train.py 2>&1 | head -80", "python train.py"),
    ("git add -A && git commit -m \"$(cat <<'EOF'\nfix: things\n\nmore\nEOF\n)\"", "git commit"),
    ("# rebuild first\nkill 123 2>/dev/null; sleep 2\ncd /srv && make build", "make build"),
    ('const r = await tools.exec_command({"cmd":"cd app && cargo test 2>&1 | tail","workdir":"/w"});\ntext(r.out);',
     "cargo test"),
    ("script -qfc \"NCCL_P2P_DISABLE=1 python smoke.py\" /tmp/log &", "python smoke.py"),
])
def test_command_keys_ignore_wrappers_and_flags(command: str, key: str) -> None:
    assert parse(command).key == key


def test_installs_and_trivial_commands() -> None:
    assert is_install(parse("cd /r && uv pip install --python .venv/bin/python -e . 2>&1 | tail -10"))
    assert is_install(parse("rm -rf node_modules && npm install --save-dev \"hardhat@^2.22.0\""))
    assert is_install(parse("poetry add httpx==0.27.0"))
    assert not is_install(parse("npm test"))
    assert is_trivial(parse("cd src && ls -la | head")) and is_trivial(parse("git status --short"))
    assert not is_trivial(parse("git commit -m x")) and not is_trivial(parse("pytest"))
    assert parse("cat > src/gen.py <<'EOF'\nprint(1)\nEOF").writes == ("src/gen.py",)


# -- errors the user reported ------------------------------------------------------------------

CONSOLE = ("the export button does nothing now, console says\n\nTypeError: csv.join is not a function\n"
           "    at exportRows (src/export.ts:41:17)\n")


def test_an_error_the_user_reported_and_the_agent_explained(tmp_path: Path) -> None:
    path = codex(tmp_path, [
        ("user", CONSOLE),
        ("say", ("The `csv.join` error comes from `toCsv`: it returns a string since the streaming change, but "
                "`exportRows` still treats it as an array. I'll drop the join.")),
        ("patch", "src/export.ts"),
        ("user", "works, thanks. now add a header row"),
    ])
    [lesson] = lessons(path)
    assert lesson.title.startswith("TypeError: csv.join is not a function: The `csv.join` error comes from")
    assert lesson.body == (
        "Reported: TypeError: csv.join is not a function\n"
        "Why: The `csv.join` error comes from `toCsv`: it returns a string since the streaming change, but "
        "`exportRows` still treats it as an array.\n"
        "Fixed by changing src/export.ts.")


@pytest.mark.parametrize("said, then", [
    # a guess is no diagnosis
    ("The `csv.join` error probably comes from `toCsv` returning a string.", "works, thanks"),
    # the user says it is still broken
    ("The `csv.join` error comes from `toCsv`, which returns a string.", "still csv.join is not a function"),
    # the cause is the session's own slip
    ("The `csv.join` error comes from the change we made to `toCsv` because we changed its return type.", "ok"),
    # nobody confirmed: the session ended
    ("The `csv.join` error comes from `toCsv`, which returns a string.", ""),
])
def test_a_reported_error_without_a_confirmed_cause_is_no_lesson(tmp_path: Path, said: str, then: str) -> None:
    steps: list[tuple[Any, ...]] = [("user", CONSOLE), ("say", said), ("patch", "src/export.ts")]
    if then:
        steps.append(("user", then))
    assert lessons(codex(tmp_path, steps)) == []


def test_a_chat_export_records_an_edit_as_a_code_block_headed_by_its_file(tmp_path: Path) -> None:
    path = tmp_path / "chat.md"
    path.write_text(
        "### Human\n\nUploading fails with: AttributeError: 'str' object has no attribute 'isoformat'\n\n"
        "### Assistant\n\nThe `'str' object has no attribute 'isoformat'` error happens because `parse_day` "
        "returns the raw string when no format matches.\n\n```python:app/dates.py\ndef parse_day(text):\n"
        "    return datetime.strptime(text, '%d/%m/%Y')\n```\n\n"
        "### Human\n\nGreat, the upload goes through now.\n")
    [lesson] = lessons(path)
    assert lesson.files == ("app/dates.py",)
    assert lesson.body.startswith("Reported: Uploading fails with: AttributeError: 'str' object has no attribute")


def test_a_filter_that_matched_nothing_is_not_a_failure(tmp_path: Path) -> None:
    path = claude(tmp_path, [
        ("bash", "mix test 2>&1 | grep -E 'failures'", "Exit code 1", True),
        ("say", "The grep pattern missed the summary line."), ("edit", "lib/app.ex"),
        ("bash", "mix test 2>&1 | grep -E 'failures'", "410 tests, 0 failures", False),
    ])
    assert lessons(path) == []


def test_many_commands_that_never_pass_stay_cheap(tmp_path: Path) -> None:
    steps: list[tuple[Any, ...]] = []
    for n in range(300):
        steps += [("bash", f"make target{n}", f"Exit code 2\nmake: *** [target{n}] Error 2\nerror: step {n}", True),
                  ("edit", f"src/m{n}.c")]
    steps += [("bash", "make target299", "Exit code 2\nerror: undefined reference to `sqrt'", True),
              ("say", "`sqrt` lives in libm, which the Makefile stopped linking."), ("edit", "Makefile"),
              ("bash", "make target299", "built", False)]
    [lesson] = lessons(claude(tmp_path, steps))
    assert lesson.files == ("Makefile",)
    assert "Dead end" not in lesson.body  # the earlier failure said something else


def test_running_fewer_tests_is_not_a_fix(tmp_path: Path) -> None:
    path = claude(tmp_path, [
        ("bash", "npx jest", "Exit code 1\nFAIL src/cart.test.ts\n  TypeError: total is not a function", True),
        ("bash", "npx jest --testPathPattern=orders -v", "Tests: 4 passed", False),
    ])
    assert lessons(path) == []


def test_a_user_asking_again_about_the_error_means_it_is_not_fixed(tmp_path: Path) -> None:
    path = codex(tmp_path, [
        ("user", "Saving the invoice fails: 'Per-row totals must be numeric' when the discount column is N/A"),
        ("say", "The error was occurring because pandas reads the N/A discount as a string in a numeric column."),
        ("patch", "app/invoices.py"),
        ("user", "forget the discount column. What could be causing this error?"),
    ])
    assert lessons(path) == []


def test_a_remark_about_something_else_is_no_diagnosis(tmp_path: Path) -> None:
    path = claude(tmp_path, [
        ("bash", "cargo build", "Exit code 101\nerror[E0425]: cannot find value `retries` in this scope", True),
        ("say", "The README still mentions the old install steps."), ("edit", "src/net.rs"),
        ("bash", "cargo build", "Finished `dev` profile", False),
    ])
    assert lessons(path) == []


def test_a_request_that_names_errors_is_not_a_report(tmp_path: Path) -> None:
    path = codex(tmp_path, [
        ("user", "Add error handling to the upload endpoint in app/upload.py"),
        ("say", "The upload endpoint returns 200 for every request because the handler swallows exceptions."),
        ("patch", "app/upload.py"),
        ("user", "thanks"),
    ])
    assert lessons(path) == []
