"""Writing visual specs: references made from Bee's own evidence, regions set and removed, each under the root's
writer lock and written atomically (the model and its checks are in :mod:`.spec`)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from bee_contracts import BeeError, ErrorCode, invalid
from bee_design import digests, layout
from bee_design.capture import seal
from bee_design.capture.evidence import (
    EVIDENCE_FILE,
    PRODUCER,
    RECORD_MAX_BYTES,
    Capture,
    Evidence,
    file_name,
    intact,
    parse_evidence,
)
from bee_design.layout import DesignFiles
from bee_design.locking import writer
from bee_design.visual.images import png_size, read_png
from bee_design.visual.spec import (
    REFERENCES,
    SPEC_FILE,
    Reference,
    Region,
    Spec,
    Tolerance,
    check_name,
    consistency_problems,
    load_spec,
    parse_spec,
)
from bee_hostkit.files import write_atomic


def create_spec(
    files: DesignFiles,
    name: str,
    evidence_folder: Path,
    *,
    elements: list[str] | None = None,
    viewports: list[str] | None = None,
    compare: Tolerance | None = None,
    update: bool = False,
) -> Spec:
    """Make (or, with ``update``, refresh) spec ``name`` with reference images taken from an evidence folder.

    An update replaces the references it takes (keeping the others), and keeps the regions and the compare
    settings unless ``compare`` is given.

    Raises:
        BeeError: ``conflict`` when the spec exists and ``update`` is not set; ``invalid_argument`` for evidence
            Bee did not write in this root (no valid MAC from its evidence key), that changed since capture, whose
            images are not PNG within the limits, or that lacks a requested element or viewport.
    """
    check_name(name)
    where = f"{evidence_folder}/{EVIDENCE_FILE}"
    record_file = evidence_folder / EVIDENCE_FILE
    if not record_file.is_file():
        raise invalid(f"{evidence_folder} holds no {EVIDENCE_FILE}; make references from a `bee design capture` folder")
    if record_file.stat().st_size > RECORD_MAX_BYTES:
        raise invalid(f"{where} is over the {RECORD_MAX_BYTES}-byte limit for an evidence record; capture again")
    data = record_file.read_bytes()
    evidence = parse_evidence(data, where)
    if evidence.producer != PRODUCER:
        raise invalid(f"{where} was written by {evidence.producer!r}, not {PRODUCER!r}; capture with Bee")
    why = seal.unverified(files, json.loads(data))
    if why is not None:
        raise invalid(f"{where} {why}; references are made only from evidence captured in this root")
    chosen = _choose(evidence, elements, viewports, evidence_folder)
    with writer(files):
        folder = files.directory(layout.spec_dir(name), create=True)
        previous = parse_spec(name, (folder / SPEC_FILE).read_bytes()) if (folder / SPEC_FILE).is_file() else None
        if previous is not None and not update:
            raise BeeError(
                ErrorCode.CONFLICT,
                f"visual spec {name!r} exists; pass --update to replace its references from this evidence",
                details={"spec": name},
            )
        references = {(r.element, r.viewport): r for r in previous.references} if previous else {}
        for capture, data in chosen:
            target = file_name(capture.name, capture.viewport)
            write_atomic(folder / REFERENCES / target, data)
            references[capture.name, capture.viewport] = Reference(
                capture.name,
                capture.viewport,
                target,
                digests.of_bytes(data),
                capture.image_width,
                capture.image_height,
                capture.url,
                evidence.browser_version,
                tuple(font.key for font in capture.fonts),
            )
        spec = Spec(
            name=name,
            created_at=previous.created_at if previous else datetime.now(UTC).isoformat(timespec="seconds"),
            compare=compare or (previous.compare if previous else Tolerance()),
            references=tuple(references[key] for key in sorted(references)),
            regions=previous.regions if previous else (),
        )
        problems = consistency_problems(spec)
        if problems:
            raise invalid(f"the updated spec would be inconsistent: {problems[0]}")
        write_atomic(folder / SPEC_FILE, spec.to_bytes())
        _drop_unused(folder, spec)
    return spec


def _choose(
    evidence: Evidence, elements: list[str] | None, viewports: list[str] | None, folder: Path
) -> list[tuple[Capture, bytes]]:
    """The captures to make references from, each with its image (intact, a PNG of its recorded size)."""
    chosen = [
        c
        for c in evidence.captures
        if (not elements or c.name in elements) and (not viewports or c.viewport in viewports)
    ]
    for wanted, attribute in ((elements, "name"), (viewports, "viewport")):
        for value in wanted or []:
            if not any(getattr(c, attribute) == value for c in evidence.captures):
                raise invalid(
                    f"the evidence in {folder} has no {'element' if attribute == 'name' else 'viewport'} {value!r}"
                )
    if not chosen:
        raise invalid(f"the evidence in {folder} holds no capture to make references from")
    images = []
    for capture in chosen:
        path = folder / capture.file
        data = read_png(path, f"{folder}/{capture.file}") if path.is_file() else None
        if data is None or not intact(data, capture):
            raise invalid(f"{folder}/{capture.file} changed since capture (or is gone); capture again")
        if png_size(data, f"{folder}/{capture.file}") != (capture.image_width, capture.image_height):
            raise invalid(f"{folder}/{capture.file} is not of the size its record gives; capture again")
        images.append((capture, data))
    return images


def _drop_unused(folder: Path, spec: Spec) -> None:
    used = {reference.file for reference in spec.references}
    for path in (folder / REFERENCES).glob("*.png"):
        if path.name not in used:
            path.unlink(missing_ok=True)


def set_region(files: DesignFiles, name: str, region: Region) -> Spec:
    """Add region ``region`` to spec ``name``, or replace the region of that name.

    Raises:
        BeeError: ``not_found``; ``invalid_argument`` when the region leaves an image or matches no reference.
    """
    with writer(files):
        spec, folder, _ = load_spec(files, name)
        regions = [r for r in spec.regions if r.name != region.name] + [region]
        updated = replace(spec, regions=tuple(regions))
        problems = consistency_problems(updated)
        if problems:
            raise invalid(problems[0])
        write_atomic(files.directory(folder) / SPEC_FILE, updated.to_bytes())
    return updated


def remove_region(files: DesignFiles, name: str, region: str) -> Spec:
    """Remove region ``region`` from spec ``name``.

    Raises:
        BeeError: ``not_found`` for an unknown spec or region.
    """
    with writer(files):
        spec, folder, _ = load_spec(files, name)
        if all(r.name != region for r in spec.regions):
            raise BeeError(ErrorCode.NOT_FOUND, f"spec {name!r} has no region {region!r}")
        updated = replace(spec, regions=tuple(r for r in spec.regions if r.name != region))
        write_atomic(files.directory(folder) / SPEC_FILE, updated.to_bytes())
    return updated
