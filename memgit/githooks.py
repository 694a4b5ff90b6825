"""git hooks: keep the index fresh after checkouts, merges and rewrites; check memory commits.

`install(repo)` writes four hooks into the folder git runs hooks from (`git rev-parse
--git-path hooks`: `core.hooksPath`, or the common git dir's `hooks`, shared by worktrees):

- post-checkout, post-merge, post-rewrite start `python -m memgit.githooks sync` detached
  and return at once: it brings the index in step with the files and embeds every new or
  changed memory, so the recall after a large pull has all its channels. It never fails the
  git command.
- pre-commit lints the staged memory files (problems are printed, the commit goes on) and
  refuses a commit that adds a likely secret under the memory folder, naming the file and
  line (`git commit --no-verify` or `MEMGIT_ALLOW_SECRET=1` overrides). It is the one memgit
  hook that may say no; anything going wrong inside it lets the commit through.

Installed the way the pre-commit framework does it: memgit's script is recognised by its
marker; a foreign hook already there is moved to `<hook>.memgit-chained` and run first, with
its exit status respected; `uninstall` puts it back byte for byte. When `core.hooksPath`
points into the work tree (tracked files), nothing is edited: the error says what to add.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from memgit import gitrepo
from memgit.errors import MemgitError

HOOKS = ("post-checkout", "post-merge", "post-rewrite", "pre-commit")
MARKER = "# memgit-git-hook v1"
CHAINED = ".memgit-chained"


@dataclass(frozen=True)
class HookState:
    """One hook: `state` is installed, chained (installed, a foreign hook runs first),
    missing, or foreign (someone else's hook, memgit's not there)."""

    name: str
    path: Path
    state: str


def script(name: str, python: str = sys.executable) -> str:
    """The hook file memgit writes for `name`."""
    py = shlex.quote(python)
    stdin = name == "post-rewrite"  # the only one of these git gives input (old -> new shas)
    lines = [
        "#!/bin/sh",
        f"{MARKER} ({name}): installed by memgit; remove with memgit's uninstall, which restores",
        f"# the hook that was here (kept as {name}{CHAINED}, and run first).",
        "status=0",
        f'chained="${{0%/*}}/{name}{CHAINED}"',
    ]
    if stdin:
        lines.append('input="$(cat)"')
    run_chained = '"$chained" "$@"' if not stdin else 'printf "%s\\n" "$input" | "$chained" "$@"'
    lines += [f'if [ -x "$chained" ]; then {run_chained} || status=$?; fi']
    if name == "pre-commit":
        lines += [
            '[ "$status" -ne 0 ] && exit "$status"',
            f"[ -x {py} ] || exit 0  # memgit's Python is gone: never block a commit for it",
            f"exec {py} -m memgit.githooks pre-commit",
        ]
    else:
        # Detached and silent: the git command does not wait for the index.
        lines += [
            f"[ -x {py} ] && ( {py} -m memgit.githooks sync </dev/null >/dev/null 2>&1 & )",
            'exit "$status"',
        ]
    return "\n".join(lines) + "\n"


def _ours(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return MARKER.encode() in handle.read(4096)
    except OSError:
        return False


def _dir(repo: gitrepo.Repo, allow_tracked: bool) -> Path:
    folder = gitrepo.hooks_dir(repo)
    inside_git = folder == repo.git_dir or repo.git_dir in folder.parents or _common(repo) in (folder, *folder.parents)
    if not inside_git and (folder == repo.root or repo.root in folder.parents) and not allow_tracked:
        rel = folder.relative_to(repo.root)
        adds = "\n".join(f"  {rel}/{name}:  {sys.executable} -m memgit.githooks "
                         f"{'pre-commit' if name == 'pre-commit' else 'sync'}" for name in HOOKS)
        raise MemgitError(
            f"core.hooksPath points into the work tree ({rel}/), whose files are tracked: memgit does not edit "
            f"them unasked. Add these calls to those hooks yourself (post-* hooks detached, with '&'):\n{adds}"
        )
    return folder


def _common(repo: gitrepo.Repo) -> Path:
    common = repo.git_dir.parent.parent if repo.git_dir.parent.name == "worktrees" else repo.git_dir
    return common.resolve()


def install(repo: gitrepo.Repo, *, allow_tracked: bool = False, python: str = sys.executable) -> list[HookState]:
    """Install (or update) memgit's git hooks; register the merge driver too. Idempotent."""
    from memgit import mergesetup

    folder = _dir(repo, allow_tracked)
    folder.mkdir(parents=True, exist_ok=True)
    for name in HOOKS:
        path = folder / name
        chained = folder / f"{name}{CHAINED}"
        if path.exists() or path.is_symlink():
            if not _ours(path):
                if chained.exists():
                    raise MemgitError(f"{chained} already exists; move it away and install again")
                os.replace(path, chained)  # kept byte for byte, mode and all
        tmp = folder / f".{name}.memgit.tmp"
        tmp.write_text(script(name, python), encoding="utf-8")
        tmp.chmod(0o755)
        os.replace(tmp, path)
    mergesetup.configure(repo)
    return status(repo)


