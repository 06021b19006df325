"""The visual report: a spec's reference images against captured evidence, judged area by area.

Nothing here launches a browser or trusts the evidence: the assessment says what differs and what could not be
checked, and it is never approval. Findings come per element, viewport and area (the page outside every region,
then each region); limitations say what weakens the assessment. The decision is ``fail`` when some finding
fails, else ``inconclusive`` when a limitation leaves something unchecked (or nothing was compared), else
``pass``.

Evidence is ``verified`` only when its ``evidence.json`` carries a valid MAC from this root's evidence key
(:mod:`bee_design.capture.seal`) and every screenshot still has its recorded sha256. Images are PNG only, each
screenshot's header checked against its reference's size and the pixel limit before either image is decoded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

import numpy as np

from bee_contracts import BeeError, ErrorCode, invalid
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
from bee_design.envelope import SCHEMA_VERSION
from bee_design.layout import DesignFiles
from bee_design.visual.boxes import boxes
from bee_design.visual.diff import Indices, PixelDiff, compare
from bee_design.visual.images import check_file_size, decode_rgba, png_size
from bee_design.visual.shift import detect_shift
from bee_design.visual.spec import Reference, Region, Spec, Tolerance, integrity_problems, load_spec, read_reference

if TYPE_CHECKING:
    from bee_contracts.shapes.design import VisualReportFinding, VisualReportLimitation, VisualReportResult

#: Limitations that leave part of the assessment unchecked (the others only inform).
_BLOCKING: Final = frozenset(
    {"evidence-unverified", "evidence-changed", "missing-evidence", "browser-mismatch", "font-mismatch"}
)


@dataclass
class _Evidence:
    """The evidence folder as far as it can be read: its record (if any) and how to read each screenshot."""

    files: DesignFiles
    folder: str
    record: Evidence | None
    verified: bool
    limitations: list[VisualReportLimitation] = field(default_factory=list)

    def capture(self, reference: Reference) -> tuple[str, Capture | None] | None:
        """The screenshot file of ``reference``'s element and viewport, and its record (None without one)."""
        if self.record is not None:
            for capture in self.record.captures:
                if capture.name == reference.element and capture.viewport == reference.viewport:
                    return capture.file, capture
            return None
        name = file_name(reference.element, reference.viewport)
        try:
            self.read(name)
        except BeeError as exc:
            if exc.code == ErrorCode.NOT_FOUND:
                return None
            raise
        return name, None

    def read(self, name: str) -> bytes:
        """A screenshot's bytes, refused before reading when the file is over the image byte limit."""
        with self.files.open_evidence(self.folder, name) as file:
            check_file_size(file.size, f"{self.folder}/{name}")
            return file.read()


def _limitation(
    kind: str, message: str, element: str | None = None, viewport: str | None = None
) -> VisualReportLimitation:
    return {"kind": kind, "message": message, "element": element, "viewport": viewport}  # type: ignore[typeddict-item]  # kind: a literal of the schema


def _open_evidence(files: DesignFiles, given: str) -> _Evidence:
    folder = given.strip("/")
    try:
        with files.open_evidence(folder, EVIDENCE_FILE) as file:
            if file.size > RECORD_MAX_BYTES:
                raise invalid(
                    f"{given}/{EVIDENCE_FILE} is {file.size} bytes, over the {RECORD_MAX_BYTES}-byte limit for an "
                    "evidence record; `bee design capture` writes a few KiB per screenshot"
                )
            data: bytes | None = file.read()
    except BeeError as exc:
        if exc.code != ErrorCode.NOT_FOUND:
            raise
        if not files.evidence_exists(folder):
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"no evidence folder {given!r} under the root; pass the folder `bee design capture --out` wrote, "
                "relative to the root",
                details={"evidence": given},
            ) from None
        data = None
    if data is None:
        note = (
            f"{given} has no {EVIDENCE_FILE}: these images were not produced by bee design capture (or their record "
            "is gone); nothing vouches for how they were taken"
        )
        return _Evidence(files, folder, None, False, [_limitation("evidence-unverified", note)])
    try:
        record = parse_evidence(data, f"{given}/{EVIDENCE_FILE}")
    except BeeError as exc:
        return _Evidence(files, folder, None, False, [_limitation("evidence-unverified", exc.message)])
    if record.producer != PRODUCER:
        note = f"{given}/{EVIDENCE_FILE} says it was written by {record.producer!r}, not {PRODUCER}"
        return _Evidence(files, folder, record, False, [_limitation("evidence-unverified", note)])
    why = seal.unverified(files, json.loads(data))  # parsed and schema-checked just above
    if why is not None:
        note = f"{given}/{EVIDENCE_FILE} {why}"
        return _Evidence(files, folder, record, False, [_limitation("evidence-unverified", note)])
    return _Evidence(files, folder, record, True)


