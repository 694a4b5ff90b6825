"""Text for SQLite FTS5: CJK segmentation, safe query terms and the BM25 ceiling.

FTS5's `unicode61` tokenizer splits on spaces and punctuation, which Chinese and Japanese
do not use: a whole run of Han or Kana becomes one token, so a query word inside a sentence
never matches. memgit therefore rewrites every run of CJK characters as overlapping
character bigrams *before* text reaches FTS5, at index and at query time alike (the
"CJK bigram" scheme of Lucene's CJKAnalyzer). Measured on tests/data/cjk (50 memories,
30 questions), see `tests/test_cjk.py` and the module docstring of `memgit.index.index`.

Identifiers: unicode61 splits `get_user_id` at the underscores but keeps `getUserId` one
token, so a question in words never meets a camelCase name. The words of each camelCase or
PascalCase identifier (`split_words`) are added beside it in the title, tags and entity
columns (the files and symbols go in the entity column), and a query's identifier is
searched by its words too. Not in the body: a body quotes code in passing, and its split
identifiers outweighed the words that answer. Measured on the development sets (recall@5
through `recall()` after reindex, before the anchors' feedback of `memgit.recall.prf`):
codemem-pytest 0.798 -> 0.805, its natural questions 0.704 -> 0.720, mixed queries 0.961 ->
0.951; splitting bodies too gave 0.807 but cost a DevMemBench query type 2 points.

Everything here is pure and cheap to import.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Sequence

from memgit.memory.format import CJK_CLASS


@functools.cache
def _cjk(pattern: str) -> re.Pattern[str]:
    """A CJK pattern compiled on first use (~10 ms each: most stores and queries are ASCII)."""
    return re.compile(pattern.format(cjk=CJK_CLASS))


def _has_cjk(text: str) -> bool:
    return not text.isascii() and max(text) >= CJK_CLASS[0] and _cjk("[{cjk}]").search(text) is not None


# What unicode61 keeps in a token: letters and digits (underscore separates, like `\W`).
_WORD = re.compile(r"[^\W_]+")

#: FTS5's bm25() constants (fts5_aux.c); the ceiling below must use the same ones.
K1 = 1.2
B = 0.75
#: At most this many distinct terms go into one FTS5 query: a pasted 100 KB log must not
#: turn into a 20,000-way OR.
MAX_TERMS = 64


def segment(text: str) -> str:
    """`text` with every CJK run replaced by its overlapping bigrams, space-separated.

    A one-character run stays as it is. Other text is untouched, so the tokenizer still
    sees English words, paths and identifiers as before.
    """
    if not text or not _has_cjk(text):
        return text
    return _cjk("[{cjk}]+").sub(_bigrams, text)


def _bigrams(match: re.Match[str]) -> str:
    run = match.group()
    if len(run) == 1:
        return f" {run} "
    return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "


#: A word with a lower-case letter followed by a capital: `getUserId`, `HTTPServer2`.
_CAMEL = re.compile(r"\b[A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*|\b[A-Z]{2,}[a-z][A-Za-z0-9]*")
_CAMEL_PART = re.compile(r"[A-Z]+[0-9]*(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")


def split_words(text: str) -> str:
    """The words inside each camelCase or PascalCase identifier of `text`, space-separated
    (`getUserId` -> "get User Id"; "" when there is none). The index adds them to the
    column the identifier is in, and a query's identifier is searched by them too, so
    `getUserId`, `get_user_id` and "user id" meet (unicode61 already splits at `_`)."""
    if not text or text.isascii() and text.islower():
        return ""
    parts = [" ".join(_CAMEL_PART.findall(m.group())) for m in _CAMEL.finditer(text)]
    return " ".join(p for p in parts if p)


def indexed(text: str) -> str:
    """`text` as the FTS5 table holds it: CJK segmented (`segment`), identifiers' words added."""
    extra = split_words(text)
    return segment(f"{text}\n{extra}" if extra else text)


def query_terms(query: str, limit: int = MAX_TERMS) -> list[str]:
    """The distinct words of a query as FTS5 will tokenize them, in order, at most `limit`;
    an identifier's words (`split_words`) follow it.

    Only letters and digits survive, so nothing in the result can be FTS5 syntax
    (`NOT`, `NEAR`, `*`, `"`, `:`, `(`, `-`, `^`); the keyword channel still quotes each
    term so that `NOT` or `AND` are searched for as words.
    """
    seen: set[str] = set()
    terms: list[str] = []
    for raw in _WORD.findall(segment(query)):
        for word in (raw, *split_words(raw).split()):
            word = word.lower()
            if word not in seen:
                seen.add(word)
                terms.append(word)
                if len(terms) >= limit:
                    return terms
    return terms


def idf(n_rows: int, n_hit: int) -> float:
    """FTS5's idf: ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6 as fts5_aux.c does."""
    n_hit = min(n_hit, n_rows)
    value = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5)) if n_rows > 0 else 0.0
    return value if value > 0 else 1e-6


