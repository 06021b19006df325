"""What Bee learns about file content, cached by the content's sha256.

Keys are content hashes, so a repeat is fast and a changed file can never hit a stale entry: the file is always
read and hashed, and only the work after that (text facts, the outline and its measured size) is reused.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from cachetools import LRUCache

from bee_core.packet.outline import OUTLINE_VERSION, Outline


@dataclass(frozen=True)
class TextFacts:
    """Facts about one content: whether it is text, and its line count when it is."""

    binary: bool
    lines: int | None


class ContentCache:
    """Bounded LRU caches of text facts and outlines, keyed by ``sha256:<hex>`` content hashes; thread-safe."""

    def __init__(self, capacity: int = 4096) -> None:
        self._facts: LRUCache[str, TextFacts] = LRUCache(capacity * 4)
        self._outlines: LRUCache[tuple[str, str, int], Outline] = LRUCache(capacity)
        self._lock = threading.Lock()  # cachetools caches are not thread-safe: every access holds it
        self.hits = 0
        self.misses = 0

    def facts(self, sha256: str, make: Callable[[], TextFacts]) -> TextFacts:
        with self._lock:
            found = self._facts.get(sha256)
        if found is None:
            found = make()
            with self._lock:
                self._facts[sha256] = found
        return found

    def outline(self, sha256: str, language: str, make: Callable[[], Outline]) -> Outline:
        """The cached outline for this content, or ``make()``'s, stored for next time.

        Outlines are shared by every result that carries them, so nothing may mutate them.
        """
        key = (sha256, language, OUTLINE_VERSION)
        with self._lock:
            found = self._outlines.get(key)
            if found is not None:
                self.hits += 1
                return found
            self.misses += 1
        made = make()  # parse outside the lock: other threads keep serving
        with self._lock:
            self._outlines[key] = made
        return made
