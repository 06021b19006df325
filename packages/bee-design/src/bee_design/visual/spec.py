"""Visual specs: reference images per element and viewport, compare settings, named regions — the model, read
and checked (:mod:`.authoring` writes them).

A spec lives in the repository at ``bee-design/specs/<name>/``: ``spec.json`` and the reference PNGs under
``references/``. Compare settings are a per-pixel ``threshold`` (0–1, the YIQ distance pixelmatch uses),
``antialiasing`` (``ignore`` anti-aliased pixels, or ``count`` them) and the tolerance: at most ``maxDiffPixels``
differing pixels and at most ``maxDiffRatio`` of the compared pixels (null: no limit of that kind; both null:
no difference allowed). A region is a named box ``[x, y, width, height]`` for one element and viewport (or all,
when null) that either is ignored (a mask) or is judged with its own settings; the rest of the image is judged
with the spec's. Evidence and reference must be the same size, and a layout shift fails whatever the tolerance.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from bee_contracts import BeeError, ErrorCode, invalid
from bee_design import digests, layout
from bee_design.layout import DesignFiles
from bee_design.schemas import validator
from bee_design.visual.images import check_file_size, png_size

SPEC_FILE: Final = "spec.json"
REFERENCES: Final = "references"
SPEC_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
REGION_NAME: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$")

Antialiasing = Literal["ignore", "count"]


@dataclass(frozen=True)
class Tolerance:
    """How one area is compared: per-pixel threshold, anti-aliasing handling, allowed pixels and ratio."""

    threshold: float = 0.1
    antialiasing: Antialiasing = "ignore"
    max_diff_pixels: int | None = 0
    max_diff_ratio: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "antialiasing": self.antialiasing,
            "maxDiffPixels": self.max_diff_pixels,
            "maxDiffRatio": self.max_diff_ratio,
        }

    def allows(self, pixels: int, ratio: float) -> bool:
        if self.max_diff_pixels is None and self.max_diff_ratio is None:
            return pixels == 0
        if self.max_diff_pixels is not None and pixels > self.max_diff_pixels:
            return False
        return not (self.max_diff_ratio is not None and ratio > self.max_diff_ratio)


@dataclass(frozen=True)
class Reference:
    element: str
    viewport: str
    file: str
    sha256: str
    width: int
    height: int
    url: str | None
    browser: str | None
    fonts: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "element": self.element,
            "viewport": self.viewport,
            "file": self.file,
            "sha256": self.sha256,
            "width": self.width,
            "height": self.height,
            "url": self.url,
            "browser": self.browser,
            "fonts": list(self.fonts),
        }


@dataclass(frozen=True)
class Region:
    """A named box; ``ignore`` masks it, otherwise ``overrides`` replace the spec's settings inside it."""

    name: str
    element: str | None
    viewport: str | None
    box: tuple[int, int, int, int]
    ignore: bool
    overrides: dict[str, Any] = field(default_factory=dict)

    def applies_to(self, element: str, viewport: str) -> bool:
        return self.element in (None, element) and self.viewport in (None, viewport)

    def tolerance(self, base: Tolerance) -> Tolerance:
        """The region's settings: its own where it sets them, else the spec's. The allowance (pixels and ratio)
        goes together: a region that sets either one does not inherit the other."""
        overrides = self.overrides
        own_allowance = "maxDiffPixels" in overrides or "maxDiffRatio" in overrides
        return replace(
            base,
            threshold=overrides.get("threshold", base.threshold),
            antialiasing=overrides.get("antialiasing", base.antialiasing),
            max_diff_pixels=overrides.get("maxDiffPixels") if own_allowance else base.max_diff_pixels,
            max_diff_ratio=overrides.get("maxDiffRatio") if own_allowance else base.max_diff_ratio,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "element": self.element,
            "viewport": self.viewport,
            "box": list(self.box),
            "ignore": self.ignore,
            **self.overrides,
        }


