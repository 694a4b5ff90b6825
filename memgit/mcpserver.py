"""`memgit mcp`: the memory store served to agents over MCP (stdio).

The only module that imports the MCP SDK (`pip install 'memgit-agent[mcp]'`). Every tool calls the
same `Memgit` method as the CLI command of the same name; a `MemgitError` comes back as an MCP
tool error with the CLI's message, so a bad call never stops the server. One `Memgit` stays
open for the server's life: the index (and embedder) are loaded once, and a recall costs only
the query; edits of the files between calls are picked up by the next call.
"""


import functools
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from memgit.errors import MemgitError
from memgit.memory.trust import may_hide, proposed
from memgit.reflect import pages

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from memgit.api import Memgit

F = TypeVar("F", bound=Callable[..., Any])

INSTRUCTIONS = (
    "memgit is this project's memory: facts, decisions, conventions and lessons kept as Markdown files in "
    "the git repository. Call `recall` before working on something to get what is known about it, "
    "`remember` to save something worth knowing next time (one idea per memory, no secrets), and "
    "`list_topics` to browse a large store."
)


#: What to ask for instead when a tool's answer is over the byte budget.
HINTS = {
    "": "narrow the request",
    "recall": "ask for fewer memories (k), set a token budget, or narrow the query",
    "list_topics": "lower limit, or count one kind",
    "show": "read the memory's file in the repository instead",
    "resume": "set a smaller budget",
    "reflect": "call reflect again with next_cursor, a smaller page_size, or only some kinds",
    "pending_captures": "apply or drop some proposals (apply_capture), then ask again",
}


def capped(result: Any, limit: int, hint: str) -> Any:
    """`result` cut to `limit` bytes of JSON: its biggest lists, mappings and texts shortened
    from the end, and a `truncated` member saying what was cut and what to ask for instead."""
    size = _size(result)
    if not isinstance(result, dict) or size <= limit:
        return result
    out = dict(result)
    cut: dict[str, str] = {}
    marker = {"bytes": size, "limit": limit, "cut": cut, "ask": hint}
    room = limit - 200  # the marker itself
    while _size({**out, "truncated": marker}) > room:
        name = max((k for k in out if k not in cut), key=lambda k: _size(out[k]), default=None)
        if name is None:
            out = {}
            cut["*"] = "everything"
            break
        value = out[name]
        # Room for the note saying what was kept, at its longest, before measuring what is left:
        # a note added after the cut would push the answer over and cut every other member.
        cut[name] = _kept(len(value) if isinstance(value, (list, dict, str)) else 0, value)
        other = _size({**out, name: None, "truncated": marker})
        out[name], cut[name] = _shorten(value, room - other)
    return {**out, "truncated": marker}


def cut_message(message: str, limit: int) -> str:
    """An error message within `limit` bytes, with room for what the MCP SDK puts before it:
    one that quotes what it was given (a ref, a cursor) can be as long as that."""
    room = limit - 200
    if len(message.encode("utf-8")) <= room:
        return message
    note = " … (cut to the answer's byte budget)"
    return message.encode("utf-8")[:room - len(note.encode("utf-8"))].decode("utf-8", "ignore") + note


def _shorten(value: Any, room: int) -> tuple[Any, str]:
    """`value` shortened from its end to at most `room` bytes of JSON, and what was kept."""
    if isinstance(value, (list, dict, str)):
        items = list(value.items()) if isinstance(value, dict) else value
        low, high = 0, len(items)
        while low < high:  # the most items (or characters) that fit
            middle = (low + high + 1) // 2
            if _size(_rebuild(value, items[:middle])) <= room:
                low = middle
            else:
                high = middle - 1
        return _rebuild(value, items[:low]), _kept(low, value)
    return None, "left out"


def _kept(count: int, value: Any) -> str:
    """What a cut kept of `value`: `count` of its items or characters."""
    if not isinstance(value, (list, dict, str)):
        return "left out"
    unit = "characters" if isinstance(value, str) else "items"
    return f"{count} of {len(value)} {unit} kept"


def _rebuild(value: Any, items: Any) -> Any:
    if isinstance(value, dict):
        return dict(items)
    return items


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8"))


