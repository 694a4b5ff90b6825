"""reflect and a person's word: a "no" remembered in the repository, opposites never merged,
fresh memories compared by meaning, the stronger kind kept, `--wrong` acted on.

Every test drives the `memgit` command as a user would, on real git repositories: a real
`git revert` of a real reflect commit, two clones of one origin sharing a "no" by push and
pull, a real `git merge` through memgit's merge driver.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memgit.cli import cli
from memgit.index import vectors
from memgit.reflect import upkeep

from .conftest import git

# Two notes that state one thing in nearly the same words: reflect merges them on words alone.
BACKOFF = ("Retry uploads with exponential backoff",
           "The upload client retries failed uploads with exponential backoff capped at 30 seconds.")
BACKOFF_AGAIN = ("Uploads retry with exponential backoff",
                 "Failed uploads are retried by the upload client, exponential backoff, capped at 30 s.")
UNRELATED = [
    ("Deploys go out on Tuesdays", "Production releases are cut on Tuesday mornings after the staging soak."),
    ("Logging uses structlog", "All services log through structlog with JSON output in production."),
]


def memgit_(root: Path, *args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, ["-C", str(root), *args], catch_exceptions=False)
    assert result.exit_code == code, (result.stdout, result.stderr)
    return result


def remember(root: Path, title: str, body: str, *options: str) -> str:
    return memgit_(root, "remember", "--title", title, *options, body).stdout.strip()


def store(root: Path) -> Path:
    """A repository with an initialised memory folder, as `memgit init` leaves it (committed)."""
    memgit_(root, "init")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "memgit init", "--allow-empty")
    return root


def proposals(root: Path, only: str = "duplicates") -> list[tuple[str, list[str]]]:
    data = json.loads(memgit_(root, "reflect", "--only", only, "--json").stdout)
    return [(p["kind"], sorted(p["ids"])) for p in data["proposals"]]


def front(root: Path, memory_id: str) -> str:
    """The front-matter of a memory's file."""
    (path,) = [p for p in (root / ".memory").glob("*.md") if f"id: {memory_id}\n" in p.read_text()]
    return path.read_text().split("\n---\n", 1)[0]


# -- a "no" ---------------------------------------------------------------------------------------


def test_a_reverted_reflect_merge_is_not_proposed_again_and_the_no_is_written_down(repo: Path) -> None:
    store(repo)
    a = remember(repo, *BACKOFF)
    b = remember(repo, *BACKOFF_AGAIN)
    for title, body in UNRELATED:
        remember(repo, title, body)
    assert proposals(repo) == [("merge", sorted([a, b]))]
    memgit_(repo, "reflect", "--only", "duplicates", "--apply")
    assert f"Memgit-Merged: {b} {a}" in git(repo, "log", "-1", "--format=%B") or \
        f"Memgit-Merged: {a} {b}" in git(repo, "log", "-1", "--format=%B")
    git(repo, "revert", "--no-edit", "HEAD")

    # The revert is read as "these are different": no merge, and a change that writes it down.
    assert proposals(repo) == [("distinct", sorted([a, b]))]
    shown = memgit_(repo, "reflect", "--only", "duplicates").stdout
    assert "a person reverted reflect's merge of the two" in shown
    memgit_(repo, "reflect", "--only", "duplicates", "--apply")
    assert f"distinct:\n- {b}" in front(repo, a) and f"distinct:\n- {a}" in front(repo, b)
    assert proposals(repo) == []


