"""`memgit rules`: the pinned memories and the strongest conventions and preferences, written
into the rules files agents without memgit's hooks read at every session start.

What goes in, in this order (ties broken by id, so the block is stable):

1. pinned memories, then conventions and preferences with at least `[rules] min_confidence`;
   active, not expired, not superseded by an active memory, not a task's own (`task_id`),
   never checkpoints or summaries;
2. within each group: source `user` before `static` before `inferred`, then higher
   confidence, then the most recently updated;
3. while the block fits in `[rules] budget` tokens (a memory that does not fit is left out
   and the next one tried).

The files are fixed names inside the work tree (`TARGETS`), never read from committed
settings. memgit writes only between its markers (`memgit.agents.rulesblock`): every byte
outside them stays as it was, whatever its line endings. A file that is (or leads through) a
link to a place outside the work tree, or into a git directory (its hooks, its config), is refused.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memgit.agents import rulesblock
from memgit.errors import MemgitError
from memgit.git import repo as gitrepo
from memgit.index.workspace import Workspace
from memgit.recall import lookup
from memgit.memory.format import Memory, Problem

SOURCES = ("user", "static", "inferred")
MAX_BYTES = 2_000_000


@dataclass(frozen=True)
class Target:
    """One agent's rules file: `prefix` is what memgit writes above the block in a file it creates."""

    name: str
    path: str
    prefix: str = ""


TARGETS: tuple[Target, ...] = (
    Target("agents", "AGENTS.md"),
    Target("claude", "CLAUDE.md"),
    Target("gemini", "GEMINI.md"),
    Target("cursor", ".cursor/rules/memgit.mdc",
           "---\ndescription: Project memory kept by memgit (.memory/)\nalwaysApply: true\n---\n"),
    Target("copilot", ".github/copilot-instructions.md"),
    Target("windsurf", ".windsurf/rules/memgit.md", "---\ntrigger: always_on\n---\n"),
)
NAMES: tuple[str, ...] = tuple(t.name for t in TARGETS) + ("all",)


@dataclass(frozen=True)
class FileResult:
    """What happened to one rules file: `state` is created, updated, unchanged, removed,
    deleted (memgit's own file, gone with its block), absent (no block to remove), current,
    stale, or edited (by hand); `left_out` the memories over the budget."""

    path: str
    state: str
    message: str = ""
    left_out: tuple[str, ...] = ()


# -- what goes in ------------------------------------------------------------------------


def chosen(memories: Sequence[Memory], min_confidence: float,
           now: datetime | None = None) -> tuple[list[Memory], list[Memory]]:
    """The pinned memories and the conventions and preferences, each group best first."""
    stamp = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    active = [m for m in memories if m.active]
    hidden = {old for m in active for old in m.supersedes}
    usable = [m for m in active if m.id not in hidden and not m.task_id and m.kind not in ("checkpoint", "summary")
              and not (m.expires and _utc(m.expires) <= stamp)]
    pinned = [m for m in usable if m.pinned]
    rules = [m for m in usable if not m.pinned and m.kind in ("convention", "preference")
             and m.confidence >= min_confidence]
    return _best_first(pinned), _best_first(rules)


def _utc(stamp: str) -> str:
    if not stamp:
        return ""
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return "9999"  # unreadable: treat as not expired, as recall does with what it cannot read
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat(timespec="seconds")


def _best_first(memories: list[Memory]) -> list[Memory]:
    by_id = sorted(memories, key=lambda m: m.id)
    by_time = sorted(by_id, key=lambda m: _utc(m.updated or m.created or ""), reverse=True)
    return sorted(by_time, key=lambda m: (SOURCES.index(m.source) if m.source in SOURCES else 3, -m.confidence))


def lines(ws: Workspace, memories: Sequence[Memory] | None = None) -> tuple[list[str], list[Memory]]:
    """The block's lines for the store as it is now (`memories`, else every file parsed), and
    the memories over the budget."""
    pinned, rules = chosen(ws.load() if memories is None else memories, ws.config.rules_min_confidence)
    return rulesblock.render(pinned, rules, ws.config.rules_budget)


# -- the files -----------------------------------------------------------------------------


def _root(ws: Workspace) -> Path:
    if ws.repo is None:
        raise MemgitError("memgit rules writes into a git work tree's rules files; run it inside the repository")
    return ws.repo.root


def targets(names: Sequence[str]) -> list[Target]:
    """The targets `names` choose (`all`: every one)."""
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        raise MemgitError(f"unknown rules target {unknown[0]!r}; use one of {', '.join(NAMES)}")
    return list(TARGETS) if "all" in names else [t for t in TARGETS if t.name in names]


