"""Checking the store: every problem in every memory file, and what git has not got yet.

Reading is liberal elsewhere (a file with one odd field is still recalled); here every
oddity is named with its file and line, and so is a memory file git does not track — a
teammate's clone would not have it — and a setting of the committed `config.toml` that names
code, which memgit ignores there (`memgit.config`).
"""

from __future__ import annotations

from memgit.config import CONFIG_NAME, committed_problems
from memgit.git import repo as gitrepo
from memgit.git.gate import lint_files
from memgit.memory import format as fmt
from memgit.memory.credentials import find_in_memory, find_secrets
from memgit.memory.format import Problem
from memgit.memory.lenient import raw_value
from memgit.memory.patch import with_id
from memgit.memory.trust import may_hide
from memgit.store.folder import Store
from memgit.store.writer import Writer


def lint(store: Store, writer: Writer, *, fix: bool = False, commit: bool = True) -> list[Problem]:
    """Every problem in the store; with `fix`, write path-derived ids into hand-written files
    (and finish a change set a killed command left)."""
    loaded = store.load()
    problems = list(loaded.problems)
    to_fix: dict[str, str] = {}  # path -> the id it is read under
    for memory in loaded.memories:  # files without an id, and copies: write their path id
        data = store.path_of(memory.path).read_bytes()
        if memory.path in loaded.copies or not fmt.declares_id(data):
            if _utf8(data):  # a file that is not UTF-8 is reported; writing it back would lose bytes
                to_fix[memory.path] = memory.id
        for secret in find_in_memory(memory):
            problems.append(Problem(memory.path, 0, f"looks like a secret in {secret.where}: {secret.pattern} ({secret.excerpt})"))
        problems.extend(_secrets_in_replaced_fields(memory.path, data))
    problems.extend(_supersessions(loaded.memories))
    if fix and (to_fix or writer.interrupted()):
        with writer.writing():  # finishes an interrupted change set first
            change = writer.change(f"memory: write ids into {len(to_fix)} hand-written file(s)", commit)
            for rel, memory_id in to_fix.items():
                change.write(rel, with_id(store, rel, memory_id))
            writer.land(change)
        # A copy given its own id is a copy no more.
        fixed = set(to_fix) & set(loaded.copies)
        problems = [p for p in problems if p.path not in fixed or not p.message.startswith("duplicate id")]
    repo = writer.repository
    for line, message in committed_problems(store.root, repo.root if repo is not None else None):
        problems.append(Problem(CONFIG_NAME, line, message))
    problems.extend(uncommitted(writer, {m.path for m in loaded.memories} | {p.path for p in problems}))
    # Every file under the folder is pushed, not only memories: config.toml, notes.txt, README.md.
    problems.extend(lint_files(store.root, writer.repository, {m.path for m in loaded.memories}))
    problems.sort(key=lambda p: (p.path, p.line))
    return problems


def _supersessions(memories: list[fmt.Memory]) -> list[Problem]:
    """`supersedes` entries that hide nothing: an id no memory has, or a memory trusted more
    than the one that lists it (recall keeps it; `memgit reflect` lists the pair for a person)."""
    by_id = {m.id: m for m in memories}
    problems = []
    for memory in memories:
        for item in memory.supersedes:
            target = by_id.get(item)
            if target is None:
                problems.append(Problem(memory.path, 0, f"supersedes {item!r}: no memory has this id, so it "
                                                        "hides nothing; correct the id or remove it"))
            elif not may_hide(memory.source, target.source):
                problems.append(Problem(memory.path, 0, (
                    f"supersedes {item!r} (source {target.source}) from a memory of source {memory.source}: "
                    "recall does not hide it; a person decides (memgit reflect lists the pair)")))
    return problems


# Fields whose written value liberal reading may replace (an unknown kind is read as `fact`):
# the memory no longer holds what the file says, so the file's own text is checked.
_REPLACED = ("kind", "source", "status", "confidence", "created", "updated", "expires")


def _secrets_in_replaced_fields(rel: str, data: bytes) -> list[Problem]:
    text = data.decode("utf-8", "replace").removeprefix("\ufeff").replace("\r\n", "\n")
    if not text.startswith("---\n"):
        return []
    end = text.find("\n---", 3)
    front = text[3: end if end != -1 else len(text)]  # from the newline after the first '---'
    problems = []
    for name in _REPLACED:
        for secret in find_secrets(raw_value(front, name))[:1]:
            line = front.count("\n", 0, front.find(f"\n{name}") + 1) + 1
            problems.append(Problem(rel, line, f"looks like a secret in {name}: {secret.pattern} ({secret.excerpt})"))
    return problems


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def uncommitted(writer: Writer, memory_files: set[str]) -> list[Problem]:
    """Memory files git does not track, among `memory_files`."""
    repo = writer.repository
    if repo is None:
        return []
    interrupted = writer.interrupted()
    pending = set(interrupted.change.ops) if interrupted else set()
    problems = []
    for rel in gitrepo.untracked(repo, writer.memory_dir):
        if rel not in memory_files:
            continue
        if interrupted is not None and rel in pending:
            why = (f"written by an interrupted {interrupted.summary} and not committed; "
                   "'memgit finish' commits it, 'memgit abandon' undoes it")
        else:
            why = "git does not track this file, so teammates do not get it: commit it (or delete it)"
        problems.append(Problem(rel, 0, why))
    if interrupted is not None:  # staged or edited files of the change are tracked, yet not committed
        reported = {p.path for p in problems}
        for rel in sorted((pending & set(gitrepo.changed(repo, writer.memory_dir))) - reported):
            problems.append(Problem(rel, 0, f"changed by an interrupted {interrupted.summary} and not committed; "
                                            "'memgit finish' commits it, 'memgit abandon' undoes it"))
    return problems
