"""Integrity of everything the design CLI recorded under a root, every failure reported (not just the first).

Checks, in order: each manifest (schema, its own digest, the bundle digest over its files); each stored file
(present, size and sha256 as recorded); the dependency graph (references to files the bundle does not contain,
elements naming unknown files or elements, cycles, element digests); each mapping's computed state (stale and
missing are failures); each visual spec (schema and consistency, reference images present and unchanged, sizes
as recorded). This is integrity, not screenshot comparison, and never approval.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from bee_contracts import BeeError, ErrorCode
from bee_design import digests
from bee_design.bundle.graph import dependency_order, find_cycles, spell
from bee_design.bundle.manifest import Manifest
from bee_design.bundle.store import BundleStore, check_id
from bee_design.envelope import SCHEMA_VERSION
from bee_design.layout import DesignFiles
from bee_design.mapping import MapFile, Mapping, state_of
from bee_design.visual.spec import consistency_problems, integrity_problems, load_spec, spec_names

if TYPE_CHECKING:
    from bee_contracts.shapes.design import DesignVerifyDataFailure, DesignVerifyResult


class _Report:
    def __init__(self) -> None:
        self.failures: list[DesignVerifyDataFailure] = []
        self.counts: Counter[str] = Counter()
        self.states: Counter[str] = Counter()

    def fail(self, check: str, code: ErrorCode, subject: str, message: str) -> None:
        self.failures.append(
            {"check": check, "code": code.value, "subject": subject, "message": message}  # type: ignore[typeddict-item]  # check is one of the literals the schema names
        )


def verify(files: DesignFiles, bundle: str | None = None) -> DesignVerifyResult:
    """Check the bundles (or ``bundle`` alone), the mappings and, unless ``bundle`` is given, the visual specs.

    Raises:
        BeeError: ``not_found`` for an unknown ``bundle`` (everything else is reported, not raised).
    """
    store = BundleStore(files)
    report = _Report()
    ids = store.ids()
    if bundle is not None:
        check_id(bundle)
        if bundle not in ids:
            store.load(bundle)  # raises not_found naming the imported bundles
        ids = [bundle]
    manifests: dict[str, Manifest] = {}
    for bundle_id in ids:
        report.counts["bundles"] += 1
        try:
            manifest = store.load(bundle_id)
        except BeeError as exc:
            report.fail("manifest", exc.code, bundle_id, exc.message)
            continue
        manifests[bundle_id] = manifest
        _check_files(store, manifest, report)
        _check_graph(manifest, report)
    _check_mappings(files, manifests, bundle, report)
    if bundle is None:
        _check_specs(files, report)
    return {
        "schemaVersion": SCHEMA_VERSION,
        "ok": True,
        "trusted": False,
        "acceptance": False,
        "data": {
            "intact": not report.failures,
            "checked": {
                "bundles": report.counts["bundles"],
                "files": report.counts["files"],
                "elements": report.counts["elements"],
                "mappings": report.counts["mappings"],
                "specs": report.counts["specs"],
            },
            "states": {
                "imported": report.states["imported"],
                "mapped": report.states["mapped"],
                "stale": report.states["stale"],
                "missing": report.states["missing"],
            },
            "failures": report.failures,
        },
    }


def _check_files(store: BundleStore, manifest: Manifest, report: _Report) -> None:
    recomputed = digests.of_pairs((entry.path, entry.sha256) for entry in manifest.files)
    if recomputed != manifest.digest:
        report.fail("manifest", ErrorCode.HASH_MISMATCH, manifest.bundle, "the bundle digest does not match its files")
    paths = [entry.path for entry in manifest.files]
    for path in sorted({p for p in paths if paths.count(p) > 1}):
        report.fail("manifest", ErrorCode.INVALID_ARGUMENT, f"{manifest.bundle}/{path}", "the file is listed twice")
    for entry in manifest.files:
        report.counts["files"] += 1
        problem = store.problem(entry)
        if problem is not None:
            code, message = problem
            report.fail("file", code, f"{manifest.bundle}/{entry.path}", message)


def _check_graph(manifest: Manifest, report: _Report) -> None:
    files = manifest.file_index
    for reference in manifest.references:
        if reference.status == "missing":
            where = "leaves the bundle" if reference.target is None else "is not in the bundle"
            report.fail(
                "graph",
                ErrorCode.NOT_FOUND,
                f"{manifest.bundle}/{reference.source}",
                f"references {reference.ref!r} ({reference.via}), which {where}",
            )
    edges: dict[str, list[str]] = {}
    sound = True
    for element in manifest.elements:
        report.counts["elements"] += 1
        subject = manifest.qualified(element.id)
        for path in {element.entry, *element.files} - set(files):
            sound = False
            report.fail("graph", ErrorCode.NOT_FOUND, subject, f"names file {path!r}, which the manifest does not list")
        for dependency in element.depends_on:
            if dependency not in manifest.element_index:
                sound = False
                report.fail("graph", ErrorCode.NOT_FOUND, subject, f"depends on unknown element {dependency!r}")
        edges[element.id] = [d for d in element.depends_on if d in manifest.element_index]
    cycles = find_cycles(edges)
    for cycle in cycles:
        report.fail(
            "graph",
            ErrorCode.INVALID_ARGUMENT,
            manifest.qualified(cycle[0]),
            f"dependency cycle: {spell([manifest.qualified(node) for node in cycle])}",
        )
    if cycles or not sound:
        return
    computed: dict[str, str] = {}
    for name in dependency_order(edges):
        element = manifest.element_index[name]
        pairs = [(path, files[path].sha256) for path in element.files]
        pairs += [(f"element:{dep}", computed[dep]) for dep in element.depends_on]
        computed[name] = digests.of_pairs(pairs)
        if computed[name] != element.digest:
            report.fail(
                "graph",
                ErrorCode.HASH_MISMATCH,
                manifest.qualified(name),
                "the element digest does not match its files and dependencies",
            )


def _check_mappings(files: DesignFiles, manifests: dict[str, Manifest], bundle: str | None, report: _Report) -> None:
    try:
        mappings: dict[str, Mapping] = MapFile(files).load()
    except BeeError as exc:
        report.fail("mapping", exc.code, "bee-design/map.json", exc.message)
        mappings = {}
    for manifest in manifests.values():
        for element in manifest.elements:
            qualified = manifest.qualified(element.id)
            state = state_of(files, element.digest, mappings.get(qualified))
            report.states[state.state] += 1
    for qualified, mapping in sorted(mappings.items()):
        owner, _, name = qualified.partition(":")
        if bundle is not None and owner != bundle:
            continue
        report.counts["mappings"] += 1
        owning = manifests.get(owner)
        current = owning.element_index.get(name) if owning else None
        state = state_of(files, current.digest if current else None, mapping)
        if current is None:
            report.states["missing"] += 1
        if state.state in ("stale", "missing"):
            code = ErrorCode.HASH_MISMATCH if state.state == "stale" else ErrorCode.NOT_FOUND
            report.fail("mapping", code, qualified, f"{state.state}: {'; '.join(state.reasons)}")


def _check_specs(files: DesignFiles, report: _Report) -> None:
    try:
        names = spec_names(files)
    except BeeError as exc:
        report.fail("spec", exc.code, "bee-design/specs", exc.message)
        return
    for name in names:
        report.counts["specs"] += 1
        try:
            spec, folder, _ = load_spec(files, name)
        except BeeError as exc:
            report.fail("spec", exc.code, name, exc.message)
            continue
        for message in consistency_problems(spec):
            report.fail("spec", ErrorCode.INVALID_ARGUMENT, name, message)
        for code, message in integrity_problems(files, folder, spec):
            report.fail("spec", code, name, message)