#: Words that carry no topic. They still go into the FTS5 query, but a query word the store
#: has never seen only lowers the keyword strength (see `keyword_scale`) if it is not one of
#: these: in a store of five memories "why", "does" or 什么 are rarely present, and
#: without this list every natural question would look like a poor match.
STOPWORDS = frozenset(
    """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing done down during each else even
    ever few for from get gets got had has have having he her here hers him his how i if in
    into is it its itself just let lets like make may me might more most much must my no nor
    not now of off on once only or other our out over own same shall she should so some such
    than that the their them then there these they this those through to too under until up
    upon us use used using very via was way we were what when where whether which while who
    whom whose why will with within without would yes yet you your
    什么 怎么 为什 么样 哪些 哪个 哪条 如何 是否 可以 能不 不能 需要 应该 会不 不会 一下 这个 那个 我们 你们
    する した ます です ない どう なぜ どの どれ ある いる
    """.split()
)


def idf_smooth(n_rows: int, n_hit: int) -> float:
    """An idf that stays positive for common terms and small stores: ln(1 + (N-n+.5)/(n+.5))."""
    n_hit = min(n_hit, n_rows)
    return math.log(1 + (n_rows - n_hit + 0.5) / (n_hit + 0.5))


#: The coverage weighs a query's terms as if the store had at least this many memories, the
#: others without the term (see `keyword_scale`).
PRIOR_ROWS = 20

#: In the coverage, a CJK bigram no memory holds counts half: many query bigrams straddle
#: two words (说法|分数 gives 法分) and are missing from every store.
CJK_MISS_WEIGHT = 0.5


#: A query's terms are searched rarest first until their rows (postings) reach this many:
#: FTS5 computes bm25() for every matching row, ~1 us each here, and a query of common
#: words matches most of a 100k store (130-200 ms measured).
POSTINGS_BUDGET = 30_000


def match_terms(n_rows: int, terms: Sequence[str], hits: Sequence[int]) -> list[int]:
    """Indexes of the terms worth sending to FTS5, in query order.

    Left out: terms no row holds (they match nothing); terms in half the rows or more while
    rarer ones exist (FTS5 gives them idf 1e-6: they add nothing to any score but cost
    time); and, past POSTINGS_BUDGET rows, the commonest remaining terms (the least
    weight). The rarest term always stays.
    """
    present = [i for i in range(len(terms)) if hits[i] > 0]
    useful = [i for i in present if idf(n_rows, hits[i]) > 1e-6] or present
    kept: list[int] = []
    total = 0
    for i in sorted(useful, key=lambda i: (hits[i], i)):
        if kept and total + hits[i] > POSTINGS_BUDGET:
            break
        kept.append(i)
        total += hits[i]
    return sorted(kept)


def keyword_scale(n_rows: int, terms: Sequence[str], hits: Sequence[int],
                  kept: Sequence[int] | None = None) -> tuple[float, float]:
    """(ceiling, coverage) that turn a bm25() score into an absolute strength in [0, 1]:

        strength = min(1, -bm25 / ceiling) * coverage

    `ceiling`: FTS5's bm25() adds, per query phrase, idf(t) * f(k1 + 1) / (f + k1 * (1 - b +
    b * |D| / avgdl)), f being the column-weighted frequency. For f = 1 in a row of average
    length that addend is idf(t) exactly, so the ceiling is the sum of the idf of the query
    terms the store holds at all: a row with each of them once in its body scores 1.0 (in
    its title, weight 3, it saturates sooner); a row with half of them about 0.5. (The
    asymptote idf * (k1 + 1) was tried first: it put typical relevant matches at 0.1-0.3,
    below any useful floor.)

    `coverage`: the share of the query's information the store can answer at all: the
    smoothed idf of the query terms some row holds over that of all its terms, stopwords
    left out (unless the query is nothing else). A query of words the store has never
    seen, or whose only hit is "the", gets coverage near 0, so the relevance floor drops
    it. FTS5's own idf, ln((N-n+.5)/(n+.5)) floored at 1e-6, is zero for any term in half
    the rows, which in a store of two memories is every term: it stays in the ceiling (the
    ratio needs it) but the coverage uses ln(1 + (N-n+.5)/(n+.5)).

    In a store of a few memories even that says a word every memory holds is worth next to
    nothing beside a word none holds: three memories that all say "deploy" are about
    deploying, yet a session on branch `deploy-fixes` got a coverage of 0.06 and no briefing.
    Three rows are too few to tell a common word from the store's topic, so below
    `PRIOR_ROWS` memories the coverage weighs each term as if the store had `PRIOR_ROWS`, the
    others without it ("deploy" in 3 of 20 against "fixes" in none: 0.32). A store of
    `PRIOR_ROWS` memories or more is weighed as before.

    Measured through `recall()` with embedder "none" (keywords and anchors), recall@5 with
    the default floor of 0.25 (and with the floor off): codemem-pytest 0.661 (0.701; the
    FTS5 baseline is 0.634), devmembench 0.843 (0.912), tests/data/cjk 0.683 (0.950); none
    of 7 off-topic questions (English and Chinese) got an answer.
    """
    searched = range(len(terms)) if kept is None else kept
    ceiling = sum(idf(n_rows, hits[i]) for i in searched if hits[i] > 0)
    content = [i for i, t in enumerate(terms) if t not in STOPWORDS] or list(range(len(terms)))
    rows = max(n_rows, PRIOR_ROWS)

    def weight(i: int) -> float:
        value = idf_smooth(rows, hits[i])
        if hits[i] == 0 and not terms[i].isascii() and _cjk("[{cjk}]").match(terms[i]):
            value *= CJK_MISS_WEIGHT
        return value

    total = sum(weight(i) for i in content)
    found = sum(weight(i) for i in content if hits[i] > 0)
    return ceiling, (found / total if total > 0 else 0.0)
