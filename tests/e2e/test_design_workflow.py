"""A design taken end to end as a user would: imported, mapped, captured in Chromium, specified, reported on —
the report read through a real `bee design mcp` host in both protocol eras."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ERAS, NEEDS_CHROMIUM, bee_executable
from tests.design.helpers import SHOP, design_process, make_root, static_server

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.anyio,
    NEEDS_CHROMIUM,
]


def bee(root: Path, *args: str) -> str:
    completed = subprocess.run(
        [str(bee_executable()), *args, "--root", str(root)], capture_output=True, text=True, timeout=180, check=False
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout


@pytest.fixture(scope="module")
def workflow(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Import and map the shop, capture it, make a spec; then change the brand colour and capture again."""
    base = tmp_path_factory.mktemp("workflow")
    (base / "checkout").mkdir()
    root = make_root((base / "checkout").resolve())
    site = base / "site"
    shutil.copytree(SHOP, site)
    bee(root, "design", "import", str(site), "--id", "shop")
    bee(root, "design", "map", "shop:components/button.html", "--to", "src/BuyButton.tsx#BuyButton")
    with static_server(site) as url:
        targets = [f"home={url}", f"button={url}components/button.html"]
        viewport = ["--viewport", "desktop=800x500"]
        bee(root, "design", "capture", *targets, *viewport, "--out", str(root / "evidence" / "before"))
        bee(root, "visual", "spec", "create", "shop", "--from", str(root / "evidence" / "before"))
        tokens = site / "styles" / "tokens.css"
        tokens.write_text(tokens.read_text().replace("#2f6fdb", "#c0392b"))
        bee(
            root,
            "design",
            "capture",
            *targets,
            *viewport,
            "--out",
            str(root / ".bee" / "design" / "evidence" / "after"),
        )
    bee(root, "design", "import", str(site), "--id", "shop", "--replace")
    return root, {name: os.environ[name] for name in ("HOME", "XDG_CONFIG_HOME")}


@pytest.mark.parametrize("era", ERAS)
async def test_the_host_reports_the_changed_design_as_stale_and_visually_failing(
    workflow: tuple[Path, dict[str, str]], era: str
) -> None:
    # The host runs as the user who captured (a module's fixtures run before each test gets a user of its own): the
    # evidence key is theirs, among their per-user settings.
    root, user = workflow
    async with design_process(root, era, env={**os.environ, **user}) as client:
        before = await client.call_tool("bee_visual_report", {"spec": "shop", "evidence": "evidence/before"})
        after = await client.call_tool("bee_visual_report", {"spec": "shop", "evidence": ".bee/design/evidence/after"})
        listed = (await client.call_tool("bee_design_list", {})).structured_content
        verified = (await client.call_tool("bee_design_verify", {})).structured_content
    passed = before.structured_content
    assert passed["decision"] == "pass" and passed["evidence"]["verified"] is True and passed["limitations"] == []
    assert passed["acceptance"] is False and passed["trusted"] is False
    failed = after.structured_content
    assert failed["decision"] == "fail" and failed["acceptance"] is False
    by_element = {f["element"]: f for f in failed["findings"]}
    assert by_element["button"]["status"] == "fail" and by_element["button"]["differingPixels"] > 100
    assert by_element["home"]["status"] == "fail"
    _, _, width, height = by_element["button"]["boxes"][0]
    assert width * height >= by_element["button"]["differingPixels"] > 0
    states = {e["id"]: (e["state"], e["reasons"]) for e in listed["data"]["bundles"][0]["elements"]}
    assert states["shop:components/button.html"] == (
        "stale",
        ["the design of shop:components/button.html changed since mapping"],
    )
    assert verified["data"]["intact"] is False
    assert [(f["check"], f["subject"]) for f in verified["data"]["failures"]] == [
        ("mapping", "shop:components/button.html")
    ]
