"""`pinned: true`: a memory given to the agent at every session start."""

from __future__ import annotations

from memgit.memory import format as fmt
from memgit.memory import lenient


def test_pinned_round_trips_and_is_left_out_when_false() -> None:
    text = fmt.dump(fmt.Memory("m-1", "Run tests with pytest -q", pinned=True))
    assert text.endswith("source: user\npinned: true\n---\n")
    assert lenient.parse(text).pinned is True
    assert fmt.dump(lenient.parse(text)) == text
    assert "pinned:" not in fmt.dump(fmt.Memory("m-2", "a plain memory"))


def test_odd_pinned_values_are_read_and_reported() -> None:
    memory, problems = lenient.check("---\ntitle: x\npinned: maybe\n---\n", "a.md")
    assert memory is not None and memory.pinned is False
    assert [p.line for p in problems] == [3]


def test_pinned_survives_the_index_and_an_edit(mem) -> None:  # type: ignore[no-untyped-def]
    made = mem.remember("Always run ruff before committing", kind="convention").memory
    mem.update(made.id, pinned=True)
    assert [m.id for m in mem.list() if m.pinned] == [made.id]
    path = mem.memory_dir / made.path
    assert "pinned: true\n" in path.read_text()
    mem.update(made.id, pinned=False)
    assert "pinned:" not in path.read_text()
    assert not any(m.pinned for m in mem.list())
