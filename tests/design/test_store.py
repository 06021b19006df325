"""Imported bundles: stored by sha256 under an immutable manifest; re-import, replace and damage."""

import json
import os
import shutil
from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_design import layout
from bee_design.bundle.manifest import Manifest
from bee_design.bundle.reading import read_bundle
from bee_design.bundle.store import BundleStore, check_id, default_id
from bee_design.layout import DesignFiles
from tests.design.helpers import SHOP, import_shop


def test_an_import_stores_every_file_read_only_and_keeps_the_state_out_of_git(root: Path, shop: Manifest) -> None:
    store = BundleStore(DesignFiles(root))
    assert store.ids() == ["shop"]
    manifest_file = root / layout.STATE_DIR / layout.manifest_path("shop")
    assert not os.access(manifest_file, os.W_OK) or os.geteuid() == 0
    assert manifest_file.stat().st_mode & 0o222 == 0
    for entry in shop.files:
        assert store.read(shop, entry.path) == (SHOP / entry.path).read_bytes()
    assert (root / ".bee" / "design" / ".gitignore").read_text() == "*\n"


def test_the_same_bundle_again_changes_nothing_and_other_content_needs_replace(
    root: Path, shop: Manifest, tmp_path: Path
) -> None:
    again = BundleStore(DesignFiles(root)).add(read_bundle(SHOP), "shop")
    assert again.status == "unchanged" and again.manifest == shop
    changed = tmp_path / "changed"
    shutil.copytree(SHOP, changed)
    (changed / "styles" / "tokens.css").write_text(":root { --brand: #c0392b; }\n")
    with pytest.raises(BeeError) as caught:
        import_shop(root, changed)
    assert caught.value.code == "conflict" and "--replace" in caught.value.message
    replaced = BundleStore(DesignFiles(root)).add(read_bundle(changed), "shop", replace=True)
    assert replaced.status == "replaced" and replaced.manifest.digest != shop.digest
    # The tokens file of the first version is swept once nothing names it.
    old = next(e for e in shop.files if e.path == "styles/tokens.css")
    assert not (root / layout.STATE_DIR / layout.blob_path(old.sha256)).exists()


def test_a_stored_file_changed_or_deleted_behind_bees_back_is_refused_and_reimport_repairs_it(
    root: Path, shop: Manifest
) -> None:
    store = BundleStore(DesignFiles(root))
    entry = next(e for e in shop.files if e.path == "styles/main.css")
    blob = root / layout.STATE_DIR / layout.blob_path(entry.sha256)
    blob.chmod(0o644)
    blob.write_text("body { color: red }")
    with pytest.raises(BeeError) as caught:
        store.read(shop, "styles/main.css")
    assert caught.value.code == "hash_mismatch" and "--replace" in caught.value.message
    assert store.problem(entry) is not None
    import_shop(root)  # the same content again: stored copies are checked and rewritten
    assert store.read(shop, "styles/main.css") == (SHOP / "styles" / "main.css").read_bytes()
    blob.unlink()
    with pytest.raises(BeeError) as caught:
        store.read(shop, "styles/main.css")
    assert caught.value.code == "not_found"


def test_a_manifest_changed_after_import_is_refused(root: Path, shop: Manifest) -> None:
    path = root / layout.STATE_DIR / layout.manifest_path("shop")
    body = json.loads(path.read_text())
    body["files"][0]["size"] += 1
    path.chmod(0o644)
    path.write_text(json.dumps(body))
    with pytest.raises(BeeError) as caught:
        BundleStore(DesignFiles(root)).load("shop")
    assert (
        caught.value.code == "hash_mismatch" and "bee design import BUNDLE --id shop --replace" in caught.value.message
    )


def test_unknown_bundles_and_bad_ids_say_what_there_is(root: Path, shop: Manifest) -> None:
    with pytest.raises(BeeError) as caught:
        BundleStore(DesignFiles(root)).load("shoop")
    assert caught.value.code == "not_found" and "imported bundles: shop" in caught.value.message
    with pytest.raises(BeeError, match="not valid"):
        check_id("Shop_Design")
    assert default_id("Shop Design v2.zip") == "shop-design-v2"


def test_a_state_folder_symlinked_out_of_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / ".bee").symlink_to(outside)
    with pytest.raises(BeeError) as caught:
        import_shop(root)
    assert caught.value.code == "outside_root"
    assert not any(outside.iterdir())
