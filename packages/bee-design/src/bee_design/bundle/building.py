"""Building a manifest from the files of a bundle: references, elements, their graph and their digests.

Elements are declared in ``bee-design.json`` at the bundle root when it is there; otherwise they are discovered:
every HTML file is a screen (a component when a folder on its path is called ``components``), every stylesheet
a style, every image and font an asset, each named after its path (lowercased; characters outside
``a-z 0-9 . _ / -`` become ``-``). An element owns its entry file and the files reached from it that are not
another element's entry; reaching another element's entry makes it a dependency. An element's digest covers its
own files and the digests of the elements it depends on, so a change anywhere below it changes it.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from bee_contracts import invalid
from bee_design import digests
from bee_design.bundle.graph import dependency_order, find_cycles, shortened, spell
from bee_design.bundle.manifest import Dependency, Element, FileEntry, Kind, Manifest
from bee_design.bundle.reading import RawBundle
from bee_design.bundle.references import Reference, css_references, html_references, resolve
from bee_design.schemas import validator

#: The optional declaration file at a bundle's root.
DECLARATION: Final = "bee-design.json"

MEDIA_TYPES: Final = {
    ".html": "text/html",
    ".htm": "text/html",
    ".css": "text/css",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".avif": "image/avif",
    ".ico": "image/x-icon",
    ".bmp": "image/bmp",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".eot": "application/vnd.ms-fontobject",
    ".txt": "text/plain",
    ".md": "text/markdown",
}
_ASSET_PREFIXES = ("image/", "font/")
_ID_MAX = 255
_MAX_CYCLES_SHOWN = 10


def media_type(path: str) -> str:
    return MEDIA_TYPES.get(posixpath.splitext(path)[1].lower(), "application/octet-stream")


def is_text(media: str) -> bool:
    return media.startswith("text/") or media in {"application/json", "image/svg+xml"}


def _scan(path: str, data: bytes) -> list[Reference]:
    media = media_type(path)
    if media not in {"text/html", "text/css", "image/svg+xml"}:
        return []
    text = data.decode("utf-8", errors="replace")
    return css_references(text) if media == "text/css" else html_references(text)


@dataclass(frozen=True)
class _Planned:
    """An element before its own files, dependencies and digest are known."""

    id: str
    kind: Kind
    entry: str
    declared: bool
    files: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()


def _discovered_kind(path: str) -> Kind | None:
    media = media_type(path)
    if media == "text/html":
        folders = path.split("/")[:-1]
        return "component" if "components" in folders else "screen"
    if media == "text/css":
        return "style"
    if media.startswith(_ASSET_PREFIXES) or media == "application/vnd.ms-fontobject":
        return "asset"
    return None


def _slug(path: str) -> str:
    slug = re.sub(r"[^a-z0-9._/-]+", "-", path.lower())
    if not re.match(r"[a-z0-9_]", slug):
        slug = "_" + slug
    return slug[:_ID_MAX]


def _discover(paths: Iterable[str]) -> list[_Planned]:
    planned = []
    taken: set[str] = set()
    last: dict[str, int] = {}  # the last suffix tried for each base, so many clashing paths cost no rescans
    for path in sorted(paths):
        kind = _discovered_kind(path)
        if kind is None:
            continue
        base = _slug(path)
        candidate, n = base, last.get(base, 1)
        while candidate in taken:
            n += 1
            candidate = f"{base[: _ID_MAX - 6]}-{n}"
        last[base] = n
        taken.add(candidate)
        planned.append(_Planned(candidate, kind, path, declared=False))
    return planned


def _declared(data: bytes, files: set[str]) -> list[_Planned]:
    where = f"{DECLARATION} in the bundle"
    try:
        raw: Any = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise invalid(f"{where} is not valid JSON ({exc}); fix it or remove it to discover elements") from None
    validator("bundle-declaration", where).check(raw)
    planned = []
    ids = Counter(entry["id"] for entry in raw["elements"])
    entries = Counter(entry["entry"] for entry in raw["elements"])
    for entry in raw["elements"]:
        element = entry["id"]
        if ids[element] > 1:
            raise invalid(f"{where} declares element {element!r} twice; ids must be unique", element=element)
        if entries[entry["entry"]] > 1:
            raise invalid(
                f"{where}: {entry['entry']!r} is the entry of more than one element; give each element its own "
                "entry file",
                element=element,
            )
        if ".." in element.split("/") or "//" in element or element.endswith("/"):
            raise invalid(f"{where}: element id {element!r} must not contain '..', '//' or end in '/'")
        for path in [entry["entry"], *entry.get("files", [])]:
            if path not in files:
                raise invalid(
                    f"{where}: element {element!r} names {path!r}, which is not a file of the bundle",
                    element=element,
                    file=path,
                )
        for dependency in entry.get("dependsOn", []):
            if dependency not in ids:
                raise invalid(
                    f"{where}: element {element!r} depends on {dependency!r}, which is not declared",
                    element=element,
                    dependsOn=dependency,
                )
        planned.append(
            _Planned(
                element,
                entry["kind"],
                entry["entry"],
                declared=True,
                files=tuple(entry.get("files", [])),
                depends_on=tuple(entry.get("dependsOn", [])),
            )
        )
    return planned


def build_manifest(raw: RawBundle, bundle: str, imported_at: str) -> Manifest:
    """The manifest of ``raw`` imported as ``bundle``.

    Raises:
        BeeError: ``invalid_argument`` for a malformed declaration or a dependency cycle (spelled out).
    """
    data = {f.path: f.data for f in raw.files}
    paths = set(data)
    entries = tuple(FileEntry(f.path, digests.of_bytes(f.data), len(f.data), media_type(f.path)) for f in raw.files)
    references, edges = _file_references(data, paths)
    planned = _declared(data[DECLARATION], paths) if DECLARATION in paths else _discover(paths)
    references += _declared_references(planned)
    owned, uses = _ownership(planned, edges)
    _refuse_cycles(bundle, uses)
    digest_of = _element_digests(owned, uses, entries)
    elements = tuple(
        Element(p.id, p.kind, p.entry, p.declared, owned[p.id], tuple(sorted(uses[p.id])), digest_of[p.id])
        for p in sorted(planned, key=lambda p: p.id)
    )
    return Manifest(
        bundle=bundle,
        imported_at=imported_at,
        source_kind=raw.kind,
        source_name=raw.name,
        digest=digests.of_pairs((entry.path, entry.sha256) for entry in entries),
        files=entries,
        references=tuple(references),
        elements=elements,
    )


def _file_references(data: dict[str, bytes], paths: set[str]) -> tuple[list[Dependency], dict[str, list[str]]]:
    """Every reference the files make, in path order, and the edges between files: each file to the files its
    references resolve to (a file naming itself is no edge)."""
    references: list[Dependency] = []
    edges: dict[str, list[str]] = {path: [] for path in sorted(paths)}
    for path in sorted(paths):
        for reference in _scan(path, data[path]):
            status, target = resolve(path, reference.ref, paths)
            references.append(Dependency(path, reference.ref, reference.via, status, target))
            if status == "resolved" and target is not None and target != path:
                edges[path].append(target)
    return references, edges


def _declared_references(planned: list[_Planned]) -> list[Dependency]:
    """The references a declaration makes: each element's entry to its declared files and to the entries of the
    elements it depends on."""
    by_id = {p.id: p for p in planned}
    references: list[Dependency] = []
    for p in planned:
        for path in p.files:
            references.append(Dependency(p.entry, path, "declared", "resolved", path))
        for dependency in p.depends_on:
            references.append(Dependency(p.entry, dependency, "declared", "resolved", by_id[dependency].entry))
    return references


def _ownership(
    planned: list[_Planned], edges: dict[str, list[str]]
) -> tuple[dict[str, tuple[str, ...]], dict[str, set[str]]]:
    """Per element id: the files it owns, and the elements it uses (reached or declared)."""
    by_entry = {p.entry: p.id for p in planned}
    owned: dict[str, tuple[str, ...]] = {}
    uses: dict[str, set[str]] = {}
    for p in planned:
        own, used = _reach(p, edges, by_entry)
        owned[p.id] = own
        uses[p.id] = used | set(p.depends_on)
    return owned, uses


def _refuse_cycles(bundle: str, uses: dict[str, set[str]]) -> None:
    """Refuse elements that depend on each other in a cycle: no digest could cover what it depends on.

    Raises:
        BeeError: ``invalid_argument``, spelling out the first cycles found.
    """
    cycles = [[f"{bundle}:{node}" for node in cycle] for cycle in find_cycles(uses, limit=_MAX_CYCLES_SHOWN)]
    if not cycles:
        return
    spelled = "; ".join(spell(cycle) for cycle in cycles)
    more = f" (the first {_MAX_CYCLES_SHOWN} shown)" if len(cycles) == _MAX_CYCLES_SHOWN else ""
    raise invalid(
        f"the bundle's elements depend on each other in a cycle: {spelled}{more}. Break the cycle in the "
        "design (a stylesheet importing itself through others, frames loading each other, or dependsOn in "
        f"{DECLARATION})",
        cycles=[shortened(cycle) for cycle in cycles],
    )


def _element_digests(
    owned: dict[str, tuple[str, ...]], uses: dict[str, set[str]], entries: tuple[FileEntry, ...]
) -> dict[str, str]:
    """Each element's digest over its own files and the digests of the elements it uses, so a change anywhere
    below an element changes it (taken in dependency order: what an element uses is digested first)."""
    digest_of: dict[str, str] = {}
    sha = {entry.path: entry.sha256 for entry in entries}
    for element in dependency_order(uses):
        pairs = [(path, sha[path]) for path in owned[element]]
        pairs += [(f"element:{dep}", digest_of[dep]) for dep in uses[element]]
        digest_of[element] = digests.of_pairs(pairs)
    return digest_of


def _reach(
    element: _Planned, edges: dict[str, list[str]], by_entry: dict[str, str]
) -> tuple[tuple[str, ...], set[str]]:
    """The files ``element`` owns (in discovery order) and the other elements it reaches directly."""
    own = [element.entry]
    seen = {element.entry}
    used: set[str] = set()
    queue = deque([element.entry])
    for path in element.files:
        other = by_entry.get(path)
        if other is not None and other != element.id:
            used.add(other)
            continue
        queue.append(path)
        if path not in seen:
            seen.add(path)
            own.append(path)
    while queue:
        current = queue.popleft()
        for target in edges.get(current, ()):
            other = by_entry.get(target)
            if other is not None and other != element.id:
                used.add(other)
            elif target not in seen:
                seen.add(target)
                own.append(target)
                queue.append(target)
    return tuple(own), used
