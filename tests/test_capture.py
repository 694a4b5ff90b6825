"""`memgit capture` on realistic transcripts, against a real repository and a real index."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memgit.agents import transcripts
from memgit.capture.extract import extract
from memgit.cli import cli

from .conftest import ROOT, git

DATA = ROOT / "tests" / "data" / "transcripts"
CLAUDE = DATA / "claude-session.jsonl"
CODEX = DATA / "codex-rollout.jsonl"
CHINESE = DATA / "claude-chinese.jsonl"
CHAT = DATA / "chat-log.md"
AIDER = DATA / "aider.chat.history.md"


def run(repo: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["-C", str(repo), *args], catch_exceptions=False)


@pytest.fixture
def store(repo: Path) -> Path:
    assert run(repo, "init").exit_code == 0
    return repo


def candidates(path: Path) -> list[tuple[str, str, str]]:
    return [(c.kind, c.title, c.source) for c in extract(transcripts.read(path))]


# -- extraction, per fixture ---------------------------------------------------------------------

def test_claude_session_candidates() -> None:
    found = extract(transcripts.read(CLAUDE))
    assert [(c.kind, c.title, c.source, c.confidence) for c in found] == [
        ("convention", "We use ruff format, not black", "user", 0.9),
        ("preference", "Never push directly to main; open a pull request", "user", 0.9),
        ("convention", "Staging runs the smoke tests with DATABASE_URL=postgres://shop:Xk9mP2vLq8zT@staging-db:5432/shop…",
         "user", 0.9),
        ("convention", "My GitHub token is ghp_Q8v2LmN4pR7sT1wX9yZ3aB6cD0eF5gH2jK8m", "user", 0.9),
        ("convention", "parse_config returns a tuple (path, Config)", "user", 0.9),
        ("convention", "It's `make test-all` before a release, not `make test`; the release job also runs the browser "
         "tests", "user", 0.9),
        ("lesson", "make test: AssertionError: open redirect to https://evil.example/phish", "inferred", 0.6),
        ("decision", "Chose: A setting ALLOWED_REDIRECT_HOSTS in config/settings.py", "user", 0.9),
        ("summary", "Session: Fix the login redirect bug in src/auth.py and add a test", "inferred", 0.5),
    ]
    lesson = found[6]
    assert lesson.files == ("src/auth.py",)
    assert lesson.symbols == ("src/auth.py::login", "src/auth.py::safe_next")
    assert lesson.evidence == (12, 15, 18)  # the failure, the fixing edit, the passing run
    assert "AssertionError: open redirect" in lesson.body and "Fixed by changing src/auth.py" in lesson.body
    decision = found[7]
    assert "Rejected: A hard-coded tuple in src/auth.py" in decision.body and decision.evidence == (22, 23)
    summary = found[8]
    assert summary.files == ("src/auth.py",)
    assert "Functions: login, safe_next" in summary.body and "Last command: `make test` passed." in summary.body
    assert "Outcome: Fixed: login only follows relative" in summary.body
    titles = " ".join(c.title + c.body for c in found)
    # Not extracted: thanks, the agent's speculation, a hedged reply, a sub-agent's prompt, the
    # compaction summary, meta and command lines.
    for noise in ("Thanks", "session cookie", "Maybe later", "tabs", "continued from a previous", "Caveat",
                  "/clear"):
        assert noise not in titles


def test_claude_parsing_is_lenient() -> None:
    transcript = transcripts.read(CLAUDE)
    assert transcript.format == "claude" and transcript.skipped == 1  # the torn last line
    assert transcript.session_id == "5b2c9a8e-1111-4c2d-9e3f-0123456789ab"
    # Streamed blocks sharing a message id are one message.
    joined = [e for e in transcript.events if e.role == "assistant" and "open-redirect" in e.text]
    assert len(joined) == 1 and joined[0].text.endswith("I'll only allow relative paths.")
    assert [e.line for e in transcript.events if e.role == "summary"] == [31, 32]
    assert any(e.sidechain for e in transcript.events)


def test_codex_rollout_candidates() -> None:
    found = extract(transcripts.read(CODEX))
    assert [(c.kind, c.title, c.source) for c in found] == [
        ("preference", "Don't add new dependencies without asking me first", "user"),
        ("convention", "We inject the clock through Client.__init__, never call time.sleep directly", "user"),
        ("lesson", "pytest -q tests/test_client.py: ModuleNotFoundError: No module named 'tenacity'", "inferred"),
        # The fake-clock failure is fixed by an edit the agent never explained: no lesson.
        ("decision", "Approved plan: Add a RetryPolicy dataclass in src/net/retry.py", "user"),
        ("summary", "Session: Add retries to Client.fetch in src/net/client.py; flaky upstreams time out", "inferred"),
    ]
    # An edit that got past one failure into another is a lesson of its own.
    assert found[2].body.endswith("Fixed by changing src/net/retry.py (RetryPolicy, run); then it failed differently.")
    assert "Why: tenacity is not installed." in found[2].body
    assert found[3].files == ("src/net/retry.py", "tests/test_client.py")
    assert found[4].files == ("src/net/retry.py", "src/net/client.py")
    transcript = transcripts.read(CODEX)
    assert transcript.skipped == 2  # an unknown record type (world_state) and a line that is not JSON
    # The user's words are read once (event_msg), not twice (response_item copy), and the
    # injected environment context is not a user message.
    users = [e.text for e in transcript.events if e.role == "user"]
    assert users[0].startswith("Add retries") and len(users) == len(set(users))


def test_chinese_session_candidates() -> None:
    found = extract(transcripts.read(CHINESE))
    assert [(c.kind, c.title) for c in found] == [
        ("convention", "以后日期一律用 ISO 8601 格式存储，不要用斜杠"),
        ("convention", "我们用 pendulum 处理时区，不用 arrow"),
        ("lesson", "pytest tests/test_parser.py -q: ValueError: time data '2024/01/05' does not match format "
                   "'%Y-%m-%d'"),
        ("decision", "Chose: 数据库里存 UTC 时间戳"),
        ("summary", "Session: 修复 src/parser.py 里的日期解析错误"),
    ]
    assert found[2].symbols == ("src/parser.py::parse_date",)
    assert all("谢谢" not in c.title and "可能" not in c.title for c in found)


def test_cursor_transcript(tmp_path: Path) -> None:
    path = tmp_path / "cursor.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in [
        {"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>\nRename get_user to fetch_user "
                                                                          "in app/users.py\n</user_query>"}]}},
        {"role": "assistant", "message": {"content": [{"type": "tool_use", "name": "StrReplace", "input": {
            "path": "/w/app/users.py", "old_string": "def get_user(uid):", "new_string": "def fetch_user(uid):"}}]}},
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "Renamed get_user to fetch_user."}]}},
        {"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>We never abbreviate names "
                                                                          "in this codebase.</user_query>"}]}},
    ]) + "\n")
    transcript = transcripts.read(path)
    assert transcript.format == "cursor" and transcript.edited_files == ["/w/app/users.py"]
    assert [(c.kind, c.title) for c in extract(transcript, root="/w")] == [
        ("convention", "We never abbreviate names in this codebase"),
        ("summary", "Session: Rename get_user to fetch_user in app/users.py"),
    ]


@pytest.mark.parametrize("said", [
    "Never mind, that's fine.",
    "No, it's fine, leave it.",
    "Don't worry about the flaky test.",
    "Don't run the slow tests for now.",
    "Always happy to see green builds?",
    "I think we should always use tabs.",
    "Maybe we never deploy on Fridays.",
    "ok",
    "这次先不要跑集成测试。",
    "我们可能要用 Redis。",
])
def test_talk_is_not_a_rule(tmp_path: Path, said: str) -> None:
    path = tmp_path / "chat.md"
    path.write_text(f"### Human\n\n{said}\n\n### Assistant\n\nOK.\n", encoding="utf-8")
    assert extract(transcripts.read(path)) == []


def test_chat_logs() -> None:
    assert candidates(CHAT) == [
        ("preference", "Write commit messages in the imperative mood, and always reference the ticket number", "user"),
        ("convention", "We use pnpm, not npm, in this repo", "user"),
        ("convention", "Don't run npm install; it rewrites package-lock.json", "user"),
    ]
    assert candidates(AIDER) == [
        ("convention", "Always keep the API handlers in app/api/ thin; business logic goes in app/services/", "user"),
        ("summary", "Session: Always keep the API handlers in app/api/ thin; business logic goes in app/services/",
         "inferred"),  # Aider's "Applied edit to app/api/orders.py": the session changed a file
    ]


# -- the command --------------------------------------------------------------------------------

def test_capture_prints_a_proposal_and_writes_nothing(store: Path) -> None:
    before = git(store, "status", "--porcelain")
    result = run(store, "capture", str(CLAUDE))
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.startswith("--- /dev/null\n+++ b/.memory/we-use-ruff-format-not-black-")
    assert "## Capture of claude-session.jsonl (claude, 36 lines, 1 skipped)" in out
    assert "8 new memories:" in out and "Nothing was written." in out
    assert git(store, "status", "--porcelain") == before
    assert sorted(p.name for p in (store / ".memory").iterdir()) == ["config.toml"]


def test_secrets_are_redacted_or_dropped(store: Path) -> None:
    data = json.loads(run(store, "capture", str(CLAUDE), "--json").stdout)
    text = json.dumps(data)
    assert "Xk9mP2vLq8zT" not in text and "ghp_Q8v2" not in text
    staging = [c for c in data["candidates"] if c["title"].startswith("Staging")][0]
    assert staging["title"] == "Staging runs the smoke tests with DATABASE_URL=[secret redacted]"
    assert [(d["evidence"]["lines"], d["reason"]) for d in data["dropped"]] == [([27], "mostly a secret")]


def test_json_has_evidence_and_paths(store: Path) -> None:
    data = json.loads(run(store, "capture", str(CODEX), "--json").stdout)
    assert data["format"] == "codex" and data["skipped_lines"] == 2
    lesson = next(c for c in data["candidates"] if c["kind"] == "lesson")
    assert lesson["evidence"]["lines"] == [15, 18, 21]
    assert lesson["path"].startswith(".memory/pytest-q-tests-test-client-py-modulenotfounderror")
    assert lesson["id"].startswith("m-")


def test_known_memories_are_not_proposed_again(store: Path) -> None:
    run(store, "remember", "parse_config returns a tuple (path, Config)")
    run(store, "remember", "Use pnpm, never npm", "--kind", "convention")  # near: other words, same rule
    data = json.loads(run(store, "capture", str(CLAUDE), "--json").stdout)
    assert [k["title"] for k in data["known"]] == ["parse_config returns a tuple (path, Config)"]
    chat = json.loads(run(store, "capture", str(CHAT), "--json").stdout)
    assert [k["title"] for k in chat["known"]] == ["We use pnpm, not npm, in this repo"]
    # Applying, then capturing the same session again, proposes nothing.
    assert run(store, "capture", str(CODEX), "--apply").exit_code == 0
    again = run(store, "capture", str(CODEX))
    assert "Nothing new to remember." in again.stdout and len(json.loads(
        run(store, "capture", str(CODEX), "--json").stdout)["known"]) == 5


def test_apply_stages_and_does_not_commit(store: Path) -> None:
    head = git(store, "rev-parse", "HEAD")
    preview = json.loads(run(store, "capture", str(CHINESE), "--json").stdout)
    result = run(store, "capture", str(CHINESE), "--apply")
    assert result.exit_code == 0, result.stderr
    written = result.stdout.split()
    assert len(written) == 5 and all(p.startswith(".memory/") for p in written)
    assert "staged, not committed" in result.stderr
    assert git(store, "rev-parse", "HEAD") == head
    staged = git(store, "diff", "--cached", "--name-only").split()
    assert sorted(staged) == sorted(written)
    # The files (and ids) shown before applying are the ones written.
    assert [c["path"] for c in preview["candidates"]] == written
    listed = run(store, "list", "--json")
    kinds = sorted(m["kind"] for m in json.loads(listed.stdout))
    assert kinds == ["convention", "convention", "decision", "lesson", "summary"]
    hits = run(store, "recall", "pendulum 时区", "--json")
    assert "pendulum" in hits.stdout


def _count_plans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count how often a capture is planned against the store (its dearest step)."""
    from memgit.capture import capture as capture_mod
    from memgit.capture import captures

    calls: list[int] = []
    real = capture_mod.plan

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(capture_mod, "plan", counting)
    monkeypatch.setattr(captures, "plan", counting)
    return calls


