"""git: finding the repository, committing only memory paths, reading history.

Every command goes through `memgit.git.runner` (one `git` process each, no gitpython):
locating the repository is on every call's path, and is one `git rev-parse`.
"""

from __future__ import annotations

import contextlib
import math
import os
import posixpath
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from memgit.errors import MemgitError, NotCommitted, NotStaged
from memgit.git import gitfiles, localstate, repostate, runner

#: Up to this many paths are given to git in argv; more go through a pathspec file on stdin.
ARGV_PATHS = 100


@dataclass(frozen=True)
class Repo:
    """A work tree: its root and its git dir (per worktree, so the index is per worktree)."""

    root: Path
    git_dir: Path


@dataclass(frozen=True)
class Revision:
    """One commit in a memory's history, with the path the memory had in it."""

    sha: str
    author: str
    date: str
    subject: str
    path: str


def _run(args: Sequence[str], cwd: Path, stdin: bytes | None = None) -> runner.Output:
    return runner.run(args, cwd, stdin=stdin)


def find(start: Path) -> Repo | None:
    """The repository containing `start`, or None when there is none."""
    probe = start if start.is_dir() else start.parent
    while not probe.exists():
        probe = probe.parent
    if repostate.holding():  # a hook: read from git's files when their layout is the plain one
        known = gitfiles.locate(probe)
        if known is not None:
            return Repo(root=known[0], git_dir=known[1])
    result = _run(["rev-parse", "--is-bare-repository", "--absolute-git-dir", "--show-toplevel"], probe)
    lines = result.stdout.splitlines()
    if lines and lines[0] == "true":
        raise MemgitError(
            f"{probe} is a bare repository: memories need a work tree; clone it and run memgit there"
        )
    if result.returncode != 0 and len(lines) >= 2:
        raise MemgitError(f"{probe} is inside a git dir, not a work tree; run memgit from the work tree")
    if result.returncode != 0 or len(lines) < 3:
        return None
    root, git_dir = Path(lines[2]), Path(lines[1])
    if git_dir.is_relative_to(root) and not git_dir.is_relative_to(root / ".git"):
        # A folder committed to look like a git dir (HEAD, config with core.worktree): its config,
        # and memgit's state that would go into it, are the branch's, not this clone's.
        raise MemgitError(f"{probe} is a git dir committed inside the work tree {root}, not this clone's "
                          f"{root / '.git'}; run memgit from outside it")
    return Repo(root=root, git_dir=git_dir)


def require(start: Path) -> Repo:
    repo = find(start)
    if repo is None:
        raise MemgitError(f"{start} is not inside a git repository; run 'git init' first")
    return repo


LOCK_TIMEOUT_SECONDS = 60.0


def lock_timeout(value: str | None) -> float:
    """Seconds to wait for the write lock: `value` when it is a number ≥ 0, else the default
    (a NaN or a typo must not turn into waiting forever, or not at all)."""
    try:
        seconds = float(value) if value is not None else LOCK_TIMEOUT_SECONDS
    except ValueError:
        return LOCK_TIMEOUT_SECONDS
    return seconds if math.isfinite(seconds) and seconds >= 0 else LOCK_TIMEOUT_SECONDS


@contextmanager
def write_lock(repo: Repo, timeout: float | None = None) -> Iterator[None]:
    """Serialise memgit writers in one repository (two agents remembering at once).

    Waits at most `timeout` seconds (default LOCK_TIMEOUT_SECONDS, or $MEMGIT_LOCK_TIMEOUT):
    a writer can sit in a user's slow commit hook, and an agent must get an answer, not hang.
    """
    import fcntl  # POSIX only (flock)

    if timeout is None:
        timeout = lock_timeout(os.environ.get("MEMGIT_LOCK_TIMEOUT"))
    lock_dir = localstate.folder(repo.git_dir)
    try:
        lock_dir.mkdir(parents=True, exist_ok=True)
        handle = open(localstate.write_lock(repo.git_dir), "a+")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise MemgitError(
            f"cannot take memgit's write lock in {lock_dir} ({exc.strerror or exc}); "
            "it must be a writable folder (remove whatever is in its way)"
        ) from None
    with handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    handle.seek(0)
                    holder = handle.read().strip() or "another process"
                    raise MemgitError(
                        f"another memgit command ({holder}) has been writing to this repository for over "
                        f"{timeout:g} s (perhaps in a slow commit hook); nothing was changed: wait for it "
                        "and run this again (MEMGIT_LOCK_TIMEOUT sets how long to wait)"
                    ) from None
                time.sleep(0.05)
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}")
            handle.flush()
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def writing_now(repo: Repo) -> bool:
    """Whether another process holds memgit's write lock (a write in progress, not a dead one)."""
    import fcntl  # POSIX only (flock)

    try:
        handle = open(localstate.write_lock(repo.git_dir), "rb")  # noqa: SIM115 - closed below
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def busy(repo: Repo) -> str | None:
    """The git operation in progress (a merge, rebase…) that a memory commit would meddle with."""
    for name, what, how in (
        ("MERGE_HEAD", "a merge", "git merge --continue or --abort"),
        ("rebase-merge", "a rebase", "git rebase --continue or --abort"),
        ("rebase-apply", "a rebase or git am", "git rebase --continue or --abort"),
        ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --continue or --abort"),
        ("REVERT_HEAD", "a revert", "git revert --continue or --abort"),
    ):
        if (repo.git_dir / name).exists():
            return f"{what} is in progress; finish it ({how}) and run this again"
    return None


