"""Moving memories in and out as JSON Lines: the import plan (free of I/O), and its landing.

Import is faithful: every valid line becomes one memory and keeps its `id` (or gets one) (references from
outside stay valid) and its unknown fields. Over-budget bodies and exact duplicates are
imported with a warning; a line that is invalid, reuses an existing id, or looks like a
secret is reported with its line number and skipped.

Import is idempotent: a line whose memory is already in the store (same id and text, or no id
and the same text) is counted as already present, so running an import again — after it was
interrupted, or by mistake — adds nothing twice. A line without an id gets one derived from
its text, so the same line gets the same id on every run.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Sequence

from memgit.errors import MemgitError
from memgit.git import repo as gitrepo
from memgit.memory import format as fmt
from memgit.memory import lenient
from memgit.memory.credentials import find_in_memory
from memgit.memory.format import Memory
from memgit.store.folder import Store
from memgit.store.writer import Writer


@dataclass
class ImportReport:
    """What an import did; `skipped` and `warnings` are one line each, with line numbers."""

    imported: int = 0
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    over_budget: int = 0
    duplicates: int = 0
    present: int = 0
    commit: str | None = None
    present_ids: list[str] = field(default_factory=list)  # the existing memories of those lines


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
    by_id = {m.id: fmt.normalized_text(m.title, m.body) for m in existing}
    ids = set(by_id)
    texts = {fmt.normalized_text(m.title, m.body) for m in existing if m.active}
    by_text = {fmt.normalized_text(m.title, m.body): m.id for m in existing if m.active}
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
            memory, derived = memory_from_json(line, kinds)
        except MemgitError as exc:
            report.skipped.append(f"line {number}: {exc}")
            continue
        key = fmt.normalized_text(memory.title, memory.body)
        # A derived id already in use is this line's memory (edited since, if its text differs).
        if by_id.get(memory.id) == key or (derived and (key in texts or memory.id in by_id)):
            report.present += 1
            report.present_ids.append(memory.id if by_id.get(memory.id) == key else by_text.get(key, memory.id))
            continue
        if memory.id in ids:
            report.skipped.append(f"line {number}: id {memory.id!r} already exists with another text")
            continue
        if not allow_secret:
            secrets = find_in_memory(memory)  # every field, unknown imported ones too
            if secrets:
                first = secrets[0]
                report.skipped.append(f"line {number}: looks like a secret in {first.where} ({first.pattern}); use --allow-secret")
                continue
        if key in texts:
            report.duplicates += 1
            report.warnings.append(f"line {number}: same text as an existing memory (imported anyway)")
        if fmt.count_tokens(memory.body) > token_budget:
            report.over_budget += 1
        texts.add(key)
        ids.add(memory.id)
        by_id[memory.id] = key
        planned.append(memory)
    report.imported = len(planned)
    return planned, report


def memory_from_json(line: str, kinds: tuple[str, ...]) -> tuple[Memory, bool]:
    """One JSON Lines record as a Memory, validated exactly like a memory file, and whether
    its id was derived (the record had none, e.g. from another tool).
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
    derived = "id" not in meta
    if derived:
        meta = {"id": content_id(str(meta.get("title", "")), body), **meta}
    # JSON is YAML, so the record goes through the same parser and checks as a file.
    text = "---\n" + json.dumps(meta, ensure_ascii=False) + "\n---\n\n" + body
    memory, problems = lenient.check(text, f"{meta['id']}.md", kinds)
    if memory is None or problems:
        raise MemgitError(problems[0].message if problems else "unreadable")
    return memory, derived


def content_id(title: str, body: str) -> str:
    """An id from a memory's text: the same text gets the same id on every import.

    64 bits of its sha256, so two texts sharing one is not a worry at any store size (about
    one chance in 10^9 at 100k imported memories): a memory that holds the id with another
    text is this line's memory, edited since it was imported.
    """
    return "m-" + hashlib.sha256(fmt.normalized_text(title, body).encode("utf-8")).hexdigest()[:16]


def land(writer: Writer, store: Store, existing: Sequence[Memory], memories: Sequence[Memory],
         report: ImportReport, commit: bool) -> str | None:
    """Write the planned memories as one change set (call under `writer.writing()`).

    Lines already present whose files an earlier run wrote but could not commit (a rejecting
    hook) are committed now: re-running the import is how a user finishes it.
    """
    change = writer.change(f"memory: import {len(memories)} memories", commit)
    taken: set[str] = set()
    for memory in memories:
        rel = store.new_path(memory, taken)
        taken.add(rel)
        change.write(rel, fmt.dump(replace(memory, path=rel)))
    sha = writer.land(change)
    if report.present and commit:
        present = set(report.present_ids)
        paths = [store.root / m.path for m in existing if m.id in present]
        todo = gitrepo.not_committed(writer.repo(), [p for p in paths if p.exists()], store.root)
        if todo:
            sha = writer.commit(todo, f"memory: import {len(todo)} memories", commit)
    return sha