def uninstall(repo: gitrepo.Repo) -> list[HookState]:
    """Remove memgit's hooks and put back the hooks they chained, exactly as they were."""
    folder = gitrepo.hooks_dir(repo)
    for name in HOOKS:
        path = folder / name
        chained = folder / f"{name}{CHAINED}"
        if not _ours(path):
            continue  # someone replaced it since: theirs now
        if chained.exists() or chained.is_symlink():
            os.replace(chained, path)
        else:
            path.unlink()
    return status(repo)


def status(repo: gitrepo.Repo) -> list[HookState]:
    folder = gitrepo.hooks_dir(repo)
    out = []
    for name in HOOKS:
        path = folder / name
        if _ours(path):
            state = "chained" if (folder / f"{name}{CHAINED}").exists() else "installed"
        else:
            state = "foreign" if path.exists() else "missing"
        out.append(HookState(name, path, state))
    return out


# -- what the hooks run ----------------------------------------------------------------------


def sync(start: Path) -> None:
    """Bring the index in step with the files and embed what is new (the post-* hooks)."""
    from memgit.api import open as open_store

    with open_store(start, warn=lambda message: None) as mem:
        if mem.memory_dir.is_dir():
            mem.index.embed_pending()


def pre_commit(start: Path, out: Callable[[str], None]) -> int:
    """Lint the staged memory files; 1 when one adds a likely secret (unless allowed)."""
    from memgit import memory as fmt
    from memgit.credentials import find_secrets

    repo = gitrepo.require(start)
    from memgit.writer import commit_refusal

    refusal = commit_refusal(repo)  # staged files of a memgit change that did not finish
    if refusal:
        out(refusal)
        return 1
    under = ".memory"
    blocked = 0
    for rel in gitrepo.staged(repo, under):
        if not fmt.is_memory_file(rel.rsplit("/", 1)[-1]):
            continue
        data = gitrepo.show(repo, "", rel) or b""
        _, problems = fmt.check(data, rel)
        for problem in problems:
            out(f"memgit: {problem}")
        before = {m.excerpt for m in find_secrets((gitrepo.show(repo, "HEAD", rel) or b"").decode("utf-8", "replace"))}
        for match in find_secrets(data.decode("utf-8", "replace")):
            if match.excerpt in before:
                continue  # already committed: this commit does not add it
            blocked += 1
            out(f"memgit: {rel}:{match.line}: this looks like a secret ({match.pattern}: {match.excerpt})")
    if blocked and os.environ.get("MEMGIT_ALLOW_SECRET") != "1":
        out("memgit: commit refused: memories are pushed to remotes. Remove the secret, or commit anyway with "
            "'git commit --no-verify' (or MEMGIT_ALLOW_SECRET=1)")
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m memgit.githooks sync|pre-commit`, as the hooks call it. Fails open."""
    args = list(sys.argv[1:] if argv is None else argv)
    for name in ("GIT_INDEX_FILE",) if args[:1] == ["sync"] else ():
        os.environ.pop(name, None)
    try:
        if args[:1] == ["sync"]:
            sync(Path.cwd())
            return 0
        if args[:1] == ["pre-commit"]:
            return pre_commit(Path.cwd(), lambda line: print(line, file=sys.stderr))
        print(f"memgit: unknown hook command {args!r}", file=sys.stderr)
    except Exception as exc:  # noqa: BLE001 - a hook never fails git because of memgit
        print(f"memgit: hook skipped ({exc})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