def detached(repo: Repo) -> bool:
    return _run(["symbolic-ref", "-q", "HEAD"], repo.root).returncode != 0


def commit(repo: Repo, paths: Sequence[Path], message: str, *, stage_only: bool = False,
           index_before: dict[str, str | None] | None = None) -> str | None:
    """Commit exactly `paths` (added, changed or deleted), whatever else is staged.

    Returns the new commit's sha, or None when staging only or when nothing changed.
    The repository's hooks run as for any commit. If the commit is not made (a hook rejects
    it, git fails, memgit is interrupted by an exception), git's index is put back as it was
    for these paths — nothing of the change is left staged for the user's next commit — and
    the error says why; the files stay written in the working tree. `index_before` is that
    state when the caller knows it from earlier (`index_entries`; an interrupted change).
    """
    rel = [os.path.relpath(p, repo.root) for p in paths]
    # A few paths go in argv (git answers `commit --only -- path` about twice as fast as from a
    # pathspec file at 20k memories); many (an import) go on stdin, from an anonymous file that
    # vanishes with the process whatever happens to it.
    pathspec: bytes | None = None
    spec = ["--", *rel]
    if len(rel) > ARGV_PATHS:
        pathspec = b"\0".join(os.fsencode(r) for r in rel)
        spec = ["--pathspec-from-file=-", "--pathspec-file-nul"]
    before = index_before if index_before is not None else index_entries(repo, rel)
    added = _run(["add", "--all", *spec], repo.root, stdin=pathspec)
    if added.returncode != 0:  # git add changes the index all at once or not at all
        raise NotStaged(f"git add failed: {added.stderr.strip()}")
    if stage_only:
        return None
    try:
        return _commit_staged(repo, rel, spec, pathspec, message)
    except BaseException:
        restore_index(repo, before)
        raise


def _commit_staged(repo: Repo, rel: list[str], spec: list[str], pathspec: bytes | None, message: str) -> str | None:
    # `--only` commits these paths' working-tree state and leaves the user's other staged
    # work staged and uncommitted. The message goes in a file: a reflect of hundreds of
    # proposals does not fit in one argument (E2BIG), and stdin may carry the paths.
    with _message_file(repo, message) as message_path:
        done = _run(["commit", "--only", "--quiet", "-F", str(message_path), *spec], repo.root, stdin=pathspec)
    status, out, err = done.returncode, done.stdout, done.stderr
    if status != 0 and ("nothing to commit" in out + err or "nothing added to commit" in out + err):
        return None  # the files already say this
    if status != 0:
        detail = (err.strip() or out.strip()).splitlines()
        reason = detail[-1] if detail else f"git exited with {status}"
        if "user.email" in err or "user.name" in err or "Author identity unknown" in err:
            reason = "git does not know who you are: set user.name and user.email (git config)"
        shown = ", ".join(rel[:3]) + (f" and {len(rel) - 3} more" if len(rel) > 3 else "")
        raise NotCommitted(
            f"the commit was not made ({reason}); the change is written in the working tree ({shown}) "
            "but not staged"
        )
    sha = _run(["rev-parse", "HEAD"], repo.root).stdout
    changed = _run(["diff-tree", "--root", "--no-commit-id", "--name-only", "-r", "-z", "HEAD"], repo.root).stdout
    extra = sorted(set(filter(None, changed.split("\0"))) - set(r.replace(os.sep, "/") for r in rel))
    if extra:
        # A hook staged other files (lint-staged style) into memgit's commit: undo the commit,
        # keep everything in the working tree, and say so (the caller unstages memgit's files).
        _run(["reset", "--soft", "HEAD~1"] if _has_parent(repo) else ["update-ref", "-d", "HEAD"], repo.root)
        raise NotCommitted(
            f"a commit hook added files memgit did not change ({', '.join(extra[:5])}) to the memory "
            "commit, so memgit undid that commit; what the hook staged is still staged"
        )
    return sha.strip()