def real_path(root: Path, target: Target) -> Path:
    """Where `target`'s file really is: a link is followed only when it stays in the work tree."""
    path = root / target.path
    real = path.resolve()
    if not real.is_relative_to(root.resolve()):
        raise MemgitError(f"{target.path} leads outside the work tree (a link to {real}); memgit does not write "
                          "there: make it a plain file")
    if any(part.lower() == ".git" for part in real.relative_to(root.resolve()).parts):
        raise MemgitError(f"{target.path} leads into the git directory (a link to {real}); memgit does not write "
                          "there: make it a plain file")
    if real.exists() and not real.is_file():
        raise MemgitError(f"{target.path} is not a regular file; memgit leaves it alone")
    return real


def read(root: Path, target: Target) -> str | None:
    """The file's text, or None when there is none."""
    real = real_path(root, target)
    if not real.exists():
        return None
    if real.stat().st_size > MAX_BYTES:
        raise MemgitError(f"{target.path} is over {MAX_BYTES:,} bytes; memgit leaves it alone")
    try:
        return real.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise MemgitError(f"{target.path} is not UTF-8 text; memgit leaves it alone") from None


def span_of(target: Target, text: str) -> rulesblock.Span | None:
    try:
        return rulesblock.find_or_merged(text)
    except rulesblock.BlockError as exc:
        raise MemgitError(f"{target.path}: {exc}") from None


def with_block(target: Target, text: str | None, inner: Sequence[str]) -> str:
    """`text` with the block set to `inner`: replaced in place, or inserted at the top (after a
    byte-order mark and front matter), or a new file's whole text."""
    if text is None:
        eol = "\n"
        return target.prefix + rulesblock.block(inner, eol) + eol
    eol = rulesblock.eol_of(text)
    span = span_of(target, text)
    if span is not None:
        return text[:span.start] + rulesblock.block(inner, eol) + text[span.end:]
    at = _top(text)
    return text[:at] + rulesblock.block(inner, eol) + eol + text[at:]


def _top(text: str) -> int:
    at = 1 if text.startswith("\ufeff") else 0
    if text.startswith("---\n", at) or text.startswith("---\r\n", at):
        first = text.index("\n", at) + 1
        for close in ("\n---\n", "\n---\r\n", "\r\n---\r\n"):
            found = text.find(close, first - 1)
            if found != -1:
                return found + len(close)
    return at


def without_block(target: Target, text: str) -> str | None:
    """`text` without the block and its line ending; None when nothing else (but memgit's own
    front matter) would be left: the file was memgit's alone."""
    span = span_of(target, text)
    if span is None:
        return text
    end = span.end
    end += 2 if text.startswith("\r\n", end) else 1 if text.startswith("\n", end) else 0
    rest = text[:span.start] + text[end:]
    if rest in ("", "\ufeff") or (target.prefix and rest.replace("\r\n", "\n") == target.prefix):
        return None
    return rest


def write(root: Path, target: Target, text: str) -> None:
    """Replace the file atomically (its mode kept), making its folders inside the work tree."""
    real = real_path(root, target)
    real.parent.mkdir(parents=True, exist_ok=True)
    if not real.parent.resolve().is_relative_to(root.resolve()):
        raise MemgitError(f"{target.path} leads outside the work tree; memgit does not write there")
    mode = real.stat().st_mode & 0o7777 if real.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=".memgit-rules-", dir=real.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def delete(root: Path, target: Target) -> None:
    """Delete memgit's own file, and the folders above it that it leaves empty."""
    real = real_path(root, target)
    real.unlink()
    folder = (root / target.path).parent
    while folder != root and folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def hand_edit_message(target: Target, span: rulesblock.Span, expected: Sequence[str]) -> str:
    """What to say about a block edited by hand: where its text comes from, which memory to change."""
    changed = [line for line in span.lines if line not in expected and line.strip()]
    # a line written by hand names no memory; only when lines were taken out do the missing ones
    ids = rulesblock.ids_in(changed if changed else [line for line in expected if line not in span.lines])
    which = (f"change memory {', '.join(ids)} with `memgit edit ID`" if ids else
             "add what you wrote as a memory (`memgit remember … --kind convention`), or write it outside the block")
    return (f"{target.path}: the memgit block was edited by hand; it is generated from .memory/ and would be "
            f"overwritten: {which}, then run `memgit rules` (`--force` overwrites the block now)")


# -- the verbs -------------------------------------------------------------------------------


def _with_blocks(root: Path) -> list[Target]:
    """The targets whose file holds a memgit block (a file memgit cannot read is left out)."""
    found = []
    for target in TARGETS:
        try:
            text = read(root, target)
            if text is not None and span_of(target, text) is not None:
                found.append(target)
        except MemgitError:
            continue
    return found


