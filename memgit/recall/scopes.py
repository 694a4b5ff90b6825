"""Scopes: the project's memories and the user's own (`memgit.store.userstore`), recalled together.

A recall in a project also asks the user store, opened beside the project's workspace (once
per workspace, so a long-lived server keeps its index open) and merged in ranking: each hit
says its scope, a user memory comes before a project one only when strictly more relevant,
and the user store gives at most `share(k)` of the `k` hits. The user store never makes a
recall fail: a missing one is skipped, and one that cannot be read (not a repository of its
own, a broken index, a bad setting) is skipped with one warning through the project's
channel (a hook logs it; `memgit status` reports it).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import replace

from memgit.index.workspace import Workspace
from memgit.recall.hit import Hit
from memgit.store import userstore

USER = "user"
#: The user store gives at most one hit in this many (and at least one).
SHARE = 3

_beside: weakref.WeakKeyDictionary[Workspace, Workspace] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def share(k: int) -> int:
    """How many of `k` hits the user store may give."""
    return max(1, k // SHARE) if k > 0 else 0


def beside(ws: Workspace) -> Workspace | None:
    """The user store's workspace to recall beside the project's `ws`; None when there is no
    user store, when `ws` is the user store, or when it cannot be opened (said once)."""
    memory_dir = userstore.memory_dir()
    if ws.memory_dir == memory_dir or not memory_dir.is_dir():  # OSError: an unreadable folder is False
        return None
    with _lock:
        user = _beside.get(ws)
        if user is not None and user.memory_dir == memory_dir:
            return user
        try:
            repo = userstore.find()
        except Exception as exc:  # noqa: BLE001 - the user store never fails a project's recall
            ws.warn(f"user store skipped: {exc}")
            return None
        if repo is None:
            return None
        user = Workspace(memory_dir, repo, ws.warn, warm=ws.warm, lock_timeout=ws.lock_timeout)
        _beside[ws] = user
        return user


def ask(ws: Workspace, k: int, kinds: Sequence[str] | None,
        recall: Callable[[Workspace, int, Sequence[str] | None], list[Hit]]) -> list[Hit]:
    """The user store's hits for a recall in `ws` (`recall(user workspace, k, kinds)`), marked
    with their scope; [] when there is none or it fails (said through `ws.warn`)."""
    user = beside(ws)
    if user is None or k <= 0:
        return []
    try:
        if kinds:  # the kinds the user store knows: a project may add its own
            kinds = [kind for kind in kinds if kind in user.config.kinds]
            if not kinds:
                return []
        return [replace(hit, scope=USER) for hit in recall(user, k, kinds)]
    except Exception as exc:  # noqa: BLE001 - the user store never fails a project's recall
        ws.warn(f"user store {userstore.location()} skipped: {exc}")
        return []


def merge(project: Sequence[Hit], user: Sequence[Hit], k: int) -> list[Hit]:
    """The best `k` of both, each list keeping its order: a user hit goes first only when
    strictly more relevant (the project wins a tie), at most `share(k)` of them. Ids are each
    store's own: a project memory that repeats a user memory's id hides nothing."""
    mine = list(user)[: share(k)]
    out: list[Hit] = []
    i = j = 0
    while len(out) < k and (i < len(project) or j < len(mine)):
        if j < len(mine) and (i >= len(project) or mine[j].relevance > project[i].relevance):
            out.append(mine[j])
            j += 1
        else:
            out.append(project[i])
            i += 1
    return out


def split(ws: Workspace, hits: Sequence[Hit]) -> list[tuple[Workspace, list[Hit]]]:
    """The hits by the workspace they came from (to log each store's recalls in its own git dir)."""
    parts = [(ws, [hit for hit in hits if hit.scope != USER])]
    user = [hit for hit in hits if hit.scope == USER]
    if user:
        theirs = beside(ws)
        if theirs is not None:
            parts.append((theirs, user))
    return parts


def describe(ws: Workspace) -> str:
    """The user store as `memgit status` shows it: where it is and whether recall uses it."""
    root = userstore.location()
    if ws.memory_dir == userstore.memory_dir():
        return f"{root} (this store)"
    if not userstore.memory_dir().is_dir():
        return f"{root} (none yet: 'memgit remember --scope user' creates it)"
    said: list[str] = []
    user = beside(Workspace(ws.memory_dir, ws.repo, said.append))  # its own warnings, not the project's
    if user is None:
        return f"{root} (skipped by recall: {said[0] if said else 'cannot be opened'})"
    try:
        user.index.sync(embed="none")
        count = user.index.status()["active"]
    except Exception as exc:  # noqa: BLE001 - a broken user store is reported, not raised
        return f"{root} (skipped by recall: {exc})"
    finally:
        user.close()
    return f"{root} ({count} active {'memory' if count == 1 else 'memories'}, recalled with this project's)"
