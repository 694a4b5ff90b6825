"""memgit reflect: exact proposals on small real stores, applying them, reverting them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

import memgit
from memgit.cli import cli
from memgit.errors import MemgitError

from .conftest import git

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
STAMP = "2026-12-01T12:00:00+00:00"


def _rec(mid: str, title: str, body: str = "", **fields: object) -> str:
    record = {
        "id": mid,
        "title": title,
        "body": body,
        "created": "2026-11-20T10:00:00+00:00",
        "updated": "2026-11-20T10:00:00+00:00",
        **fields,
    }
    return json.dumps(record)


PARSE_A = _rec(
    "m-a1",
    "parse_config returns a tuple (path, Config)",
    "Callers need the path of the loaded file to report errors against it, so parse_config "
    "returns the path together with the Config.",
    kind="decision",
    entity="src/config.py::parse_config",
    source="user",
)
PARSE_B = _rec(
    "m-a2",
    "Why parse_config gives back the path as well as the Config",
    "parse_config hands back a pair: the path of the loaded config file and the Config, so that "
    "callers can report errors against that file. Do not change it to return only the Config.",
    kind="fact",
    entity="src/config.py",
    source="inferred",
    confidence=0.5,
    updated="2026-11-25T10:00:00+00:00",
    files=["src/config.py"],
)
OTHERS = [
    _rec(
        "m-b1",
        "load_settings reads environment overrides",
        "load_settings in src/config.py applies MEMGIT_ variables after the TOML file, so the environment "
        "wins over the file.",
        entity="src/config.py::load_settings",
    ),
    _rec(
        "m-c1",
        "The login handler must check get_user for None",
        "get_user returns None for an unknown email; login must check it before reading password_hash.",
        kind="lesson",
        entity="src/auth/login.py::login",
    ),
    _rec(
        "m-d1",
        "Use ingest/http.py get_json for HTTP in the ingest code",
        "It retries with backoff; never call requests directly from ingest.",
        kind="convention",
        entity="ingest/http.py::get_json",
    ),
    _rec(
        "m-e1",
        "Releases are tagged from main with a signed tag",
        "Run make release on main; it signs the tag vX.Y.Z and pushes it.",
        kind="skill",
    ),
]


def test_a_hand_written_file_keeps_all_but_the_changed_lines(repo: Path, mem: memgit.Memgit) -> None:
    text = (
        "---\r\n# a guess from CI\r\ntitle:   'The flaky upload test may be a race'\r\n"
        "kind: lesson\r\nsource: inferred\r\nconfidence: 0.3   # unconfirmed\r\n"
        "updated: 2026-08-30\r\n---\r\n\r\nSeen once in CI.\r\n"
    )
    (repo / ".memory" / "flaky.md").write_bytes(text.encode())
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "by hand")
    found = mem.reflect(now=NOW).reflection
    assert [(p.kind, p.ids) for p in found.proposals] == [("archive", ("flaky",))]
    assert found.proposals[0].changes[0].text == text.replace(
        "updated: 2026-08-30\r\n", f"updated: {STAMP}\r\nstatus: archived\r\n"
    )


def _store(mem: memgit.Memgit, *lines: str) -> None:
    report = mem.import_jsonl(list(lines))
    assert report.skipped == []


@pytest.fixture(autouse=True)
def code(repo: Path) -> None:
    """The code the memories above talk about, so that their anchors are not stale."""
    for rel, text in (
        (
            "src/config.py",
            "def parse_config(path):\n    return path, {}\n\n\ndef load_settings():\n    pass\n",
        ),
        ("src/auth/login.py", "def login(email):\n    pass\n"),
        ("ingest/http.py", "def get_json(url):\n    pass\n"),
        ("setup.cfg", "[tool]\n"),
        ("src/runner.py", "\n"),
    ):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "code")


def _texts(repo: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((repo / ".memory").iterdir()) if p.is_file()}


def _write_code(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(repo, "add", rel)
    git(repo, "commit", "-q", "-m", f"code {rel}")


# -- duplicates ---------------------------------------------------------------------------------


def test_duplicates_phrased_differently_are_merged_into_the_better_memory(mem: memgit.Memgit) -> None:
    _store(mem, PARSE_A, PARSE_B, *OTHERS)
    found = mem.reflect(now=NOW).reflection
    assert [(p.kind, p.ids) for p in found.proposals] == [("merge", ("m-a1", "m-a2"))]
    merge = found.proposals[0]
    assert merge.evidence[0].startswith("score 0.44; word cosine 0.44; shared anchors `parse_config`")
    kept, gone = merge.changes
    assert gone.text is None and gone.path.endswith("a2.md")
    assert kept.text == (
        "---\nid: m-a1\ntitle: parse_config returns a tuple (path, Config)\nkind: decision\n"
        "entity: src/config.py::parse_config\nconfidence: 0.9\nsource: user\n"
        f"created: 2026-11-20T10:00:00+00:00\nupdated: {STAMP}\nfiles:\n- src/config.py\n"
        "supersedes:\n- m-a2\n---\n\n"
        "Callers need the path of the loaded file to report errors against it, so parse_config returns "
        "the path together with the Config.\n\nWhy parse_config gives back the path as well as the Config. "
        "Do not change it to return only the Config.\n"
    )


def test_related_memories_about_one_file_are_not_merged(mem: memgit.Memgit) -> None:
    _store(mem, PARSE_A, *OTHERS)  # m-b1 shares the file and words with m-a1 but says something else
    assert mem.reflect(now=NOW, only=["duplicates"]).reflection.proposals == ()


def test_apply_commits_once_is_idempotent_and_git_revert_restores_every_byte(
    repo: Path, mem: memgit.Memgit
) -> None:
    _store(mem, PARSE_A, PARSE_B, *OTHERS)
    before = _texts(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    outcome = mem.reflect(apply=True, now=NOW)
    assert len(outcome.commits) == 1
    assert git(repo, "rev-list", "--count", f"{head}..HEAD").strip() == "1"
    assert git(repo, "status", "--porcelain") == ""
    after = _texts(repo)
    merged = outcome.reflection.proposals[0].changes[0]
    assert after[merged.path] == merged.text.encode()
    assert set(before) - set(after) == {outcome.reflection.proposals[0].changes[1].path}
    assert git(repo, "show", "--stat", "--format=%s", "HEAD").startswith("memory: reflect (1 change(s))")

    assert mem.reflect(now=NOW).reflection.proposals == ()  # nothing left to propose
    git(repo, "revert", "--no-edit", "HEAD")
    assert _texts(repo) == before


def test_the_diff_is_one_git_apply_accepts_and_gives_the_applied_files(
    repo: Path, mem: memgit.Memgit
) -> None:
    _store(mem, PARSE_A, PARSE_B, *OTHERS)
    found = mem.reflect(now=NOW).reflection
    patch = repo.parent / "reflect.diff"
    patch.write_text(found.diff())
    subprocess.run(["git", "apply", str(patch)], cwd=repo, check=True)
    for rel, text in found.changes.items():
        path = repo / ".memory" / rel
        assert (not path.exists()) if text is None else path.read_text() == text


def test_split_makes_one_commit_per_proposal(repo: Path, mem: memgit.Memgit) -> None:
    _store(
        mem,
        PARSE_A,
        PARSE_B,
        *OTHERS,
        _rec(
            "m-x1",
            "A guess about the build cache",
            "Maybe the build cache is shared between jobs.",
            source="inferred",
            confidence=0.3,
            updated="2026-08-01T10:00:00+00:00",
        ),
    )
    outcome = mem.reflect(apply=True, split=True, now=NOW)
    assert [p.kind for p in outcome.reflection.actionable] == ["merge", "archive"]
    assert len(outcome.commits) == 2
    subjects = git(repo, "log", "-2", "--format=%s").splitlines()
    assert subjects[0].startswith('memory: reflect: archive archive "A guess about the build cache"')
    assert subjects[1].startswith("memory: reflect: merge merge")


def test_apply_refuses_uncommitted_memory_changes(repo: Path, mem: memgit.Memgit) -> None:
    _store(mem, PARSE_A, PARSE_B, *OTHERS)
    (repo / ".memory" / "by-hand.md").write_text("---\ntitle: a note in progress\n---\n")
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(MemgitError, match=r"uncommitted changes \(.memory/by-hand.md\).*commit or stash"):
        mem.reflect(apply=True, now=NOW)
    with pytest.raises(MemgitError, match="uncommitted changes"):
        mem.reflect(branch="memory/reflect", now=NOW)
    assert git(repo, "rev-parse", "HEAD") == head


def test_branch_commits_elsewhere_and_leaves_branch_and_work_tree_alone(
    repo: Path, mem: memgit.Memgit
) -> None:
    _store(mem, PARSE_A, PARSE_B, *OTHERS)
    (repo / "notes.txt").write_text("unrelated work in progress\n")
    before = _texts(repo)
    head = git(repo, "rev-parse", "HEAD")
    status = git(repo, "status", "--porcelain")
    outcome = mem.reflect(branch="memory/reflect-2026-12-01", now=NOW)
    assert outcome.branch == "memory/reflect-2026-12-01" and len(outcome.commits) == 1
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert git(repo, "status", "--porcelain") == status
    assert _texts(repo) == before
    assert git(repo, "rev-parse", "memory/reflect-2026-12-01^").strip() == head.strip()
    changed = git(repo, "diff", "--name-status", "HEAD", "memory/reflect-2026-12-01").splitlines()
    assert sorted(line.split("\t")[0] for line in changed) == ["D", "M"]
    for rel, text in outcome.reflection.changes.items():
        shown = subprocess.run(
            ["git", "show", f"memory/reflect-2026-12-01:.memory/{rel}"],
            cwd=repo,
            capture_output=True,
            text=True,
        )
        assert (shown.returncode != 0) if text is None else shown.stdout == text
    with pytest.raises(MemgitError, match="already exists"):
        mem.reflect(branch="memory/reflect-2026-12-01", now=NOW)


# -- supersessions ----------------------------------------------------------------------------


def test_a_revert_supersedes_what_it_reverts(mem: memgit.Memgit) -> None:
    _store(
        mem,
        *OTHERS,
        _rec(
            "m-r1",
            "Use signal.alarm() for the test timeout",
            "The runner uses signal.alarm for timeouts.",
            entity="src/runner.py",
            created="2026-10-01T10:00:00+00:00",
            updated="2026-10-01T10:00:00+00:00",
        ),
        _rec(
            "m-r2",
            'Revert "Use signal.alarm() for the test timeout"',
            "It broke on Windows, where signal.alarm does not exist.",
            entity="src/runner.py",
        ),
    )
    found = mem.reflect(now=NOW, only=["supersessions"]).reflection
    assert [(p.kind, p.ids, p.reason) for p in found.proposals] == [
        ("supersede", ("m-r2", "m-r1"), "it reverts the older memory's change")
    ]
    text = found.proposals[0].changes[0].text
    assert "status: archived\n" in text and "superseded_by:\n- m-r2\n" in text


def test_now_replaces_the_older_decision_and_a_doubtful_one_is_only_reported(mem: memgit.Memgit) -> None:
    old = _rec(
        "m-s1",
        "Tests run with nose",
        "The test suite runs with nose; run nosetests in the repository root.",
        kind="decision",
        entity="setup.cfg",
        created="2026-05-01T10:00:00+00:00",
        updated="2026-05-01T10:00:00+00:00",
    )
    new = _rec(
        "m-s2",
        "Tests now run with pytest instead of nose",
        "The test suite runs with pytest now; run pytest in the repository root, not nosetests.",
        kind="decision",
        entity="setup.cfg",
    )
    _store(mem, old, new, *OTHERS)
    found = mem.reflect(now=NOW, only=["supersessions"]).reflection
    assert [(p.kind, p.ids) for p in found.proposals] == [("supersede", ("m-s2", "m-s1"))]
    assert (
        found.proposals[0].reason
        == 'the newer memory says "now" about the same thing; it replaces the older one'
    )

    mem.update("m-s2", source="inferred", confidence=0.4)
    found = mem.reflect(now=NOW, only=["supersessions"]).reflection
    assert [(p.kind, p.ids, p.changes) for p in found.proposals] == [("conflict", ("m-s2", "m-s1"), ())]
    assert "the older memory has the higher source or confidence" in found.proposals[0].reason


# -- stale anchors ---------------------------------------------------------------------------


def test_renamed_deleted_and_undefined_anchors(repo: Path, mem: memgit.Memgit) -> None:
    _write_code(repo, "src/old_name.py", "class Loader:\n    def load(self):\n        pass\n")
    _write_code(repo, "src/gone.py", "X = 1\n")
    _write_code(repo, "web/app.js", "function startServer() {}\n")
    _store(
        mem,
        _rec("m-k1", "parse_config is the entry point", "", entity="src/config.py::parse_config"),
        _rec(
            "m-k2",
            "Loader.load reads the whole file",
            "",
            entity="src/old_name.py::Loader.load",
            files=["src/old_name.py"],
        ),
        _rec("m-k3", "gone.py holds X", "", files=["src/gone.py"], confidence=0.7),
        _rec("m-k4", "startServer boots the app", "", entity="web/app.js::startServer"),
        _rec("m-k5", "parse_config validates the schema", "", entity="src/config.py::validate_schema"),
        _rec("m-k6", "About the release process", "", entity="release process"),
    )
    git(repo, "mv", "src/old_name.py", "src/loader.py")
    git(repo, "rm", "-q", "src/gone.py")
    git(repo, "commit", "-q", "-m", "rename and delete")
    found = mem.reflect(now=NOW, only=["stale"]).reflection
    summary = [(p.kind, p.ids, p.evidence) for p in found.proposals]
    assert summary == [
        ("rename-anchor", ("m-k2",), ("`src/old_name.py` was renamed to `src/loader.py` (git)",)),
        ("review-anchor", ("m-k3",), ("`src/gone.py` no longer exists",)),
        ("review-anchor", ("m-k5",), ("`validate_schema` is no longer defined in `src/config.py`",)),
    ]
    renamed = found.proposals[0].changes[0].text
    assert "entity: src/loader.py::Loader.load\n" in renamed and "files:\n- src/loader.py\n" in renamed
    flagged = found.proposals[1].changes[0].text
    assert "confidence: 0.5\n" in flagged and flagged.rstrip().endswith("needs_review: true\n---")

    mem.reflect(apply=True, now=NOW, only=["stale"])
    assert mem.reflect(now=NOW, only=["stale"]).reflection.proposals == ()  # flagged once, not again


# -- eviction and promotion -------------------------------------------------------------------


def _recalls(repo: Path, *entries: tuple[str, list[str]]) -> None:
    folder = repo / ".git" / "memgit"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "recalls.jsonl", "a") as handle:
        for ts, ids in entries:
            handle.write(json.dumps({"ts": ts, "query": "q", "ids": ids}) + "\n")


def test_eviction_of_unrecalled_low_confidence_memories_and_old_checkpoints(
    repo: Path, mem: memgit.Memgit, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = "2026-09-01T10:00:00+00:00"
    _store(
        mem,
        *OTHERS,
        _rec(
            "m-v1",
            "A guess about the build cache",
            "Maybe the cache is shared.",
            confidence=0.3,
            source="inferred",
            updated=old,
        ),
        _rec(
            "m-v2",
            "A guess about flaky tests",
            "Maybe the network.",
            confidence=0.3,
            source="inferred",
            updated=old,
        ),
        _rec("m-v3", "A fresh guess about flaky tests", "Maybe timing.", confidence=0.3, source="inferred"),
        _rec("m-v4", "Checkpoint: half-way through the parser refactor", "Next: tokens.", kind="checkpoint"),
        _rec(
            "m-v5",
            "Checkpoint: done with the lexer",
            "Next: parser.",
            kind="checkpoint",
            updated="2026-11-29T10:00:00+00:00",
        ),
        _rec(
            "m-v6",
            "Checkpoint: started on the lexer",
            "Next: lexer.",
            kind="checkpoint",
            updated="2026-11-30T10:00:00+00:00",
        ),
    )
    _recalls(repo, ("2026-11-28T10:00:00Z", ["m-v2"]), ("2026-11-30T10:00:00Z", ["m-v6"]))
    monkeypatch.setenv("MEMGIT_REFLECT_MAX_CHECKPOINTS", "1")
    mem = memgit.open(repo, warn=lambda m: None)
    found = mem.reflect(now=NOW, only=["eviction"]).reflection
    assert [(p.ids, p.reason, p.evidence) for p in found.proposals] == [
        (
            ("m-v1",),
            "confidence 0.3 is under 0.35 and it was not recalled for 30 days",
            ("recalled 0 times since 2026-09-01 (91 days)",),
        ),
        (("m-v4",), "a checkpoint older than its 7 days TTL", ("last updated 2026-11-20 (11 days ago)",)),
        (
            ("m-v5",),
            "there are 2 active checkpoints, over the limit of 1; this one is among the least recalled",
            ("recalled 0 time(s)",),
        ),
    ]
    assert all(p.kind == "archive" and "status: archived\n" in p.changes[0].text for p in found.proposals)


def test_feedback_pins_what_is_used_in_many_sessions_and_stats_count_it(
    repo: Path, mem: memgit.Memgit
) -> None:
    _store(mem, *OTHERS)
    _recalls(repo, ("2026-11-28T10:00:00Z", ["m-c1", "m-d1"]))
    for session in ("s1", "s2", "s3"):
        mem.feedback("m-c1", "used", session=session)
    mem.feedback("m-d1", "ignored", session="s1")
    found = mem.reflect(now=datetime.now(timezone.utc), only=["promotion"]).reflection
    assert [(p.kind, p.ids, p.evidence) for p in found.proposals] == [
        ("pin", ("m-c1",), ("recalled 1 time(s); marked used in 3 session(s)",))
    ]
    assert "pinned: true\n" in found.proposals[0].changes[0].text
    stats = mem.stats()
    assert (stats["recalled"], stats["recalled_then_used"], stats["hit_rate"]) == (2, 1, 0.5)
    assert stats["by_kind"] == {"convention": 1, "fact": 1, "lesson": 1, "skill": 1}
    assert git(repo, "status", "--porcelain") == ""  # usage is never committed nor in the tree
    with pytest.raises(MemgitError, match="unknown verdict"):
        mem.feedback("m-c1", "great")


# -- safety ------------------------------------------------------------------------------------


def test_malformed_files_are_reported_and_left_alone(repo: Path, mem: memgit.Memgit) -> None:
    _store(mem, PARSE_A, PARSE_B)
    bad = repo / ".memory" / "broken.md"  # read leniently as a memory, but lint reports it
    bad.write_text("---\ntitle: [broken\nconfidence: 0.1\nupdated: 2026-01-01\n---\nbody\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "broken")
    outcome = mem.reflect(apply=True, now=NOW)
    assert [p.split(":")[0] for p in outcome.reflection.problems] == ["broken.md"]
    assert [p.ids for p in outcome.reflection.actionable] == [("m-a1", "m-a2")]  # not its archiving
    assert "malformed, left alone: broken.md" in outcome.reflection.summary()
    assert bad.read_text() == "---\ntitle: [broken\nconfidence: 0.1\nupdated: 2026-01-01\n---\nbody\n"
    (repo / ".memory" / "binary.md").write_bytes(b"\x00\x01")  # unreadable: always listed
    assert "binary.md: binary file" in " ".join(mem.reflect(now=NOW).reflection.problems)


def test_unknown_kind_and_exclude(mem: memgit.Memgit) -> None:
    _store(mem, PARSE_A, PARSE_B, *OTHERS)
    with pytest.raises(MemgitError, match="unknown kind of proposal 'dupes'"):
        mem.reflect(only=["dupes"])
    assert mem.reflect(now=NOW, exclude=["m-a2"]).reflection.proposals == ()
    with pytest.raises(MemgitError):
        mem.reflect(exclude=["m-nope"])


def test_a_killed_apply_leaves_nothing_half_done(repo: Path, mem: memgit.Memgit, tmp_path: Path) -> None:
    lines = [
        _rec(
            f"m-{i:04d}",
            f"Guess number {i} about module_{i}",
            f"Maybe mod_{i}.py is slow {i}.",
            source="inferred",
            confidence=0.2,
            updated="2026-01-01T00:00:00+00:00",
        )
        for i in range(300)
    ]
    _store(mem, *lines)
    journal = repo / ".git" / "memgit" / "changeset.json"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memgit", "-C", str(repo), "reflect", "--apply", "--only", "eviction"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while not journal.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    proc.kill()
    proc.wait()
    assert proc.returncode == -9 and journal.exists()  # killed half-way through landing the change
    # The next memgit write finishes the interrupted change before doing its own.
    again = subprocess.run(
        [sys.executable, "-m", "memgit", "-C", str(repo), "reflect", "--apply", "--only", "eviction"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    assert "finished an interrupted change 'memory: reflect (300 change(s))" in again.stderr
    assert git(repo, "status", "--porcelain") == ""
    assert not journal.exists()
    assert not [p for p in (repo / ".memory").iterdir() if p.name.startswith(".tmp-")]
    archived = [m for m in memgit.open(repo, warn=lambda m: None).list(status=None) if m.status == "archived"]
    assert len(archived) == 300
    assert memgit.open(repo, warn=lambda m: None).reflect(only=["eviction"]).reflection.proposals == ()


# -- the command -------------------------------------------------------------------------------


def test_cli_reflect_check_json_and_apply(repo: Path, mem: memgit.Memgit) -> None:
    _store(mem, PARSE_A, PARSE_B, *OTHERS)
    runner = CliRunner()
    result = runner.invoke(cli, ["-C", str(repo), "reflect", "--check"], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.stdout.startswith("## memgit reflect: 1 change(s) proposed, 0 for a person to review\n")
    assert "\ndiff --git a/.memory/" in result.stdout
    data = json.loads(runner.invoke(cli, ["-C", str(repo), "reflect", "--json"]).stdout)
    assert [(p["kind"], p["ids"]) for p in data["proposals"]] == [("merge", ["m-a1", "m-a2"])]
    result = runner.invoke(cli, ["-C", str(repo), "reflect", "--split"])
    assert result.exit_code == 1 and "--split needs --apply or --branch" in result.stderr
    result = runner.invoke(cli, ["-C", str(repo), "reflect", "--apply"], catch_exceptions=False)
    assert result.exit_code == 0 and "committed 1 commit(s)" in result.stderr
    result = runner.invoke(cli, ["-C", str(repo), "reflect", "--check"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "Nothing to propose" in result.stdout


def test_cli_feedback_and_stats(repo: Path, mem: memgit.Memgit) -> None:
    _store(mem, *OTHERS)
    runner = CliRunner()
    result = runner.invoke(cli, ["-C", str(repo), "feedback", "m-c1", "--used"], catch_exceptions=False)
    assert (result.exit_code, result.stdout) == (0, "m-c1 used\n")
    result = runner.invoke(cli, ["-C", str(repo), "feedback", "m-c1"])
    assert result.exit_code == 1 and "--used, --ignored or --wrong" in result.stderr
    data = json.loads(runner.invoke(cli, ["-C", str(repo), "stats", "--since", "30d", "--json"]).stdout)
    assert data["memories"] == 4 and data["by_status"] == {"active": 4}
    result = runner.invoke(cli, ["-C", str(repo), "stats", "--since", "soon"])
    assert result.exit_code == 1 and "--since 'soon'" in result.stderr


def test_end_to_end_with_the_real_model(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", "minilm")
    mem = memgit.open(repo, warn=lambda m: None)
    mem.init()
    _store(mem, PARSE_A, PARSE_B, *OTHERS)
    found = mem.reflect(now=NOW).reflection
    assert [(p.kind, p.ids) for p in found.proposals] == [("merge", ("m-a1", "m-a2"))]
    assert "meaning cosine" in found.proposals[0].evidence[0]
    assert found.notes == ()


def test_hygiene_is_reported_for_a_person_and_changes_nothing(mem: memgit.Memgit) -> None:
    _store(
        mem,
        *OTHERS,
        _rec("m-h1", "Notes", "Some thoughts.", entity="src/config.py"),
        _rec(
            "m-h2",
            "Where the retry settings live",
            "They are read in src/net/retry.py and default in conf/retry.toml.",
        ),
    )
    found = mem.reflect(now=NOW, only=["hygiene"]).reflection
    assert [(p.kind, p.ids, p.reason, p.changes) for p in found.proposals] == [
        ("hygiene", ("m-h1",), 'the title "Notes" says little: say what the memory is about', ()),
        (
            "hygiene",
            ("m-h2",),
            "the text names `src/net/retry.py`, `conf/retry.toml` but the memory has no "
            "`files` or `entity`: add them so recall and reflect can use them",
            (),
        ),
    ]
    assert found.diff() == "" and "(no change: for review)" in found.summary()


def test_a_pinned_memory_unused_for_long_is_unpinned_and_an_expired_checkpoint_archived(
    repo: Path, mem: memgit.Memgit
) -> None:
    _store(
        mem,
        *OTHERS,
        _rec(
            "m-p1",
            "Run the slow tests with -m slow",
            "",
            kind="skill",
            pinned=True,
            updated="2026-06-01T00:00:00+00:00",
        ),
        _rec("m-p2", "Checkpoint: parser done", "", kind="checkpoint", expires="2026-11-30"),
    )
    found = mem.reflect(now=NOW, only=["promotion", "eviction"]).reflection
    assert [(p.kind, p.ids, p.evidence) for p in found.proposals] == [
        ("archive", ("m-p2",), ("expires 2026-11-30",)),
        ("unpin", ("m-p1",), ("not used or recalled since its update on 2026-06-01 (184 days ago)",)),
    ]
    assert "pinned" not in found.proposals[1].changes[0].text


def test_branch_with_split_and_only_from_the_command_line(repo: Path, mem: memgit.Memgit) -> None:
    _store(
        mem,
        PARSE_A,
        PARSE_B,
        *OTHERS,
        _rec("m-x1", "A guess about the build cache", "Maybe it is shared.", source="inferred",
             confidence=0.3, updated="2026-08-01T10:00:00+00:00"),
    )
    head = git(repo, "rev-parse", "HEAD").strip()
    result = CliRunner().invoke(
        cli, ["-C", str(repo), "reflect", "--branch", "memory/tidy", "--split", "--only", "duplicates,eviction"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    assert "committed 2 commit(s) on branch memory/tidy" in result.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == head
    assert git(repo, "rev-list", "--count", f"{head}..memory/tidy").strip() == "2"
    assert git(repo, "status", "--porcelain") == ""
