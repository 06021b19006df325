"""Large Beads data shaped like real exports, for the transfer benchmark.

Every generated issue is a real line from ``tests/fixtures/beads`` (public exports, see SOURCES.tsv) with a new id,
so key sets, text sizes, labels, dependencies and comments follow what real repositories hold; dependencies point
at earlier generated issues. The same issues can be written as a legacy ``issues.jsonl`` or as the table dump
``bd backup`` writes (``issues``, ``dependencies``, ``labels``, ``comments``, ``events``, ``config`` and
``backup_state.json``), its rows shaped like the real dump in ``tests/fixtures/beads/backup``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "beads"
#: Real exports of different eras whose live lines are the templates.
TEMPLATES = (
    "gastownhall__beads__sqlite-era.jsonl",
    "steveyegge__vc.jsonl",
    "gastownhall__beads__tombstones.jsonl",
    "Dicklesworthstone__beads_viewer.jsonl",
    "NVIDIA__skyhook.jsonl",
)
_BACKUP_TEMPLATE = FIXTURES / "backup" / "steveyegge__gastown" / "issues.jsonl"


def go_json(value: Any) -> str:
    """Compact JSON escaped like Go's encoding/json, as bd writes it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _templates() -> list[dict[str, Any]]:
    found = []
    for name in TEMPLATES:
        for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("status") != "tombstone" and record.get("title"):
                found.append(record)
    return found


def issues(count: int, *, seed: int = 17) -> Iterator[dict[str, Any]]:
    """``count`` issues with ids ``bench-<n>``, each a real line with its relations renumbered."""
    rng = random.Random(seed)
    templates = _templates()
    for n in range(count):
        record = dict(templates[n % len(templates)])
        issue_id = f"bench-{n:x}"
        record["id"] = issue_id
        if "dependencies" in record:
            record["dependencies"] = [
                {**dep, "issue_id": issue_id, "depends_on_id": f"bench-{rng.randrange(max(n, 1)):x}"}
                for dep in record["dependencies"]
            ]
        if "comments" in record:
            record["comments"] = [
                {**comment, "id": n * 10 + k, "issue_id": issue_id} for k, comment in enumerate(record["comments"])
            ]
        yield record


def write_legacy(path: Path, count: int) -> int:
    """Write ``count`` issues as a legacy ``issues.jsonl``; return its size in bytes."""
    with path.open("w", encoding="utf-8") as out:
        for record in issues(count):
            out.write(go_json(record) + "\n")
    return path.stat().st_size


def _row_template() -> dict[str, Any]:
    """The zero values of every column of the real dump's issues table."""
    row: dict[str, Any] = json.loads(_BACKUP_TEMPLATE.read_text(encoding="utf-8").splitlines()[0])
    for key, value in row.items():
        row[key] = "" if isinstance(value, str) else 0 if isinstance(value, int) else None
    row["metadata"] = "{}"
    return row


def write_backup(directory: Path, count: int) -> int:
    """Write ``count`` issues as the table dump of ``bd backup``; return the bytes written."""
    directory.mkdir(parents=True, exist_ok=True)
    zero = _row_template()
    files = {name: (directory / f"{name}.jsonl").open("w", encoding="utf-8") for name in _TABLES}
    counts = dict.fromkeys(_TABLES, 0)
    event_id = 0

    def put(table: str, row: dict[str, Any]) -> None:
        files[table].write(json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n")
        counts[table] += 1

    try:
        for record in issues(count):
            issue_id = record["id"]
            row = dict(zero)
            for key, value in record.items():
                if key in row:
                    row[key] = value
            put("issues", row)
            for label in record.get("labels", ()):
                put("labels", {"issue_id": issue_id, "label": label})
            for dep in record.get("dependencies", ()):
                put(
                    "dependencies",
                    {k: dep.get(k) for k in ("created_at", "created_by", "depends_on_id", "issue_id", "type")},
                )
            for comment in record.get("comments", ()):
                put("comments", {k: comment.get(k) for k in ("author", "created_at", "id", "issue_id", "text")})
            for event_type, old, new in (("created", None, None), ("status_changed", "open", record["status"])):
                event_id += 1
                put(
                    "events",
                    {
                        "actor": record.get("created_by") or "bench",
                        "comment": None,
                        "created_at": record.get("updated_at") or record.get("created_at"),
                        "event_type": event_type,
                        "id": event_id,
                        "issue_id": issue_id,
                        "new_value": None if new is None else json.dumps({"status": new}),
                        "old_value": None if old is None else json.dumps({"status": old}),
                    },
                )
        put("config", {"key": "issue_prefix", "value": "bench"})
    finally:
        for handle in files.values():
            handle.close()
    state = {"last_dolt_commit": "bench", "timestamp": "2026-03-06T00:00:00Z", "counts": counts}
    (directory / "backup_state.json").write_text(json.dumps(state, indent=2))
    return sum(p.stat().st_size for p in directory.iterdir())


_TABLES = ("issues", "dependencies", "labels", "comments", "events", "config")
