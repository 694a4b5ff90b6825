"""Injection: what an agent is given — the few best memories, each cut to fit a budget.

One policy in one place, configured in one section (`[inject]` of `.memory/config.toml`): at
most `k` memories (3), each rendered in at most `per_memory` tokens (200: the title, the id
line and the anchors are kept, the body is cut at a word), all of it — the header included —
within `budget` tokens (600), and nothing under the relevance floor (`min_score`). Recall
decides what is relevant; injection decides how much of it an agent's context can take, and
says why when it gives nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from memgit.memory.anchors import extract_anchors
from memgit.memory.format import Memory, clean_body, count_tokens
from memgit.recall.hit import Hit

HEADER = "## Memories recalled by memgit"


@dataclass(frozen=True)
class Policy:
    """How much an agent is given per turn (the `[inject]` settings)."""

    k: int = 3
    budget: int = 600
    per_memory: int = 200
    min_score: float = 0.25


@dataclass(frozen=True)
class Injection:
    """The memories given to an agent and their Markdown; `reason` says why nothing (or
    less than was relevant) was given."""

    hits: tuple[Hit, ...]
    parts: tuple[str, ...]
    tokens: int
    header: str | None = HEADER
    left_out: int = 0
    reason: str | None = None

    @property
    def text(self) -> str:
        """The Markdown to inject; empty when there is nothing."""
        if not self.parts:
            return ""
        return "\n\n".join(((self.header,) if self.header else ()) + self.parts) + "\n"


def fit(hits: Sequence[Hit], budget: int, per_memory: int = Policy.per_memory, k: int | None = None,
        header: str | None = None) -> Injection:
    """The best hits, each rendered within `per_memory` tokens, while the whole (with
    `header`, if any) fits in `budget` tokens; at most `k`."""
    chosen = list(hits)[: k if k is not None else len(hits)]
    used = count_tokens(header) + 1 if header else 0
    kept: list[Hit] = []
    parts: list[str] = []
    for hit in chosen:
        room = min(per_memory, budget - used)
        text = render_hit(hit, room) if room > 0 else ""
        cost = count_tokens(text)
        if room <= 0 or cost > room:  # not even the title and anchors fit
            break
        kept.append(hit)
        parts.append(text)
        used += cost + 1
    reason = None
    if not hits:
        reason = "nothing relevant found"
    elif not kept:
        need = (count_tokens(header) + 1 if header else 0) + count_tokens(f"### {hits[0].title}")
        reason = (f"the budget of {budget} token(s) is too small: the best memory's title alone needs "
                  f"about {need}; raise the budget")
    return Injection(tuple(kept), tuple(parts), max(used - 1, 0) if parts else 0, header,
                     left_out=len(chosen) - len(kept), reason=reason)


def _anchors_of(memory: Memory, limit: int = 8) -> list[str]:
    """The anchors worth keeping when a body is cut: front-matter ones first, then paths
    and `path::symbol`, then dotted or snake_case names, then the rest, each in text order."""
    declared = [a for a in (memory.entity, *memory.files, *memory.symbols) if a]

    def rank(anchor: str) -> int:
        if "/" in anchor or "::" in anchor:
            return 1
        return 2 if ("." in anchor or "_" in anchor) else 3

    found = sorted(extract_anchors(memory.body), key=rank)  # stable: text order within a rank
    out: dict[str, str] = {}
    for anchor in (*declared, *found):
        out.setdefault(anchor.lower(), anchor)
    return list(out.values())[:limit]


def render_hit(hit: Hit, per_memory: int | None = None) -> str:
    """One hit as Markdown: a heading with title, id and kind, its anchors, then the body.

    With `per_memory`, the whole fits in about that many tokens: the body is cut (at a
    word) first, then anchors are dropped from the end, then the id line; the title stays.
    """
    m = hit.memory
    title = f"### {m.title}"
    head = f"{title}\n`{m.id}` · {m.kind} · {hit.path if hit.scope == 'project' else hit.scope + ' memory'}"
    head += trust_note(hit)
    room = per_memory
    if room is not None and count_tokens(head) > room:
        head = title if count_tokens(title) <= room else "### " + _cut(m.title, room - 1)
    head += _code_lines(hit)
    anchors = _anchors_of(m)
    while anchors:
        line = "Anchors: " + ", ".join(f"`{a}`" for a in anchors)
        # Anchors may take up to half of what the heading leaves: the body matters too.
        if room is None or count_tokens(line) <= (room - count_tokens(head)) // 2:
            head += "\n" + line
            break
        anchors = anchors[:-1]
    body = clean_body(m.body)  # its first line's indentation is code or a nested list item
    if not body:
        return head
    if room is not None:
        body = _cut(body, room - count_tokens(head) - 1)
        if not body:
            return head
    return f"{head}\n{body}"


def _code_lines(hit: Hit) -> str:
    """What recall found of the hit's code (`memgit.recall.codecheck`), one line per doubt;
    kept whatever the budget, since it says how far to trust the rest."""
    if hit.code is None:
        return ""
    told = [d for d in hit.code.doubts if d.told]
    return "".join(f"\n> ⚠ {doubt.sentence(hit.id)}" for doubt in told[:3])


#: How each source is named where an agent reads it.
SOURCE_WORDS = {"user": "from the user", "static": "read from the code", "inferred": "agent-written"}


def trust_note(hit: Hit) -> str:
    """What the id line says about who wrote a memory and whether a person merged it
    (`memgit.recall.provenance`): nothing for a user's reviewed memory, the common case, so
    that the words stand out where they matter (" · agent-written, not merged into main")."""
    review = hit.review
    source = hit.memory.source
    if source == "user" and (review is None or review.state == "reviewed"):
        return ""
    if review is None:
        return f" · {SOURCE_WORDS.get(source, source)}"
    branch = review.branch.removeprefix("origin/")
    said = {"reviewed": f"reviewed on {branch}", "changed": f"edited since {branch}",
            "unreviewed": f"not merged into {branch}"}.get(review.state, review.state)
    return f" · {SOURCE_WORDS.get(source, source)}, {said}"


def _cut(text: str, tokens: int) -> str:
    """`text` cut at a word boundary to at most `tokens` tokens (with an ellipsis if cut)."""
    if tokens <= 0:
        return ""
    if count_tokens(text) <= tokens:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits, leaving one token for the ellipsis
        mid = (low + high + 1) // 2
        if count_tokens(text[:mid]) <= tokens - 1:
            low = mid
        else:
            high = mid - 1
    cut = text[:low]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space > len(cut) * 0.6:
        cut = cut[:space]
    return cut.rstrip() + " …" if cut.strip() else ""



def format_markdown(hits: Sequence[Hit], budget: int = Policy.budget, per_memory: int = Policy.per_memory,
                    k: int | None = None) -> str:
    """Hits rendered for injection: the Markdown of `fit` with the header; "" when nothing fits."""
    return fit(hits, budget, per_memory, k, header=HEADER).text