@dataclass(frozen=True)
class Spec:
    name: str
    created_at: str
    compare: Tolerance
    references: tuple[Reference, ...]
    regions: tuple[Region, ...]

    def to_bytes(self) -> bytes:
        body = {
            "schemaVersion": 1,
            "name": self.name,
            "createdAt": self.created_at,
            "compare": self.compare.to_json(),
            "references": [reference.to_json() for reference in self.references],
            "regions": [region.to_json() for region in self.regions],
        }
        return (json.dumps(body, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def check_name(name: str) -> str:
    """Return ``name`` when it is a valid spec name.

    Raises:
        BeeError: ``invalid_argument`` saying what a name looks like.
    """
    if not SPEC_NAME.match(name):
        raise invalid(f"spec name {name!r} is not valid; use lowercase letters, digits, '.', '_' and '-' (up to 63)")
    return name


def spec_names(files: DesignFiles) -> list[str]:
    """Every spec under ``bee-design/specs/``, sorted.

    Raises:
        BeeError: ``outside_root`` when the folder is a symlink.
    """
    folder = files.directory(layout.SPECS_DIR)
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if SPEC_NAME.match(p.name) and (p / SPEC_FILE).is_file())


def _malformed(name: str, why: str) -> BeeError:
    return invalid(
        f"visual spec {name!r} is malformed: {why}; fix {layout.spec_dir(name)}/{SPEC_FILE} or create the spec again",
        spec=name,
    )


def parse_spec(name: str, data: bytes) -> Spec:
    """Parse a ``spec.json`` and check its schema and its internal consistency.

    Raises:
        BeeError: ``invalid_argument`` (malformed) naming the first problem.
    """
    try:
        raw: Any = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _malformed(name, f"not valid JSON ({exc})") from None
    try:
        validator("spec", f"spec {name}").check(raw)
    except BeeError as exc:
        raise _malformed(name, exc.message) from None
    spec = Spec(
        name=raw["name"],
        created_at=raw["createdAt"],
        compare=Tolerance(
            raw["compare"]["threshold"],
            raw["compare"]["antialiasing"],
            raw["compare"]["maxDiffPixels"],
            raw["compare"]["maxDiffRatio"],
        ),
        references=tuple(
            Reference(
                r["element"],
                r["viewport"],
                r["file"],
                r["sha256"],
                r["width"],
                r["height"],
                r["url"],
                r["browser"],
                tuple(r["fonts"]),
            )
            for r in raw["references"]
        ),
        regions=tuple(
            Region(
                r["name"],
                r["element"],
                r["viewport"],
                tuple(r["box"]),
                r["ignore"],
                {k: r[k] for k in ("threshold", "antialiasing", "maxDiffPixels", "maxDiffRatio") if k in r},
            )
            for r in raw["regions"]
        ),
    )
    problems = consistency_problems(spec)
    if problems:
        raise _malformed(name, problems[0])
    return spec


def consistency_problems(spec: Spec) -> list[str]:
    """What is inconsistent inside a spec: duplicates, regions naming unknown references or leaving the image."""
    problems = []
    seen: set[tuple[str, str]] = set()
    for reference in spec.references:
        key = (reference.element, reference.viewport)
        if key in seen:
            problems.append(f"two references for element {key[0]!r} at viewport {key[1]!r}")
        seen.add(key)
    names = [region.name for region in spec.regions]
    for region in spec.regions:
        if names.count(region.name) > 1 and region.name not in problems:
            problems.append(f"region {region.name!r} is defined twice")
        x, y, width, height = region.box
        if width < 1 or height < 1:
            problems.append(f"region {region.name!r} has an empty box {list(region.box)}")
        if region.ignore and region.overrides:
            problems.append(f"region {region.name!r} is ignored but also sets tolerances")
        matching = [r for r in spec.references if region.applies_to(r.element, r.viewport)]
        if not matching:
            problems.append(f"region {region.name!r} applies to no reference (element/viewport names)")
        for reference in matching:
            if x + width > reference.width or y + height > reference.height:
                problems.append(
                    f"region {region.name!r} {list(region.box)} leaves the {reference.width}×{reference.height} image "
                    f"of {reference.element} at {reference.viewport}"
                )
    return problems


def load_spec(files: DesignFiles, name: str) -> tuple[Spec, str, str]:
    """The spec, its folder (relative to the root) and the digest of its spec.json.

    Raises:
        BeeError: ``not_found`` naming the specs there are; ``invalid_argument`` when malformed; ``outside_root``
            for a spec reached through a symlink that leaves the root.
    """
    folder = layout.spec_dir(check_name(name))
    try:
        data = files.read(f"{folder}/{SPEC_FILE}")
    except BeeError as exc:
        if exc.code != ErrorCode.NOT_FOUND:
            raise
        known = ", ".join(spec_names(files)) or "none; create one with `bee visual spec create`"
        raise BeeError(
            ErrorCode.NOT_FOUND, f"no visual spec {name!r}; specs here: {known}", details={"spec": name}
        ) from None
    return parse_spec(name, data), folder, digests.of_bytes(data)


def read_reference(files: DesignFiles, folder: str, reference: Reference) -> bytes:
    """A reference image's bytes.

    Raises:
        BeeError: ``not_found`` when it is gone, ``hash_mismatch`` when it changed since the spec recorded it.
    """
    try:
        with files.open(f"{folder}/{REFERENCES}/{reference.file}") as file:
            check_file_size(file.size, f"reference {reference.file}")
            data = file.read()
    except BeeError as exc:
        if exc.code != ErrorCode.NOT_FOUND:
            raise
        raise BeeError(ErrorCode.NOT_FOUND, f"reference {reference.file} is gone") from None
    if digests.of_bytes(data) != reference.sha256:
        raise BeeError(ErrorCode.HASH_MISMATCH, f"reference {reference.file} changed since the spec recorded it")
    return data


def integrity_problems(files: DesignFiles, folder: str, spec: Spec) -> list[tuple[ErrorCode, str]]:
    """Reference images that are gone, changed since the spec recorded them, or not of the recorded size."""
    problems: list[tuple[ErrorCode, str]] = []
    for reference in spec.references:
        try:
            data = read_reference(files, folder, reference)
            size = png_size(data, f"reference {reference.file}")
        except BeeError as exc:
            problems.append((exc.code, exc.message))
            continue
        if size != (reference.width, reference.height):
            problems.append(
                (
                    ErrorCode.HASH_MISMATCH,
                    f"reference {reference.file} is {size[0]}×{size[1]}, the spec says "
                    f"{reference.width}×{reference.height}",
                )
            )
    return problems