#: A commit message file older than this was left by a command that was killed.
STALE_MESSAGE_SECONDS = 3600.0


@contextmanager
def _message_file(repo: Repo, message: str) -> Iterator[Path]:
    """A commit message in a file of the git dir (local; removed once git has read it)."""
    folder = localstate.folder(repo.git_dir)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("commit-message-*.txt"):  # left by a killed command: commits take turns
        with contextlib.suppress(OSError):
            if time.time() - old.stat().st_mtime > STALE_MESSAGE_SECONDS:
                old.unlink()
    import tempfile  # only a commit needs it: a hook that recalls starts faster

    handle, name = tempfile.mkstemp(prefix="commit-message-", suffix=".txt", dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(message.encode("utf-8"))
        yield Path(name)
    finally:
        os.unlink(name)


def index_entries(repo: Repo, rel: Sequence[str]) -> dict[str, str | None]:
    """git's index entries (`mode sha stage`) of these paths (from the root), None where the
    index has none: what `restore_index` puts back."""
    entries: dict[str, str | None] = {r.replace(os.sep, "/"): None for r in rel}
    if not entries:
        return entries
    # A few paths go in argv as they are (literal pathspecs): listing their folder would read
    # 100k entries for one memory at 100k. ls-files takes no pathspec file, so for many paths
    # (an import) it lists the few folders that hold them.
    wanted = list(entries) if len(entries) <= ARGV_PATHS else _folders(entries)
    listed = _run(["ls-files", "--stage", "-z", "--", *wanted], repo.root)
    if listed.returncode != 0:
        raise MemgitError(f"git ls-files failed: {listed.stderr.strip()}")
    for line in listed.stdout.split("\0"):
        info, _, path = line.partition("\t")
        if path in entries:
            entries[path] = info
    return entries


def _folders(paths: Iterable[str]) -> list[str]:
    return sorted({posixpath.dirname(p) or "." for p in paths})


def restore_index(repo: Repo, entries: dict[str, str | None]) -> None:
    """Put git's index entries of these paths back as `index_entries` read them (the working
    tree is not touched). Best effort: it runs on the way out of a failure."""
    zero = "0" * 40
    lines = [f"0 {zero}\t{path}" for path in entries]  # drop whatever is there now…
    lines += [f"{info}\t{path}" for path, info in entries.items() if info]  # …then put back what was
    _run(["update-index", "-z", "--index-info"], repo.root, stdin="\0".join(lines).encode("utf-8") + b"\0")


def head_entries(repo: Repo, rel: Sequence[str]) -> dict[str, str | None]:
    """HEAD's entries (`mode sha 0`) of these paths (from the root), None where HEAD has none:
    the index of a clean work tree, for `restore_index`."""
    entries: dict[str, str | None] = {r.replace(os.sep, "/"): None for r in rel}
    listed = _run(["ls-tree", "-r", "-z", "HEAD", "--", *entries] if entries else ["version"], repo.root)
    for line in listed.stdout.split("\0") if listed.returncode == 0 and entries else ():
        info, _, path = line.partition("\t")
        mode, _, rest = info.partition(" ")
        sha = rest.partition(" ")[2]
        if path in entries:
            entries[path] = f"{mode} {sha} 0"
    return entries


def staged_changes(repo: Repo, rel: Sequence[str]) -> list[str]:
    """Those of these paths (from the root) whose staged state differs from HEAD: what the next
    `git commit` would take (added, changed or deleted)."""
    wanted = {r.replace(os.sep, "/") for r in rel}
    if not wanted:
        return []
    head = "HEAD" if _run(["rev-parse", "--verify", "--quiet", "HEAD"], repo.root).returncode == 0 else EMPTY_TREE
    result = _run(["-c", "core.quotePath=false", "diff", "--cached", "--no-renames", "--name-only", "-z", head,
                   "--", *_folders(wanted)], repo.root)
    return [p for p in result.stdout.split("\0") if p in wanted] if result.returncode == 0 else []


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def _has_parent(repo: Repo) -> bool:
    return _run(["rev-parse", "--verify", "--quiet", "HEAD~1"], repo.root).returncode == 0


def history(repo: Repo, path: Path) -> list[Revision]:
    """Commits that touched `path`, newest first, following renames."""
    rel = os.path.relpath(path, repo.root)
    result = _run(["log", "--follow", "--name-only", "--format=%x1e%H%x1f%an%x1f%aI%x1f%s", "--", rel], repo.root)
    if result.returncode != 0:
        if "does not have any commits" in result.stderr:
            return []
        raise MemgitError(f"git log failed: {result.stderr.strip()}")
    revisions = []
    for record in result.stdout.split("\x1e")[1:]:
        head, _, names = record.partition("\n")
        sha, author, date, subject = head.split("\x1f", 3)
        name = next((n for n in names.splitlines() if n.strip()), rel)
        revisions.append(Revision(sha, author, date, subject, name.strip()))
    return revisions


def show(repo: Repo, rev: str, rel_path: str) -> bytes | None:
    """A file's content at a revision, or None when it did not exist there."""
    result = _run(["show", f"{rev}:{rel_path}"], repo.root)
    return result.data if result.returncode == 0 else None


def resolve(repo: Repo, rev: str) -> str:
    """A revision name as a commit sha, or a clear error."""
    if rev.startswith("-"):
        raise MemgitError(f"{rev!r} is not a revision")
    result = _run(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], repo.root)
    if result.returncode != 0:
        raise MemgitError(f"unknown revision {rev!r}; see 'memgit history ID' for this memory's commits")
    return result.stdout.strip()


