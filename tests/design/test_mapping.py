"""Mapping elements to source: recorded hashes, and states computed from what is there now."""

import json
from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_design import layout
from bee_design.bundle.manifest import Manifest
from bee_design.inventory import Inventory
from bee_design.layout import DesignFiles
from bee_design.mapping import MapFile, Mapping, parse_target
from tests.design.helpers import SHOP, import_shop


def states(root: Path) -> dict[str, tuple[str, list[str]]]:
    inventory = Inventory.load(DesignFiles(root))
    found: dict[str, tuple[str, list[str]]] = {}
    for manifest in inventory.manifests.values():
        for element in manifest.elements:
            state = inventory.state(manifest, element)
            found[manifest.qualified(element.id)] = (state.state, state.reasons)
    for qualified, state in inventory.orphans().items():
        found[qualified] = (state.state, state.reasons)
    return found


def map_index(root: Path, *targets: str) -> Mapping:
    _, element = Inventory.load(DesignFiles(root), "shop").element("shop:index.html")
    return MapFile(DesignFiles(root)).map("shop:index.html", element.digest, list(targets))


def test_unmapped_elements_are_imported_and_a_fresh_mapping_is_mapped(root: Path, shop: Manifest) -> None:
    assert {s for s, _ in states(root).values()} == {"imported"}
    mapping = map_index(root, "src/ShopPage.tsx#ShopPage", "src/BuyButton.tsx")
    assert [(s.path, s.symbol) for s in mapping.sources] == [
        ("src/ShopPage.tsx", "ShopPage"),
        ("src/BuyButton.tsx", None),
    ]
    assert states(root)["shop:index.html"] == ("mapped", [])
    written = json.loads((root / layout.MAP_FILE).read_text())
    assert written["mappings"][0]["element"] == "shop:index.html"
    assert written["mappings"][0]["sources"][0]["sha256"].startswith("sha256:")


def test_a_source_change_makes_the_mapping_stale(root: Path, shop: Manifest) -> None:
    map_index(root, "src/ShopPage.tsx#ShopPage")
    with (root / "src" / "ShopPage.tsx").open("a") as handle:
        handle.write("// tweak\n")
    assert states(root)["shop:index.html"] == ("stale", ["source src/ShopPage.tsx#ShopPage changed since mapping"])


def test_a_design_change_makes_the_mapping_stale_even_below_the_element(
    root: Path, shop: Manifest, tmp_path: Path
) -> None:
    import shutil

    map_index(root, "src/ShopPage.tsx")
    changed = tmp_path / "v2"
    shutil.copytree(SHOP, changed)
    (changed / "styles" / "tokens.css").write_text(":root { --brand: #c0392b; }\n")
    import_shop(root, changed, replace=True)
    assert states(root)["shop:index.html"] == ("stale", ["the design of shop:index.html changed since mapping"])


def test_a_gone_source_file_or_symbol_makes_the_mapping_missing(root: Path, shop: Manifest) -> None:
    map_index(root, "src/ShopPage.tsx#ShopPage")
    (root / "src" / "ShopPage.tsx").write_text("export function Renamed() {}\n")
    assert states(root)["shop:index.html"] == ("missing", ["symbol ShopPage is gone from src/ShopPage.tsx"])
    (root / "src" / "ShopPage.tsx").unlink()
    assert states(root)["shop:index.html"] == ("missing", ["source src/ShopPage.tsx is gone"])


def test_a_mapping_whose_element_is_gone_is_an_orphan(root: Path, shop: Manifest) -> None:
    map_index(root, "src/ShopPage.tsx")
    body = json.loads((root / layout.MAP_FILE).read_text())
    body["mappings"][0]["element"] = "shop:old.html"
    (root / layout.MAP_FILE).write_text(json.dumps(body))
    assert states(root)["shop:old.html"] == (
        "missing",
        ["shop:old.html is not in any imported bundle (an orphan mapping)"],
    )
    MapFile(DesignFiles(root)).unmap("shop:old.html")
    assert "shop:old.html" not in states(root)


def test_bad_targets_are_refused(root: Path, shop: Manifest) -> None:
    with pytest.raises(BeeError) as caught:
        map_index(root, "../outside.tsx")
    assert caught.value.code == "outside_root"
    with pytest.raises(BeeError) as caught:
        map_index(root, ".bee/design/lock")
    assert caught.value.code == "outside_root" and "Bee's own state" in caught.value.message
    with pytest.raises(BeeError) as caught:
        map_index(root, "src/Nope.tsx")
    assert caught.value.code == "not_found"
    with pytest.raises(BeeError, match="symbol 'Shoppe' does not appear"):
        map_index(root, "src/ShopPage.tsx#Shoppe")
    with pytest.raises(BeeError, match="is a directory; select a file inside it"):
        map_index(root, "src")
    with pytest.raises(BeeError, match="empty symbol"):
        parse_target("src/a.ts#")
    with pytest.raises(BeeError) as caught:
        MapFile(DesignFiles(root)).unmap("shop:index.html")
    assert caught.value.code == "not_found"


def test_a_malformed_map_file_is_a_clear_error(root: Path, shop: Manifest) -> None:
    (root / "bee-design").mkdir()
    (root / layout.MAP_FILE).write_text("{")
    with pytest.raises(BeeError, match=r"bee-design/map\.json is not valid JSON"):
        MapFile(DesignFiles(root)).load()
    (root / layout.MAP_FILE).write_text(json.dumps({"schemaVersion": 1, "mappings": [{"element": "x"}]}))
    with pytest.raises(BeeError, match="missing required field") as caught:
        MapFile(DesignFiles(root)).load()
    assert caught.value.code == "invalid_argument"
