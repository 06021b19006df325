"""The context of one design element, fitted to a byte budget.

Two tiers, in order: first the element itself — its entry file, its other own files and the source it is mapped
to — then the files of the elements it depends on (breadth first). Within a tier, first the metadata of each
(path, media type, size, sha256) as far as it fits (``omittedFiles`` counts the rest), then the texts in the same
order: the text where the budget runs out is cut at a line boundary, and later texts are marked
``omitted: "budget"``. Binary files never carry text. ``complete`` is false whenever anything is cut, omitted or
missing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from bee_contracts import BeeError, ErrorCode
from bee_design import digests
from bee_design.bundle.building import is_text
from bee_design.bundle.manifest import Element, Manifest
from bee_design.envelope import SCHEMA_VERSION
from bee_design.inventory import Inventory
from bee_hostkit import Budget, with_size

if TYPE_CHECKING:
    from bee_contracts.shapes.design import DesignSliceDataMissingItem, DesignSliceResult

#: Source files larger than this are never read whole for a slice (their text would not fit any budget).
_MAX_TEXT_READ: Final = 1024 * 1024
#: Stand-in for resultBytes while measuring: as many digits as any size within the largest budget.
_SIZE_PLACEHOLDER: Final = 99999


@dataclass
class _Entry:
    """A file or source that may go into the slice: its list, its metadata and, for text, its content."""

    kind: str  # "files" or "sources"
    item: dict[str, Any]
    text: str | None = None
    #: The text is already a prefix (a source file too large to read whole).
    partial: bool = False


def _decoded(data: bytes) -> str | None:
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _closure(manifest: Manifest, element: Element) -> list[Element]:
    """The elements ``element`` depends on, breadth first, each once."""
    seen = {element.id}
    order: list[Element] = []
    queue = deque(element.depends_on)
    while queue:
        name = queue.popleft()
        if name in seen or name not in manifest.element_index:
            continue
        seen.add(name)
        dependency = manifest.element_index[name]
        order.append(dependency)
        queue.extend(dependency.depends_on)
    return order


class _Collector:
    """Gathers the entries of a slice in priority order, and what is missing."""

    def __init__(self, inventory: Inventory, manifest: Manifest) -> None:
        self.inventory = inventory
        self.manifest = manifest
        self.entries: list[_Entry] = []
        self.missing: list[DesignSliceDataMissingItem] = []

    def element_files(self, owner: Element, entry_role: str, role: str) -> None:
        manifest = self.manifest
        for path in owner.files:
            entry = manifest.file_index[path]
            item: dict[str, Any] = {
                "path": path,
                "element": manifest.qualified(owner.id),
                "role": entry_role if path == owner.entry else role,
                "mediaType": entry.media_type,
                "size": entry.size,
                "sha256": entry.sha256,
            }
            data = self.inventory.store.read(manifest, path)  # verified: a damaged store fails the call
            text = _decoded(data) if is_text(entry.media_type) else None
            if text is None:
                item["omitted"] = "binary"
            self.entries.append(_Entry("files", item, text))
            for ref in manifest.references:
                if ref.source == path and ref.status == "missing":
                    reason = "the bundle does not contain it" if ref.target else "it leaves the bundle"
                    self.missing.append({"what": "reference", "subject": f"{path} → {ref.ref}", "reason": reason})

    def sources(self, qualified: str) -> None:
        mapping = self.inventory.mappings.get(qualified)
        if mapping is None:
            reason = "not mapped to source (bee design map ID --to PATH)"
            self.missing.append({"what": "mapping", "subject": qualified, "reason": reason})
            return
        for source in mapping.sources:
            item: dict[str, Any] = {
                "path": source.path,
                "symbol": source.symbol,
                "sha256": None,
                "mappedSha256": source.sha256,
                "size": None,
            }
            entry = _Entry("sources", item)
            self.entries.append(entry)
            try:
                with self.inventory.files.open(source.path) as file:
                    size, pieces = file.size, file.chunks()
                    data = _prefix(pieces, _MAX_TEXT_READ + 1)
                    digest = digests.of_chunks([data, *pieces])[0] if len(data) > _MAX_TEXT_READ else None
            except BeeError as exc:
                item["omitted"] = "gone"
                reason = "the file is gone" if exc.code == ErrorCode.NOT_FOUND else exc.message
                self.missing.append({"what": "source", "subject": source.path, "reason": reason})
                continue
            if digest is not None:  # too large to read whole: hashed in full, text cut
                item["sha256"], item["size"] = digest, size
                entry.text, entry.partial = data[:_MAX_TEXT_READ].decode("utf-8", errors="ignore"), True
                continue
            item["sha256"], item["size"] = digests.of_bytes(data), len(data)
            entry.text = _decoded(data)
            if entry.text is None:
                item["omitted"] = "binary"


def _prefix(pieces: Iterator[bytes], limit: int) -> bytes:
    """At least ``limit`` bytes from ``pieces`` when there are that many (the rest stays in the iterator)."""
    taken: list[bytes] = []
    size = 0
    for piece in pieces:
        taken.append(piece)
        size += len(piece)
        if size >= limit:
            break
    return b"".join(taken)


def build_slice(inventory: Inventory, qualified: str, budget_bytes: int) -> DesignSliceResult:
    """The slice of element ``qualified`` within ``budget_bytes``.

    Raises:
        BeeError: ``not_found`` for an unknown bundle or element, or a stored file that is gone;
            ``hash_mismatch`` for a stored file or manifest changed after import; ``budget_exceeded`` when not even
            the element's own facts (state, dependencies, what is missing) fit.
    """
    manifest, element = inventory.element(qualified)
    state = inventory.state(manifest, element)
    collector = _Collector(inventory, manifest)
    collector.element_files(element, "entry", "own")
    collector.sources(qualified)
    own = len(collector.entries)
    for dependency in _closure(manifest, element):
        collector.element_files(dependency, "dependency", "dependency")
    entries = collector.entries
    data: dict[str, Any] = {
        "id": qualified,
        "kind": element.kind,
        "state": state.state,
        "reasons": state.reasons,
        "complete": False,
        "dependsOn": [manifest.qualified(dep) for dep in element.depends_on],
        "files": [],
        "sources": [],
        "omittedFiles": len(entries),
        "missing": collector.missing,
    }
    structured: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "ok": True,
        "trusted": False,
        "acceptance": False,
        "resultBytes": _SIZE_PLACEHOLDER,
        "data": data,
    }
    budget = Budget(budget_bytes)
    budget.require(
        structured,
        what=f"the facts of {qualified} (state, dependencies, what is missing)",
        hint="Raise budgetBytes (up to 65536)",
    )
    whole = True
    for tier in (entries[:own], entries[own:]):
        placed = _place_metadata(structured, tier, budget)
        texts_whole = _fill_texts(structured, tier[:placed], budget)
        whole = whole and placed == len(tier) and texts_whole
    data["complete"] = whole and not collector.missing
    result: DesignSliceResult = with_size(structured)  # type: ignore[assignment]  # built as a plain dict
    return result


def _fits(budget: Budget, structured: dict[str, Any]) -> bool:
    return budget.measure(structured) <= budget.limit


def _place_metadata(structured: dict[str, Any], entries: list[_Entry], budget: Budget) -> int:
    """Add each entry's metadata (text marked omitted) while it fits; return how many went in."""
    data = structured["data"]
    for placed, entry in enumerate(entries):
        if entry.text is not None:
            entry.item["omitted"] = "budget"
        data[entry.kind].append(entry.item)
        data["omittedFiles"] -= 1
        if not _fits(budget, structured):
            data[entry.kind].pop()
            data["omittedFiles"] += 1
            return placed
    return len(entries)


def _fill_texts(structured: dict[str, Any], entries: list[_Entry], budget: Budget) -> bool:
    """Add texts in order while they fit; cut the first that does not. True when every text went in whole."""
    whole = True
    for entry in entries:
        if entry.text is None:
            continue
        item = entry.item
        del item["omitted"]
        item["text"] = entry.text
        if entry.partial:
            item["cut"] = True
            whole = False
        if _fits(budget, structured):
            continue
        item["cut"] = True
        prefix = _longest_prefix(structured, item, entry.text, budget)
        if prefix:
            item["text"] = prefix
        else:
            del item["text"], item["cut"]
            item["omitted"] = "budget"
        return False  # every later text keeps omitted: "budget"
    return whole


def _longest_prefix(structured: dict[str, Any], item: dict[str, Any], text: str, budget: Budget) -> str:
    """The longest prefix of ``text`` (ending at a line break when there is one) that keeps the result in budget."""
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        item["text"] = text[:middle]
        if _fits(budget, structured):
            low = middle
        else:
            high = middle - 1
    prefix = text[:low]
    newline = prefix.rfind("\n")
    return prefix[: newline + 1] if newline > 0 else prefix
