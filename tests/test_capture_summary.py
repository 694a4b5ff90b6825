"""The task summary's goal, paths kept inside the repository, what counts as already known,
and the pending count: `memgit capture` on small Claude Code transcripts written here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import memgit
from memgit.capture.paths import Place
from memgit.capture.summary import task
from memgit.cli import cli
from memgit.memory.format import Memory

from .conftest import git

SESSION = "7d1e2f30-aaaa-4bbb-8ccc-0123456789ab"


def run(repo: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["-C", str(repo), *args], catch_exceptions=False)


@pytest.fixture
def store(repo: Path) -> Path:
    assert run(repo, "init").exit_code == 0
    return repo


class Session:
    """A Claude Code transcript in the shape Claude Code writes it, one record a line."""

    def __init__(self, cwd: str) -> None:
        self.cwd, self.lines, self.calls = cwd, [], 0

    def _record(self, kind: str, message: dict[str, Any]) -> None:
        n = len(self.lines) + 1
        self.lines.append(json.dumps({
            "parentUuid": f"u-{n - 1}" if n > 1 else None, "isSidechain": False, "type": kind, "message": message,
            "uuid": f"u-{n}", "timestamp": f"2026-08-20T09:{n // 60:02d}:{n % 60:02d}.000Z", "userType": "external",
            "cwd": self.cwd, "sessionId": SESSION, "version": "2.1.0", "gitBranch": "main"}))

    def user(self, text: str) -> Session:
        self._record("user", {"role": "user", "content": text})
        return self

    def say(self, text: str) -> Session:
        self._record("assistant", {"role": "assistant", "id": f"msg-{len(self.lines)}", "type": "message",
                                   "content": [{"type": "text", "text": text}]})
        return self

    def tool(self, name: str, args: dict[str, Any], output: str, error: bool = False) -> Session:
        self.calls += 1
        call = f"toolu_{self.calls:03d}"
        self._record("assistant", {"role": "assistant", "id": f"msg-{len(self.lines)}", "type": "message",
                                   "content": [{"type": "tool_use", "id": call, "name": name, "input": args}]})
        self._record("user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call, "content": output, "is_error": error}]})
        return self

    def edit(self, path: str) -> Session:
        return self.tool("Edit", {"file_path": path, "old_string": "a = 1", "new_string": "a = 2"},
                         f"The file {path} has been updated.")

    def write(self, folder: Path, name: str = "session.jsonl") -> Path:
        path = folder / name
        path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")
        return path


def capture(repo: Path, transcript: Path) -> dict[str, Any]:
    result = run(repo, "capture", str(transcript), "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def summary_of(data: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in data["candidates"] if c["kind"] == "summary"), None)


# -- the goal ---------------------------------------------------------------------------------

@pytest.mark.parametrize("said", [
    "hi! hope your day is going well", ".", "continue", "yes", "/review", "/compact",
    "https://example.com/issues/12", "thanks!", "ok do it",
    "Base directory for this skill: /opt/skills/review\n\n# Review\n\nReview the diff for bugs and style.",
    "why is the cache key built from the path and not the id?",
    "chmod +x ~/scripts/*.sh", "git push origin main --force",
])
def test_turns_that_state_no_task(said: str) -> None:
    assert task(said) == ""


@pytest.mark.parametrize("said, goal", [
    ("hi! hope your day is going well\nCan you add a retry to the HTTP client?",
     "Can you add a retry to the HTTP client?"),
    ('claude "/build-feature Add CSV export to the reports page with a download button"',
     "Add CSV export to the reports page with a download button"),
    ("https://example.com/issues/12\n\nthe importer skips rows with a quoted comma, fix it",
     "the importer skips rows with a quoted comma, fix it"),
    ("ok, I moved the settings into config/ and the loader still reads the old place, update it",
     "I moved the settings into config/ and the loader still reads the old place, update it"),
    ("e: file:///ci/work/app/src/Chips.kt:27:15 Unresolved reference: chips\ne: more of the log",
     "Fix: Unresolved reference: chips"),
    ("src/api.ts(12,7): error TS2304: Cannot find name 'fetchUser'.", "Fix: Cannot find name 'fetchUser'."),
    ("TypeError: t.serialize is not a function\n    at deposit (vault.ts:40)", "Fix: TypeError: t.serialize is not a function"),
    ("make the retry button blue and move it left", "make the retry button blue and move it left"),
])
def test_the_task_a_turn_states(said: str, goal: str) -> None:
    assert task(said) == goal


def test_a_pasted_brief_gives_its_own_title_or_first_sentence() -> None:
    rules = "\n".join(f"- rule {n}: keep the handlers small and typed" for n in range(60))
    assert task(f"# Ledger service: build brief\n## Read all of it first\n\n{rules}") == "Ledger service: build brief"
    assert task(f"We need a full audit of the billing flow. It has grown.\n\n{rules}") == \
        "We need a full audit of the billing flow."
    # A copy that starts in the middle of a sentence: only the request after it counts.
    assert task(f"_TOKEN env var)\n{rules}\nplease continue this") == ""
    assert task(f"_TOKEN env var)\n{rules}\nNow port the retry logic to the worker") == \
        "Now port the retry logic to the worker"


def test_the_goal_is_the_request_that_led_to_the_changes(store: Path, tmp_path: Path) -> None:
    cwd = str(store)
    path = (Session(cwd).user("hi! hope your day is going well").say("Hello! What are we working on?")
            .user("What could make the search page feel faster? Give me three ideas.")
            .say("1. Debounce the input. 2. Cache results. 3. Paginate.")
            .user("Debounce the search input in src/search.ts by 300 ms")
            .edit(f"{cwd}/src/search.ts").say("Done: the input is debounced by 300 ms.")
            .write(tmp_path))
    summary = summary_of(capture(store, path))
    assert summary is not None
    assert summary["title"] == "Session: Debounce the search input in src/search.ts by 300 ms"
    assert summary["body"].startswith("Goal: Debounce the search input in src/search.ts by 300 ms\n"
                                      "Changed: src/search.ts")
    assert summary["files"] == ["src/search.ts"]


def test_a_follow_up_stands_for_the_request_it_goes_on_from(store: Path, tmp_path: Path) -> None:
    cwd = str(store)
    path = (Session(cwd).user("Check that the benchmark scripts under bench/ still match the new trainer API")
            .say("They do, except two flags.").user("so the sync and async trainers share the config now?")
            .say("Yes.").user("then give me the command for running them")
            .edit(f"{cwd}/bench/run.sh").say("Run bench/run.sh.").write(tmp_path))
    summary = summary_of(capture(store, path))
    assert summary is not None
    assert summary["title"] == "Session: Check that the benchmark scripts under bench/ still match the new trainer API"


def test_a_confirmation_stands_for_the_request_before_it(store: Path, tmp_path: Path) -> None:
    cwd = str(store)
    path = (Session(cwd).user("Rename the Widget class to Gadget everywhere in the docs")
            .say("That touches 14 files. Shall I go ahead?").user("yes, go ahead")
            .edit(f"{cwd}/docs/guide.md").say("Renamed in all 14 files.").write(tmp_path))
    summary = summary_of(capture(store, path))
    assert summary is not None and summary["title"] == "Session: Rename the Widget class to Gadget everywhere in the docs"


def test_no_summary_without_a_stated_task(store: Path, tmp_path: Path) -> None:
    cwd = str(store)
    paste = "ION env var)\n" + "\n".join(f"- step {n} done in the other session" for n in range(80))
    path = Session(cwd).user(paste + "\ncontinue please").edit(f"{cwd}/lock.json").say("Updated.").write(tmp_path)
    assert summary_of(capture(store, path)) is None


def test_a_long_goal_is_shortened_and_the_changed_files_stay(store: Path, tmp_path: Path) -> None:
    cwd = str(store)
    session = Session(cwd).user("Port every module of the reporting package to the new query builder, keep "
                                "the public functions, and " + "update the call sites and tests " * 12)
    for n in range(40):
        session.edit(f"{cwd}/src/reporting/very/deep/folder/module_number_{n}_with_a_long_name.py")
    summary = summary_of(capture(store, session.say("All 40 modules are ported.").write(tmp_path)))
    assert summary is not None
    assert "\nChanged: src/reporting/very/deep/folder/module_number_0_with_a_long_name.py" in summary["body"]


def test_the_last_command_is_a_check_not_a_look_around(store: Path, tmp_path: Path) -> None:
    cwd = str(store)
    path = (Session(cwd).user("Fix the rounding in src/money.py")
            .edit(f"{cwd}/src/money.py").tool("Bash", {"command": "python -m pytest -q tests/test_money.py"},
                                                "12 passed in 0.31s")
            .tool("Bash", {"command": "ls src/ && cat src/money.py"}, "money.py\n")
            .tool("Bash", {"command": "python --version"}, "Python 3.12.1")
            .tool("Bash", {"command": "git add src/money.py tests/test_money.py"}, "")
            .tool("Bash", {"command": "_END=$(date +%s)\necho \"skill build done in $_END\" >> ~/.skill/log"}, "")
            .say("<thinking>\nFixed: the rounding is half-even now. The details:\n\n## Tests\n- 12 money tests pass")
            .write(tmp_path))
    summary = summary_of(capture(store, path))
    assert summary is not None
    assert "Last command: `python -m pytest -q tests/test_money.py` passed." in summary["body"]
    assert "Outcome: Fixed: the rounding is half-even now. The details: 12 money tests pass" in summary["body"]


def test_a_goal_that_introduces_a_list() -> None:
    assert task("Build the export service with:\n\n1. a queue\n2. a worker") == "Build the export service"


# -- paths: inside the repository, no home folder ---------------------------------------------

def everything(data: dict[str, Any]) -> str:
    return json.dumps([data["candidates"], data["known"], data["dropped"]])


def test_windows_and_git_bash_paths_become_relative(store: Path, tmp_path: Path) -> None:
    cwd = "C:\\Users\\jdoe42\\Coding\\ledger"
    path = (Session(cwd).user("Build the ledger contracts and their tests")
            .edit("C:\\Users\\jdoe42\\Coding\\ledger\\contracts\\Ledger.sol")
            .edit("c:/Users/jdoe42/Coding/ledger/contracts/test/Ledger.test.js")
            .edit("C:\\Users\\jdoe42\\AppData\\Roaming\\tool\\settings.json")
            .tool("Bash", {"command": "cd /c/Users/jdoe42/Coding/ledger/contracts && npx hardhat test"},
                  "3 passing")
            .say("The contracts build and the 3 tests pass.").write(tmp_path))
    data = capture(store, path)
    summary = summary_of(data)
    assert summary is not None
    assert summary["files"] == ["contracts/Ledger.sol", "contracts/test/Ledger.test.js"]
    assert "Last command: `cd contracts && npx hardhat test` passed." in summary["body"]
    assert "jdoe42" not in everything(data) and "Users" not in everything(data)


def test_a_session_from_another_machine_matches_the_repositorys_files(store: Path, tmp_path: Path) -> None:
    (store / "src").mkdir()
    (store / "src" / "app.py").write_text("a = 1\n")
    git(store, "add", "src/app.py")
    git(store, "commit", "-q", "-m", "app")
    # The session ran in the person's home folder, above the project's own folder.
    path = (Session("/home/jdoe42").user("Make the app read its port from the environment")
            .edit("/home/jdoe42/projects/shop/src/app.py").edit("/home/jdoe42/.config/shop/local.toml")
            .edit("/opt/elsewhere/notes.txt")
            .say("The app reads PORT now.").write(tmp_path))
    data = capture(store, path)
    summary = summary_of(data)
    assert summary is not None and summary["files"] == ["src/app.py"]  # the rest is outside the project
    assert "jdoe42" not in everything(data) and "/opt/" not in everything(data)


def test_home_folders_are_scrubbed_from_text() -> None:
    place = Place("/srv/repo", "/Users/jdoe42/work/repo")
    assert place.scrub("see /Users/jdoe42/work/repo/src/a.py and /Users/jdoe42/other/b.py") == \
        "see src/a.py and ~/other/b.py"
    assert place.scrub("cd /Users/jdoe42/work/repo && make") == "cd . && make"
    assert place.scrub("C:\\Users\\jdoe42\\x and /home/jdoe42 and https://example.com/home/page") == \
        "~\\x and ~ and https://example.com/home/page"
    assert place.scrub("$ whoami\njdoe42") == "$ whoami\n<user>"  # the account name on its own too
    assert Place("/srv/repo", "/home/dev/repo").scrub("a dev build") == "a dev build"  # too common a name
    assert place.path("/Users/jdoe42/work/repo2/a.py") is None  # a folder whose name only starts alike
    assert place.path("../up.py") is None and place.path("/srv/repo/README.md") == "README.md"


# -- already known -----------------------------------------------------------------------------

def failing_then_fixed(cwd: str) -> Session:
    test = "python -m pytest -q tests/test_parse.py"
    return (Session(cwd).user("Fix the failing parser test in src/parse.py")
            .tool("Bash", {"command": test}, "Exit code 1\nE   AssertionError: 3 != 4\n"
                                             "FAILED tests/test_parse.py::test_split - AssertionError: 3 != 4",
                  error=True)
            .say("split drops the last field when the line ends with a separator; `split()` must keep it.")
            .edit(f"{cwd}/src/parse.py")
            .tool("Bash", {"command": test}, "1 passed in 0.10s")
            .say("Fixed: split keeps the last field; the test passes."))


def add(repo: Path, memory: Memory) -> None:
    mem = memgit.open(repo, warn=lambda _m: None)
    mem.workspace.writer.add([memory], f"memory: {memory.title}", True)


def test_a_checkpoint_does_not_make_a_lesson_known(store: Path, tmp_path: Path) -> None:
    path = failing_then_fixed(str(store)).write(tmp_path)
    lesson = next(c for c in capture(store, path)["candidates"] if c["kind"] == "lesson")
    # The task's checkpoint repeats what the session did, word for word; it expires.
    add(store, Memory(id="m-ck0001", title=lesson["title"], body=lesson["body"] + "\nState: src/parse.py",
                      kind="checkpoint", source="inferred", task_id=SESSION,
                      created="2026-08-20T09:00:00+00:00", expires="2099-01-01T00:00:00+00:00",
                      tags=("checkpoint",)))
    data = capture(store, path)
    assert [c["kind"] for c in data["candidates"]].count("lesson") == 1 and data["known"] == []
    # A lasting note saying the same is known.
    add(store, Memory(id="m-ls0001", title=lesson["title"], body=lesson["body"], kind="lesson",
                      source="inferred", created="2026-08-20T09:00:00+00:00"))
    assert [k["duplicate_of"] for k in capture(store, path)["known"]] == ["m-ls0001"]


def test_a_summary_is_known_only_as_its_own_tasks_summary(store: Path, tmp_path: Path) -> None:
    path = failing_then_fixed(str(store)).write(tmp_path)
    summary = summary_of(capture(store, path))
    assert summary is not None
    # Another memory about the same file, in the same words, is not this task's summary.
    add(store, Memory(id="m-other1", title="Parser: split and the last field",
                      body=summary["body"] + "\nFix the failing parser test in src/parse.py", kind="fact",
                      created="2026-08-20T09:00:00+00:00", files=("src/parse.py",)))
    add(store, Memory(id="m-other2", title="Session: Fix the failing parser test in src/parse.py, again",
                      body=summary["body"], kind="summary", source="inferred", task_id="another-session",
                      created="2026-08-20T09:00:00+00:00", files=("src/parse.py",)))
    data = capture(store, path)
    assert summary_of(data) is not None and not [k for k in data["known"] if k["kind"] == "summary"]
    add(store, Memory(id="m-mine01", title="Session: the parser fix", body="Goal: parser", kind="summary",
                      source="inferred", task_id=SESSION, created="2026-08-20T09:00:00+00:00"))
    data = capture(store, path)
    assert summary_of(data) is None
    assert [(k["kind"], k["duplicate_of"]) for k in data["known"]] == [("summary", "m-mine01")]


def test_a_short_rule_is_not_known_by_a_longer_note_sharing_its_words(store: Path, tmp_path: Path) -> None:
    run(store, "remember", "Before the release, run the tests first on staging, then tag the commit and "
                           "write the changelog", "--kind", "convention")
    path = (Session(str(store)).user("Always run the tests first.").say("Noted.")
            .user("Fix the typo in README.md").edit(f"{store}/README.md").say("Fixed.").write(tmp_path))
    data = capture(store, path)
    assert [c["title"] for c in data["candidates"] if c["kind"] != "summary"] == ["Always run the tests first"]
    assert data["known"] == []


# -- the pending count -------------------------------------------------------------------------

def test_the_pending_count_is_what_the_proposal_shows(store: Path, tmp_path: Path) -> None:
    path = (failing_then_fixed(str(store)).user("Always use tabs in Makefiles.").say("Noted.")
            .user("Never commit the .env file.").say("Noted.").write(tmp_path))
    assert run(store, "capture", "--from-hook", str(path)).exit_code == 0
    listed = run(store, "capture", "--pending")
    proposal_id, count = listed.stdout.split()[0], int(listed.stdout.split("memories")[0].split()[-1])
    assert count == 4  # two rules, a lesson, a summary
    # The store learns one of them after the session ended: both views drop it.
    run(store, "remember", "Never commit the .env file.", "--kind", "convention")
    listed = run(store, "capture", "--pending")
    assert "  3 memories  " in listed.stdout
    assert "3 new memories:" in run(store, "capture", "--pending", proposal_id).stdout
    as_json = json.loads(run(store, "capture", "--pending", "--json").stdout)
    assert len(as_json[0]["candidates"]) == 3 and len(as_json[0]["known"]) == 1


def test_a_file_of_the_project_shows_where_its_folder_was() -> None:
    place = Place("/srv/shop", "/home/jdoe42", files=lambda: {"src/app.py", "README.md"})
    assert place.paths(["/home/jdoe42/.bashrc", "/home/jdoe42/projects/shop/src/app.py",
                        "/home/jdoe42/projects/shop/src/new.py", "notes/todo.md"]) == ("src/app.py", "src/new.py")
    # On this machine, in a sub-folder of the repository: relative paths are the sub-folder's.
    here = Place("/srv/shop", "/srv/shop/web", files=lambda: ())
    assert here.paths(["app.ts", "/srv/shop/web/b.ts", "/srv/shop/api/c.py", "/srv/other/d.py", "../api/e.py"]) == \
        ("web/app.ts", "web/b.ts", "api/c.py", "api/e.py")


def test_a_proposal_that_holds_nothing_new_any_more_does_not_wait(store: Path, tmp_path: Path) -> None:
    path = failing_then_fixed(str(store)).write(tmp_path)
    assert run(store, "capture", "--from-hook", str(path)).exit_code == 0
    assert "memories" in run(store, "capture", "--pending").stdout
    # The session's memories reach the store another way; the hook runs again as the session goes on.
    assert run(store, "capture", str(path), "--apply").exit_code == 0
    assert run(store, "capture", "--from-hook", str(path)).exit_code == 0
    assert run(store, "capture", "--pending").stdout == ""
