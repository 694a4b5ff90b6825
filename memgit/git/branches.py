"""Commits on a new branch, built with plumbing in a temporary index (`read-tree`,
`update-index`, `write-tree`, `commit-tree`): the current branch, the index and the work tree
are never touched (`reflect --branch`, `capture --branch`)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence

from memgit.errors import MemgitError
from memgit.git import runner
from memgit.git.repo import Repo, _run


def commit_on_branch(repo: Repo, branch: str, commits: Sequence[tuple[str, dict[str, bytes | None]]]) -> list[str]:
    """Create `branch` from HEAD with one commit per `(message, {path: content or None})`,
    without touching the current branch, the working tree or the index.

    Built with plumbing in a temporary index file (`read-tree`, `update-index`,
    `write-tree`, `commit-tree`), so the commits hold exactly these files; commit hooks do
    not run. The branch ref is created only if it does not exist. Returns the commits' shas.
    """
    check = _run(["check-ref-format", "--branch", branch], repo.root)
    if check.returncode != 0 or branch.startswith("-"):
        raise MemgitError(f"{branch!r} is not a valid branch name")
    if _run(["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], repo.root).returncode == 0:
        raise MemgitError(f"branch {branch!r} already exists; choose another name or delete it first")
    head = _run(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], repo.root).stdout.strip()
    if not head:
        raise MemgitError("the repository has no commits yet; commit something first")
    with tempfile.TemporaryDirectory(prefix="memgit-branch-") as tmp:
        env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}

        def git(*args: str, data: bytes | None = None) -> str:
            done = runner.run(args, repo.root, stdin=data, env=env)
            if done.returncode != 0:
                raise MemgitError(f"git {args[0]} failed: {done.stderr.strip()}")
            return done.stdout.strip()

        git("read-tree", head)
        parent = head
        shas = []
        for message, files in commits:
            for path, content in files.items():
                if content is None:
                    git("update-index", "--force-remove", "--", path)
                else:
                    blob = git("hash-object", "-w", "--stdin", data=content)
                    git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
            tree = git("write-tree")
            # The message on stdin: hundreds of proposals do not fit in one argument (E2BIG).
            parent = git("commit-tree", tree, "-p", parent, "-F", "-", data=message.encode("utf-8"))
            shas.append(parent)
        git("update-ref", f"refs/heads/{branch}", parent, "0" * 40)
    return shas


def commit_on_new_branch(repo: Repo, branch: str, files: dict[str, bytes], message: str) -> str:
    """Commit `files` (paths relative to the root) on top of HEAD as the new branch `branch`,
    leaving the current branch, the index and the working tree alone (`commit_on_branch`)."""
    return commit_on_branch(repo, branch, [(message, dict(files))])[-1]
