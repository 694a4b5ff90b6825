"""The warm embedder process: used when it answers, never needed, never a hang."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memgit import warm


def test_no_server_means_none_at_once() -> None:
    started = time.monotonic()
    assert warm.query_vector("minilm", "anything", "minilm-l6-int8@1.0.0/128") is None
    assert time.monotonic() - started < 1.0  # generous: it must not wait for a model


def test_stale_socket_file_is_ignored(tmp_path: Path) -> None:
    path = warm.socket_path("minilm")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.write_text("not a socket")
    assert warm.query_vector("minilm", "anything", "x") is None


def test_server_serves_the_same_vectors_and_checks_the_model_id(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    from memgit.embedders import load_embedder

    env = {**os.environ, "MEMGIT_WARM_IDLE": "30"}
    server = subprocess.Popen([sys.executable, "-m", "memgit.warm", "minilm"], env=env)
    try:
        embedder = load_embedder("minilm")
        assert embedder is not None
        deadline = time.monotonic() + 60
        blob = None
        while blob is None and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.1)
            blob = warm.query_vector("minilm", "parse_config returns a tuple", embedder.id)
        assert blob is not None, "the warm server never answered"
        served = np.frombuffer(blob, dtype="<f4")
        local = embedder.embed_query("parse_config returns a tuple")
        assert served.shape == (embedder.dim,)
        assert float(np.dot(served, local)) > 0.9999
        # A server of another model (as after an upgrade) is not used.
        assert warm.query_vector("minilm", "parse_config", "some-other-model") is None
        # A second server for the same model exits at once instead of fighting over the socket.
        second = subprocess.run([sys.executable, "-m", "memgit.warm", "minilm"], env=env, timeout=60)
        assert second.returncode == 0
        assert warm.query_vector("minilm", "still there", embedder.id) is not None
    finally:
        server.terminate()
        server.wait(timeout=30)
