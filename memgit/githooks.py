"""What memgit's git hooks run, by the name the hook scripts call: `python -I -m memgit.githooks
sync|pre-commit` (written into `.git/hooks/*` by `memgit hooks install git`, and into
`.pre-commit-hooks.yaml`). Installing the hooks is `memgit.git.hooks`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable, Sequence

from memgit.errors import MemgitError
from memgit.git import hooks
from memgit.git import repo as gitrepo


def sync(start: Path) -> None:
    """Bring the index in step with the files and embed what is new (the post-* hooks).

    One process embeds per index: while embedding, this holds the lock the background job
    (`memgit.embedjob`) holds, and when a job already runs it leaves the embedding to it."""
    from memgit.api import open as open_store  # only the hook that runs needs it

    with open_store(start, warn=lambda message: None) as mem:
        if not mem.memory_dir.is_dir():
            return
        if mem.repo is not None:
            hooks.refresh(mem.repo)  # this hook, if an older memgit wrote it
            try:
                mem.rules("refresh")  # the memgit blocks the project's rules files already have
            except (MemgitError, OSError):
                pass  # never in the way of the index's sync
        mem.sync()


def pre_commit(start: Path, out: Callable[[str], None]) -> int:
    """Lint the staged memory files; 1 when the commit would take staged files of a memgit
    change that did not finish, or a staged file under the memory folder adds a likely secret
    (unless allowed) or is over the size limit (`memgit.git.gate`)."""
    from memgit.git.gate import check_commit  # only the hook that runs needs it
    from memgit.store.writer import commit_refusal  # only the hook that runs needs it

    repo = gitrepo.require(start)
    refusal = commit_refusal(repo)  # staged files of a memgit change that did not finish
    if refusal:
        out(refusal)
        return 1
    return check_commit(repo, ".memory", out, allow_secret=os.environ.get("MEMGIT_ALLOW_SECRET") == "1")


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
