"""bee_design_slice: an element's files, mapped source and dependencies, fitted to the budget."""

from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_contracts.shapes.design import DesignSliceResult
from bee_design.bundle.manifest import Manifest
from bee_design.context import DesignContext
from bee_design.handlers.design_slice import bee_design_slice
from bee_design.inventory import Inventory
from bee_design.layout import DesignFiles
from bee_design.mapping import MapFile
from bee_hostkit import local_call
from bee_hostkit.results import result_bytes


def slice_of(root: Path, element: str, budget: int = 65536) -> DesignSliceResult:
    return bee_design_slice(
        DesignContext.open(root), local_call("bee_design_slice", {"id": element, "budgetBytes": budget})
    )


def map_index(root: Path) -> None:
    _, element = Inventory.load(DesignFiles(root), "shop").element("shop:index.html")
    MapFile(DesignFiles(root)).map("shop:index.html", element.digest, ["src/ShopPage.tsx#ShopPage"])


def test_a_mapped_element_with_room_is_complete_in_priority_order(root: Path, shop: Manifest) -> None:
    map_index(root)
    result = slice_of(root, "shop:index.html")
    data = result["data"]
    assert data["complete"] is True and data["state"] == "mapped"
    roles = [(f["path"], f["role"], f["element"]) for f in data["files"]]
    assert roles[:2] == [("index.html", "entry", "shop:index.html"), ("app.js", "own", "shop:index.html")]
    assert ("styles/tokens.css", "dependency", "shop:styles/tokens.css") in roles  # reached through main.css
    logo = next(f for f in data["files"] if f["path"] == "img/logo.png")
    assert logo["omitted"] == "binary" and "text" not in logo and logo["mediaType"] == "image/png"
    assert data["sources"][0]["text"].startswith("export function ShopPage")
    assert result["resultBytes"] == result_bytes(result)


def test_an_unmapped_element_is_never_complete(root: Path, shop: Manifest) -> None:
    data = slice_of(root, "shop:components/button.html")["data"]
    assert data["complete"] is False and data["sources"] == []
    assert data["missing"] == [
        {
            "what": "mapping",
            "subject": "shop:components/button.html",
            "reason": "not mapped to source (bee design map ID --to PATH)",
        }
    ]


@pytest.mark.parametrize("budget", [1200, 1500, 2000, 3000, 6000])
def test_a_small_budget_cuts_at_a_line_and_says_so(root: Path, shop: Manifest, budget: int) -> None:
    map_index(root)
    result = slice_of(root, "shop:index.html", budget)
    data = result["data"]
    assert result["resultBytes"] == result_bytes(result) <= budget
    assert data["complete"] is False
    entry = data["files"][0]
    assert entry["path"] == "index.html"
    texts = [item for item in data["files"] + data["sources"] if "text" in item]
    cut = [item for item in texts if item.get("cut")]
    assert len(cut) <= 1
    for item in cut:
        assert item["text"].endswith("\n") or "\n" not in item["text"]
    omitted = [item for item in data["files"] + data["sources"] if item.get("omitted") == "budget"]
    assert cut or omitted or data["omittedFiles"]


def test_the_smallest_budget_that_cannot_hold_the_facts_delivers_nothing(root: Path, shop: Manifest) -> None:
    with pytest.raises(BeeError) as caught:
        slice_of(root, "shop:index.html", 512)
    assert caught.value.code == "budget_exceeded" and "nothing partial was delivered" in caught.value.message


def test_missing_references_and_gone_sources_are_listed(root: Path, shop: Manifest, tmp_path: Path) -> None:
    import shutil

    from tests.design.helpers import SHOP, import_shop

    broken = tmp_path / "broken"
    shutil.copytree(SHOP, broken)
    (broken / "index.html").write_text('<link href="styles/main.css"><img src="img/hero.png">')
    import_shop(root, broken, "broken")
    _, element = Inventory.load(DesignFiles(root), "broken").element("broken:index.html")
    MapFile(DesignFiles(root)).map("broken:index.html", element.digest, ["src/BuyButton.tsx"])
    (root / "src" / "BuyButton.tsx").unlink()
    data = slice_of(root, "broken:index.html")["data"]
    assert data["complete"] is False and data["state"] == "missing"
    assert data["missing"] == [
        {"what": "reference", "subject": "index.html → img/hero.png", "reason": "the bundle does not contain it"},
        {"what": "source", "subject": "src/BuyButton.tsx", "reason": "the file is gone"},
    ]
    assert data["sources"][0]["omitted"] == "gone" and data["sources"][0]["sha256"] is None
