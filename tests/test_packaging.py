"""What a user of a plain `pip install` gets, and what happens without git."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import memgit
from memgit.errors import MemgitError

from .conftest import ROOT


def test_wheel_carries_templates_and_tokenizer(tmp_path: Path) -> None:
    pytest.importorskip("hatchling")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("memgit_agent-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "memgit/_templates/memory.md" in names
    assert "memgit/data/tokenizer.json" in names
    assert not any(name.startswith(("tests/", ".memory-example/")) for name in names)


def test_template_is_found(tmp_path: Path) -> None:
    from memgit.memory.template import template

    assert "Kind: decision" in template("decision")


def test_git_not_installed(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(MemgitError, match="git is not installed"):
        memgit.open(repo)
