"""The secret gate, measured: recall and false alarms on the labelled corpus in data/secrets/.

`python benchmarks/secret_gate.py` prints the same figures, and detect-secrets' for comparison.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from types import ModuleType

import pytest

from memgit.memory.credentials import find_secrets
from memgit.memory.vendor_tokens import TOKENS, is_placeholder

from .conftest import ROOT


def benchmark() -> ModuleType:
    # The benchmark owns the corpus reader; it is a script, not a package, so load it by path.
    spec = importlib.util.spec_from_file_location("secrets_benchmark", ROOT / "benchmarks" / "secret_gate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return benchmark()


def test_the_corpus_is_big_and_varied_enough(bench: ModuleType) -> None:
    cases = bench.load_corpus()
    credentials = [case for case in cases if case.credential]
    assert len(credentials) >= 60
    assert len(cases) - len(credentials) >= 60
    assert len({case.kind for case in credentials}) >= 25


def test_the_corpus_file_itself_holds_no_token() -> None:
    # Credentials are written as `ghp_[[alnum:36]]` and filled at load time, so the file that
    # is committed and pushed holds no vendor token for a push-time scanner to block.
    raw = (ROOT / "tests" / "data" / "secrets" / "corpus.jsonl").read_text(encoding="utf-8")
    # Only the published stubs quoted as look-alikes (AWS's `…EXAMPLE` id, Azurite's key).
    found = [match.group() for _, pattern in TOKENS for match in pattern.finditer(raw)]
    assert len(found) >= 2 and all(is_placeholder(token) for token in found), found


def test_filling_is_deterministic_and_follows_the_template(bench: ModuleType) -> None:
    first, second = bench.load_corpus(), bench.load_corpus()
    assert first == second
    assert not any(bench._FIELD.search(case.text) for case in first)
    github = next(case.text for case in first if case.kind == "GitHub classic token")
    assert re.search(r"(?<![A-Za-z0-9_])ghp_[A-Za-z0-9]{36};", github), github  # from ghp_[[alnum:36]];


def test_recall_at_least_95_percent_and_false_alarms_at_most_2_percent(bench: ModuleType) -> None:
    score = bench.score(lambda text: bool(find_secrets(text)), bench.load_corpus())
    missed = "\n".join(f"  line {c.line} [{c.kind}]: {c.text!r}" for c in score.missed)
    flagged = "\n".join(f"  line {c.line} [{c.kind}]: {c.text!r}" for c in score.false_alarms)
    assert score.recall >= 0.95, f"recall {score.recall:.1%}; missed:\n{missed}"
    assert score.false_positive_rate <= 0.02, f"false positives {score.false_positive_rate:.1%}:\n{flagged}"


def test_the_score_counts_what_it_says(bench: ModuleType) -> None:
    # A detector that flags everything: full recall, every look-alike a false alarm.
    cases = bench.load_corpus()
    score = bench.score(lambda text: True, cases)
    assert (score.recall, score.false_positive_rate, score.missed) == (1.0, 1.0, [])
    score = bench.score(lambda text: False, cases)
    assert (score.recall, score.false_positive_rate, score.false_alarms) == (0.0, 0.0, [])


def test_the_unseen_batches_hold_kinds_the_corpus_has_not_and_no_token(bench: ModuleType) -> None:
    # They measure the gate on credentials it was not tuned on, so they must stay unseen.
    corpus_kinds = {case.kind for case in bench.load_corpus() if case.credential}
    for path in bench.UNSEEN:
        cases = bench.load_corpus(path)
        credentials = [case for case in cases if case.credential]
        assert len(credentials) >= 25 and len(cases) - len(credentials) >= 25
        assert not {case.kind for case in credentials} & corpus_kinds
        raw = path.read_text(encoding="utf-8")
        assert not [match.group() for _, pattern in TOKENS for match in pattern.finditer(raw)]
