"""The design host as editors run it: `bee design mcp --stdio --root …`, spoken to by the official client."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bee_contracts import load_catalog, version_info
from bee_design import layout
from bee_design.bundle.manifest import Manifest
from tests.conftest import ERAS, bee_executable, expect_tool_errors, warm_env
from tests.design.helpers import design_client, design_process, import_shop, make_root

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]
#: The tests through a real process run cold and warm (the in-process ones have no transport to differ).
both_modes = pytest.mark.usefixtures("host_mode")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    target = tmp_path / "checkout"
    target.mkdir()
    return make_root(target.resolve())


@pytest.fixture
def shop(root: Path) -> Manifest:
    return import_shop(root)


@pytest.mark.parametrize("era", ERAS)
@both_modes
async def test_the_host_lists_exactly_its_catalog_and_stamps_the_contract(root: Path, era: str) -> None:
    async with design_process(root, era) as client:
        listed = await client.list_tools()
    served = [tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in listed.tools]
    assert served == [spec.to_wire() for spec in load_catalog("design")]
    assert listed.meta["dev.bee/contract"] == version_info()


@pytest.mark.parametrize("era", ERAS)
async def test_list_slice_and_verify_answer_untrusted_data_never_approval(root: Path, shop: Manifest, era: str) -> None:
    subprocess.run(
        [
            str(bee_executable()),
            "design",
            "map",
            "shop:index.html",
            "--to",
            "src/ShopPage.tsx#ShopPage",
            "--root",
            str(root),
        ],
        check=True,
        capture_output=True,
    )
    async with design_client(root, era) as client:
        listed = (await client.call_tool("bee_design_list", {})).structured_content
        sliced = await client.call_tool("bee_design_slice", {"id": "shop:index.html", "budgetBytes": 65536})
        verified = (await client.call_tool("bee_design_verify", {})).structured_content
    for result in (listed, sliced.structured_content, verified):
        assert result["schemaVersion"] == 1 and result["ok"] is True
        assert result["trusted"] is False and result["acceptance"] is False
    [bundle] = listed["data"]["bundles"]
    assert bundle["path"] == ".bee/design/bundles/shop" and bundle["fileCount"] == 7
    states = {e["id"]: e["state"] for e in bundle["elements"]}
    assert states["shop:index.html"] == "mapped" and states["shop:styles/main.css"] == "imported"
    assert "<html" not in json.dumps(listed)  # no HTML dump
    data = sliced.structured_content["data"]
    # Everything fits, every reference resolves and the element is mapped: nothing is missing.
    assert data["complete"] is True and data["missing"] == [] and data["omittedFiles"] == 0
    assert [f["path"] for f in data["files"]][:2] == ["index.html", "app.js"]
    assert data["files"][0]["text"].startswith("<!doctype html>")
    assert data["sources"][0]["text"].startswith("export function ShopPage")
    assert sliced.structured_content["resultBytes"] == len(
        sliced.model_dump_json(
            by_alias=True, exclude_none=True, include={"content", "structured_content", "is_error"}
        ).encode()
    )
    assert verified["data"]["intact"] is True and verified["data"]["states"]["mapped"] == 1


@pytest.mark.parametrize("era", ERAS)
async def test_bad_input_gets_the_error_envelope_every_client_reads(root: Path, shop: Manifest, era: str) -> None:
    blob = next(e for e in shop.files if e.path == "styles/main.css")
    damaged = root / layout.STATE_DIR / layout.blob_path(blob.sha256)
    damaged.chmod(0o644)
    damaged.write_text("tampered")
    async with design_client(root, era) as client:
        await expect_tool_errors(
            client,
            [
                ("bee_design_slice", {"id": "shop:nope.html"}, "not_found", "bundle 'shop' has no element 'nope.html'"),
                ("bee_design_slice", {"id": "other:index.html"}, "not_found", "no bundle 'other' is imported here"),
                ("bee_design_slice", {"id": "index.html"}, "invalid_argument", "does not match the pattern"),
                ("bee_design_slice", {"id": "shop:index.html", "budgetBytes": 100}, "invalid_argument", "512"),
                ("bee_design_slice", {"id": "shop:styles/main.css"}, "hash_mismatch", "no longer matches its manifest"),
                ("bee_design_list", {"bundle": "nope"}, "not_found", "imported bundles: shop"),
                ("bee_design_verify", {"bundle": "nope"}, "not_found", "imported bundles: shop"),
                ("bee_visual_report", {"spec": "nope", "evidence": "x"}, "not_found", "no visual spec 'nope'"),
            ],
        )
        verified = (await client.call_tool("bee_design_verify", {})).structured_content["data"]
    assert verified["intact"] is False
    assert {(f["check"], f["code"], f["subject"]) for f in verified["failures"]} == {
        ("file", "hash_mismatch", "shop/styles/main.css")
    }


@pytest.mark.parametrize(
    ("given", "message"),
    [("relative/path", "is relative; pass an absolute path"), ("/no/such/root", "does not exist")],
)
def test_the_host_refuses_a_relative_or_missing_root(tmp_path: Path, given: str, message: str) -> None:
    completed = subprocess.run(
        [str(bee_executable()), "design", "mcp", "--stdio", "--root", given],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert completed.returncode == 2 and message in completed.stderr and "--root" in completed.stderr


def test_the_host_refuses_a_root_that_is_a_file_and_needs_a_root(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for args in (["--root", str(tmp_path / "file")], []):
        completed = subprocess.run(
            [str(bee_executable()), "design", "mcp", "--stdio", *args],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        assert completed.returncode == 2 and "--root" in completed.stderr


def test_doctor_finds_and_checks_the_design_host(root: Path, warm_runtime: Path) -> None:
    completed = subprocess.run(
        [str(bee_executable()), "doctor", "--checkout", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, **warm_env(warm_runtime)},
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    checks = [c for c in json.loads(completed.stdout) if c["host"] == "design"]
    assert {(c["era"], c["mode"]) for c in checks} == {(era, mode) for era in ERAS for mode in ("cold", "warm")}
    assert all(c["ok"] and c["tools"] == 4 for c in checks)


def test_the_root_is_fixed_at_startup_and_paths_resolve_inside_it(root: Path, shop: Manifest, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    shutil.copytree(root / "src", outside)
    (root / "link").symlink_to(outside, target_is_directory=True)
    completed = subprocess.run(
        [str(bee_executable()), "design", "map", "shop:index.html", "--to", "link/ShopPage.tsx", "--root", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 1 and "symlink to a place outside" in completed.stderr
