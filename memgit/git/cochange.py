"""Files that change together: mined from `git log`, cached per HEAD.

Two files changed in the same commit, again and again, belong together: a memory about one
is likely context for work on the other. `partners(repo)` reads the last `MAX_COMMITS`
commits of HEAD (paths only, no diffs; commits touching more than `MAX_FILES` files are
left out: a reformat or a vendoring says nothing about coupling) and counts, for each file,
the commits it shared with each other file. The result is cached in
`<git-dir>/memgit/cochange.json` with the HEAD it was mined at, so it is mined again only
when HEAD moves. Never raises: no repository, no history or a failing git gives {}.
"""

from __future__ import annotations

import json
from pathlib import Path

from memgit.errors import MemgitError
from memgit.git import localstate, runner
from memgit.git.repo import Repo

MAX_COMMITS = 2000
MAX_FILES = 30
#: A pair counts when the two files changed together at least this often.
MIN_SHARED = 2
#: The memory folder's own files are not code: their commits say nothing about the code's coupling.
SKIP_PREFIX = ".memory/"

Partners = dict[str, dict[str, int]]


def cache_path(git_dir: Path) -> Path:
    return localstate.folder(git_dir) / "cochange.json"


def partners(repo: Repo) -> Partners:
    """file -> {file changed with it in at least `MIN_SHARED` commits: how many}."""
    try:
        head = runner.run(["rev-parse", "-q", "--verify", "HEAD"], repo.root)
    except MemgitError:
        return {}
    if head.returncode != 0:
        return {}
    sha = head.stdout.strip()
    path = cache_path(repo.git_dir)
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(cached, dict) and cached.get("head") == sha and _valid(cached.get("partners")):
            return cached["partners"]  # type: ignore[no-any-return]
    except (OSError, ValueError):
        pass
    found = mine(repo)
    try:
        localstate.replace(path, json.dumps({"head": sha, "partners": found}, sort_keys=True))
    except OSError:
        pass  # a read-only git dir: mined again next time
    return found


def _valid(partners: object) -> bool:
    """Whether a cached value has the shape `partners` returns (a damaged cache is mined again)."""
    return isinstance(partners, dict) and all(
        isinstance(others, dict) and all(isinstance(n, int) for n in others.values())
        for others in partners.values())


def mine(repo: Repo) -> Partners:
    """The co-change counts of HEAD's last `MAX_COMMITS` commits (see the module docstring)."""
    try:
        result = runner.run(
            ["log", "--no-renames", "--name-only", "--format=%x1e", f"-n{MAX_COMMITS}"], repo.root
        )
    except MemgitError:
        return {}
    if result.returncode != 0:
        return {}
    counts: dict[str, dict[str, int]] = {}
    for record in result.stdout.split("\x1e")[1:]:
        files = sorted(
            {
                line.strip()
                for line in record.splitlines()
                if line.strip() and not line.strip().startswith(SKIP_PREFIX)
            }
        )
        if len(files) < 2 or len(files) > MAX_FILES:
            continue
        for a in files:
            mine_a = counts.setdefault(a, {})
            for b in files:
                if a != b:
                    mine_a[b] = mine_a.get(b, 0) + 1
    return {
        a: {b: n for b, n in others.items() if n >= MIN_SHARED}
        for a, others in counts.items()
        if any(n >= MIN_SHARED for n in others.values())
    }