def test_apply_plans_the_capture_once(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_plans(monkeypatch)
    result = run(store, "capture", str(CLAUDE), "--apply")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() and len(calls) == 1


def test_apply_plans_again_when_the_store_changed(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import memgit

    mem = memgit.open(store, warn=lambda message: None)
    proposal = mem.capture(CHINESE)
    first = proposal.memories[0]
    mem.remember(first.body, title=first.title, kind=first.kind)  # someone wrote it meanwhile
    calls = _count_plans(monkeypatch)
    result = mem.apply_capture(proposal)
    assert len(calls) == 1
    assert len(result["written"]) == 4 and mem.rel_path(first) not in result["written"]
    assert [c.title for c, _ in proposal.known][-1] == first.title


def test_apply_on_a_branch_leaves_the_work_tree_alone(store: Path) -> None:
    (store / "wip.txt").write_text("work in progress\n")
    git(store, "add", "wip.txt")
    head = git(store, "rev-parse", "HEAD")
    result = run(store, "capture", str(CODEX), "--apply", "--branch", "memory/codex")
    assert result.exit_code == 0, result.stderr
    assert git(store, "rev-parse", "HEAD") == head
    assert git(store, "status", "--porcelain") == "A  wip.txt\n"
    files = git(store, "show", "--name-only", "--format=", "memory/codex").split()
    assert len(files) == 5 and all(f.startswith(".memory/") for f in files)
    assert git(store, "rev-parse", "memory/codex~1") == head
    again = run(store, "capture", str(CODEX), "--apply", "--branch", "memory/codex")
    assert again.exit_code == 1 and "already exists" in again.stderr


def test_default_branch_name(store: Path) -> None:
    result = run(store, "capture", str(CHAT), "--apply", "--branch")
    assert result.exit_code == 0, result.stderr
    assert "memory/capture-" in result.stderr
    assert git(store, "branch", "--list", "memory/capture-*").strip()


def test_hook_leaves_a_pending_proposal(store: Path) -> None:
    result = run(store, "capture", "--from-hook", str(CLAUDE))
    assert result.exit_code == 0 and result.stdout == ""
    log = (store / ".git" / "memgit" / "capture.log").read_text()
    assert log.count("\n") == 1 and "8 proposed, 0 known, 1 left out" in log
    listed = run(store, "capture", "--pending")
    assert listed.stdout.count("\n") == 1 and "8 memories" in listed.stdout
    proposal_id = listed.stdout.split()[0]
    shown = run(store, "capture", "--pending", proposal_id)
    assert "8 new memories:" in shown.stdout
    applied = run(store, "capture", "--pending", proposal_id, "--apply")
    assert applied.exit_code == 0 and len(applied.stdout.split()) == 8
    assert run(store, "capture", "--pending").stdout == ""
    # A bad transcript: still exit 0, one more log line, nothing pending.
    bad = run(store, "capture", "--from-hook", str(store / "missing.jsonl"))
    assert bad.exit_code == 0 and bad.stdout == ""
    assert "capture failed" in (store / ".git" / "memgit" / "capture.log").read_text().splitlines()[-1]


def test_hook_without_a_memory_folder_logs_and_exits_0(repo: Path) -> None:
    result = run(repo, "capture", "--from-hook", str(CLAUDE))
    assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""
    assert "capture failed: no .memory/" in (repo / ".git" / "memgit" / "capture.log").read_text()


def test_summary_names_files_committed_during_the_session(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (store / "src").mkdir()
    (store / "src" / "views.py").write_text("def index(): ...\n")
    git(store, "add", "src/views.py")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-08-20T09:00:20+00:00")  # inside the session's time
    git(store, "commit", "-q", "-m", "views")
    data = json.loads(run(store, "capture", str(CLAUDE), "--json").stdout)
    summary = next(c for c in data["candidates"] if c["kind"] == "summary")
    assert summary["files"] == ["src/auth.py", "src/views.py"]
    assert "Changed: src/auth.py, src/views.py" in summary["body"]


def test_last_session_of_this_repository(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path(os.environ["HOME"])
    claude = home / ".claude" / "projects" / str(store.resolve()).replace("/", "-").replace(".", "-").replace("_", "-")
    claude.mkdir(parents=True)
    shutil.copy(CHAT, claude / "old.jsonl")
    shutil.copy(CLAUDE, claude / "new.jsonl")
    os.utime(claude / "old.jsonl", (1, 1))
    result = run(store, "capture", "--last", "claude", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["transcript"].endswith("new.jsonl")
    sessions = home / ".codex" / "sessions" / "2026" / "08" / "21"
    sessions.mkdir(parents=True)
    other = CODEX.read_text().replace('"cwd": "/home/dev/shop"', '"cwd": "/elsewhere"', 1)
    mine = CODEX.read_text().replace('"cwd": "/home/dev/shop"', json.dumps({"cwd": str(store)})[1:-1], 1)
    (sessions / "rollout-2026-08-21T10-00-00-a.jsonl").write_text(mine)
    (sessions / "rollout-2026-08-21T11-00-00-b.jsonl").write_text(other)  # newer, another repository
    data = json.loads(run(store, "capture", "--last", "codex", "--json").stdout)
    assert data["transcript"].endswith("rollout-2026-08-21T10-00-00-a.jsonl")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "nothing"))
    missing = run(store, "capture", "--last", "codex")
    assert missing.exit_code == 1 and "no codex session found" in missing.stderr


def test_llm_command_rewrites_and_vetoes(store: Path, tmp_path: Path) -> None:
    # The LLM is faked: a script that vetoes the first candidate and rewrites the second.
    script = tmp_path / "fake_llm.py"
    script.write_text(
        "import json, sys\n"
        "request = json.load(sys.stdin)\n"
        "assert all('Xk9mP2vLq8zT' not in json.dumps(c) for c in request['candidates'])\n"
        "print(json.dumps({'candidates': [{'index': 0, 'keep': False, 'reason': 'obvious'},"
        " {'index': 1, 'title': 'Open pull requests; never push to main', 'body': 'Never push to main.'}]}))\n"
    )
    command = f"{sys.executable} {script}"
    data = json.loads(run(store, "capture", str(CLAUDE), "--json", "--llm-cmd", command).stdout)
    titles = [c["title"] for c in data["candidates"]]
    assert "We use ruff format, not black" not in titles
    assert titles[0] == "Open pull requests; never push to main"
    assert any(d["reason"] == "vetoed by the judge: obvious" for d in data["dropped"])
    broken = run(store, "capture", str(CLAUDE), "--llm-cmd", f"{sys.executable} -c 'print(1)'")
    assert broken.exit_code == 1 and "did not answer with JSON" in broken.stderr


# -- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("content, message", [
    (b"", "is empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
    (b'{"name": "package", "version": "1.0"}\n', "not a transcript"),
    (b"Just some notes about the project.\nNothing else.\n", "not a transcript"),
    (b'{"type":"user","sessionId":"s","message":{"role":"user","content":"hi"', "no line of it is complete JSON"),
])
def test_bad_input_is_refused_clearly(store: Path, tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    result = run(store, "capture", str(path), "--apply")
    assert result.exit_code == 1 and message in result.stderr and result.stderr.startswith("Error: ")
    assert git(store, "status", "--porcelain") == ""


def test_a_huge_file_is_refused_without_reading_it(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as handle:
        handle.truncate(100 * 1024 * 1024)  # sparse: 100 MB on paper, nothing on disk
    result = run(store, "capture", str(path))
    assert result.exit_code == 1 and "100 MB, over the 64 MB" in result.stderr


def test_huge_tool_outputs_and_unreadable_lines(store: Path, tmp_path: Path) -> None:
    lines = CLAUDE.read_text().splitlines()
    big = json.dumps({"type": "user", "sessionId": "s", "uuid": "big", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "x" * 3_000_000}]}})
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines[:10] + [big, "\udcff garbage"[1:], "[1, 2]"] + lines[10:]), encoding="utf-8")
    transcript = transcripts.read(path)
    assert transcript.skipped == 3
    assert max(len(e.text) for e in transcript.events) < 7000
    assert [c.kind for c in extract(transcript)] == [c.kind for c in extract(transcripts.read(CLAUDE))]