def build_report(
    files: DesignFiles,
    spec_name: str,
    evidence: str,
    elements: list[str] | None = None,
    viewports: list[str] | None = None,
) -> VisualReportResult:
    """Compare the evidence folder ``evidence`` (relative to ``root``) with spec ``spec_name``.

    Raises:
        BeeError: ``not_found`` for an unknown spec or evidence folder; ``invalid_argument`` for a malformed spec,
            or an element or viewport filter the spec does not have; ``hash_mismatch``/``not_found`` for reference
            images changed or gone since the spec recorded them; ``outside_root`` for paths leaving the root.
    """
    spec, folder, spec_digest = load_spec(files, spec_name)
    problems = integrity_problems(files, folder, spec)
    if problems:
        code, message = problems[0]
        raise BeeError(code, f"visual spec {spec_name!r}: {message}; restore it or make the spec again")
    references = _selected(spec, elements, viewports)
    seen = _open_evidence(files, evidence)
    findings, limitations = _judge_references(files, folder, spec, references, seen)
    # A filtered report leaves captures out on purpose: only a whole one says what the spec does not cover.
    if not elements and not viewports:
        limitations.extend(_unspecified_evidence(spec, seen))
    statuses = [finding["status"] for finding in findings]
    return {
        "schemaVersion": SCHEMA_VERSION,
        "ok": True,
        "trusted": False,
        "acceptance": False,
        "decision": _decision(findings, limitations),
        "spec": {"name": spec.name, "path": folder, "digest": spec_digest},
        "evidence": {
            "path": seen.folder,
            "producer": seen.record.producer if seen.record else None,
            "browser": seen.record.browser_version if seen.record else None,
            "verified": seen.verified and not any(item["kind"] == "evidence-changed" for item in limitations),
        },
        "summary": {
            "compared": sum(status != "ignored" for status in statuses),
            "passed": statuses.count("pass"),
            "failed": statuses.count("fail"),
            "ignored": statuses.count("ignored"),
        },
        "findings": findings,
        "limitations": limitations,
    }


def _judge_references(
    files: DesignFiles, folder: str, spec: Spec, references: list[Reference], seen: _Evidence
) -> tuple[list[VisualReportFinding], list[VisualReportLimitation]]:
    """Each reference judged against its screenshot: the findings, and the limitations in the order they arose
    (the evidence's own, then each reference's, then one per browser change)."""
    findings: list[VisualReportFinding] = []
    limitations = list(seen.limitations)
    # A browser change is said once per pair of versions, however many references it touches.
    browsers: set[tuple[str, str]] = set()
    for reference in references:
        located = seen.capture(reference)
        if located is None:
            limitations.append(
                _limitation(
                    "missing-evidence",
                    f"no screenshot of {reference.element} at viewport {reference.viewport} in the evidence",
                    reference.element,
                    reference.viewport,
                )
            )
            continue
        name, capture = located
        shot = seen.read(name)
        if capture is not None:
            limitations.extend(_capture_limitations(seen, reference, capture, shot))
            browser = seen.record.browser_version if seen.record else None
            if reference.browser and browser and reference.browser != browser:
                browsers.add((reference.browser, browser))
        findings.extend(_judge(spec, reference, read_reference(files, folder, reference), shot))
    for then, now in sorted(browsers):
        limitations.append(
            _limitation("browser-mismatch", f"references were taken with Chromium {then}, the evidence with {now}")
        )
    return findings, limitations


