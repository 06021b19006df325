"""Literal line search across retained text artifacts, with exact counts and a cache for repeated queries.

A match is a matching line: a line that contains the text at least once (case-sensitive, byte for byte). Counts
are exact — every matching line of every searched artifact is counted, however far beyond the page.

How a query runs (ripgrep is the engine, see :mod:`bee_core.artifacts.ripgrep`):

1. A probe of sixteen 4 KiB samples of each artifact predicts whether the text is frequent in it.
2. Where it is predicted rare, one pass lists the first :data:`LISTING_CAP` + 1 matching lines of each artifact
   (ripgrep stops reading an artifact once it has that many). For a rare text this is the whole search. The
   listing stays raw bytes; only the lines a page shows are ever parsed.
3. Where it is predicted frequent, or the listing reached the cap, the artifact is counted exactly
   (``--count``, ripgrep's fastest mode). Steps 2 and 3 run concurrently on disjoint artifacts, and so does the
   fetch of the page's lines when the page lies in a frequent artifact.
4. When the page reaches past the lines already known for an artifact, ripgrep lists just enough of them.

A misprediction costs time, never exactness.

What is learned is cached per (text, content sha256), so a repeated query, the next page, or a query narrowed to
fewer artifacts reuses it, and a query for a longer text containing a cached one (``ERROR`` then ``ERROR disk``)
filters that text's complete listing instead of searching again. Keys are content hashes and every artifact is
verified before a search, so a cached answer can never describe bytes that changed.
"""

from __future__ import annotations

import mmap
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cachetools import LRUCache

from bee_contracts import BeeError, ErrorCode
from bee_core.artifacts import ripgrep
from bee_core.artifacts.lines import BLOCK_BYTES, LineIndex
from bee_core.artifacts.records import ArtifactRecord, FileStatus
from bee_core.artifacts.verify import BytesMissing, Verifier
from bee_hostkit import Deadline

if TYPE_CHECKING:
    from bee_contracts.shapes.core import ArtifactSearchMatch

#: Lines longer than this many characters are cut to a window around the first occurrence of the text.
LINE_CHARS = 400
#: Matching lines listed per artifact by the first pass; an artifact with more is counted separately.
LISTING_CAP = 4096
#: Samples of this many bytes, spread evenly over an artifact, predict whether a text is frequent in it (many
#: small samples estimate far better than a few large ones: texts cluster).
PROBE_BYTES = 4 * 1024
PROBE_SAMPLES = 16
#: Predicted matches above which an artifact is counted at once instead of listed first: twice the cap, so that
#: only clearly frequent texts skip the listing (one ripgrep pass is cheaper than two concurrent ones). A text
#: predicted below it but more frequent than the cap is listed up to the cap and then counted: a little slower.
PROBE_FREQUENT = 2 * LISTING_CAP
#: At most this many leading matching lines are cached per (text, artifact).
PREFIX_CAP = 10_000
#: Matching lines fetched at least, when a page needs lines not yet known (so that the next pages are cached).
FETCH_AHEAD = 1000
#: Rough bound on the memory the result cache holds.
CACHE_BYTES = 64 * 1024 * 1024

_MARK = "…"


@dataclass(frozen=True)
class LineMatch:
    """One matching line, ready to report. ``line`` is the whole line or, when ``cut``, a marked window of it."""

    line_number: int
    byte_offset: int
    line_bytes: int
    line: str
    cut: bool
    excerpt_offset: int  # bytes of the line before the window (0 when not cut)

    def to_json(self, artifact: str) -> ArtifactSearchMatch:
        found: ArtifactSearchMatch = {
            "id": artifact,
            "lineNumber": self.line_number,
            "byteOffset": self.byte_offset,
            "lineBytes": self.line_bytes,
            "line": self.line,
            "cut": self.cut,
        }
        if self.cut:
            found["excerptOffsetBytes"] = self.excerpt_offset
        return found


