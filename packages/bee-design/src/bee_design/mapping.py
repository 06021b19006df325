"""The mapping from design elements to the source that implements them, and the states computed from it.

The mapping file is ``bee-design/map.json`` in the repository (commit it). For each mapped element it records the
element's digest and each source file's sha256 at the time of `bee design map`. States are computed on every read
from the manifests, this file and the source files as they are now — never taken from the file:

- ``imported``: the element is not mapped;
- ``mapped``: the element and every mapped source are unchanged since mapping;
- ``stale``: the element's design or a mapped source changed since mapping;
- ``missing``: a mapped source file (or its symbol) is gone, or the element no longer exists (an orphan mapping).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal

from bee_contracts import BeeError, ErrorCode, invalid
from bee_design import digests, layout
from bee_design.layout import DesignFiles
from bee_design.locking import writer
from bee_design.schemas import validator
from bee_hostkit.files import write_atomic

State = Literal["imported", "mapped", "stale", "missing"]

#: Source files up to this size are searched for their mapped symbol.
_SYMBOL_SEARCH_BYTES: Final = 16 * 1024 * 1024


@dataclass(frozen=True)
class Source:
    """One mapped source: a file relative to the root, optionally a symbol in it, and its sha256 when mapped."""

    path: str
    symbol: str | None
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "symbol": self.symbol, "sha256": self.sha256}


@dataclass(frozen=True)
class Mapping:
    element: str  # qualified: bundle:element
    element_digest: str
    mapped_at: str
    sources: tuple[Source, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "element": self.element,
            "elementDigest": self.element_digest,
            "mappedAt": self.mapped_at,
            "sources": [source.to_json() for source in self.sources],
        }


@dataclass(frozen=True)
class ElementState:
    state: State
    reasons: list[str] = field(default_factory=list)


def parse_target(target: str) -> tuple[str, str | None]:
    """``PATH[#SYMBOL]`` -> ``(path, symbol)``.

    Raises:
        BeeError: ``invalid_argument`` for an empty path or symbol.
    """
    path, _, symbol = target.partition("#")
    if not path:
        raise invalid(f"--to {target!r} has no path; give PATH or PATH#SYMBOL relative to the root")
    if "#" in target and not symbol:
        raise invalid(f"--to {target!r} has an empty symbol; give PATH#SYMBOL or just PATH")
    return path, symbol or None


def has_symbol(text: str, symbol: str) -> bool:
    """Whether ``symbol`` appears in ``text`` as a whole word (names are matched literally, not parsed)."""
    return re.search(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])", text) is not None


class MapFile:
    """``bee-design/map.json`` under one root."""

    def __init__(self, files: DesignFiles) -> None:
        self.files = files

    def load(self) -> dict[str, Mapping]:
        """Every mapping by qualified element id (empty when there is no file).

        Raises:
            BeeError: ``invalid_argument`` when the file is not valid JSON or breaks the schema; ``outside_root``
                when it is a symlink leading out of the root.
        """
        try:
            data = self.files.read(layout.MAP_FILE)
        except BeeError as exc:
            if exc.code == ErrorCode.NOT_FOUND:
                return {}
            raise
        try:
            raw: Any = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise invalid(
                f"{layout.MAP_FILE} is not valid JSON ({exc}); fix it, or remove it and map the elements again",
                file=layout.MAP_FILE,
            ) from None
        validator("map", layout.MAP_FILE).check(raw)
        mappings: dict[str, Mapping] = {}
        for entry in raw["mappings"]:
            if entry["element"] in mappings:
                raise invalid(f"{layout.MAP_FILE} maps {entry['element']!r} twice; keep one entry")
            mappings[entry["element"]] = Mapping(
                entry["element"],
                entry["elementDigest"],
                entry["mappedAt"],
                tuple(Source(s["path"], s["symbol"], s["sha256"]) for s in entry["sources"]),
            )
        return mappings

    def save(self, mappings: dict[str, Mapping]) -> None:
        body = {"schemaVersion": 1, "mappings": [mappings[key].to_json() for key in sorted(mappings)]}
        target = self.files.directory(layout.REPO_DIR, create=True) / "map.json"
        write_atomic(target, (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))

    def map(self, element: str, element_digest: str, targets: list[str]) -> Mapping:
        """Map ``element`` to the source ``targets`` (``PATH[#SYMBOL]``), replacing an earlier mapping.

        Raises:
            BeeError: ``outside_root``/``not_found`` for a source path; ``invalid_argument`` for a directory or
                special file, or a symbol that does not appear in its file.
        """
        if not targets:
            raise invalid("give at least one --to PATH[#SYMBOL]")
        sources = tuple(self._source(*parse_target(target)) for target in targets)
        mapping = Mapping(element, element_digest, datetime.now(UTC).isoformat(timespec="seconds"), sources)
        with writer(self.files):
            mappings = self.load()
            mappings[element] = mapping
            self.save(mappings)
        return mapping

    def unmap(self, element: str) -> Mapping:
        """Remove the mapping of ``element``.

        Raises:
            BeeError: ``not_found`` when it is not mapped.
        """
        with writer(self.files):
            mappings = self.load()
            if element not in mappings:
                raise BeeError(
                    ErrorCode.NOT_FOUND,
                    f"{element!r} is not mapped; {layout.MAP_FILE} maps: {', '.join(sorted(mappings)) or 'nothing'}",
                    details={"element": element},
                )
            removed = mappings.pop(element)
            self.save(mappings)
        return removed

    def _source(self, path: str, symbol: str | None) -> Source:
        sha, text = _hash_and_text(self.files, path, with_text=symbol is not None)
        if symbol is not None:
            if text is None:
                raise invalid(f"{path!r} is too large to look for symbol {symbol!r} in; map the file alone")
            if not has_symbol(text, symbol):
                raise invalid(
                    f"symbol {symbol!r} does not appear in {path!r}; check the spelling, or map the file alone",
                    path=path,
                    symbol=symbol,
                )
        return Source(path, symbol, sha)


def _hash_and_text(files: DesignFiles, path: str, *, with_text: bool) -> tuple[str, str | None]:
    """The sha256 of a source file, and its text when asked for and small enough to search.

    Raises:
        BeeError: from :meth:`DesignFiles.open` (outside the root, not found, not a regular file).
    """
    with files.open(path) as file:
        if with_text and file.size <= _SYMBOL_SEARCH_BYTES:
            data = file.read()
            return digests.of_bytes(data), data.decode("utf-8", errors="replace")
        return digests.of_chunks(file.chunks())[0], None


def state_of(files: DesignFiles, element_digest: str | None, mapping: Mapping | None) -> ElementState:
    """The computed state of one element (``element_digest`` None: it no longer exists) and its mapping."""
    if mapping is None:
        return ElementState("imported")
    if element_digest is None:
        return ElementState("missing", [f"{mapping.element} is not in any imported bundle (an orphan mapping)"])
    missing, stale = [], []
    for source in mapping.sources:
        label = source.path + (f"#{source.symbol}" if source.symbol else "")
        try:
            sha, text = _hash_and_text(files, source.path, with_text=source.symbol is not None)
        except BeeError as exc:
            reason = (
                f"source {source.path} is gone" if exc.code == ErrorCode.NOT_FOUND else f"source {label}: {exc.message}"
            )
            missing.append(reason)
            continue
        if sha == source.sha256:
            continue
        if source.symbol is not None and text is not None and not has_symbol(text, source.symbol):
            missing.append(f"symbol {source.symbol} is gone from {source.path}")
            continue
        stale.append(f"source {label} changed since mapping")
    if element_digest != mapping.element_digest:
        stale.insert(0, f"the design of {mapping.element} changed since mapping")
    if missing:
        return ElementState("missing", missing + stale)
    if stale:
        return ElementState("stale", stale)
    return ElementState("mapped")