def test_a_no_said_in_one_clone_reaches_the_other_by_push_and_pull(tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    alice = tmp_path / "alice"
    git(tmp_path, "clone", "-q", str(origin), str(alice))
    git(alice, "commit", "-q", "--allow-empty", "-m", "initial")
    store(alice)
    a = remember(alice, *BACKOFF)
    b = remember(alice, *BACKOFF_AGAIN)
    for title, body in UNRELATED:
        remember(alice, title, body)
    git(alice, "push", "-q", "origin", "HEAD:main")
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", "-b", "main", str(origin), str(bob))
    assert proposals(bob) == [("merge", sorted([a, b]))]

    said = memgit_(alice, "feedback", a, b, "--not-duplicate").stdout
    assert said == f"{a} and {b} are different: reflect will not propose merging them\n"
    assert git(alice, "status", "--porcelain") == ""  # committed
    assert "are different memories (not duplicates)" in git(alice, "log", "-1", "--format=%s")
    assert proposals(alice) == []
    git(alice, "push", "-q", "origin", "HEAD:main")

    git(bob, "pull", "-q")
    assert proposals(bob) == []
    # Saying it twice changes nothing.
    memgit_(bob, "feedback", b, a, "--not-duplicate")
    assert git(bob, "rev-parse", "HEAD") == git(alice, "rev-parse", "HEAD")


def test_two_branches_each_saying_no_keep_both_after_a_merge(repo: Path) -> None:
    store(repo)
    a = remember(repo, *BACKOFF)
    b = remember(repo, *BACKOFF_AGAIN)
    c = remember(repo, "Retry downloads with exponential backoff",
                 "The download client retries failed downloads with exponential backoff.")
    git(repo, "switch", "-q", "-c", "one")
    memgit_(repo, "feedback", a, b, "--not-duplicate")
    git(repo, "switch", "-q", "main")
    memgit_(repo, "feedback", a, c, "--not-duplicate")
    git(repo, "merge", "-q", "--no-edit", "one")  # memgit's merge driver: the union of both lists
    assert f"distinct:\n- {c}\n- {b}" in front(repo, a)
    assert f"distinct:\n- {a}" in front(repo, b) and f"distinct:\n- {a}" in front(repo, c)
    assert memgit_(repo, "lint").exit_code == 0


def test_a_hand_written_or_hostile_no_only_stops_the_pair_it_names(repo: Path) -> None:
    store(repo)
    a = remember(repo, *BACKOFF)
    b = remember(repo, *BACKOFF_AGAIN)
    for title, body in UNRELATED:
        remember(repo, title, body)
    # A branch lists every memory (and rubbish) as different from a note of its own.
    ids = [a, b] + [line.split()[0] for line in memgit_(repo, "list").stdout.splitlines()]
    (repo / ".memory" / "hostile.md").write_text(
        "---\nid: m-hostile\ntitle: Uploads are handled by the upload client\nkind: fact\n"
        "distinct:\n" + "".join(f"- {i}\n" for i in ids) + "- {nested: [1, 2]}\n- 7\n---\n\nNothing else.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a hostile memory")
    assert proposals(repo) == [("merge", sorted([a, b]))]  # the pair it does not name still merges
    recalled = json.loads(memgit_(repo, "recall", "exponential backoff uploads", "--json").stdout)
    assert {a, b} <= {hit["id"] for hit in recalled}  # nothing hidden
    # A value that is not a list of ids is ignored, not an error.
    (repo / ".memory" / "hostile.md").write_text(
        "---\nid: m-hostile\ntitle: Uploads are handled by the upload client\nkind: fact\n"
        "distinct: {a: b}\n---\n\nNothing else.\n")
    assert proposals(repo) == [("merge", sorted([a, b]))]


def test_feedback_on_two_memories_refuses_bad_input(repo: Path) -> None:
    store(repo)
    a = remember(repo, *BACKOFF)
    b = remember(repo, *BACKOFF_AGAIN)
    head = git(repo, "rev-parse", "HEAD")
    for args, message in (
        ([a, "--not-duplicate"], "--not-duplicate is about two memories: memgit feedback A B --not-dup"),
        ([a, a, "--not-duplicate"], f"{a} and {a} are the same memory ({a}); name two different ones"),
        ([a, "m-nothing", "--duplicate"], "no memory 'm-nothing'"),
        ([a, b, "--used"], "--used is about one memory; only --not-duplicate and --duplicate take two"),
    ):
        result = memgit_(repo, "feedback", *args, code=1)
        assert message in result.stderr
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == ""


# -- opposites ------------------------------------------------------------------------------------


OPPOSITES = [
    (("turtle begin_fill starts a filled shape",
      "Call turtle.begin_fill before drawing the outline of a shape you want filled with the fill colour."),
     ("turtle end_fill fills the shape",
      "Call turtle.end_fill after drawing the outline of a shape you want filled with the fill colour.")),
    (("urllib url2pathname converts a file URL path to a local path",
      "nturl2path.url2pathname turns the path part of a file URL into an OS path on Windows."),
     ("urllib pathname2url converts a local path to a file URL path",
      "nturl2path.pathname2url turns an OS path into the path part of a file URL on Windows.")),
    (("binascii a2b_hex reads hexadecimal text into bytes",
      "binascii.a2b_hex takes hexadecimal digits and gives the binary data they spell."),
     ("binascii b2a_hex writes bytes as hexadecimal text",
      "binascii.b2a_hex takes binary data and gives the hexadecimal digits that spell it.")),
    (("codec str_to_bytes encodes text as UTF-8",
      "Use codec.str_to_bytes for every outgoing payload; it encodes the text as UTF-8 without a BOM."),
     ("codec bytes_to_str decodes UTF-8 text",
      "Use codec.bytes_to_str for every incoming payload; it decodes the text as UTF-8 without a BOM.")),
    (("Enable the query cache in settings.py",
      "Set QUERY_CACHE in settings.py to turn the query cache on for the reporting service."),
     ("Disable the query cache in settings.py",
      "Set QUERY_CACHE in settings.py to turn the query cache off for the reporting service.")),
]


@pytest.mark.parametrize("first,second", OPPOSITES, ids=["begin-end", "x2y-y2x", "a2b-b2a", "x_to_y", "enable-disable"])
def test_opposites_are_not_merged_unless_a_person_says_so(
        repo: Path, first: tuple[str, str], second: tuple[str, str]) -> None:
    store(repo)
    a = remember(repo, *first)
    b = remember(repo, *second)
    for title, body in UNRELATED:
        remember(repo, title, body)
    assert proposals(repo) == []
    shown = memgit_(repo, "reflect", "--only", "duplicates").stdout
    assert "not merged because they say different things" in shown
    said = memgit_(repo, "feedback", a, b, "--duplicate").stdout
    assert said.startswith("merged into ")
    assert len(list((repo / ".memory").glob("*.md"))) == 3
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize("other_symbol,merged", [("load_defaults", False), ("load_settings", True)])
def test_different_symbols_are_not_merged_and_the_same_symbol_is(
        repo: Path, other_symbol: str, merged: bool) -> None:
    store(repo)
    for title, body in UNRELATED:
        remember(repo, title, body)
    a = remember(repo, "Loading settings raises ConfigError on a missing key",
                 "It returns the parsed settings and raises ConfigError on a missing key.",
                 "--entity", "src/config.py::load_settings")
    b = remember(repo, "Loading the settings raises ConfigError when a key is missing",
                 "It gives back the parsed settings, raising ConfigError when a key is missing.",
                 "--entity", f"src/config.py::{other_symbol}")
    assert a != b
    assert proposals(repo) == ([("merge", sorted([a, b]))] if merged else [])


# -- fresh memories, by meaning -------------------------------------------------------------------


PARAPHRASES = [
    ("The test database is wiped before every test run",
     "Each run of the test suite starts from an empty database: the fixtures drop and recreate every table."),
    ("Tests always begin with a clean DB",
     "Before the suite runs, all tables are dropped and created again, so no state leaks between runs."),
]


def test_two_paraphrases_just_remembered_are_merged_without_a_reindex(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", "minilm")  # the real model: meaning is the point
    store(repo)
    for title, body in UNRELATED:
        remember(repo, title, body)
    a = remember(repo, *PARAPHRASES[0])
    b = remember(repo, *PARAPHRASES[1])
    data = json.loads(memgit_(repo, "reflect", "--only", "duplicates", "--json").stdout)
    assert [(p["kind"], sorted(p["ids"])) for p in data["proposals"]] == [("merge", sorted([a, b]))]
    assert "meaning cosine" in data["proposals"][0]["evidence"][0]
    assert data["notes"] == []


def test_a_large_backlog_is_left_to_the_background_and_reflect_says_so(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMGIT_INDEX_EMBEDDER", "tests.gated_embedder:GatedEmbedder")
    monkeypatch.setattr(upkeep, "EMBED_INLINE_MAX", 2)
    monkeypatch.setattr(vectors, "AUTO_EMBED_MAX", 2)  # what any command embeds in passing
    store(repo)
    for title, body in [*UNRELATED, *PARAPHRASES]:
        remember(repo, title, body)
    data = json.loads(memgit_(repo, "reflect", "--only", "duplicates", "--json").stdout)
    assert data["notes"] == [
        "4 of 4 memories have no meaning vector yet (4 were pending, more than reflect embeds itself, 2: "
        "the background job or `memgit reindex` embeds them); they were compared by words only"]


# -- the merged memory's kind -----------------------------------------------------------------------


def test_the_merged_memory_keeps_the_stronger_kind(repo: Path) -> None:
    store(repo)
    for title, body in UNRELATED:
        remember(repo, title, body)
    kept = remember(repo, *BACKOFF, "--kind", "fact")  # the more trusted: it is the one kept
    gone = remember(repo, *BACKOFF_AGAIN, "--kind", "decision", "--source", "inferred")
    data = json.loads(memgit_(repo, "reflect", "--only", "duplicates", "--apply", "--json").stdout)
    assert [p["ids"] for p in data["proposals"]] == [[kept, gone]]
    assert "\nkind: decision\n" in front(repo, kept)


# -- --wrong ----------------------------------------------------------------------------------------


def test_a_memory_marked_wrong_is_flagged_with_a_lower_confidence_and_not_kept_in_a_merge(repo: Path) -> None:
    store(repo)
    for title, body in UNRELATED:
        remember(repo, title, body)
    wrong = remember(repo, *BACKOFF)
    right = remember(repo, *BACKOFF_AGAIN, "--source", "inferred")
    memgit_(repo, "feedback", wrong, "--wrong")
    data = json.loads(memgit_(repo, "reflect", "--only", "duplicates", "--json").stdout)
    assert [p["ids"] for p in data["proposals"]] == [[right, wrong]]  # the right one is kept

    memgit_(repo, "feedback", wrong, right, "--not-duplicate")  # keep both, to see the flag
    memgit_(repo, "feedback", wrong, "--wrong")
    memgit_(repo, "feedback", right, "--wrong")
    memgit_(repo, "feedback", right, "--used")  # used as often as wrong: left alone
    data = json.loads(memgit_(repo, "reflect", "--only", "eviction", "--json").stdout)
    assert [(p["kind"], p["ids"], p["what"]) for p in data["proposals"]] == [
        ("review-feedback", [wrong],
         'flag "Retry uploads with exponential backoff" for review and lower its confidence 0.9 -> 0.7')]
    memgit_(repo, "reflect", "--only", "eviction", "--apply")
    assert "confidence: 0.7" in front(repo, wrong) and "needs_review: true" in front(repo, wrong)
    assert proposals(repo, "eviction") == []  # said once; the memory's update clears the slate


def test_reflect_commits_name_every_merge_in_a_trailer(repo: Path) -> None:
    store(repo)
    pairs = []
    for first, second in [(BACKOFF, BACKOFF_AGAIN), (
            ("Timestamps are stored in UTC", "Every timestamp column holds UTC; convert at the edges only."),
            ("Store timestamps as UTC", "Timestamp columns hold UTC, converted only at the edges.")), (
            ("The cache key includes the locale", "Cached pages are keyed by path and locale together."),
            ("Cache keys include the locale", "Pages in the cache are keyed by their path and locale."))]:
        pairs.append(sorted([remember(repo, *first), remember(repo, *second)]))
    memgit_(repo, "reflect", "--only", "duplicates", "--apply")
    message = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=repo, capture_output=True,
                             text=True, check=True).stdout
    trailers = sorted(sorted(line.split()[1:]) for line in message.splitlines()
                      if line.startswith("Memgit-Merged:"))
    assert trailers == sorted(pairs)
