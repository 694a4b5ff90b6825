"""Capture measured on the labelled fixtures (`tests/data/transcripts/gold.json`).

The whole pipeline runs (rules, secret redaction, duplicate check) into an empty store per
fixture. A candidate matches a gold memory when its kind agrees (`stated` is convention or
preference) and its title and body contain every gold word; each gold memory is matched once.
`benchmarks/capture.py` prints the same figures per kind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import memgit

from .conftest import ROOT, git

DATA = ROOT / "tests" / "data" / "transcripts"
GOLD = {k: v for k, v in json.loads((DATA / "gold.json").read_text(encoding="utf-8")).items()
        if not k.startswith("_")}


def kind_class(kind: str) -> str:
    return "stated" if kind in ("convention", "preference") else kind


def captured(tmp_path: Path, name: str) -> list[tuple[str, str]]:
    root = tmp_path / name.replace(".", "-")
    root.mkdir()
    git(root, "init", "-q")
    mem = memgit.open(root, warn=lambda _m: None)
    mem.init(commit=False)
    proposal = mem.capture(DATA / name)
    return [(kind_class(c.kind), f"{c.title}\n{c.body}".casefold()) for c in proposal.candidates]


def test_precision_and_recall_on_the_labelled_sessions(tmp_path: Path) -> None:
    found = matched = gold_total = 0
    per_kind: dict[str, list[int]] = {}  # kind → [found, kept, gold]
    for name, wanted in GOLD.items():
        left = list(wanted)
        for kind, text in captured(tmp_path, name):
            counts = per_kind.setdefault(kind, [0, 0, 0])
            counts[0] += 1
            hit = next((g for g in left if g["kinds"] == kind and all(w.casefold() in text for w in g["words"])), None)
            if hit is not None:
                left.remove(hit)
                counts[1] += 1
        for g in wanted:
            per_kind.setdefault(g["kinds"], [0, 0, 0])[2] += 1
    assert len(GOLD) >= 12
    for kind in ("stated", "lesson"):
        found, kept, gold_total = per_kind[kind]
        matched = kept
        assert kept / found >= 0.8, (kind, per_kind)  # precision
        assert matched / gold_total >= 0.6, (kind, per_kind)  # recall
    # As measured (found, kept, gold). Two gold lessons are fixes the agent never explained (an edit
    # right after a failure, no word on the cause): a lesson must say why, so they are not proposed.
    # The eighth summary is the Aider session's, now that its applied edit is read (no gold summary
    # is labelled for it).
    assert per_kind == {"stated": [21, 21, 21], "lesson": [4, 4, 6], "decision": [3, 3, 3], "summary": [8, 7, 7]}


def test_a_session_that_fixed_nothing_proposes_nothing(tmp_path: Path) -> None:
    # A failure never fixed, the agent's guess ("probably the VPN"), a hedged idea, "not now".
    assert captured(tmp_path, "claude-unfixed.jsonl") == []


@pytest.mark.parametrize("name", ["codex-secret.jsonl", "claude-session.jsonl"])
def test_no_pasted_secret_reaches_a_proposal(tmp_path: Path, name: str) -> None:
    text = json.dumps(captured(tmp_path, name))
    for secret in ("sk-proj-Tq8Vb3Nz5Lm2Xr7Kp4Wd9Hs6Jf1Gc0Ya", "ghp_Q8v2LmN4pR7sT1wX9yZ3aB6cD0eF5gH2jK8m", "Xk9mP2vLq8zT"):
        assert secret.casefold() not in text
