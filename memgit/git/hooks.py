"""git hooks: keep the index fresh after checkouts, merges and rewrites; check memory commits.

`install(repo)` writes four hooks into the folder git runs hooks from (`git rev-parse
--git-path hooks`: `core.hooksPath`, or the common git dir's `hooks`, shared by worktrees):

- post-checkout, post-merge, post-rewrite start `python -I -m memgit.githooks sync` detached
  and return at once: it brings the index in step with the files and embeds every new or
  changed memory, so the recall after a large pull has all its channels. It never fails the
  git command. It takes the background embedding job's lock while it embeds, and leaves
  the embedding to a job that already holds it.
- pre-commit lints the staged memory files (problems are printed, the commit goes on) and
  refuses a commit that adds a likely secret in any file under the memory folder, naming the
  file and line (`git commit --no-verify` or `MEMGIT_ALLOW_SECRET=1` overrides), or stages a
  file there over the size limit (`memgit.git.gate`). It is the one memgit hook that may say no;
  anything going wrong inside it lets the commit through.

Installed the way the pre-commit framework does it: memgit's script is recognised by its
marker; a foreign hook already there is moved to `<hook>.memgit-chained` and run first, under
its own name (`$0`), with its exit status respected; `uninstall` puts it back byte for byte.
When `core.hooksPath` points into the work tree (tracked files), nothing is edited: the error
says what to add.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from memgit import launch
from memgit.errors import MemgitError
from memgit.git import mergesetup
from memgit.git import repo as gitrepo

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


#: Runs the chained hook so that it sees its own name: hooks that dispatch on `basename "$0"`
#: (husky 4) or find their helpers from `dirname "$0"` would otherwise see `<hook>.memgit-chained`.
#: A script for sh or bash is sourced by that shell with `$0` set to this hook's path (its
#: name and folder); any other program (Python, node, a binary) runs as it is.
_CHAINED_RUNNER = [
    "shell_of() {  # the shell, with its options, that a script's #! line names; nothing otherwise",
    '  line=""; IFS= read -r line < "$1" || [ -n "$line" ] || return 0',
    '  case "$line" in "#!"*) ;; *) return 0 ;; esac',
    '  set -f; set -- ${line#??}; set +f',
    '  if [ "${1##*/}" = env ]; then shift; while [ "${1#-}" != "$1" ]; do shift; done; fi',
    '  case "${1##*/}" in sh|bash|dash|ash) echo "$*" ;; esac',
    "}",
    "run_chained() {",
    '  shell="$(shell_of "$chained")"',
    '  if [ -z "$shell" ]; then "$chained" "$@"; return; fi',
    "  MEMGIT_CHAINED_HOOK=\"$chained\" $shell -c '. \"$MEMGIT_CHAINED_HOOK\"' \"$0\" \"$@\"",
    "}",
]


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
    lines += _CHAINED_RUNNER
    run_chained = "run_chained" if not stdin else 'printf "%s\\n" "$input" | run_chained'
    lines += [f'if [ -x "$chained" ]; then {run_chained} "$@" || status=$?; fi']
    if name == "pre-commit":
        lines += [
            '[ "$status" -ne 0 ] && exit "$status"',
            f"[ -x {py} ] || exit 0  # memgit's Python is gone: never block a commit for it",
            f"exec {launch.command('memgit.githooks', 'pre-commit', python=python)}",
        ]
    else:
        # Detached and silent: the git command does not wait for the index.
        sync = launch.command("memgit.githooks", "sync", python=python)
        lines += [
            f"[ -x {py} ] && ( {sync} </dev/null >/dev/null 2>&1 & )",
            'exit "$status"',
        ]
    return "\n".join(lines) + "\n"


def _runs(name: str) -> str:
    return "pre-commit" if name == "pre-commit" else "sync"


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
        adds = "\n".join(f"  {rel}/{name}:  {launch.command('memgit.githooks', _runs(name))}"
                         for name in HOOKS)
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


#: A hook written by an older memgit: `python -m memgit.githooks`, without `-I` (or `-E -P`), so
#: a `memgit/` package in the work tree it runs in would be imported instead of memgit.
_UNISOLATED = re.compile(r"(?<! -I)(?<! -P) -m memgit\.githooks ")


def refresh(repo: gitrepo.Repo) -> list[str]:
    """Rewrite memgit's own hooks that an older memgit wrote unisolated (every memgit write and
    the post-* hooks' sync call it); returns their names. Hooks in the work tree are left alone."""
    try:
        folder = _dir(repo, allow_tracked=False)
    except MemgitError:
        return []
    done = []
    for name in HOOKS:
        path = folder / name
        try:
            old = _ours(path) and _UNISOLATED.search(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if not old:
            continue
        tmp = folder / f".{name}.memgit.tmp"
        try:
            tmp.write_text(script(name), encoding="utf-8")
            tmp.chmod(0o755)
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)
            continue  # a hooks folder memgit cannot write: 'memgit hooks install git' says why
        done.append(name)
    return done


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
