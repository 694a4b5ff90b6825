"""The memory file format: parsing, canonical dumping, validation."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memgit.errors import MemgitError
from memgit.memory import format as fmt
from memgit.memory import lenient
from memgit.memory.format import Memory

from .conftest import EXAMPLE


def example_files() -> list[Path]:
    return sorted(EXAMPLE.rglob("*.md"))


def test_example_store_has_every_kind() -> None:
    kinds = {lenient.parse(p.read_bytes(), p.name).kind for p in example_files()}
    assert kinds == set(fmt.KINDS)
    assert 20 <= len(example_files()) <= 40


@pytest.mark.parametrize("path", example_files(), ids=lambda p: p.name)
def test_example_files_round_trip_byte_for_byte(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert fmt.dump(lenient.parse(text, path.name)) == text


def test_field_order_and_omitted_empties() -> None:
    memory = Memory(id="m-1", title="t", kind="lesson", source="static", confidence=0.7, tags=("b", "a"))
    assert fmt.dump(memory) == (
        "---\nid: m-1\ntitle: t\nkind: lesson\nconfidence: 0.7\nsource: static\ntags:\n- b\n- a\n---\n"
    )


def test_timestamps_stay_strings_and_are_not_filled_in() -> None:
    text = "---\nid: a\ntitle: t\nkind: fact\nconfidence: 0.9\nsource: user\ncreated: 2026-01-02T03:04:05+01:00\n---\n\nbody\n"
    memory = lenient.parse(text)
    assert memory.created == "2026-01-02T03:04:05+01:00"
    assert memory.updated is None
    assert fmt.dump(memory) == text


def test_hand_written_file_gets_defaults_and_path_id() -> None:
    memory = lenient.parse("Use uv, not pip, to add dependencies.\n", "team/tooling notes.md")
    assert memory.id == "team.tooling-notes"
    assert memory.title == "Use uv, not pip, to add dependencies."
    assert (memory.kind, memory.source, memory.confidence, memory.status) == ("fact", "user", 0.9, "active")


def test_unknown_keys_are_kept() -> None:
    text = "---\nid: a\ntitle: t\nkind: fact\nconfidence: 0.9\nsource: user\nreviewed_by: ana\nlinks:\n- x\n---\n"
    memory = lenient.parse(text)
    assert memory.extra == {"reviewed_by": "ana", "links": ["x"]}
    assert fmt.dump(memory) == text


def test_source_sets_default_confidence() -> None:
    assert lenient.parse("---\ntitle: t\nsource: inferred\n---\n").confidence == 0.5
    assert lenient.parse("---\ntitle: t\nsource: static\n---\n").confidence == 0.7


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("---\ntitle: [unclosed\n---\n", 3, "invalid YAML"),
        ("---\ntitle: t\nconfidence: 1.5\n---\n", 3, "must be from 0 to 1"),
        ("---\ntitle: t\nconfidence: high\n---\n", 3, "must be a number"),
        ("---\ntitle: t\ntags: {a: 1}\n---\n", 3, "must be a list"),
        ("---\nid: ../etc\ntitle: t\n---\n", 2, "is not valid"),
        ("---\ntitle: t\nsource: rumour\n---\n", 3, "unknown source"),
        ("---\ntitle: t\ncreated: yesterday\n---\n", 3, "ISO 8601"),
        ("---\na: &x [1, 2]\nb: *x\n---\n", 3, "aliases are not allowed"),
        ("---\n- just\n- a list\n---\n", 1, "must be a mapping"),
        ("---\ntitle: !!python/object:os.system x\n---\n", 2, "invalid YAML"),
        ("---\ntitle: never closed\n", 1, "never closed"),
    ],
)
def test_problems_name_line_and_reason(text: str, line: int, reason: str) -> None:
    memory, problems = lenient.check(text, "bad.md")
    assert problems, text
    assert problems[0].line == line
    assert reason in problems[0].message


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('---\ntitle: "bad \\uD800 x"\n---\nbody\n', "Unicode"),
        ("---\ntitle: t\n---\nnul \x00 here\n", "control character (U+0000)"),
        ("---\ntitle: \"esc \\e[31m\"\n---\n", "control character (U+001B)"),
        ("---\ntitle: d\nx: " + "[" * 400 + "]" * 400 + "\n---\n", "nests too deeply"),
        ("---\ntitle: t\ntags: ['', a]\n---\n", "empty or spans lines"),
    ],
)
def test_text_memgit_cannot_store_is_a_problem(text: str, reason: str) -> None:
    memory, problems = lenient.check(text, "x.md")
    assert memory is not None or problems
    assert any(reason in p.message for p in problems), problems


def test_bytes_problems() -> None:
    assert "UTF-8" in lenient.check(b"---\ntitle: caf\xe9\n---\n", "x.md")[1][0].message
    assert "binary" in lenient.check(b"\x00\x01\x02", "x.md")[1][0].message
    assert "1 MB" in lenient.check(b"a" * (fmt.MAX_FILE_BYTES + 1), "x.md")[1][0].message


def test_parse_raises_memgit_error() -> None:
    with pytest.raises(MemgitError, match="bad.md:3"):
        lenient.parse("---\ntitle: t\nconfidence: 7\n---\n", "bad.md")


def test_count_tokens_is_model_free_and_counts_cjk() -> None:
    assert fmt.count_tokens("") == 0
    assert fmt.count_tokens("a bb ccc dddd") == 4
    assert fmt.count_tokens("parse_config") == 5  # "parse" 2, "_" 1, "config" 2
    assert fmt.count_tokens("记忆召回") == 4


def test_file_names_slug_plus_id() -> None:
    memory = Memory(id="m-7f3a2c", title="parse_config returns a tuple (path, Config)!")
    assert fmt.file_name(memory) == "parse-config-returns-a-tuple-path-config-7f3a2c.md"
    assert fmt.file_name(Memory(id="zh-01", title="记忆")) == "memory-zh-01.md"


# Any text memgit accepts: no control characters (other than tab and newline) or surrogates.
text_st = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\n\t"), max_size=200)


@given(
    title=text_st.map(lambda s: " ".join(s.split())).filter(bool),
    body=text_st,
    tags=st.lists(text_st.filter(lambda t: t.strip() != "" and "\n" not in t), max_size=3),
    confidence=st.floats(0, 1),
)
def test_dump_parse_round_trip_property(title: str, body: str, tags: list[str], confidence: float) -> None:
    memory = Memory(id="m-abc", title=title, body=body.replace("\r", "").strip(), tags=tuple(tags), confidence=confidence)
    text = fmt.dump(memory)
    again = lenient.parse(text, "x.md")
    assert fmt.dump(again) == text


@pytest.mark.parametrize(
    ("written", "read", "reported"),
    [
        ("0.4", 0.4, False),
        ("90", 0.9, True),
        ("'85%'", 0.85, True),
        ("'0.8'", 0.8, True),
        ("high", 0.5, True),  # the default for source: inferred
        ("7", 0.5, True),  # a 1-10 scale? a typo? not guessed
        ("1.5", 0.5, True),
        ("-1", 0.5, True),
        (".nan", 0.5, True),
        ("true", 0.5, True),
        ("500", 0.5, True),
    ],
)
def test_confidence_is_read_liberally(written: str, read: float, reported: bool) -> None:
    memory, problems = lenient.check(f"---\ntitle: t\nsource: inferred\nconfidence: {written}\n---\n", "c.md")
    assert memory is not None and memory.confidence == read
    assert bool(problems) is reported
    if reported:
        with pytest.raises(MemgitError):
            lenient.parse(f"---\ntitle: t\nsource: inferred\nconfidence: {written}\n---\n")


@pytest.mark.parametrize(
    ("field", "written", "read"),
    [
        ("created", "2023-05-08T13:56:00", "2023-05-08T13:56:00+00:00"),
        ("created", "2023-05-08 13:56", "2023-05-08T13:56:00+00:00"),
        ("expires", "soon", None),
        ("expires", "1683554160", None),
        ("kind", "Lesson", "lesson"),
        ("kind", "gotcha", "fact"),
        ("source", "agent", "user"),
        ("status", "obsolete", "active"),
        ("status", "ARCHIVED", "archived"),
        ("entity", "[src/a.py, src/b.py]", "src/a.py src/b.py"),
        ("task_id", "on", "on"),
        ("id", "has space", "x"),
        ("tags", "[a, '', [b], c]", ("a", "c")),
    ],
)
def test_odd_fields_are_read_liberally_and_reported(field: str, written: str, read: object) -> None:
    memory, problems = lenient.check(f"---\ntitle: title\n{field}: {written}\n---\nbody\n", "x.md")
    assert memory is not None and getattr(memory, field) == read
    assert [p.line for p in problems] == [3], problems


def test_only_files_without_text_are_unusable() -> None:
    assert lenient.check(b"\x00\x01\x02", "x.md")[0] is None
    assert lenient.check(b"a" * (fmt.MAX_FILE_BYTES + 1), "x.md")[0] is None
    for text, reason in [
        ("---\ntitle: [unclosed\n---\nbody\n", "invalid YAML"),
        ("---\na: &x [1, 2]\nb: *x\ntitle: kept\n---\n", "aliases"),
        ("---\ntitle: kept\nx: " + "[" * 400 + "]" * 400 + "\n---\n", "nests too deeply"),
        ("---\ntitle: kept\nfiller: '" + "x" * fmt.MAX_FRONT_MATTER_BYTES + "'\n---\nbody\n", "64 KB"),
    ]:
        memory, problems = lenient.check(text, "x.md")
        assert memory is not None and any(reason in p.message for p in problems), (text[:40], problems)
    assert lenient.check("---\na: &x [1, 2]\nb: *x\ntitle: kept\n---\n", "x.md")[0].title == "kept"  # type: ignore[union-attr]