def grep_id(repo: Repo, rev: str, memory_id: str, under: str) -> list[str]:
    """Paths under `under` at `rev` whose front-matter declares `id: <memory_id>`."""
    escaped = memory_id.replace(".", r"\.")  # ids are [A-Za-z0-9._-]: only '.' is special
    pattern = f"^id: *['\"]?{escaped}['\"]? *$"
    result = _run(["grep", "-l", "-E", "-e", pattern, rev, "--", under], repo.root)
    prefix = f"{rev}:"
    return [line.removeprefix(prefix) for line in result.stdout.splitlines() if line]


def grep_text(repo: Repo, rev: str | None, text: str, under: str) -> list[str]:
    """Paths (from the root) of files under `under` holding `text`, at `rev` or (None) in the work
    tree, tracked or not."""
    where = [rev] if rev else ["--untracked"]
    result = _run(["-c", "core.quotePath=false", "grep", "-l", "-z", "-F", "-e", text, *where, "--", under],
                  repo.root)
    return [line.removeprefix(f"{rev}:") if rev else line for line in result.stdout.split("\0") if line]


def deleted_path(repo: Repo, memory_id: str, under: str) -> str | None:
    """The path (from the repository root) of the newest deleted file that declared this id."""
    escaped = memory_id.replace(".", r"\.")
    result = _run(
        ["log", "--diff-filter=D", "--name-only", "--format=", "-G", f"^id: *['\"]?{escaped}['\"]? *$", "--", under],
        repo.root,
    )
    return next((line for line in result.stdout.splitlines() if line.strip()), None)


def committed(repo: Repo, path: Path) -> bool:
    """Whether `path` is in the HEAD commit (False on a repository with no commits)."""
    rel = os.path.relpath(path, repo.root).replace(os.sep, "/")
    return _run(["cat-file", "-e", f"HEAD:{rel}"], repo.root).returncode == 0


def tracked(repo: Repo, path: Path) -> bool:
    """Whether git knows `path` (committed or staged)."""
    rel = os.path.relpath(path, repo.root)
    return _run(["ls-files", "--error-unmatch", "--", rel], repo.root).returncode == 0


def untracked(repo: Repo, under: Path) -> list[str]:
    """Files under `under` that git does not track and does not ignore, relative to `under`."""
    rel = os.path.relpath(under, repo.root)
    result = _run(["ls-files", "--others", "--exclude-standard", "-z", "--", rel], repo.root)
    prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
    return [p.removeprefix(prefix) for p in result.stdout.split("\0") if p]


def renames(repo: Repo) -> list[tuple[str, str, str]]:
    """Files git sees renamed (its rename detection) in HEAD's history, oldest first, as
    `(old, new, committer date)` with paths from the repository root."""
    result = _run(["log", "-M", "--diff-filter=R", "--name-status", "--format=%x1e%cI", "--reverse"], repo.root)
    out = []
    for record in result.stdout.split("\x1e")[1:]:
        date, _, rest = record.partition("\n")
        for line in rest.splitlines():
            parts = line.split("\t")
            if len(parts) == 3 and parts[0].startswith("R"):
                out.append((parts[1], parts[2], date.strip()))
    return out


