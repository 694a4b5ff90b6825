"""Reverts in a repository's history: which commits `git revert` undid, and what they said.

`git revert` writes "This reverts commit <sha>." in the body of the commit it makes; that
line is how a revert is found (its subject can be edited). A revert that was itself reverted
no longer stands, so what it reverted counts as kept.
"""

from __future__ import annotations

import re

from memgit.git import runner, staging
from memgit.git.repo import Repo

_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,64})")


def reverted(repo: Repo) -> list[tuple[str, str, str]]:
    """`(revert sha, reverted sha, the reverted commit's message)` for every revert in HEAD's
    history that stands, oldest first. A reverted commit git does not have (a shallow clone)
    is left out."""
    log = runner.run(["log", "--reverse", "--format=%x1e%H%x1f%B", "--grep=This reverts commit",
                      "--fixed-strings"], repo.root)
    if log.returncode != 0:
        return []
    undone: dict[str, str] = {}  # revert sha -> the sha it reverts, oldest first
    for record in log.stdout.split("\x1e")[1:]:
        sha, _, body = record.partition("\x1f")
        for target in _REVERTS.findall(body):
            undone[sha.strip()] = target
    # A revert stands unless a standing revert undid it: a revert of a revert of a revert
    # stands, and so does what it restored. Newest first, so what undoes a revert is decided
    # before it (a message naming a newer commit, which git never writes, undoes nothing).
    by_prefix: dict[str, list[tuple[str, str]]] = {}  # the first 7 digits of a target -> its reverts
    for revert, target in undone.items():
        by_prefix.setdefault(target[:7], []).append((revert, target))
    stands: dict[str, bool] = {}
    for revert in reversed(undone):
        stands[revert] = not any(stands.get(other, False) for other, target in by_prefix.get(revert[:7], ())
                                 if revert.startswith(target))
    standing = {revert: target for revert, target in undone.items() if stands[revert]}
    messages = _messages(repo, sorted(set(standing.values())))
    out = []
    for revert, target in standing.items():
        found = next(((full, text) for full, text in messages.items() if full.startswith(target)), None)
        if found is not None:
            out.append((revert, found[0], found[1]))
    return out


def _messages(repo: Repo, shas: list[str]) -> dict[str, str]:
    """Full sha -> message of these commits (one git process; one each when some is missing)."""
    if not shas:
        return {}
    out: dict[str, str] = {}
    for group in ([shas], [[sha] for sha in shas]):
        for batch in group:
            shown = runner.run(["log", "--no-walk=unsorted", "--format=%x1e%H%x1f%P%x1f%B", *batch, "--"],
                               repo.root)
            if shown.returncode != 0:
                continue
            for record in shown.stdout.split("\x1e")[1:]:
                full, _, rest = record.partition("\x1f")
                parents, _, message = rest.partition("\x1f")
                if len(parents.split()) > 1:  # a merged branch: what its commits said counts too
                    message += _brought_in(repo, full.strip())
                out[full.strip()] = message
        if out:
            break
    return out


def _brought_in(repo: Repo, merge: str) -> str:
    """The messages of the commits a merge commit brought in (not in its first parent), so that
    `git revert -m 1` of a merged pull request undoes what its commits said they did."""
    shown = runner.run(["log", "--no-merges", "--format=%n%B", f"{merge}^1..{merge}", "--"], repo.root)
    return shown.stdout if shown.returncode == 0 else ""



def changed_files(repo: Repo, sha: str) -> tuple[list[str], list[str]] | None:
    """The texts, as they were before `sha`, of the Markdown files `sha` deleted and of those it
    modified (against its first parent): what a merge of memories did, to check what its
    message says against. None when git cannot tell (its parent is beyond a shallow clone's
    history)."""
    listed = runner.run(["diff-tree", "-r", "-z", "--no-commit-id", "--no-renames", "--diff-filter=DM",
                         f"{sha}^", sha, "--"], repo.root)
    if listed.returncode != 0:  # no parent: a root commit, or one at a shallow clone's edge
        shallow = runner.run(["rev-parse", "--is-shallow-repository"], repo.root).stdout.strip() == "true"
        return None if shallow else ([], [])
    fields = listed.stdout.split("\0")
    before: list[tuple[str, str]] = []  # (status, blob before)
    for meta, path in zip(fields[0::2], fields[1::2]):
        parts = meta.split()  # `:100644 100644 <old blob> <new blob> M`
        if len(parts) == 5 and path.endswith(".md"):
            before.append((parts[4], parts[2]))
    blobs = staging.read_blobs(repo, sorted({blob for _, blob in before}))
    texts = [(status, blobs[blob].decode("utf-8", "replace")) for status, blob in before if blob in blobs]
    return [t for status, t in texts if status == "D"], [t for status, t in texts if status == "M"]
