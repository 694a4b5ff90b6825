"""Recall and the index as a new user and a team meet them: local state memgit did not write
(a hand-edited weights.json), another program's files beside memgit's own writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memgit.recall import learned


def _cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memgit", *args], cwd=repo, capture_output=True, text=True)


def test_a_weights_file_with_a_huge_number_is_ignored_not_a_crash(mem, repo: Path) -> None:  # type: ignore[no-untyped-def]
    mem.remember("Deploys run through the make release target", title="Release process")
    weights = learned.path(repo / ".git")
    weights.parent.mkdir(parents=True, exist_ok=True)
    # JSON reads a 400-digit integer as a Python int, which float() cannot hold.
    huge = "9" * 400
    weights.write_text('{"kinds": {"words": {"multipliers": {"keyword": %s}},'
                       ' "lookup": {"multipliers": {"keyword": %s}}}}' % (huge, huge))
    assert learned.multipliers(repo / ".git") == {}
    found = _cli(repo, "recall", "release process")
    assert found.returncode == 0, found.stderr
    assert "Release process" in found.stdout
    stats = _cli(repo, "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["learned_weights"]["words"]["learned"] is False