def churn(repo: Repo, since: str | None = None) -> list[tuple[str, str, dict[str, int]]]:
    """HEAD's commits since `since` (ISO time), oldest first, as `(short sha, committer date,
    {path from the repository root: lines added + deleted})`."""
    args = ["log", "--no-renames", "--numstat", "--format=%x1e%h%x1f%cI", "--reverse"]
    if since:
        args.append(f"--since={since}")
    result = _run(args, repo.root)
    out = []
    for record in result.stdout.split("\x1e")[1:] if result.returncode == 0 else ():
        head, _, rest = record.partition("\n")
        sha, _, date = head.partition("\x1f")
        counts: dict[str, int] = {}
        for line in rest.splitlines():
            parts = line.split("\t")
            if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit():  # "-": binary
                counts[parts[2]] = int(parts[0]) + int(parts[1])
        out.append((sha, date.strip(), counts))
    return out


def hidden_changes(repo: Repo, path: Path) -> bool:
    """Whether git is told not to look at the file's changes (`update-index --assume-unchanged`
    or `--skip-worktree`, sparse checkout): `git status` says nothing of what it holds."""
    rel = os.path.relpath(path, repo.root)
    listed = _run(["ls-files", "-v", "-z", "--", rel], repo.root)
    tags = [entry[:1] for entry in listed.stdout.split("\0") if entry]
    return listed.returncode != 0 or any(tag == "S" or tag.islower() for tag in tags)


def mode_changed(repo: Repo, rel: str) -> bool:
    """Whether the file's mode (its executable bit, a link) differs from HEAD's, staged or in
    the work tree."""
    for cached in ([], ["--cached"]):
        raw = _run(["diff", *cached, "--raw", "--no-renames", "HEAD", "--", rel], repo.root)
        if raw.returncode != 0:
            return True
        for line in raw.stdout.splitlines():
            old, new = line.lstrip(":").split(" ")[:2]
            if old != new:
                return True
    return False


def dirty(repo: Repo, under: Path) -> list[str]:
    """Paths under `under` with changes not committed (staged, unstaged or untracked)."""
    rel = os.path.relpath(under, repo.root)
    result = _run(["status", "--porcelain", "-z", "--untracked-files=all", "--", rel], repo.root)
    return [entry[3:] for entry in result.stdout.split("\0") if len(entry) > 3]


def changed(repo: Repo, under: Path) -> list[str]:
    """Tracked files under `under` (staged or not) that differ from HEAD, relative to `under`."""
    rel = os.path.relpath(under, repo.root)
    result = _run(["diff", "HEAD", "--name-only", "-z", "--", rel], repo.root)
    prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
    return [p.removeprefix(prefix) for p in result.stdout.split("\0") if p] if result.returncode == 0 else []


def not_committed(repo: Repo, paths: Sequence[Path], under: Path) -> list[Path]:
    """Those of `paths` (all under `under`) not in the HEAD commit (one git call for them all)."""
    result = _run(["ls-tree", "-r", "-z", "--name-only", "HEAD", "--", os.path.relpath(under, repo.root)], repo.root)
    committed = set(result.stdout.split("\0")) if result.returncode == 0 else set()
    return [p for p in paths if os.path.relpath(p, repo.root).replace(os.sep, "/") not in committed]


def first_added(repo: Repo, paths: Sequence[Path]) -> dict[Path, int]:
    """The order in which git first committed each file (0 first; one commit, one number); a
    file never committed is left out. Tells a memory file from a later copy of it."""
    rels = {os.path.relpath(path, repo.root).replace(os.sep, "/"): path for path in paths}
    result = _run(["-c", "core.quotePath=false", "log", "--reverse", "--diff-filter=A", "--format=%x01",
                   "--name-only", "--", *rels], repo.root)
    out: dict[Path, int] = {}
    order = -1
    for line in result.stdout.splitlines() if result.returncode == 0 else ():
        if line == "\x01":
            order += 1
        elif line in rels and rels[line] not in out:
            out[rels[line]] = order
    return out


def config_get(repo: Repo, key: str) -> str | None:
    """A value of the repository's git config (local, global or system), or None."""
    result = _run(["config", "--get", key], repo.root)
    return result.stdout.strip() if result.returncode == 0 else None


