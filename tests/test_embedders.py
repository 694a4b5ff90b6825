"""Tests for memgit.embedders, against the real bundled MiniLM model (loaded once)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memgit.errors import MemgitError
from memgit.index.embedders import (
    Embedder,
    MiniLMEmbedder,
    embedder_available,
    load_embedder,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    embedder = load_embedder("minilm")
    assert embedder is not None
    return embedder


def test_vectors_are_384_d_unit_float32(minilm: Embedder) -> None:
    vectors = minilm.embed(["hello world", "memgit stores memories as markdown files"])
    assert minilm.dim == 384
    assert minilm.id == "minilm-l6-int8@1.0.0/128"
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = minilm.embed_query("hello world")
    assert query.shape == (384,)
    assert np.allclose(query, vectors[0], atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


def test_paraphrase_is_closer_than_unrelated(minilm: Embedder) -> None:
    a, b, c = minilm.embed(
        [
            "parse_config returns a tuple of path and Config",
            "the config parser gives back a (path, Config) pair",
            "the login page uses OAuth",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.3


def test_batch_preserves_order_and_matches_single(minilm: Embedder) -> None:
    # Lengths deliberately out of order (and a text past 128 tokens) so sorting matters.
    texts = [
        "a much longer sentence about how the index is rebuilt when the model changes",
        "short",
        "word " * 300,
        "",
        "medium length text about git hooks",
        "x",
        "the vector channel returns cosine similarity clipped to zero and one",
        "another one",
        "ninth text, to make two batches of eight",
    ]
    batch = minilm.embed(texts)
    singles = np.stack([minilm.embed_query(t) for t in texts])
    assert np.allclose(batch, singles, atol=1e-4)
    assert (batch @ singles.T).argmax(axis=1).tolist() == list(range(len(texts)))


def test_checksum_mismatch_raises(tmp_path: Path, minilm: Embedder) -> None:
    from memgit.index.embedders import _minilm_model_path

    source = _minilm_model_path()
    assert source is not None
    corrupt = tmp_path / "model.onnx"
    shutil.copyfile(source, corrupt)
    with corrupt.open("r+b") as f:
        f.seek(-1000, 2)
        f.write(b"\0" * 8)
    with pytest.raises(MemgitError, match="corrupt or was replaced"):
        MiniLMEmbedder(model_path=corrupt)


def test_onnx_path_embedder_gives_same_vectors(minilm: Embedder) -> None:
    from memgit.index.embedders import TOKENIZER_PATH, _minilm_model_path

    other = load_embedder(f"onnx:{_minilm_model_path()}", tokenizer=TOKENIZER_PATH)
    assert other is not None and other.dim == 384 and other.id.startswith("onnx-8199be6f699a")
    assert np.allclose(other.embed_query("hello"), minilm.embed_query("hello"), atol=1e-6)


class _Fake:
    """A user-supplied embedder, for the "module:attr" plugin path."""

    id = "fake/1"
    dim = 2

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([[1.0, 0.0] for _ in texts], dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


_FAKE = _Fake()


def test_plugin_embedder_loads_class_or_instance() -> None:
    assert isinstance(load_embedder(f"{__name__}:_Fake"), _Fake)
    assert load_embedder(f"{__name__}:_FAKE") is _FAKE
    with pytest.raises(MemgitError, match="not an embedder"):
        load_embedder(f"{__name__}:ROOT")
    with pytest.raises(MemgitError, match="Cannot load embedder"):
        load_embedder("no_such_module_xyz:thing")


def test_none_and_unknown_names() -> None:
    assert load_embedder("none") is None
    with pytest.raises(MemgitError, match="minilm, none"):
        load_embedder("bert-large")
    with pytest.raises(MemgitError, match="Bad option"):
        load_embedder("minilm", colour="blue")
    assert embedder_available("minilm")[0]
    assert embedder_available("none")[0]
    assert not embedder_available("bert-large")[0]
    assert not embedder_available("onnx:/no/such/model.onnx")[0]


def test_import_is_lazy() -> None:
    code = (
        "import sys, memgit.index.embedders\n"
        "heavy = {'numpy', 'onnxruntime', 'tokenizers'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
        "ok, why = memgit.index.embedders.embedder_available('minilm')\n"
        "heavy = {'numpy', 'onnxruntime', 'tokenizers'} & set(sys.modules)\n"
        "assert ok and not heavy, (why, heavy)\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_quick_start_gives_the_same_vectors_and_switches_for_batches() -> None:
    from memgit.index.embedders import MiniLMEmbedder

    quick = MiniLMEmbedder(quick_start=True)
    full = MiniLMEmbedder(quick_start=False)
    text = "parse_config returns a tuple (path, Config)"
    first = quick.embed_query(text)  # the unoptimised session: a cold CLI call's one query
    assert float(first @ full.embed_query(text)) > 0.9999
    session = quick._session
    quick.embed([text, "another"])  # a batch: now the optimised session
    assert quick._session is not session
    assert float(quick.embed_query(text) @ first) > 0.9999
