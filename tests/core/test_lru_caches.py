"""The three bounded LRU caches (cachetools underneath): capacities, least-recently-used eviction, thread safety.

- ContentCache (source packets): text facts and outlines by count.
- SearchCache (bee_artifact_search): matches weighed by their bytes, with the index of cached texts kept in step.
- RowsCache (bee_artifact_query): parsed rows weighed by the source bytes they came from.
"""

import functools
import threading
from collections.abc import Callable

from bee_core.artifacts.query import Row
from bee_core.artifacts.rows import CACHE_SOURCE_BYTES, RowsCache
from bee_core.artifacts.search import CACHE_BYTES, Matches, SearchCache
from bee_core.packet.cache import ContentCache, TextFacts
from bee_core.packet.outline import Outline


class Maker:
    """Counts how often a cache had to make a value (a miss)."""

    def __init__(self) -> None:
        self.made: list[str] = []

    def facts(self, key: str) -> Callable[[], TextFacts]:
        def make() -> TextFacts:
            self.made.append(key)
            return TextFacts(binary=False, lines=len(key))

        return make

    def outline(self, key: str) -> Callable[[], Outline]:
        def make() -> Outline:
            self.made.append(key)
            return Outline("lines", [])

        return make


def test_content_cache_keeps_four_times_as_many_facts_as_outlines_and_evicts_the_least_recent() -> None:
    cache, maker = ContentCache(capacity=2), Maker()
    for key in "abcdefgh":  # 8 facts: exactly the capacity of the facts cache
        cache.facts(key, maker.facts(key))
    cache.facts("a", maker.facts("a"))  # a hit, and now the most recently used
    cache.facts("i", maker.facts("i"))  # evicts b, the least recently used
    assert maker.made == [*"abcdefgh", "i"]
    cache.facts("a", maker.facts("a"))
    cache.facts("b", maker.facts("b"))
    assert maker.made[-1:] == ["b"] and maker.made.count("a") == 1

    outlines = Maker()
    for key in ("x", "y", "x", "z", "y"):  # x hit; z evicts y (x was used after y)
        cache.outline(key, "python", outlines.outline(key))
    assert outlines.made == ["x", "y", "z", "y"]
    assert (cache.hits, cache.misses) == (1, 4)


def test_content_cache_under_threads_stays_bounded_and_consistent() -> None:
    cache = ContentCache(capacity=8)
    errors = []

    def work(offset: int) -> None:
        try:
            for i in range(3000):
                key = f"k{(i * 7 + offset) % 50}"
                assert cache.facts(key, functools.partial(TextFacts, False, len(key))).lines == len(key)
                cache.outline(key, "python", lambda: Outline("lines", []))
        except Exception as exc:  # any failure in a worker fails the test
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(cache._facts) <= 32 and len(cache._outlines) <= 8


def matches(size: int) -> Matches:
    """Matches weighing ``size`` bytes (128 bytes of bookkeeping and the block)."""
    return Matches(1, b"x" * (size - 129) + b"\n")


def test_search_cache_is_bounded_by_bytes_and_evicts_the_least_recently_used() -> None:
    assert SearchCache().max_bytes == CACHE_BYTES == 64 * 1024 * 1024
    cache = SearchCache(max_bytes=1000)
    cache.put("a", "sha1", matches(400))
    cache.put("b", "sha1", matches(400))
    assert cache.get("a", "sha1") is not None  # a is now the most recently used
    cache.put("c", "sha1", matches(400))  # 1200 > 1000: b goes
    assert cache.get("b", "sha1") is None
    assert cache.get("a", "sha1") is not None and cache.get("c", "sha1") is not None
    assert len(cache) == 2
    cache.put("a", "sha1", matches(300))  # replacing an entry reweighs it: nothing else goes
    assert len(cache) == 2


def test_search_cache_forgets_evicted_texts_when_looking_for_a_broader_one() -> None:
    cache = SearchCache(max_bytes=1000)
    cache.put("ERROR", "sha1", Matches(1, b"0:ERROR disk\n"))
    assert cache.broader("ERROR disk", "sha1") == ("ERROR", Matches(1, b"0:ERROR disk\n"))
    cache.put("other", "sha1", matches(999))  # evicts ERROR
    assert cache.get("ERROR", "sha1") is None
    assert cache.broader("ERROR disk", "sha1") is None
    assert cache._texts == {"sha1": {"other"}}


def test_search_cache_keeps_an_entry_larger_than_the_bound_alone_until_the_next() -> None:
    cache = SearchCache(max_bytes=1000)
    cache.put("small", "sha1", matches(200))
    cache.put("huge", "sha1", matches(5000))
    assert cache.get("huge", "sha1") is not None and cache.get("small", "sha1") is None
    cache.put("next", "sha1", matches(200))
    assert cache.get("huge", "sha1") is None and cache.get("next", "sha1") is not None


def rows(count: int) -> tuple[Row, ...]:
    return tuple(Row(i, None, i) for i in range(count))


def test_rows_cache_is_bounded_by_source_bytes_and_evicts_the_least_recently_used() -> None:
    assert RowsCache().max_source_bytes == CACHE_SOURCE_BYTES == 64 * 1024 * 1024
    cache = RowsCache(max_source_bytes=100)
    cache.put(("sha1", None), 40, rows(1))
    cache.put(("sha2", ("items",)), 40, rows(2))
    assert cache.get(("sha1", None)) == rows(1)  # most recently used now
    cache.put(("sha3", None), 40, rows(3))  # 120 > 100: sha2 goes
    assert cache.get(("sha2", ("items",))) is None
    assert cache.get(("sha1", None)) == rows(1) and cache.get(("sha3", None)) == rows(3)
    cache.put(("huge", None), 500, rows(4))  # larger than the bound: kept alone
    assert len(cache) == 1 and cache.get(("huge", None)) == rows(4)
