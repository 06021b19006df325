"""Whether compression is enabled for an instance: ``<instance>/compression/settings.json``.

Absent settings (or no instance at all) mean disabled: compression is opt-in, per instance, through
``bee compression enable``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from bee_core.instance import Instance
from bee_hostkit.files import write_atomic

SETTINGS_FILE = ("compression", "settings.json")


@dataclass(frozen=True)
class CompressionSettings:
    """The stored settings; ``updated`` is an ISO timestamp or empty when never written."""

    enabled: bool = False
    method: str = ""
    updated: str = ""


def settings_path(instance: Instance) -> Path:
    return instance.path(*SETTINGS_FILE)


def load_settings(instance: Instance) -> CompressionSettings:
    """The instance's settings; disabled when there is no instance or no settings file.

    Raises:
        ValueError: the settings file exists but is not a settings object (it was edited by hand).
    """
    path = settings_path(instance)
    if not instance.exists or not path.is_file():
        return CompressionSettings()
    raw = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict) or not isinstance(raw.get("enabled"), bool):
        raise ValueError(f"{path} is not a compression settings object; fix it or run `bee compression disable`")
    return CompressionSettings(bool(raw["enabled"]), str(raw.get("method", "")), str(raw.get("updated", "")))


def save_settings(instance: Instance, *, enabled: bool, method: str) -> CompressionSettings:
    """Write the settings atomically and return them."""
    settings = CompressionSettings(enabled, method, datetime.now(UTC).isoformat(timespec="seconds"))
    write_atomic(settings_path(instance), (json.dumps(asdict(settings), indent=2) + "\n").encode("utf-8"))
    return settings