def _capture_limitations(
    seen: _Evidence, reference: Reference, capture: Capture, shot: bytes
) -> list[VisualReportLimitation]:
    """What a recorded screenshot's record says against it: bytes changed since capture, other fonts matched."""
    limitations: list[VisualReportLimitation] = []
    if seen.verified and not intact(shot, capture):
        limitations.append(
            _limitation(
                "evidence-changed",
                f"{capture.file} no longer matches the sha256 recorded at capture",
                reference.element,
                reference.viewport,
            )
        )
    limitations.extend(_font_limitations(reference, capture))
    return limitations


def _unspecified_evidence(spec: Spec, seen: _Evidence) -> list[VisualReportLimitation]:
    """The recorded captures the spec has no reference for (not assessed), as one limitation, if there are any."""
    if seen.record is None:
        return []
    specified = {(r.element, r.viewport) for r in spec.references}
    extra = sorted(f"{c.name}@{c.viewport}" for c in seen.record.captures if (c.name, c.viewport) not in specified)
    if not extra:
        return []
    return [_limitation("unspecified-evidence", f"captured but not in the spec (not assessed): {', '.join(extra)}")]


def _decision(
    findings: list[VisualReportFinding], limitations: list[VisualReportLimitation]
) -> Literal["pass", "fail", "inconclusive"]:
    """``fail`` when a finding fails, else ``inconclusive`` when something went unchecked, else ``pass``."""
    if any(finding["status"] == "fail" for finding in findings):
        return "fail"
    if any(item["kind"] in _BLOCKING for item in limitations) or not findings:
        return "inconclusive"
    return "pass"


def _selected(spec: Spec, elements: list[str] | None, viewports: list[str] | None) -> list[Reference]:
    for wanted, known, what in (
        (elements, {r.element for r in spec.references}, "element"),
        (viewports, {r.viewport for r in spec.references}, "viewport"),
    ):
        unknown = sorted(set(wanted or []) - known)
        if unknown:
            raise invalid(
                f"visual spec {spec.name!r} has no {what} {unknown[0]!r}; it has: {', '.join(sorted(known))}",
                **{what: unknown[0]},
            )
    return [
        r
        for r in spec.references
        if (not elements or r.element in elements) and (not viewports or r.viewport in viewports)
    ]


def _font_limitations(reference: Reference, capture: Capture) -> list[VisualReportLimitation]:
    expected, found = set(reference.fonts), {font.key for font in capture.fonts}
    if not expected or expected == found:
        return []
    parts = []
    if expected - found:
        parts.append(f"not used now: {', '.join(sorted(expected - found))}")
    if found - expected:
        parts.append(f"used now: {', '.join(sorted(found - expected))}")
    return [
        _limitation(
            "font-mismatch",
            f"the browser matched other fonts than for the reference ({'; '.join(parts)})",
            reference.element,
            reference.viewport,
        )
    ]


def _finding(
    reference: Reference, region: str | None, tolerance: Tolerance, size: list[int], evidence_size: list[int]
) -> VisualReportFinding:
    return {
        "element": reference.element,
        "viewport": reference.viewport,
        "region": region,
        "status": "pass",
        "reasons": [],
        "comparedPixels": 0,
        "differingPixels": 0,
        "antialiasedPixels": 0,
        "ratio": 0.0,
        "tolerance": tolerance.to_json(),  # type: ignore[typeddict-item]  # the same four keys
        "boxes": [],
        "moreBoxes": 0,
        "shift": None,
        "referenceSize": size,
        "evidenceSize": evidence_size,
    }