def _window(line: str, text: str) -> tuple[int, int]:
    """Character bounds of a :data:`LINE_CHARS` window of ``line`` around the first occurrence of ``text``."""
    at = max(line.find(text), 0)
    start = max(0, min(at - (LINE_CHARS - len(text)) // 2, len(line) - LINE_CHARS))
    return start, min(start + LINE_CHARS, len(line))


def _long_line(fd: int, offset: int, line_number: int, text: str) -> LineMatch:
    """A line ripgrep did not print (too long): measured and cut from the artifact's bytes around the match."""
    needle = text.encode("utf-8")
    with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as view:
        end = view.find(b"\n", offset)
        end = len(view) if end < 0 else end
        if end > offset and view[end - 1] == 0x0D:
            end -= 1
        at = max(view.find(needle, offset, end), offset)
        lo, hi = max(offset, at - 4 * LINE_CHARS), min(end, at + len(needle) + 4 * LINE_CHARS)
        while lo > offset and view[lo] & 0xC0 == 0x80:  # never start or stop inside a UTF-8 sequence
            lo -= 1
        while hi < end and view[hi] & 0xC0 == 0x80:
            hi += 1
        piece = view[lo:hi].decode("utf-8", "replace")
    start, stop = _window(piece, text)
    before = lo - offset + len(piece[:start].encode("utf-8"))
    after = before + len(piece[start:stop].encode("utf-8"))
    window = (_MARK if before else "") + piece[start:stop] + (_MARK if after < end - offset else "")
    return LineMatch(line_number, offset, end - offset, window, True, before)


def line_match(hit: ripgrep.Hit, line_number: int, text: str, fd: int) -> LineMatch:
    """Report ``hit``: its terminator (``\\n`` or ``\\r\\n``) dropped, long lines cut around the first match.

    ``fd`` is the artifact, open; it is read only for a line ripgrep left out for its length.
    """
    content = hit.content[:-1] if hit.content.endswith(b"\r") else hit.content
    line = content.decode("utf-8", "replace")
    if text not in line:  # not the line but ripgrep's marker for a long one (or a line that reads like it)
        return _long_line(fd, hit.byte_offset, line_number, text)
    if len(line) <= LINE_CHARS:
        return LineMatch(line_number, hit.byte_offset, len(content), line, False, 0)
    start, stop = _window(line, text)
    window = (_MARK if start else "") + line[start:stop] + (_MARK if stop < len(line) else "")
    excerpt_offset = len(line[:start].encode("utf-8"))
    return LineMatch(line_number, hit.byte_offset, len(content), window, True, excerpt_offset)


@dataclass(frozen=True)
class Matches:
    """What is known about one text in one content: the exact count and the first matching lines, raw.

    ``block`` holds the first ``known`` matching lines as ripgrep printed them (``offset:line``, one a line); they
    are parsed only when a page shows them.
    """

    count: int
    block: bytes = b""
    known: int = -1  # lines in block; counted here when not given (blocks can be megabytes: count once)

    def __post_init__(self) -> None:
        if self.known < 0:
            object.__setattr__(self, "known", self.block.count(b"\n"))

    @property
    def complete(self) -> bool:
        """Whether ``block`` lists every matching line."""
        return self.known == self.count

    @property
    def weight(self) -> int:
        return 128 + len(self.block)


_Key = tuple[str, str]  # (text, sha256)


class _Entries(LRUCache[_Key, Matches]):
    """The LRU of :class:`SearchCache`, weighed in bytes, telling its owner which keys it evicts."""

    def __init__(self, max_bytes: int, evicted: Callable[[_Key], None]) -> None:
        # An entry larger than the whole bound counts as the whole bound: it is kept, alone, until the next put.
        super().__init__(max_bytes, getsizeof=lambda matches: min(matches.weight, max_bytes))
        self._evicted = evicted

    def popitem(self) -> tuple[_Key, Matches]:
        key, matches = super().popitem()
        self._evicted(key)
        return key, matches


class SearchCache:
    """A bounded LRU of :class:`Matches` keyed by (text, sha256), plus line indexes by sha256; thread-safe."""

    def __init__(self, max_bytes: int = CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries = _Entries(max_bytes, self._forget)
        self._texts: dict[str, set[str]] = {}  # sha256 -> texts cached for it (to find broader texts)
        self._lock = threading.Lock()  # cachetools caches are not thread-safe: every access holds it
        self._indexes: dict[str, LineIndex] = {}

    def _forget(self, key: _Key) -> None:
        text, sha256 = key
        texts = self._texts.get(sha256)
        if texts is not None:
            texts.discard(text)
            if not texts:
                del self._texts[sha256]

    def get(self, text: str, sha256: str) -> Matches | None:
        with self._lock:
            return self._entries.get((text, sha256))

    def put(self, text: str, sha256: str, matches: Matches) -> None:
        with self._lock:
            self._entries.pop((text, sha256), None)
            self._entries[(text, sha256)] = matches
            self._texts.setdefault(sha256, set()).add(text)

    def broader(self, text: str, sha256: str) -> tuple[str, Matches] | None:
        """A cached, complete listing of a text that ``text`` contains (a narrowed query's superset), if any."""
        with self._lock:
            for other in self._texts.get(sha256, ()):
                if other != text and other in text:
                    found = self._entries.get((other, sha256))
                    if found is not None and found.complete:
                        return other, found
        return None

    def line_index(self, record: ArtifactRecord, fd: int) -> LineIndex:
        """The line index of ``record``'s content: from its record, else built from the (verified) file."""
        with self._lock:
            found = self._indexes.get(record.sha256)
        if found is None:
            found = LineIndex(record.line_blocks) if record.line_blocks is not None else LineIndex.build(fd)
            with self._lock:
                self._indexes[record.sha256] = found
        return found

    def __len__(self) -> int:
        return len(self._entries)


@dataclass(frozen=True)
class Target:
    """An artifact to search and where its bytes are."""

    record: ArtifactRecord
    path: Path


@dataclass
class SearchOutcome:
    """Exact counts per artifact (in search order) and the requested page of matching lines."""

    counts: list[tuple[ArtifactRecord, int]]
    page: list[tuple[ArtifactRecord, LineMatch]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(count for _, count in self.counts)


def _estimate(target: Target, text: str) -> float:
    """Roughly how many times ``text`` occurs in the artifact, from samples spread from its start to its end."""
    size = target.record.size
    if size == 0:
        return 0.0
    step = max((size - PROBE_BYTES) // max(PROBE_SAMPLES - 1, 1), 1)
    needle = text.encode("utf-8")
    found = probed = 0
    fd = os.open(target.path, os.O_RDONLY)
    try:
        for offset in sorted({min(i * step, max(size - PROBE_BYTES, 0)) for i in range(PROBE_SAMPLES)}):
            sample = os.pread(fd, PROBE_BYTES, offset)
            found += sample.count(needle)
            probed += len(sample)
    finally:
        os.close(fd)
    return found * size / probed if probed else 0.0


def _learn(
    targets: Sequence[Target], text: str, cache: SearchCache, deadline: Deadline, want: tuple[Target, int] | None
) -> dict[str, Matches]:
    """Steps 1 to 3 of the module docstring for ``targets``: what was learned, by sha256 (also put in ``cache``).

    Artifacts where the probe predicts many matches skip the listing and are counted at once, concurrently with
    the listing of the others (the two sets are disjoint, so no byte is searched twice). When ``want`` names such
    an artifact, its first ``want[1]`` matching lines are fetched at the same time, because the page needs them.
    """
    frequent = [target for target in targets if _estimate(target, text) > PROBE_FREQUENT]
    rare = [target for target in targets if target not in frequent]
    if want is not None and want[0] not in frequent:
        want = None
    elif want is not None:  # fetch ahead: the next pages then cost nothing (ripgrep stops early either way)
        want = (want[0], min(max(want[1], FETCH_AHEAD), PREFIX_CAP))
    page = b""
    if not frequent:  # the common case, a rare text: one ripgrep, no threads
        listed, counted = ripgrep.listing([t.path for t in rare], text, LISTING_CAP + 1, deadline), {}
    else:
        with ThreadPoolExecutor(max_workers=3) as pool:
            listing_job = pool.submit(ripgrep.listing, [t.path for t in rare], text, LISTING_CAP + 1, deadline)
            counting_job = pool.submit(ripgrep.counts, [t.path for t in frequent], text, deadline)
            paging = pool.submit(ripgrep.first, want[0].path, text, want[1], deadline) if want else None
            listed, counted = listing_job.result(), counting_job.result()
            page = paging.result() if paging else b""
    # What each listing holds (its count is settled below: exact when the listing is complete).
    listings = {target: Matches(0, listed.get(str(target.path), b"")) for target in rare}
    overflow = [target for target, listing in listings.items() if listing.known > LISTING_CAP]
    if overflow:
        counted.update(ripgrep.counts([target.path for target in overflow], text, deadline))
    learned = {}
    for target in targets:
        listing = listings.get(target, Matches(0, b"", 0))
        complete = target in listings and target not in overflow
        count = listing.known if complete else counted.get(str(target.path), 0)
        if want is not None and target is want[0]:
            listing = Matches(0, page)
        learned[target.record.sha256] = Matches(count, listing.block, listing.known)
        cache.put(text, target.record.sha256, learned[target.record.sha256])
    return learned


def _narrow(broader: tuple[str, Matches], text: str) -> Matches | None:
    """The matches of ``text`` among the complete listing of a text it contains — every line matching ``text``
    matches the broader text too — or None when a listed line was too long for ripgrep to print."""
    wide, needle = broader[0].encode("utf-8"), text.encode("utf-8")
    kept = []
    for line in broader[1].block.split(b"\n")[:-1]:
        content = line.partition(b":")[2]
        if wide not in content:  # ripgrep's marker for a long line: its bytes would have to be read to decide
            return None
        if needle in content:
            kept.append(line)
    return Matches(len(kept), b"".join(line + b"\n" for line in kept))


def _page_lines(
    target: Target, text: str, known: Matches, *, span: tuple[int, int], cache: SearchCache, deadline: Deadline
) -> list[LineMatch]:
    """Matching lines ``span`` (local indexes) of one artifact, fetching more of them when not yet known."""
    lo, hi = span
    block = known.block
    if known.known < hi:
        ahead = hi if hi > PREFIX_CAP else min(max(hi, 2 * known.known, FETCH_AHEAD), PREFIX_CAP)
        block = ripgrep.first(target.path, text, ahead, deadline)
        if ahead <= PREFIX_CAP:
            cache.put(text, target.record.sha256, Matches(known.count, block))
    fd = os.open(target.path, os.O_RDONLY)
    try:
        index = cache.line_index(target.record, fd)
        found: list[LineMatch] = []
        for hit in ripgrep.parse(block, lo, hi):
            if found and hit.byte_offset - found[-1].byte_offset < hit.byte_offset % BLOCK_BYTES:
                # Counting on from the previous match reads less than counting from the block start.
                since = found[-1].byte_offset
                number = found[-1].line_number + os.pread(fd, hit.byte_offset - since, since).count(b"\n")
            else:
                number = index.line_number(fd, hit.byte_offset)
            found.append(line_match(hit, number, text, fd))
        return found
    finally:
        os.close(fd)


def _vanished(targets: Sequence[Target], statuses: Sequence[FileStatus]) -> Target | None:
    """The first target whose stored file is no longer the one verified: removed, or removed and added again (the
    new file may even reuse the old inode number, but not its timestamps)."""
    for target, status in zip(targets, statuses, strict=True):
        try:
            if FileStatus.of(os.stat(target.path)) != status:
                return target
        except FileNotFoundError:
            return target
    return None


def search(
    targets: Sequence[Target],
    text: str,
    *,
    offset: int,
    limit: int,
    cache: SearchCache,
    verifier: Verifier,
    deadline: Deadline,
) -> SearchOutcome:
    """Count matching lines of ``text`` in every target and return the page ``[offset, offset + limit)``.

    The page runs through the targets in the order given, and through each artifact in line order.

    Raises:
        BytesMissing: a target's stored bytes vanished before or while it was searched (`bee artifact rm` ran):
            the caller asks the store what that means (:meth:`~bee_core.artifacts.store.ArtifactStore.recheck`).
        BeeError: ``hash_mismatch`` when a target's bytes were changed behind Bee's back.
        BeeError: ``deadline_exceeded``; ``internal`` when ripgrep is missing or fails.
    """
    statuses = [verifier.check(target.record, target.path) for target in targets]
    try:
        outcome = _search(targets, text, offset=offset, limit=limit, cache=cache, deadline=deadline)
    except (BeeError, OSError) as exc:
        # ripgrep fails on a file that vanished, and opening one raises: look at the files, never at the message.
        gone = _vanished(targets, statuses)
        if gone is None or (isinstance(exc, BeeError) and exc.code is not ErrorCode.INTERNAL):
            raise
        raise BytesMissing(gone.record) from exc
    for target, status in zip(targets, statuses, strict=True):
        verifier.still(target.record, target.path, status)
    return outcome


def _search(
    targets: Sequence[Target], text: str, *, offset: int, limit: int, cache: SearchCache, deadline: Deadline
) -> SearchOutcome:
    """:func:`search` once every target is verified."""
    known: dict[str, Matches] = {}
    for target in targets:
        found = cache.get(text, target.record.sha256)
        if found is None:  # a narrowed text: filter what a broader text's search listed, no new scan
            broader = cache.broader(text, target.record.sha256)
            found = _narrow(broader, text) if broader is not None else None
            if found is not None:
                cache.put(text, target.record.sha256, found)
        if found is not None:
            known[target.record.sha256] = found
    missing = [target for target in targets if target.record.sha256 not in known]
    if missing:
        deadline.check("searching artifacts")
        # The page most often lies in the first artifact; see _learn.
        want = (targets[0], offset + limit) if targets[0] in missing and offset + limit <= PREFIX_CAP else None
        known.update(_learn(missing, text, cache, deadline, want))

    outcome = SearchOutcome([(target.record, known[target.record.sha256].count) for target in targets])
    stop, seen = offset + limit, 0
    for target in targets:
        matches = known[target.record.sha256]
        span = (max(offset - seen, 0), min(stop - seen, matches.count))
        seen += matches.count
        if span[0] < span[1]:
            deadline.check("reading matching lines")
            lines = _page_lines(target, text, matches, span=span, cache=cache, deadline=deadline)
            outcome.page.extend((target.record, line) for line in lines)
        if seen >= stop:
            break
    return outcome