def _default(root: Path) -> list[Target]:
    """The files a project already has (AGENTS.md, CLAUDE.md, GEMINI.md, Copilot's) and every
    file with a block; AGENTS.md when there is none."""
    found = _with_blocks(root)
    for target in TARGETS:
        if target.prefix or target in found:
            continue  # Cursor's and Windsurf's files are memgit's own: only when asked for
        path = root / target.path
        if path.exists() or path.is_symlink():
            found.append(target)
    return sorted(found, key=TARGETS.index) or [TARGETS[0]]


def _distinct(root: Path, chosen_targets: Sequence[Target]) -> list[Target]:
    """One target per real file (CLAUDE.md may be a link to AGENTS.md)."""
    seen: set[Path] = set()
    out = []
    for target in chosen_targets:
        real = real_path(root, target)
        if real not in seen:
            seen.add(real)
            out.append(target)
    return out


def run(ws: Workspace, action: str, names: Sequence[str] = (), *, force: bool = False) -> list[FileResult]:
    """`memgit rules`: `action` is write, check, remove or refresh (see the module docstring)."""
    root = _root(ws)
    if action == "refresh":
        return refresh(ws)
    if action == "write":
        ws.require_store()
        chosen_targets = _distinct(root, targets(names) if names else _default(root))
    else:
        chosen_targets = _distinct(root, targets(names) if names else _with_blocks(root))
    if action == "remove":
        edited = [t.path for t in chosen_targets if _edited(root, t)] if not force else []
        if edited:
            raise MemgitError(f"{', '.join(edited)}: the memgit block was edited by hand; removing it would lose "
                              "what was written there: move that text out of the block, or `--force` removes it")
        return [_remove(root, target) for target in chosen_targets]
    if action == "check":
        ws.require_store()
        if not chosen_targets:
            return [FileResult(TARGETS[0].path, "stale", f"{TARGETS[0].path}: no memgit block in any rules file; "
                               "run `memgit rules` to write one")]
        return [_check(root, target, lines(ws)[0]) for target in chosen_targets]
    if action != "write":
        raise MemgitError(f"unknown rules action {action!r}")
    inner, left = lines(ws)
    texts = {t.name: read(root, t) for t in chosen_targets}
    refusals = []
    for target in chosen_targets:
        text = texts[target.name]
        span = span_of(target, text) if text is not None else None
        if span is not None and span.edited and not force:
            refusals.append(hand_edit_message(target, span, inner))
    if refusals:
        raise MemgitError("\n".join(refusals))
    out = []
    for target in chosen_targets:
        text = texts[target.name]
        new = with_block(target, text, inner)
        state = ("created" if text is None else "unchanged" if new == text
                 else "updated" if span_of(target, text) is not None else "added")
        if state != "unchanged":
            write(root, target, new)
        out.append(FileResult(target.path, state, left_out=tuple(m.id for m in left)))
    return out


def _check(root: Path, target: Target, inner: Sequence[str]) -> FileResult:
    text = read(root, target)
    span = span_of(target, text) if text is not None else None
    if text is None or span is None:
        return FileResult(target.path, "stale", f"{target.path}: no memgit block; run `memgit rules`")
    if span.edited:
        return FileResult(target.path, "edited", hand_edit_message(target, span, inner))
    if with_block(target, text, inner) != text:
        return FileResult(target.path, "stale", f"{target.path}: the memgit block is out of date with .memory/; "
                          "run `memgit rules` and commit the file")
    return FileResult(target.path, "current")


def _edited(root: Path, target: Target) -> bool:
    text = read(root, target)
    span = span_of(target, text) if text is not None else None
    return span is not None and span.edited


def _remove(root: Path, target: Target) -> FileResult:
    text = read(root, target)
    if text is None or span_of(target, text) is None:
        return FileResult(target.path, "absent")
    rest = without_block(target, text)
    if rest is None:
        delete(root, target)
        return FileResult(target.path, "deleted")
    write(root, target, rest)
    return FileResult(target.path, "removed")


def for_commit(ws: Workspace) -> list[Path]:
    """The blocks brought up to date as memgit commits a change of memory files, so the same
    commit carries them (a teammate who pulls it finds them current, with nothing to rewrite):
    the files it changed. The memories come from the index, kept in step first."""
    repo = ws.repo
    if repo is None:
        return []
    # Only a file committed whose changes, if any, are memgit's block: the commit then holds
    # nothing of the user's own.
    paths = {t: real_path(repo.root, t) for t in _with_blocks(repo.root)}
    clean = [t for t, path in paths.items()
             if gitrepo.committed(repo, path) and _only_block_changed(repo, t, path)]
    if not clean:
        return []
    pool = lookup.indexed(ws)
    memories = [m for m, _ in pool] if pool is not None else None
    by_path = {t.path: t for t in TARGETS}
    updated = [real_path(repo.root, by_path[r.path]) for r in refresh(ws, memories, clean)]
    # A block brought up to date earlier but never committed (the memory commit was refused or
    # killed, or `memgit rules` ran): it goes in this commit too, not left modified.
    left = [paths[t] for t in clean if paths[t] not in updated and gitrepo.dirty(repo, paths[t])]
    return list(dict.fromkeys([*updated, *left]))


