"""bee_design_verify reports every failure it finds, across manifests, files, the graph, mappings and specs."""

import json
from pathlib import Path

from bee_design import layout
from bee_design.bundle.manifest import Manifest
from bee_design.inventory import Inventory
from bee_design.layout import DesignFiles
from bee_design.mapping import MapFile
from bee_design.verify import verify


def test_an_intact_root_verifies_clean(root: Path, shop: Manifest) -> None:
    data = verify(DesignFiles(root))["data"]
    assert data["intact"] is True and data["failures"] == []
    assert data["checked"] == {"bundles": 1, "files": 7, "elements": 6, "mappings": 0, "specs": 0}
    assert data["states"] == {"imported": 6, "mapped": 0, "stale": 0, "missing": 0}


def test_every_failure_is_reported_not_just_the_first(root: Path, shop: Manifest, tmp_path: Path) -> None:
    _, element = Inventory.load(DesignFiles(root), "shop").element("shop:index.html")
    MapFile(DesignFiles(root)).map("shop:index.html", element.digest, ["src/ShopPage.tsx#ShopPage"])
    _, button = Inventory.load(DesignFiles(root), "shop").element("shop:components/button.html")
    MapFile(DesignFiles(root)).map("shop:components/button.html", button.digest, ["src/BuyButton.tsx"])
    for path, change in (("styles/main.css", "tampered"), ("img/logo.png", None)):
        entry = shop.file_index[path]
        blob = root / layout.STATE_DIR / layout.blob_path(entry.sha256)
        blob.chmod(0o644)
        if change is None:
            blob.unlink()
        else:
            blob.write_text(change)
    (root / "src" / "ShopPage.tsx").write_text("// rewritten\nexport function ShopPage() {}\n")
    (root / "src" / "BuyButton.tsx").unlink()
    body = json.loads((root / layout.MAP_FILE).read_text())
    body["mappings"].append({**body["mappings"][0], "element": "shop:gone.html"})
    (root / layout.MAP_FILE).write_text(json.dumps(body))
    data = verify(DesignFiles(root))["data"]
    assert data["intact"] is False
    found = {(f["check"], f["code"], f["subject"]) for f in data["failures"]}
    assert found == {
        ("file", "hash_mismatch", "shop/styles/main.css"),
        ("file", "not_found", "shop/img/logo.png"),
        ("mapping", "hash_mismatch", "shop:index.html"),
        ("mapping", "not_found", "shop:components/button.html"),
        ("mapping", "not_found", "shop:gone.html"),
    }
    assert data["states"] == {"imported": 4, "mapped": 0, "stale": 1, "missing": 2}


def test_a_tampered_manifest_and_a_cycle_are_reported(root: Path, shop: Manifest) -> None:
    from bee_design import digests

    path = root / layout.STATE_DIR / layout.manifest_path("shop")
    body = json.loads(path.read_text())
    main = next(e for e in body["elements"] if e["id"] == "styles/main.css")
    tokens = next(e for e in body["elements"] if e["id"] == "styles/tokens.css")
    tokens["dependsOn"].append("styles/main.css")  # a cycle, written by hand with a recomputed digest
    main["dependsOn"].append("img/gone.png")
    body.pop("manifestDigest")
    body["manifestDigest"] = digests.of_json(body)
    path.chmod(0o644)
    path.write_text(json.dumps(body))
    data = verify(DesignFiles(root))["data"]
    messages = {(f["check"], f["code"], f["message"]) for f in data["failures"]}
    assert ("graph", "not_found", "depends on unknown element 'img/gone.png'") in messages
    assert (
        "graph",
        "invalid_argument",
        "dependency cycle: shop:styles/main.css → shop:styles/tokens.css → shop:styles/main.css",
    ) in messages
    body["files"][0]["size"] = 1
    path.write_text(json.dumps(body))  # now the digest no longer matches: the manifest is refused as a whole
    data = verify(DesignFiles(root))["data"]
    assert [(f["check"], f["code"], f["subject"]) for f in data["failures"]] == [("manifest", "hash_mismatch", "shop")]
