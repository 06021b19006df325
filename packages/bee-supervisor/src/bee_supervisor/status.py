"""The published state: ``status.json`` in the state folder, rewritten by the running supervisor on every change.

`bee supervise status` reads it; whether a supervisor is actually running comes from the state folder's lock, not
from the file, so a file left by a supervisor that was killed is reported as such.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bee_supervisor.states import PROCESS_STATES

STATUS_FILE = "status.json"
_PROCESS_STATES = {state.value for state in PROCESS_STATES}


def write_status(folder: Path, document: dict[str, Any]) -> None:
    """Replace ``folder/status.json`` in one rename, so a reader sees the old document or the new one.

    Not fsynced: the file is rewritten every second or so and describes a moment, which a crash ends anyway.
    (bee_hostkit.files.write_atomic fsyncs, and lives in a package the supervisor does not depend on.)
    """
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{STATUS_FILE}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(document, stream, indent=2)
            stream.write("\n")
        os.replace(temporary, folder / STATUS_FILE)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_status(folder: Path) -> dict[str, Any] | None:
    """The last published document, or None when there is none (or it cannot be read)."""
    try:
        value = json.loads((folder / STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    if seconds < 86400:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 86400}d{seconds % 86400 // 3600:02d}h"


def with_uptime(document: dict[str, Any], now: float | None = None) -> dict[str, Any]:
    """``document`` with each running replica's ``uptime`` (seconds since its process started) filled in."""
    now = time.time() if now is None else now
    for replica in document.get("replicas", []):
        started = replica.get("started")
        running = replica.get("state") in _PROCESS_STATES and isinstance(started, int | float)
        replica["uptime"] = round(now - started, 3) if running else None
    return document


def render(document: dict[str, Any], running_pid: int | None) -> str:
    """The table `bee supervise status` prints."""
    supervisor = document.get("supervisor", {})
    if running_pid is None:
        head = f"supervisor: not running (last status written by pid {supervisor.get('pid', '?')})"
    else:
        head = f"supervisor: running, pid {running_pid}, config {supervisor.get('config', '?')}"
    installed = supervisor.get("installed") or {}
    if installed:
        head += f"\ninstalled: bee {installed.get('version')} (contract {installed.get('contractVersion')}, "
        head += f"{installed.get('contractDigest')})"
    rows = [("SERVICE", "STATE", "ADDRESS", "PID", "UPTIME", "RESTARTS", "VERSION", "HEALTH")]
    now = time.time()
    for replica in document.get("replicas", []):
        health = replica.get("health") or {}
        if health:
            ago = _duration(max(0.0, now - health.get("at", now)))
            verdict = ("ok" if health.get("ok") else "FAILING") + f" {ago} ago: {health.get('detail', '')}"
        else:
            verdict = "-"
        uptime = replica.get("uptime")
        rows.append(
            (
                f"{replica['service']}/{replica['replica']}",
                str(replica.get("state", "?")),
                str(replica.get("address") or "-"),
                str(replica.get("pid") or "-"),
                _duration(uptime) if isinstance(uptime, int | float) else "-",
                str(replica.get("restarts", 0)),
                str((replica.get("version") or {}).get("version", "-")),
                verdict,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = [head, ""]
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1])
    for replica in document.get("replicas", []):
        if replica.get("reason") and replica.get("state") in ("fatal", "backoff", "exited"):
            lines.append(f"{replica['service']}/{replica['replica']}: {replica['reason']}")
    return "\n".join(line.rstrip() for line in lines)


def warm_summary(environ: Mapping[str, str]) -> str | None:
    """One line on this installation's warm hosts while its warm supervisor runs, else None."""
    from bee_contracts.warm import WarmUnavailable, warm_dir
    from bee_supervisor.lock import running_pid

    try:
        folder = Path(warm_dir(environ))
    except WarmUnavailable:
        return None
    pid = running_pid(folder)
    if pid is None:
        return None
    replicas = (read_status(folder) or {}).get("replicas", [])
    running = sum(1 for replica in replicas if replica.get("state") == "running")
    kept = len(replicas)
    return f"warm hosts: {running} running, {kept} kept by the warm supervisor (pid {pid}); bee supervise status --warm"