def _judge(spec: Spec, reference: Reference, expected_png: bytes, seen_png: bytes) -> list[VisualReportFinding]:
    label = f"{reference.element} at {reference.viewport}"
    # The screenshot's header against the reference's size (which integrity_problems checked against the
    # reference's own header) and the pixel limit, before either image is decoded.
    size = [reference.width, reference.height]
    seen_size = list(png_size(seen_png, f"the screenshot of {label}"))
    if seen_size != size:
        finding = _finding(reference, None, spec.compare, size, seen_size)
        finding["status"] = "fail"
        finding["reasons"] = [
            f"sizes differ: reference {size[0]}×{size[1]}, evidence {seen_size[0]}×{seen_size[1]}; nothing was "
            "compared (capture at the spec's viewport, or update the reference)"
        ]
        return [finding]
    regions = [r for r in spec.regions if r.applies_to(reference.element, reference.viewport)]
    # One comparison serves every area: it keeps the pixels over the lowest threshold any of them uses.
    floor = min([spec.compare.threshold, *(r.tolerance(spec.compare).threshold for r in regions if not r.ignore)])
    expected = decode_rgba(expected_png, f"the reference of {label}")
    # The same bytes are the same pixels: decoded once (which checks them), compared without a pass over them.
    seen = expected if seen_png == expected_png else decode_rgba(seen_png, f"the screenshot of {label}")
    diff = compare(expected, seen, threshold=floor)
    width, height = size
    covered = np.zeros((height, width), dtype=bool)
    ignored = np.zeros((height, width), dtype=bool)
    for region in regions:
        x, y, w, h = region.box
        covered[y : y + h, x : x + w] = True
        if region.ignore:
            ignored[y : y + h, x : x + w] = True
    flat_covered, flat_ignored = covered.reshape(-1), ignored.reshape(-1)
    outside = np.flatnonzero(~flat_covered[diff.positions])
    page_area = int(np.count_nonzero(~covered))
    findings = [
        _scope(diff, reference, region=None, tolerance=spec.compare, members=outside, area=page_area, size=size)
    ]
    for region in sorted(regions, key=lambda r: r.name):
        x, y, w, h = region.box
        ys, xs = diff.ys, diff.xs
        inside = (xs >= x) & (xs < x + w) & (ys >= y) & (ys < y + h)
        if region.ignore:
            finding = _finding(reference, region.name, spec.compare, size, size)
            finding["status"] = "ignored"
            finding["reasons"] = ["an ignored region (a mask): nothing in it is judged"]
            findings.append(finding)
            continue
        members = np.flatnonzero(inside & ~flat_ignored[diff.positions])
        area = int(np.count_nonzero(~ignored[y : y + h, x : x + w]))
        tolerance = region.tolerance(spec.compare)
        findings.append(
            _scope(diff, reference, region=region, tolerance=tolerance, members=members, area=area, size=size)
        )
    return findings


def _scope(
    diff: PixelDiff,
    reference: Reference,
    *,
    region: Region | None,
    tolerance: Tolerance,
    members: Indices,
    area: int,
    size: list[int],
) -> VisualReportFinding:
    finding = _finding(reference, region.name if region else None, tolerance, size, size)
    over = members[diff.exceeds(tolerance.threshold)[members]]
    aa = diff.antialiased(over) if over.size else np.zeros(0, dtype=bool)
    counted = over if tolerance.antialiasing == "count" else over[~aa]
    pixels = int(counted.size)
    ratio = pixels / area if area else 0.0
    found, more = boxes(diff.width, diff.height, diff.positions[counted])
    shift = detect_shift(diff, counted, tolerance.threshold)
    finding["comparedPixels"] = area
    finding["differingPixels"] = pixels
    finding["antialiasedPixels"] = int(np.count_nonzero(aa))
    finding["ratio"] = round(ratio, 6)
    finding["boxes"] = found
    finding["moreBoxes"] = more
    reasons: list[str] = []
    if not tolerance.allows(pixels, ratio):
        reasons.append(_over_tolerance(pixels, ratio, tolerance))
    if shift is not None:
        finding["shift"] = {"dx": shift.dx, "dy": shift.dy, "explained": shift.explained}
        reasons.append(
            f"a layout shift: the content moved by ({shift.dx}, {shift.dy}) px, which explains "
            f"{shift.explained:.0%} of the differing pixels (a shift fails whatever the tolerance)"
        )
    if reasons:
        finding["status"] = "fail"
        finding["reasons"] = reasons
    return finding


def _over_tolerance(pixels: int, ratio: float, tolerance: Tolerance) -> str:
    allowed: list[str] = []
    if tolerance.max_diff_pixels is not None:
        allowed.append(f"{tolerance.max_diff_pixels} pixels")
    if tolerance.max_diff_ratio is not None:
        allowed.append(f"a ratio of {tolerance.max_diff_ratio:g}")
    return f"{pixels} pixels differ (ratio {ratio:.6f}), over the {' and '.join(allowed) or '0 pixels'} allowed"
