"""Moving memories in and out as JSON Lines: the import plan, free of I/O.

Import is faithful: every valid line becomes one memory and keeps its `id` (or gets one) (references from
outside stay valid) and its unknown fields. Over-budget bodies and exact duplicates are
imported with a warning; a line that is invalid, reuses an existing id, or looks like a
secret is reported with its line number and skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from memgit import memory as fmt
from memgit.credentials import find_in_memory
from memgit.errors import MemgitError
from memgit.memory import Memory


@dataclass
class ImportReport:
    """What an import did; `skipped` and `warnings` are one line each, with line numbers."""

    imported: int = 0
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    over_budget: int = 0
    duplicates: int = 0
    commit: str | None = None


def plan_import(
    lines: Iterable[str | bytes],
    existing: Sequence[Memory],
    *,
    kinds: tuple[str, ...],
    token_budget: int,
    allow_secret: bool = False,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[Memory], ImportReport]:
    """The memories to write for `lines`, and the report of what was skipped or warned."""
    report = ImportReport()
    ids = {m.id for m in existing}
    texts = {fmt.normalized_text(m.title, m.body) for m in existing if m.active}
    planned: list[Memory] = []
    for number, raw in enumerate(lines, start=1):
        if progress:
            progress(1)
        try:
            line = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError as exc:
            report.skipped.append(f"line {number}: not valid UTF-8 (byte {exc.start}); save the file as UTF-8")
            continue
        if not line.strip():
            continue
        try:
            memory = memory_from_json(line, kinds, new_id=lambda: fmt.new_id(ids))
        except MemgitError as exc:
            report.skipped.append(f"line {number}: {exc}")
            continue
        if memory.id in ids:
            report.skipped.append(f"line {number}: id {memory.id!r} already exists")
            continue
        if not allow_secret:
            secrets = find_in_memory(memory)  # every field, unknown imported ones too
            if secrets:
                first = secrets[0]
                report.skipped.append(f"line {number}: looks like a secret in {first.where} ({first.pattern}); use --allow-secret")
                continue
        key = fmt.normalized_text(memory.title, memory.body)
        if key in texts:
            report.duplicates += 1
            report.warnings.append(f"line {number}: same text as an existing memory (imported anyway)")
        if fmt.count_tokens(memory.body) > token_budget:
            report.over_budget += 1
        texts.add(key)
        ids.add(memory.id)
        planned.append(memory)
    report.imported = len(planned)
    return planned, report


def memory_from_json(line: str, kinds: tuple[str, ...], new_id: Callable[[], str] = fmt.new_id) -> Memory:
    """One JSON Lines record as a Memory, validated exactly like a memory file.

    A record without an `id` (from another tool) gets a new one.
    """
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise MemgitError(f"not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise MemgitError("each line must be a JSON object")
    body = data.pop("body", "")
    data.pop("path", None)
    if not isinstance(body, str):
        raise MemgitError("'body' must be text")
    meta = {k: v for k, v in data.items() if v is not None and v != [] and v != ""}
    if not meta.get("title") and not body.strip():
        raise MemgitError("a memory needs a title or a body")
    if "id" not in meta:
        meta = {"id": new_id(), **meta}
    # JSON is YAML, so the record goes through the same parser and checks as a file.
    text = "---\n" + json.dumps(meta, ensure_ascii=False) + "\n---\n\n" + body
    memory, problems = fmt.check(text, f"{meta['id']}.md", kinds)
    if memory is None or problems:
        raise MemgitError(problems[0].message if problems else "unreadable")
    return memory
