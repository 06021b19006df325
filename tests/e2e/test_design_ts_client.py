"""The design host through the official TypeScript SDK client (what Claude Code, Cursor and VS Code are built on).

Those clients check ``structuredContent`` against a tool's success ``outputSchema`` even on errors, so every
design result must match its schema and every failure must be ``isError`` with the envelope as text only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bee_contracts import load_catalog
from bee_design import layout
from bee_design.layout import DesignFiles
from bee_design.visual.authoring import create_spec
from tests.conftest import bee_executable
from tests.design.helpers import import_shop, make_root, page_image, write_evidence
from tests.harness import node

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(node.missing_reason() is not None, reason=str(node.missing_reason())),
]


def success(result: dict[str, Any]) -> dict[str, Any]:
    """A successful design answer: structured content equal to its text, untrusted and never approval."""
    structured = node.success(result)
    assert structured["trusted"] is False and structured["acceptance"] is False
    return structured


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "checkout").mkdir()
    checkout = make_root((tmp_path / "checkout").resolve())
    shop = import_shop(checkout)
    damaged = checkout / layout.STATE_DIR / layout.blob_path(shop.file_index["app.js"].sha256)
    damaged.chmod(0o644)
    damaged.write_text("tampered")
    reference = write_evidence(checkout / "evidence" / "reference", {("home", "desktop"): page_image()})
    create_spec(DesignFiles(checkout), "shop", reference)
    write_evidence(checkout / "evidence" / "moved", {("home", "desktop"): page_image(shift=1)})
    return checkout


def test_every_design_tool_answers_the_typescript_sdk_client_readably(root: Path) -> None:
    server = node.stdio_server(bee_executable(), "design", "mcp", "--stdio", "--root", str(root), cwd=root)
    out = node.ts_client(
        server,
        [
            ("bee_design_list", {}),
            ("bee_design_slice", {"id": "shop:styles/main.css", "budgetBytes": 4096}),
            ("bee_design_verify", {}),
            ("bee_visual_report", {"spec": "shop", "evidence": "evidence/moved"}),
            ("bee_design_slice", {"id": "shop:index.html"}),
            ("bee_design_slice", {"id": "shop:nope.html"}),
            ("bee_design_slice", {"id": "shop:index.html", "budgetBytes": 100}),
            ("bee_visual_report", {"spec": "shop", "evidence": "../outside"}),
        ],
    )
    assert out["serverVersion"]["name"] == "bee-design"
    assert out["tools"] == [spec.to_wire() for spec in load_catalog("design")]
    listed, sliced, verified, report, damaged, unknown, small, outside = (node.answered(c) for c in out["calls"])
    assert success(listed)["data"]["bundles"][0]["id"] == "shop"
    assert success(sliced)["data"]["files"][0]["text"].startswith("@import")
    failures = success(verified)["data"]["failures"]
    assert [(f["check"], f["code"], f["subject"]) for f in failures] == [("file", "hash_mismatch", "shop/app.js")]
    assessment = success(report)
    assert assessment["decision"] == "fail" and assessment["findings"][0]["shift"]["dy"] == 1
    assert "no longer matches its manifest" in node.tool_error(damaged, "hash_mismatch")["error"]
    assert "has no element 'nope.html'" in node.tool_error(unknown, "not_found")["error"]
    assert "512" in node.tool_error(small, "invalid_argument")["error"]
    assert "climbs out" in node.tool_error(outside, "outside_root")["error"]
