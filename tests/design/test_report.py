"""bee_visual_report: decisions, findings per element, viewport and region, and the limitations it owns up to."""

import json
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from PIL import Image

from bee_contracts import BeeError
from bee_contracts.shapes.design import VisualReportArgs, VisualReportResult
from bee_design import layout
from bee_design.capture.evidence import EVIDENCE_FILE
from bee_design.context import DesignContext
from bee_design.handlers.visual_report import bee_visual_report
from bee_design.layout import DesignFiles
from bee_design.visual.authoring import create_spec, set_region
from bee_design.visual.spec import Region, Tolerance
from bee_hostkit import local_call
from tests.design.helpers import page_image, write_evidence

DESKTOP = (400, 300)
MOBILE = (200, 320)


def shots(**changes: Any) -> dict[tuple[str, str], np.ndarray]:
    return {
        ("home", "desktop"): page_image(*DESKTOP, **changes),
        ("home", "mobile"): page_image(*MOBILE, **changes),
    }


@pytest.fixture
def spec(root: Path) -> str:
    create_spec(DesignFiles(root), "shop", write_evidence(root / "evidence" / "reference", shots()))
    return "shop"


def report(root: Path, evidence: str, **args: Any) -> VisualReportResult:
    arguments = {"spec": "shop", "evidence": evidence, **args}
    return bee_visual_report(
        DesignContext.open(root), local_call("bee_visual_report", cast(VisualReportArgs, arguments))
    )


def test_unchanged_evidence_passes_and_is_still_neither_trusted_nor_approval(root: Path, spec: str) -> None:
    write_evidence(root / "evidence" / "now", shots())
    result = report(root, "evidence/now")
    assert result["decision"] == "pass" and result["trusted"] is False and result["acceptance"] is False
    assert result["limitations"] == []
    assert result["summary"] == {"compared": 2, "passed": 2, "failed": 0, "ignored": 0}
    assert result["evidence"] == {
        "path": "evidence/now",
        "producer": "bee design capture",
        "browser": "156.0.8078.114",
        "verified": True,
    }
    assert result["spec"]["path"] == "bee-design/specs/shop"


def test_a_changed_box_fails_with_its_pixels_ratio_and_bounding_box(root: Path, spec: str) -> None:
    write_evidence(root / "evidence" / "now", shots(color=(192, 57, 43)))
    result = report(root, "evidence/now", viewports=["desktop"])
    [finding] = result["findings"]
    assert result["decision"] == "fail" and finding["status"] == "fail"
    assert finding["differingPixels"] == 41 * 21 and finding["boxes"] == [[20, 30, 41, 21]]
    assert finding["ratio"] == round(41 * 21 / (400 * 300), 6) and finding["comparedPixels"] == 400 * 300
    assert finding["shift"] is None
    assert finding["reasons"] == [f"{41 * 21} pixels differ (ratio 0.007175), over the 0 pixels allowed"]


def test_a_one_pixel_shift_fails_even_when_the_ratio_tolerance_would_let_it_pass(root: Path) -> None:
    evidence = write_evidence(root / "evidence" / "reference", shots())
    create_spec(DesignFiles(root), "shop", evidence, compare=Tolerance(0.1, "ignore", None, 0.02))
    write_evidence(root / "evidence" / "now", shots(shift=1))
    result = report(root, "evidence/now", viewports=["desktop"])
    [finding] = result["findings"]
    assert finding["ratio"] < 0.02 and result["decision"] == "fail"
    assert finding["shift"] is not None
    assert finding["shift"]["dx"] == 0 and finding["shift"]["dy"] == 1

    assert finding["reasons"][0].startswith("a layout shift: the content moved by (0, 1) px")


def test_regions_are_judged_with_their_own_tolerance_and_masks_are_ignored(root: Path, spec: str) -> None:
    set_region(DesignFiles(root), "shop", Region("box", "home", None, (15, 25, 50, 30), False, {"maxDiffPixels": 1000}))
    write_evidence(root / "evidence" / "now", shots(color=(192, 57, 43)))
    result = report(root, "evidence/now")
    by_area = {(f["viewport"], f["region"]): f for f in result["findings"]}
    assert by_area["desktop", None]["differingPixels"] == 0 and by_area["desktop", None]["status"] == "pass"
    assert by_area["desktop", "box"]["differingPixels"] == 41 * 21 and by_area["desktop", "box"]["status"] == "pass"
    assert by_area["desktop", "box"]["tolerance"]["maxDiffPixels"] == 1000
    assert by_area["desktop", None]["comparedPixels"] == 400 * 300 - 50 * 30
    assert result["decision"] == "pass"
    set_region(DesignFiles(root), "shop", Region("box", "home", None, (15, 25, 50, 30), True))
    result = report(root, "evidence/now")
    assert {f["status"] for f in result["findings"] if f["region"] == "box"} == {"ignored"}
    assert result["decision"] == "pass" and result["summary"]["ignored"] == 2