def config_set(repo: Repo, key: str, value: str) -> None:
    """Set a key in the repository's own config (.git/config; shared by its worktrees)."""
    result = _run(["config", "--local", key, value], repo.root)
    if result.returncode != 0:
        raise MemgitError(f"git config {key} failed: {result.stderr.strip()}")


def attribute(repo: Repo, name: str, rel_path: str) -> str | None:
    """The value of a gitattribute for a path (relative to the root); None when unspecified."""
    result = _run(["check-attr", name, "--", rel_path], repo.root)
    value = result.stdout.strip().rsplit(": ", 1)[-1] if result.returncode == 0 else ""
    return None if value in ("", "unspecified") else value


def changed_paths(repo: Repo, old: str, new: str | None,
                  under: str) -> list[tuple[str, str, str | None, str, str]]:
    """(status, old path, new path, old mode, new mode) of files under `under` changed from `old`
    to `new` (None: the work tree, untracked files included); renames are found (status R).
    A mode is git's ("100644", "120000" for a symlink; "000000" where the file is absent)."""
    args = ["-c", "core.quotePath=false", "diff", "--raw", "-z", "-M", "--no-ext-diff", "--no-abbrev", old]
    result = _run([*args, *([new] if new else []), "--", under], repo.root)
    if result.returncode != 0:
        raise MemgitError(f"git diff failed: {result.stderr.strip()}")
    fields = result.stdout.split("\0")
    out: list[tuple[str, str, str | None, str, str]] = []
    i = 0
    while i < len(fields) and fields[i].startswith(":"):
        old_mode, new_mode, _old_sha, _new_sha, status = fields[i][1:].split(" ")[:5]
        if status.startswith(("R", "C")):
            out.append((status[0], fields[i + 1], fields[i + 2], old_mode, new_mode))
            i += 3
        else:
            out.append((status[0], fields[i + 1], fields[i + 1], old_mode, new_mode))
            i += 2
    if new is None:
        others = _run(["-c", "core.quotePath=false", "ls-files", "--others", "--exclude-standard", "-z", "--", under],
                      repo.root)
        for path in filter(None, others.stdout.split("\0")):
            link = os.path.islink(repo.root / path)
            out.append(("A", path, path, "000000", "120000" if link else "100644"))
    return out


def merge_base(repo: Repo, a: str, b: str) -> str:
    result = _run(["merge-base", a, b], repo.root)
    if result.returncode != 0:
        raise MemgitError(f"{a} and {b} have no common ancestor")
    return result.stdout.strip()


def hooks_dir(repo: Repo) -> Path:
    """The folder git runs hooks from: `core.hooksPath` or the common git dir's `hooks`
    (shared by every worktree)."""
    result = _run(["rev-parse", "--git-path", "hooks"], repo.root)
    if result.returncode != 0:
        raise MemgitError(f"git rev-parse --git-path hooks failed: {result.stderr.strip()}")
    return (repo.root / result.stdout.strip()).resolve()


def files(repo: Repo, under: Path) -> list[str]:
    """Files under `under` that a commit could hold: tracked, or untracked and not ignored;
    relative to `under`."""
    rel = os.path.relpath(under, repo.root)
    result = _run(["ls-files", "--cached", "--others", "--exclude-standard", "-z", "--", rel], repo.root)
    prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
    return list(dict.fromkeys(p.removeprefix(prefix) for p in result.stdout.split("\0") if p))


def changed_between(repo: Repo, since: str, until: str) -> list[str]:
    """Files changed by the commits made between two times (ISO 8601), oldest first."""
    result = _run(["-c", "core.quotePath=false", "log", "--reverse", f"--since={since}", f"--until={until}",
                   "--format=", "--name-only"], repo.root)
    return list(dict.fromkeys(line for line in result.stdout.splitlines() if line)) if result.returncode == 0 else []


def settings(root: Path, prefix: str) -> dict[str, str]:
    """The git config values whose names start with `prefix` (such as "memgit."), as git reads
    them in `root`: this clone's own config, the user's and the system's, never a committed
    file. {} when there are none or git cannot read them."""
    result = _run(["config", "-z", "--get-regexp", "^" + prefix.replace(".", r"\.")], root)
    out: dict[str, str] = {}
    for entry in result.stdout.split("\0") if result.returncode == 0 else ():
        name, _, value = entry.partition("\n")
        if name:
            out[name] = value
    return out