def test_unreadable_file(store: Path, tmp_path: Path) -> None:
    """`memgit capture` run as a process the file's mode refuses (as root too: see
    tests/unprivileged.py): a clear error, exit 1, nothing proposed."""
    from .unprivileged import preexec

    drop = preexec()
    path = tmp_path / "locked.jsonl"
    path.write_text(CLAUDE.read_text())
    path.chmod(0)
    try:
        done = subprocess.run([sys.executable, "-m", "memgit", "-C", str(store), "capture", str(path)],
                              preexec_fn=drop, capture_output=True, text=True, timeout=120, check=False)
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"Error: cannot read {path}: Permission denied\n"


def test_a_relative_path_is_relative_to_dash_c(store: Path) -> None:
    shutil.copy(CHAT, store / "session.md")
    result = run(store, "capture", "session.md", "--json")
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)["candidates"]) == 3


def test_usage_errors(store: Path) -> None:
    assert run(store, "capture").exit_code == 2
    assert run(store, "capture", str(CLAUDE), "--last", "claude").exit_code == 2
    assert run(store, "capture", str(CLAUDE), "--branch", "x").exit_code == 2


def test_restatements_found_by_reflects_duplicate_detector() -> None:
    from memgit.capture.capture import _detected
    from memgit.capture.extract import Candidate
    from memgit.memory.format import Memory

    store = [Memory(id="m-1", title="Format code with ruff format; black is not used here"),
             Memory(id="m-2", title="parse_config returns a tuple (path, Config)",
                    body="Callers need to know which file was loaded."),
             Memory(id="m-3", title="Login tests need the fake clock")]
    said = [Candidate("convention", "We use ruff format, not black", "We use ruff format, not black.", "user", 0.9, (1,)),
            Candidate("convention", "parse_config returns a tuple (path, Config)",
                      "Remember that parse_config returns a tuple (path, Config).", "user", 0.9, (2,)),
            Candidate("preference", "Never push to main", "Never push to main.", "user", 0.9, (3,))]
    assert _detected(store, said) == {0: "m-1", 1: "m-2"}