def test_a_region_with_a_finer_threshold_sees_changes_the_page_threshold_lets_pass(root: Path, spec: str) -> None:
    finer = {"threshold": 0.0, "maxDiffPixels": 0}
    set_region(DesignFiles(root), "shop", Region("box", "home", None, (15, 25, 50, 30), False, finer))
    faint = page_image(*DESKTOP)
    faint[30:51, 20:61, 2] += 2  # the box, two levels bluer
    faint[200:210, 300:310, :3] -= 2  # a white patch outside the region, two levels darker
    write_evidence(root / "evidence" / "now", {("home", "desktop"): faint})
    result = report(root, "evidence/now", viewports=["desktop"])
    by_area = {f["region"]: f for f in result["findings"]}
    assert by_area[None]["differingPixels"] == 0 and by_area[None]["status"] == "pass"
    assert by_area["box"]["differingPixels"] == 41 * 21 and by_area["box"]["status"] == "fail"
    assert result["decision"] == "fail"


def test_evidence_with_the_same_pixels_in_other_bytes_passes(root: Path, spec: str) -> None:
    folder = write_evidence(root / "evidence" / "now", shots())
    for name in ("home--desktop.png", "home--mobile.png"):
        with Image.open(folder / name) as image:
            image.load()
            image.save(folder / name, compress_level=1)  # other bytes (its record no longer matches them)
    result = report(root, "evidence/now")
    assert [f["differingPixels"] for f in result["findings"]] == [0, 0]
    assert {f["status"] for f in result["findings"]} == {"pass"}
    assert {item["kind"] for item in result["limitations"]} == {"evidence-changed"}


def test_a_different_size_fails_without_comparing(root: Path, spec: str) -> None:
    write_evidence(root / "evidence" / "now", {("home", "desktop"): page_image(400, 301)})
    result = report(root, "evidence/now", viewports=["desktop"])
    [finding] = result["findings"]
    assert result["decision"] == "fail"
    assert finding["referenceSize"] == [400, 300] and finding["evidenceSize"] == [400, 301]
    assert finding["reasons"][0].startswith("sizes differ: reference 400×300, evidence 400×301")


def test_missing_viewports_and_unspecified_captures_are_limitations(root: Path, spec: str) -> None:
    write_evidence(
        root / "evidence" / "now", {("home", "desktop"): page_image(*DESKTOP), ("cart", "desktop"): page_image()}
    )
    result = report(root, "evidence/now")
    kinds = {(item["kind"], item["element"], item["viewport"]) for item in result["limitations"]}
    assert kinds == {("missing-evidence", "home", "mobile"), ("unspecified-evidence", None, None)}
    assert result["decision"] == "inconclusive"


def test_evidence_bee_did_not_produce_or_that_changed_is_a_limitation(root: Path, spec: str) -> None:
    folder = write_evidence(root / "evidence" / "raw", shots())
    (folder / EVIDENCE_FILE).unlink()
    result = report(root, "evidence/raw")
    assert result["decision"] == "inconclusive" and result["evidence"]["verified"] is False
    assert [item["kind"] for item in result["limitations"]] == ["evidence-unverified"]
    assert result["summary"]["compared"] == 2  # still compared, found by file name
    folder = write_evidence(root / "evidence" / "edited", shots())
    record = json.loads((folder / EVIDENCE_FILE).read_text())
    (folder / record["captures"][0]["file"]).write_bytes((folder / record["captures"][1]["file"]).read_bytes())
    result = report(root, "evidence/edited")
    assert ("evidence-changed", "home", "desktop") in {
        (i["kind"], i["element"], i["viewport"]) for i in result["limitations"]
    }
    assert result["decision"] == "fail"  # the swapped image is also a different size: a failure beats a limitation


def test_fonts_and_browser_that_differ_from_the_reference_are_limitations(root: Path, spec: str) -> None:
    write_evidence(root / "evidence" / "now", shots(), fonts=("Liberation Sans",), browser="157.0.1")
    result = report(root, "evidence/now")
    kinds = sorted(item["kind"] for item in result["limitations"])
    assert kinds == ["browser-mismatch", "font-mismatch", "font-mismatch"]
    font = next(item for item in result["limitations"] if item["kind"] == "font-mismatch")
    assert "not used now: DejaVu Sans" in font["message"] and "used now: Liberation Sans" in font["message"]
    assert result["decision"] == "inconclusive"


def test_bad_report_arguments_are_clear_errors(root: Path, spec: str) -> None:
    write_evidence(root / "evidence" / "now", shots())
    for arguments, code, text in (
        ({"evidence": "../elsewhere"}, "outside_root", "'..'"),
        ({"evidence": ".bee/design/bundles"}, "outside_root", "Bee's own state"),
        ({"evidence": "evidence/none"}, "not_found", "no evidence folder 'evidence/none' under the root"),
        ({"evidence": "evidence/now", "elements": ["cart"]}, "invalid_argument", "has no element 'cart'"),
        ({"evidence": "evidence/now", "spec": "nope"}, "not_found", "no visual spec 'nope'; specs here: shop"),
    ):
        with pytest.raises(BeeError) as caught:
            report(root, **arguments)
        assert caught.value.code == code and text in caught.value.message, caught.value
    reference = root / layout.spec_dir("shop") / "references" / "home--desktop.png"
    reference.write_bytes(b"changed")
    with pytest.raises(BeeError) as caught:
        report(root, "evidence/now")
    assert caught.value.code == "hash_mismatch" and "changed since the spec recorded it" in caught.value.message