def _only_block_changed(repo: gitrepo.Repo, target: Target, path: Path) -> bool:
    """Whether the file differs from HEAD's, staged and in the work tree, only inside a memgit
    block memgit wrote (one a refused or killed memory commit, or `memgit rules`, left behind;
    a block edited by hand is the user's): nothing of the user's would go in the commit."""
    if gitrepo.hidden_changes(repo, path):
        return False  # the user's local version, which git is told to leave alone
    if not gitrepo.dirty(repo, path):
        return True
    rel = os.path.relpath(path, repo.root).replace(os.sep, "/")
    if gitrepo.mode_changed(repo, rel):
        return False  # the user's chmod
    try:
        head = _outside(target, gitrepo.show(repo, "HEAD", rel), edited_ok=True)
        if head is None:
            return False
        for version in (gitrepo.show(repo, "", rel), path.read_bytes()):  # the index, the work tree
            if _outside(target, version, edited_ok=False) != head:
                return False
    except (OSError, MemgitError):
        return False
    return True


def _outside(target: Target, data: bytes | None, *, edited_ok: bool) -> str | None:
    """The text with its block emptied (None: no file, not text, no block, or one edited by hand
    when not `edited_ok`)."""
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    span = span_of(target, text)
    if span is None or (span.edited and not edited_ok):
        return None
    return with_block(target, text, [])


def refresh(ws: Workspace, memories: Sequence[Memory] | None = None,
            only: Sequence[Target] | None = None) -> list[FileResult]:
    """Bring up to date the blocks the project already has (after a pull, `reflect --apply`,
    `capture --apply`, and in memgit's own commits). Never creates a file, never overwrites a
    block edited by hand, and waits while a merge, rebase, cherry-pick or revert is in
    progress; a file it cannot read is skipped. Only the files of `only`, when given. What it
    updated."""
    root = _root(ws)
    if ws.repo is None or gitrepo.busy(ws.repo) or not ws.memory_dir.is_dir():
        return []
    have = [t for t in _with_blocks(root) if only is None or t in only]
    if not have:
        return []
    inner = lines(ws, memories)[0]
    out = []
    for target in have:
        try:
            text = read(root, target)
            span = span_of(target, text) if text is not None else None
            if text is None or span is None or span.edited:
                continue
            new = with_block(target, text, inner)
            if new != text:
                write(root, target, new)
                out.append(FileResult(target.path, "updated"))
        except (MemgitError, OSError):
            continue  # a file it cannot read or write stays as it is; `memgit rules` says why
    return out


_STATES = {"current": "current", "stale": "out of date: run `memgit rules`",
           "edited": "edited by hand, so not kept current: `memgit rules --check` says what to do"}


def summary(ws: Workspace) -> str:
    """What `memgit status` says of the rules files: each memgit block's state (the git hooks
    keep blocks current silently, and leave one edited by hand as it is)."""
    if ws.repo is None:
        return "none (not a git work tree)"
    have = _with_blocks(ws.repo.root)
    if not have:
        return "no memgit block (`memgit rules` writes one)"
    inner = lines(ws)[0]
    return "; ".join(f"{t.path} {_STATES[_check(ws.repo.root, t, inner).state]}" for t in have)


def problems(ws: Workspace) -> list[Problem]:
    """What `memgit lint` says about the rules files: a block edited by hand, markers it cannot read."""
    if ws.repo is None:
        return []
    root = ws.repo.root
    out = []
    for target in TARGETS:
        try:
            text = read(root, target)
        except MemgitError:
            continue  # a file memgit would not write to: not memgit's to lint
        try:
            span = span_of(target, text) if text is not None else None
        except MemgitError as exc:
            out.append(Problem(target.path, 0, str(exc).removeprefix(f"{target.path}: ")))
            continue
        if text is not None and span is not None and span.edited:
            line = text.count("\n", 0, span.start) + 1
            out.append(Problem(target.path, line, "the memgit block was edited by hand: it is generated from "
                               ".memory/; change the memory (`memgit edit ID`) and run `memgit rules` "
                               "(`--force` overwrites the block)"))
    return out
