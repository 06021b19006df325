"""The first sign-in of a new user, end to end on a clean checkout: `bee up` (what `./dev up` runs once Bee is
installed), then the `bee setup-mcp --tool claude` it prints; the entry written to `.mcp.json` signs in through the
browser — the official Python SDK client's OAuth provider standing in for Claude Code reads the entry, the system
Chromium shows the tracker's consent page, the person signs in with the link `bee up`'s board command prints and
allows — and the client then works. No token is pasted anywhere, and none is in the file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import NEEDS_CHROMIUM
from tests.e2e.test_supervisor import FRESH_PATH, pasted, printed_commands
from tests.harness.postgres import free_port
from tests.harness.signin import BrowserFlow, chromium, python_client, structured
from tests.harness.supervisor import BEE, wait_until

pytestmark = [
    pytest.mark.e2e,
    NEEDS_CHROMIUM,
]


def test_a_new_user_signs_their_editor_in_through_the_browser(tmp_path: Path) -> None:
    checkout = tmp_path / "repo"
    checkout.mkdir()  # a clean checkout: nothing of Bee's in it yet
    port = free_port()
    out = tmp_path / "up.out"
    with out.open("wb") as sink:
        up = subprocess.Popen(
            [str(BEE), "up", "--checkout", str(checkout), "--port", str(port)],
            cwd=tmp_path,
            env={**os.environ, "PATH": FRESH_PATH},
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until(lambda: "Bee is up" in out.read_text() or up.poll() is not None, what="bee up to be ready")
        printed = printed_commands(out.read_text())
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        pasted(elsewhere, printed["set up your editor"])
        entry = json.loads((checkout / ".mcp.json").read_text())["mcpServers"]["bee-tracker"]
        assert entry == {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}  # no header, no token

        async def sign_in(page: Any) -> None:
            # The person runs the board command `bee up` printed and opens the link it prints, in this browser.
            link = pasted(elsewhere, printed["open the web board"]).stdout.strip().splitlines()[0]
            await page.goto(link, wait_until="load")

        async def editor() -> dict[str, Any]:
            async with chromium() as browser:
                flow = BrowserFlow(browser, sign_in)
                async with python_client(entry["url"], flow, name="Claude Code (stand-in)") as (client, _):
                    created = structured(await client.call_tool("create", {"title": "First issue", "priority": 2}))
                    claimed = structured(await client.call_tool("claim", {"id": created["id"]}))
                    return claimed

        claimed = anyio.run(editor)
        assert claimed["assignee"] == "you@example.com"
        assert "eyJ" not in (checkout / ".mcp.json").read_text()
        up.send_signal(signal.SIGINT)
        assert up.wait(timeout=60) == 0
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
