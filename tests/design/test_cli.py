"""The design CLI: import, map, unmap, list, verify, and `bee visual` spec, diff and report."""

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from bee_cli.main import make_cli
from bee_design.cli import register
from tests.design.helpers import SHOP, page_image, save_png, write_evidence


@pytest.fixture
def bee(root: Path) -> Callable[..., str]:
    runner = CliRunner()

    def run(*args: str, code: int = 0) -> str:
        rooted = [] if args[:2] == ("visual", "diff") else ["--root", str(root)]
        result = runner.invoke(make_cli([register]), [*args, *rooted])
        assert result.exit_code == code, result.output
        return result.output

    return run


def test_import_map_list_verify_unmap(bee: Callable[..., str], root: Path) -> None:
    out = bee("design", "import", str(SHOP))
    assert out.startswith("Imported bundle shop: 7 files, 6 elements")
    assert "Unchanged bundle shop" in bee("design", "import", str(SHOP))
    assert bee(
        "design", "map", "shop:index.html", "--to", "src/ShopPage.tsx#ShopPage", "--to", "src/BuyButton.tsx"
    ) == ("Mapped shop:index.html to src/ShopPage.tsx#ShopPage, src/BuyButton.tsx\n")
    listed = bee("design", "list")
    assert "shop:index.html" in listed and "mapped" in listed
    data = json.loads(bee("design", "list", "--json"))["data"]
    assert data["states"] == {"imported": 5, "mapped": 1, "stale": 0, "missing": 0}
    assert "intact" in bee("design", "verify")
    (root / "src" / "BuyButton.tsx").unlink()
    failed = bee("design", "verify", code=1)
    assert "mapping  not_found" in failed and "source src/BuyButton.tsx is gone" in failed
    assert bee("design", "unmap", "shop:index.html") == "Unmapped shop:index.html\n"
    assert "not mapped" in bee("design", "unmap", "shop:index.html", code=1)


def test_import_reads_a_zip_names_it_and_refuses_unsafe_ones(bee: Callable[..., str], tmp_path: Path) -> None:
    archive = tmp_path / "Shop Export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in SHOP.rglob("*"):
            if path.is_file():
                zf.write(path, f"export/{path.relative_to(SHOP).as_posix()}")
    assert json.loads(bee("design", "import", str(archive), "--json"))["bundle"] == "shop-export"
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("../../etc/cron.d/evil", "x")
    assert "climbs out with '..'" in bee("design", "import", str(evil), code=1)
    assert "Unchanged bundle shop-export" in bee("design", "import", str(SHOP), "--id", "shop-export")
    other = tmp_path / "other"
    other.mkdir()
    (other / "index.html").write_text("<p>another design</p>")
    assert "pass --replace" in bee("design", "import", str(other), "--id", "shop-export", code=1)
    assert "Replaced bundle shop-export: 1 file, 1 element" in bee(
        "design", "import", str(other), "--id", "shop-export", "--replace"
    )


def test_visual_spec_region_show_diff_and_report(bee: Callable[..., str], root: Path, tmp_path: Path) -> None:
    write_evidence(root / "evidence" / "ref", {("home", "desktop"): page_image(200, 100)})
    out = bee("visual", "spec", "create", "shop", "--from", str(root / "evidence" / "ref"), "--max-diff-ratio", "0.001")
    assert "spec shop: threshold 0.1, anti-aliasing ignore, ≤ 0.001 of pixels" in out
    out = bee("visual", "spec", "region", "shop", "box", "--box", "15,25,50,30", "--max-diff-pixels", "900")
    assert "region box [15, 25, 50, 30] (* @ *): threshold 0.1, anti-aliasing ignore, ≤ 900 px" in out
    assert "either" not in bee("visual", "spec", "region", "shop", "bad", "--box", "1,2,3", "--ignore", code=1)
    assert "not both" in bee(
        "visual", "spec", "region", "shop", "bad", "--box", "1,2,3,4", "--ignore", "--threshold", "0.2", code=1
    )
    assert json.loads(bee("visual", "spec", "show", "shop", "--json"))["regions"][0]["maxDiffPixels"] == 900

    write_evidence(root / "evidence" / "same", {("home", "desktop"): page_image(200, 100)})
    assert bee("visual", "report", "shop", "evidence/same").startswith("decision: pass")
    write_evidence(root / "evidence" / "red", {("home", "desktop"): page_image(200, 100, color=(192, 57, 43))})
    assert bee("visual", "report", "shop", "evidence/red").startswith("decision: pass")  # inside the region's 900
    write_evidence(root / "evidence" / "moved", {("home", "desktop"): page_image(200, 100, shift=1)})
    out = bee("visual", "report", "shop", "evidence/moved", code=1)
    assert out.startswith("decision: fail") and "layout shift" in out
    write_evidence(root / "evidence" / "partial", {("cart", "desktop"): page_image(200, 100)})
    assert bee("visual", "report", "shop", "evidence/partial", code=2).startswith("decision: inconclusive")

    first, second = tmp_path / "a.png", tmp_path / "b.png"
    save_png(first, page_image())
    save_png(second, page_image())
    assert bee("visual", "diff", str(first), str(second)).startswith("0 pixels differ")
    save_png(second, page_image(shift=1))
    assert "layout shift by (0, 1) px" in bee("visual", "diff", str(first), str(second), code=1)
    save_png(second, page_image(121, 80))
    assert "images of different sizes cannot be compared: a.png is 120×80, b.png is 121×80" in bee(
        "visual", "diff", str(first), str(second), code=1
    )
