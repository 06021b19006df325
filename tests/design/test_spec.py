"""Visual specs: references taken from evidence, compare settings, regions, and malformed specs refused."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import BeeError
from bee_design import layout
from bee_design.layout import DesignFiles
from bee_design.visual.authoring import create_spec, remove_region, set_region
from bee_design.visual.spec import Region, Tolerance, integrity_problems, load_spec
from tests.design.helpers import page_image, write_evidence


@pytest.fixture
def evidence(root: Path) -> Path:
    shots = {("home", "desktop"): page_image(120, 80), ("home", "mobile"): page_image(60, 90)}
    return write_evidence(root / "evidence" / "one", shots)


def test_a_spec_takes_its_references_from_evidence_and_records_where_they_came_from(root: Path, evidence: Path) -> None:
    spec = create_spec(DesignFiles(root), "shop", evidence, compare=Tolerance(0.2, "count", None, 0.01))
    assert [(r.element, r.viewport, r.width, r.height) for r in spec.references] == [
        ("home", "desktop", 120, 80),
        ("home", "mobile", 60, 90),
    ]
    folder = root / layout.spec_dir("shop")
    assert sorted(p.name for p in (folder / "references").iterdir()) == ["home--desktop.png", "home--mobile.png"]
    loaded, _, digest = load_spec(DesignFiles(root), "shop")
    assert loaded == spec and digest.startswith("sha256:")
    assert loaded.references[0].browser == "156.0.8078.114" and loaded.references[0].fonts == ("DejaVu Sans",)
    assert json.loads((folder / "spec.json").read_text())["compare"] == {
        "threshold": 0.2,
        "antialiasing": "count",
        "maxDiffPixels": None,
        "maxDiffRatio": 0.01,
    }


def test_an_existing_spec_is_only_updated_on_request_keeping_its_regions(root: Path, evidence: Path) -> None:
    create_spec(DesignFiles(root), "shop", evidence)
    set_region(DesignFiles(root), "shop", Region("clock", "home", "desktop", (0, 0, 40, 10), ignore=True))
    with pytest.raises(BeeError) as caught:
        create_spec(DesignFiles(root), "shop", evidence)
    assert caught.value.code == "conflict" and "--update" in caught.value.message
    updated = create_spec(DesignFiles(root), "shop", evidence, viewports=["desktop"], update=True)
    assert [r.name for r in updated.regions] == ["clock"] and len(updated.references) == 2


def test_regions_are_masks_or_areas_with_their_own_tolerance_and_must_fit_the_image(root: Path, evidence: Path) -> None:
    create_spec(DesignFiles(root), "shop", evidence)
    spec = set_region(
        DesignFiles(root), "shop", Region("hero", "home", "desktop", (10, 10, 50, 40), False, {"maxDiffPixels": 25})
    )
    assert spec.regions[0].tolerance(spec.compare) == Tolerance(0.1, "ignore", 25, None)
    with pytest.raises(BeeError, match="leaves the 120×80 image of home at desktop"):
        set_region(DesignFiles(root), "shop", Region("wide", "home", "desktop", (100, 0, 30, 10), ignore=True))
    with pytest.raises(BeeError, match="applies to no reference"):
        set_region(DesignFiles(root), "shop", Region("x", "checkout", None, (0, 0, 5, 5), ignore=True))
    with pytest.raises(BeeError, match="leaves the 60×90 image"):
        set_region(DesignFiles(root), "shop", Region("all", None, None, (0, 0, 100, 10), ignore=True))
    assert [r.name for r in remove_region(DesignFiles(root), "shop", "hero").regions] == []
    with pytest.raises(BeeError) as caught:
        remove_region(DesignFiles(root), "shop", "hero")
    assert caught.value.code == "not_found"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda body: body["compare"].__setitem__("threshold", 2), "threshold is 2, outside the allowed range"),
        (lambda body: body["references"].append(dict(body["references"][0])), "two references for element 'home'"),
        (
            lambda body: body["regions"].append(
                {"name": "r", "element": None, "viewport": None, "box": [0, 0, 0, 5], "ignore": True}
            ),
            "empty box",
        ),
        (
            lambda body: body["regions"].append(
                {
                    "name": "r",
                    "element": None,
                    "viewport": None,
                    "box": [0, 0, 5, 5],
                    "ignore": True,
                    "maxDiffPixels": 3,
                }
            ),
            "ignored but also sets tolerances",
        ),
        (lambda body: body.pop("references"), "missing required field 'references'"),
    ],
)
def test_a_malformed_spec_is_refused_naming_the_problem(
    root: Path, evidence: Path, edit: Callable[[dict[str, Any]], object], message: str
) -> None:
    create_spec(DesignFiles(root), "shop", evidence)
    path = root / layout.spec_dir("shop") / "spec.json"
    body = json.loads(path.read_text())
    edit(body)
    path.write_text(json.dumps(body))
    with pytest.raises(BeeError, match=message) as caught:
        load_spec(DesignFiles(root), "shop")
    assert caught.value.code == "invalid_argument" and "malformed" in caught.value.message


def test_a_changed_or_missing_reference_image_is_an_integrity_problem(root: Path, evidence: Path) -> None:
    files = DesignFiles(root)
    create_spec(files, "shop", evidence)
    spec, folder, _ = load_spec(files, "shop")
    assert folder == "bee-design/specs/shop" and integrity_problems(files, folder, spec) == []
    references = root / folder / "references"
    (references / "home--desktop.png").write_bytes(b"not the image")
    (references / "home--mobile.png").unlink()
    assert [(code.value, message) for code, message in integrity_problems(files, folder, spec)] == [
        ("hash_mismatch", "reference home--desktop.png changed since the spec recorded it"),
        ("not_found", "reference home--mobile.png is gone"),
    ]


def test_evidence_bee_did_not_write_or_that_changed_is_not_taken(root: Path, evidence: Path, tmp_path: Path) -> None:
    foreign = write_evidence(root / "evidence" / "foreign", {("home", "desktop"): page_image()}, producer="paint")
    with pytest.raises(BeeError, match="written by 'paint'"):
        create_spec(DesignFiles(root), "shop", foreign)
    (evidence / "home--desktop.png").write_bytes(b"edited")
    with pytest.raises(BeeError, match="changed since capture"):
        create_spec(DesignFiles(root), "shop", evidence)
    with pytest.raises(BeeError, match="no viewport 'tablet'"):
        create_spec(DesignFiles(root), "shop", evidence, viewports=["tablet"])
    with pytest.raises(BeeError, match=r"holds no evidence\.json"):
        create_spec(DesignFiles(root), "shop", tmp_path)
    with pytest.raises(BeeError, match="not valid"):
        create_spec(DesignFiles(root), "Shop!", evidence)
