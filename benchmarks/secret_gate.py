#!/usr/bin/env python3
"""How well each secret detector separates credentials from look-alikes, on a labelled corpus.

    python benchmarks/secret_gate.py [--misses]

The corpus is `tests/data/secrets/corpus.jsonl`: one JSON object a line with `label`
(`credential` or `lookalike`), `kind` (the provider or shape) and `text`, written the way it
would appear in a memory. Random parts are written as `[[charset:length]]` (`hex`, `HEX`,
`alnum`, `upper`, `lower`, `digits`, `b64`, `b64url`, `bech32`) or `[[uuid]]` / `[[UUID]]` and are
filled from a generator seeded by the line itself, so every credential is fake, the file holds
none, and every run scans the same text.

`tests/data/secrets/unseen-1.jsonl` and `unseen-2.jsonl`, in the same format, hold kinds the
corpus has not. They were written before the generic rule (`memgit/secret_words.py`) was tuned
on the corpus, and are never tuned on: each is reported on its own, as how the gate does on
credentials it has not seen. Figures (memgit's patterns, caught / false alarms):

| file | before the generic rule | after |
|---|---|---|
| corpus.jsonl | 138/138, 0/146 | 138/138, 0/146 |
| unseen-1.jsonl | 7/28, 1/25 | 14/28, 1/25 |
| unseen-2.jsonl | 9/27, 1/25 | 14/27, 1/25 |

Options measured:

- memgit: `memgit.credentials.find_secrets`, the patterns memgit uses;
- detect-secrets: Yelp's detect-secrets with its default plugins and filters, scanning each
  text as a Markdown file (how its pre-commit hook would see a memory); skipped with a note
  when it is not installed (`pip install detect-secrets==1.5.0`; it needs no network);
- combined: flagged by either.

Recall is the share of credentials flagged; the false-positive rate is the share of
look-alikes flagged. `--misses` lists, per option, the corpus lines it got wrong.
"""

from __future__ import annotations

import json
import random
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent

DATA = HERE.parent / "tests" / "data" / "secrets"
CORPUS = DATA / "corpus.jsonl"
#: Batches of kinds the corpus does not have, written before the generic rule was tuned (on the
#: corpus only) and never tuned on: they measure how the gate does on credentials it has not seen.
UNSEEN = (DATA / "unseen-1.jsonl", DATA / "unseen-2.jsonl")

_CHARSETS = {
    "hex": "0123456789abcdef",
    "HEX": "0123456789ABCDEF",
    "alnum": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    "upper": "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
    "lower": "abcdefghijklmnopqrstuvwxyz0123456789",
    "digits": "0123456789",
    "b64": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    "b64url": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
    "bech32": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
}
_FIELD = re.compile(r"\[\[(?P<charset>\w+)(?::(?P<length>\d+))?\]\]")


@dataclass(frozen=True)
class Case:
    """One corpus line, its random parts filled in."""

    line: int
    credential: bool
    kind: str
    text: str


def load_corpus(path: Path = CORPUS) -> list[Case]:
    """The corpus with every `[[charset:length]]` filled from a generator seeded by its line."""
    cases = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        record = json.loads(raw)
        if record["label"] not in ("credential", "lookalike"):
            raise ValueError(f"{path.name}:{number}: label must be credential or lookalike")
        rng = random.Random(record["text"])  # seeded by the template: stable when lines move

        def fill(match: re.Match[str], rng: random.Random = rng) -> str:
            charset = match.group("charset")
            if charset in ("uuid", "UUID"):
                value = "-".join(
                    "".join(rng.choice(_CHARSETS["hex"]) for _ in range(n)) for n in (8, 4, 4, 4, 12)
                )
                return value.upper() if charset == "UUID" else value
            if charset not in _CHARSETS or not match.group("length"):
                raise ValueError(f"{path.name}:{number}: unknown template {match.group()}")
            return "".join(rng.choice(_CHARSETS[charset]) for _ in range(int(match.group("length"))))

        text = _FIELD.sub(fill, record["text"])
        cases.append(Case(number, record["label"] == "credential", record["kind"], text))
    return cases


def memgit_detector() -> Callable[[str], bool]:
    from memgit.memory.credentials import find_secrets

    return lambda text: bool(find_secrets(text))


def detect_secrets_detector() -> Callable[[str], bool] | None:
    """detect-secrets 1.x with its default plugins and filters, or None when not installed."""
    try:
        from detect_secrets.core.scan import scan_file
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    folder = Path(tempfile.mkdtemp(prefix="memgit-secrets-"))

    def detect(text: str) -> bool:
        path = folder / "memory.md"
        path.write_text(text + "\n", encoding="utf-8")
        with default_settings():
            return any(True for _ in scan_file(str(path)))

    return detect


@dataclass(frozen=True)
class Score:
    recall: float
    false_positive_rate: float
    missed: list[Case]
    false_alarms: list[Case]


def score(detect: Callable[[str], bool], cases: list[Case]) -> Score:
    """Recall on the credentials and false-positive rate on the look-alikes."""
    flagged = {case.line: detect(case.text) for case in cases}
    credentials = [case for case in cases if case.credential]
    lookalikes = [case for case in cases if not case.credential]
    missed = [case for case in credentials if not flagged[case.line]]
    false_alarms = [case for case in lookalikes if flagged[case.line]]
    return Score(
        recall=1 - len(missed) / len(credentials),
        false_positive_rate=len(false_alarms) / len(lookalikes),
        missed=missed,
        false_alarms=false_alarms,
    )


def main(argv: list[str]) -> int:
    show_misses = "--misses" in argv
    ours = memgit_detector()
    theirs = detect_secrets_detector()
    options: list[tuple[str, Callable[[str], bool]]] = [("memgit patterns", ours)]
    if theirs is None:
        print("detect-secrets: not installed (pip install detect-secrets==1.5.0); skipped")
    else:
        options.append(("detect-secrets (default plugins)", theirs))
        options.append(("combined (either)", lambda text: ours(text) or theirs(text)))
    # The batches never tuned on first: they are the measurement. The corpus the patterns were
    # written against comes last, as the regression fixture it is.
    for path in (*UNSEEN, CORPUS):
        cases = load_corpus(path)
        credentials = [case for case in cases if case.credential]
        kinds = {case.kind for case in credentials}
        lookalikes = len(cases) - len(credentials)
        if not credentials or not lookalikes:
            print(f"secret_gate: no figure: {path.name} holds {len(credentials)} credentials and "
                  f"{lookalikes} look-alikes", file=sys.stderr)
            return 2
        role = ("tuned on: a regression fixture, not a measurement" if path == CORPUS
                else "held out, never tuned on")
        print(f"\n{path.name} ({role}): {len(credentials)} credentials of {len(kinds)} kinds, "
              f"{lookalikes} look-alikes")
        print(f"{'option':<34} {'caught':>14} {'false alarms':>14}")
        for name, detect in options:
            result = score(detect, cases)
            caught = len(credentials) - len(result.missed)
            print(
                f"{name:<34} {result.recall:>6.1%} ({caught}/{len(credentials)})"
                f" {result.false_positive_rate:>6.1%} ({len(result.false_alarms)}/{lookalikes})"
            )
            if show_misses:
                for case in result.missed:
                    print(f"    missed   line {case.line} [{case.kind}]: {case.text[:100]!r}")
                for case in result.false_alarms:
                    print(f"    flagged  line {case.line} [{case.kind}]: {case.text[:100]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
