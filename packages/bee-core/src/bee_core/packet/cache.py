"""What Bee learns about file content, cached by the content's sha256.

Keys are content hashes, so a repeat is fast and a changed file can never hit a stale entry: the file is always
read and hashed, and only the work after that (decoding, outlining, rendering the outline as JSON) is reused.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bee_core.packet.outline import OUTLINE_VERSION, Outline


@dataclass(frozen=True)
class TextFacts:
    """Facts about one content: whether it is text, and its line count when it is."""

    binary: bool
    lines: int | None


class _Lru:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.entries: OrderedDict[Any, Any] = OrderedDict()

    def get(self, key: Any) -> Any:
        found = self.entries.get(key)
        if found is not None:
            self.entries.move_to_end(key)
        return found

    def put(self, key: Any, value: Any) -> None:
        self.entries[key] = value
        self.entries.move_to_end(key)
        while len(self.entries) > self.capacity:
            self.entries.popitem(last=False)


class ContentCache:
    """Bounded LRU caches of text facts and outlines, keyed by ``sha256:<hex>`` content hashes; thread-safe."""

    def __init__(self, capacity: int = 4096) -> None:
        self._facts = _Lru(capacity * 4)
        self._outlines = _Lru(capacity)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def facts(self, sha256: str, make: Callable[[], TextFacts]) -> TextFacts:
        with self._lock:
            found: TextFacts | None = self._facts.get(sha256)
        if found is None:
            found = make()
            with self._lock:
                self._facts.put(sha256, found)
        return found

    def outline(self, sha256: str, language: str, make: Callable[[], Outline]) -> Outline:
        """The cached outline for this content, or ``make()``'s, stored for next time.

        Outlines are shared by every result that carries them, so nothing may mutate them.
        """
        key = (sha256, language, OUTLINE_VERSION)
        with self._lock:
            found: Outline | None = self._outlines.get(key)
            if found is not None:
                self.hits += 1
                return found
            self.misses += 1
        made = make()  # parse outside the lock: other threads keep serving
        with self._lock:
            self._outlines.put(key, made)
        return made