def _sdk() -> tuple[Any, Any, Any]:
    try:
        from mcp.server.mcpserver import MCPServer  # the MCP SDK only under `memgit mcp`
        from mcp.server.mcpserver.exceptions import ToolError  # the MCP SDK only under `memgit mcp`
        from pydantic import Field  # the MCP SDK only under `memgit mcp`
    except ImportError as exc:
        from memgit.distribution import clash  # only when the SDK is missing

        # Another package's `memgit` in this environment pins an older SDK: say so rather than
        # suggest an install that would not last.
        problem = clash()
        if problem:
            raise MemgitError(f"the MCP server cannot load the MCP SDK ({exc}): {problem}") from None
        raise MemgitError("the MCP server needs the MCP SDK: pip install 'memgit-agent[mcp]' "
                          "(with pipx: pipx install 'memgit-agent[mcp]')") from None
    return MCPServer, ToolError, Field


def build(mem: "Memgit") -> "MCPServer":
    """An MCP server whose tools call `mem`."""
    MCPServer, ToolError, Field = _sdk()
    server = MCPServer("memgit", instructions=INSTRUCTIONS, version=_version())

    def tool(function: F) -> F:
        hint = HINTS.get(function.__name__, HINTS[""])

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return capped(function(*args, **kwargs), mem.config.mcp_max_bytes, hint)
            except MemgitError as exc:
                raise ToolError(cut_message(str(exc), mem.config.mcp_max_bytes)) from None

        server.tool()(wrapper)
        return function

    Query = Annotated[str, Field(min_length=1, description="What you want to know, in words (a question, a task, "
                                                          "a file path or `path::Symbol` anchor).")]
    Ref = Annotated[str, Field(min_length=1, description="A memory id (`m-3f9a2c`), a unique id prefix, or an exact title.")]
    Kinds = Annotated[list[str] | None, Field(description="Only these kinds: fact, preference, convention, decision, "
                                                          "lesson, skill, checkpoint, summary.")]
    Items = Annotated[list[str], Field(description="Zero or more items.")]

    users: list[Memgit] = []
    pager = pages.Pager()  # the reflect run an agent is paging through

    def user_store() -> "Memgit":
        """The user's own store, made on first use and kept open with the server."""
        if not users:
            from memgit.api import open_user  # the first time a memory goes to the user store

            users.append(open_user(create=True, warn=mem.warn))
        return users[0]

    @tool
    def recall(
        query: Query,
        k: Annotated[int | None, Field(ge=1, le=100, description="How many memories at most (default 5).")] = None,
        task: Annotated[str | None, Field(description="Prefer this task's memories.")] = None,
        kinds: Kinds = None,
        budget: Annotated[int | None, Field(ge=1, description="Token budget for all returned memories.")] = None,
        include_archived: bool = False,
        at: Annotated[str | None, Field(description="A commit, tag or branch: answer from the memories as they "
                                                    "were there (an old change, a release branch).")] = None,
        deep: Annotated[bool, Field(
            description="Also follow the best hits' links (same entity, supersedes, same session, co-changed "
                        "files, memories naming each other): for questions whose answer is spread over "
                        "memories.")] = False,
    ) -> dict[str, Any]:
        """Find the memories that best answer a query, best first, each with its body, front-matter
        and `trust` (its source, and whether a person merged it into the default branch).

        An empty `hits` list means nothing relevant is known; `vectors` says whether the search used
        vectors and, if not, why."""
        found = mem.recall(query, k, task_id=task, kinds=kinds or None, include_archived=include_archived,
                           at=at, deep=deep)
        how = found.how.to_dict() if found.how is not None else None
        hits = list(found)
        reason = "nothing relevant found" if not hits else None
        if budget is not None:
            fitted = mem.fit(hits, budget)
            hits, reason = list(fitted.hits), fitted.reason or reason
        return {"hits": [hit.to_dict() for hit in hits], **({"reason": reason} if reason else {}),
                **({"vectors": how["vectors"], "how": how} if how else {})}

    @tool
    def remember(
        text: Annotated[str, Field(min_length=1, description="The memory: first line is the title unless `title` is "
                                                             "given; keep it short and self-contained.")],
        title: str | None = None,
        kind: Annotated[str, Field(description="fact, preference, convention, decision, lesson, skill, checkpoint "
                                               "or summary.")] = "fact",
        entity: Annotated[str, Field(description="What it is about: `path/to/file.py::Symbol`, a path, or a topic.")] = "",
        source: Annotated[Literal["user", "static", "inferred"], Field(
            description="user: the user said it; static: read from code or docs; inferred: your own conclusion.")
        ] = "inferred",
        confidence: Annotated[float | None, Field(ge=0, le=1, description="0..1 (default by source).")] = None,
        task: str | None = None,
        tags: Items = [],  # noqa: B006 - pydantic copies defaults
        files: Items = [],  # noqa: B006
        symbols: Items = [],  # noqa: B006
        supersedes: Annotated[list[str], Field(description=(
            "Ids of existing memories this one replaces (e.g. m-7f3a2c). It hides only inferred ones; "
            "replacing a user's or static memory is proposed for a person."))] = [],  # noqa: B006
        scope: Annotated[Literal["project", "user"] | None, Field(description=(
            "project: the project's repository (shared with the team); user: the user's own store, "
            "recalled in every project. Default: user for a first-person preference with no file or "
            "symbol ('I prefer…', 'my machine…'), else project."))] = None,
    ) -> dict[str, Any]:
        """Save a memory as one git commit under .memory/. The same text twice is not duplicated;
        text that looks like a credential is refused (memories are pushed to remotes)."""
        from memgit.memory.personal import scope_for  # only this tool needs it

        where = scope or scope_for(kind, f"{title or ''}\n{text}", [*files, *([entity] if entity else [])], symbols)
        store = mem if where == "project" else user_store()
        # An agent's word never hides what a person said, whatever `source` it claims (memgit.trust).
        result = store.remember(text, title=title, kind=kind, entity=entity, source=source, confidence=confidence,
                              task_id=task, tags=tags, files=files, symbols=symbols, supersedes=supersedes,
                              trust="inferred")
        held = proposed(result.memory)
        return {"id": result.memory.id, "created": result.created, "duplicate_of": result.duplicate_of,
                "title": result.memory.title, "path": store.rel_path(result.memory), "commit": result.commit,
                "scope": where,
                **({"proposed_supersedes": held, "note": "these memories stay recalled: replacing them is "
                    "proposed for a person ('memgit reflect' lists it)"} if held else {})}

    @tool
    def show(ref: Ref) -> dict[str, Any]:
        """One memory, with its front-matter, body and path."""
        memory = mem.get(ref)
        return {**memory.to_dict(), "path": mem.rel_path(memory)}

    @tool
    def forget(ref: Ref, hard: Annotated[bool, Field(description="Delete the file instead of archiving it.")] = False
               ) -> dict[str, Any]:
        """Archive a memory so recall stops returning it (a commit git can revert); `hard` deletes its file.
        A user's or static memory is a person's to forget."""
        memory = mem.get(ref)
        if not may_hide("inferred", memory.source):  # as with supersedes: an agent hides no one above it
            raise MemgitError(f"{memory.id} is a {memory.source} memory: an agent does not forget it; "
                              f"ask the user to run 'memgit forget {memory.id}' if it is wrong, "
                              "or remember the correction")
        memory = mem.forget(memory.id, hard=hard)
        return {"id": memory.id, "title": memory.title, "status": "deleted" if hard else memory.status}

    @tool
    def list_topics(
        limit: Annotated[int, Field(ge=1, le=1000, description="At most this many entities and tags.")] = 50,
        kind: Annotated[str | None, Field(description="Count only memories of this kind.")] = None,
    ) -> dict[str, Any]:
        """What the store knows about, for browsing: memory counts by kind, entity and tag, most first."""
        memories = mem.list(kind=kind)
        entities = Counter(m.entity for m in memories if m.entity)
        tags = Counter(tag for m in memories for tag in m.tags)
        return {
            "total": len(memories),
            "kinds": dict(Counter(m.kind for m in memories).most_common()),
            "entities": dict(entities.most_common(limit)),
            "tags": dict(tags.most_common(limit)),
        }

    @tool
    def checkpoint(
        intent: Annotated[str | None, Field(description="What the task is for, as action + object + purpose "
                                                        "(\"make validate() accept empty values\").")] = None,
        task: Annotated[str | None, Field(description="The task id (default: from the branch or session).")] = None,
    ) -> dict[str, Any]:
        """Save the current task's state (intent, files and functions changed, actions) as a
        checkpoint memory, staged with your work, so a later session can resume it."""
        memory = mem.checkpoint(intent=intent, task_id=task)
        return {"id": memory.id, "title": memory.title, "path": mem.rel_path(memory), "task": memory.task_id}

    @tool
    def resume(
        task: Annotated[str | None, Field(description="The task id (default: from the branch).")] = None,
        budget: Annotated[int | None, Field(ge=1, description="Token budget (default 1500).")] = None,
    ) -> dict[str, Any]:
        """What to read to pick a task back up: its latest checkpoint, then the memories relevant
        to it, as Markdown within the budget."""
        given = mem.resume(task_id=task, budget=budget)
        return {"text": given.text, "ids": [h.id for h in given.hits],
                **({"reason": given.reason} if given.reason else {})}

    @tool
    def verify(ref: Ref) -> dict[str, Any]:
        """After checking a recalled memory whose code changed against that code, say it still holds:
        its fingerprints of the code are recorded again (a commit). If it no longer holds, remember the
        correction instead."""
        memory = mem.code.verify(ref)
        return {"id": memory.id, "title": memory.title,
                "written_against": memory.extra.get("written_against", [])}

    @tool
    def reflect(
        only: Annotated[list[str], Field(description="Only these kinds of proposal: duplicates, supersessions, "
                                                     "stale, eviction, promotion, hygiene.")] = [],  # noqa: B006
        cursor: Annotated[str | None, Field(description="The `next_cursor` of the page before; none for the "
                                                        "first page.")] = None,
        page_size: Annotated[int, Field(ge=1, le=pages.MAX_PAGE_SIZE, description="Proposals on a page at "
                                                                                   "most.")] = pages.PAGE_SIZE,
    ) -> dict[str, Any]:
        """Proposals that would keep the memory store healthy, a page at a time: a summary (how many
        of each kind), then proposals with their reasons, evidence and the diff each makes. Pass
        `next_cursor` back for the next page (null: the last). Nothing is changed: applying them is
        a person's decision (`memgit reflect --apply`)."""
        return pager.answer(lambda: mem.reflect(only=only).reflection, mem.memory_dir, only, given=cursor,
                            size=page_size, max_bytes=mem.config.mcp_max_bytes)

    @tool
    def pending_captures() -> dict[str, Any]:
        """Memories proposed from earlier sessions' transcripts (by memgit's capture rules, and a
        judge model if the user set one), waiting to be accepted: each proposal's id and memories."""
        return {"pending": [{
            "id": item.get("id"), "created": item.get("created"), "session_id": item.get("session_id"),
            "memories": [{key: c.get(key) for key in ("kind", "title", "body", "source")}
                         for c in item["candidates"] if isinstance(c, dict)],
            **({"judge": item["judge"]} if item.get("judge") else {}),
        } for item in mem.pending_captures()]}

    @tool
    def apply_capture(
        id: Annotated[str, Field(min_length=1, description="A pending proposal's id (or a unique prefix), as "
                                                            "`pending_captures` lists it.")],
        drop: Annotated[bool, Field(description="Set the proposal aside instead of applying it.")] = False,
    ) -> dict[str, Any]:
        """Accept a pending capture proposal: its memory files are written and staged (not committed)
        for the user to review with their work. With `drop`, set it aside unapplied."""
        if drop:
            return {"id": mem.drop_capture(id), "dropped": True}
        result = mem.apply_pending_capture(id)
        return {"id": result["id"], "written": result["written"], "staged": bool(result["written"])}

    return server


def _version() -> str:
    from memgit.distribution import version  # reads the installed metadata: only for the server's version

    return version() or ""


def _start(mem: "Memgit") -> None:
    """Begin reading the keyword channel's postings on a thread (`Workspace.start`) while the
    MCP SDK loads (~1.3 s): at 10k memories that read takes about as long, and the first
    recalls then read none (~6 ms a query each otherwise). Only for an index already built:
    a new one is built by the first recall, as before, not before the server answers."""
    try:
        mem.workspace.start()
    except MemgitError:
        pass  # no store here yet: each tool says so


def serve(path: str | Path = ".", memory_dir: str | None = None) -> None:
    """Run the server on stdio until the client closes it."""
    from memgit.api import open as open_store  # when the server starts
    from memgit.index import postings  # as above

    def warn(message: str) -> None:
        print(f"memgit: {message}", file=sys.stderr)

    postings.PRELOAD = True  # this process waits between an agent's prompts: read them then
    mem = open_store(path, memory_dir=memory_dir, warn=warn)
    _start(mem)
    server = build(mem)
    try:
        server.run("stdio")
    finally:
        mem.close()
