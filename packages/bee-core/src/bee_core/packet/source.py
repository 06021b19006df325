"""Reading one checkout file for a packet: confined, hashed, classified as text or binary."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from bee_core.packet.cache import ContentCache, TextFacts
from bee_core.packet.languages import language_of
from bee_hostkit import ConfinedRoot, Deadline

#: Files larger than this are indexed (streamed hash) but not outlined or returned as a body.
MAX_SOURCE_BYTES = 16 * 1024 * 1024

_SNIFF_BYTES = 8192
_HASH_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class SourceFile:
    """A file's bytes and facts; ``data`` is None for files over :data:`MAX_SOURCE_BYTES`."""

    path: str
    size: int
    sha256: str  # "sha256:<hex>"
    language: str
    binary: bool
    lines: int | None
    data: bytes | None

    @property
    def text(self) -> str:
        """The decoded text (only valid for text files)."""
        return (self.data or b"").decode("utf-8-sig")


def text_facts(data: bytes) -> TextFacts:
    """Binary when a NUL byte appears early or the bytes are not UTF-8; otherwise text with its line count."""
    if b"\x00" in data[:_SNIFF_BYTES]:
        return TextFacts(binary=True, lines=None)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return TextFacts(binary=True, lines=None)
    lines = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    return TextFacts(binary=False, lines=lines)


def read_source(files: ConfinedRoot, path: str, cache: ContentCache, deadline: Deadline | None = None) -> SourceFile:
    """Read ``path`` (repository-relative) from the checkout ``files``, race-free (see :class:`ConfinedRoot`).

    At most the size ``fstat`` reported is read; a file over :data:`MAX_SOURCE_BYTES` is hashed as a stream and
    its bytes are not kept. ``deadline`` is checked while streaming, so a huge file cannot outlive the call.

    Raises:
        BeeError: ``outside_root``/``not_found``/``invalid_argument`` from :meth:`ConfinedRoot.open` (a
            directory, a FIFO, a socket or a device is ``invalid_argument``); ``deadline_exceeded``.
    """
    language = language_of(path)
    with files.open(path) as file:
        if file.size > MAX_SOURCE_BYTES:
            digest = hashlib.sha256()
            for chunk in file.chunks(_HASH_CHUNK):
                digest.update(chunk)
                if deadline is not None:
                    deadline.check(f"hashing {path}")
            return SourceFile(path, file.size, "sha256:" + digest.hexdigest(), language, False, None, None)
        data = file.read()
    sha = "sha256:" + hashlib.sha256(data).hexdigest()
    facts = cache.facts(sha, lambda: text_facts(data))
    return SourceFile(path, len(data), sha, language, facts.binary, facts.lines, data)


def normalize_hash(value: str) -> str:
    """``sha256:<lowercase hex>`` for a pinned hash given with or without the prefix."""
    hexdigest = value.split(":", 1)[1] if value.startswith("sha256:") else value
    return "sha256:" + hexdigest.lower()
