"""`bee tracker serve` over real HTTP with real signed tokens, on SQLite and PostgreSQL, in both protocol eras."""

import hashlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from bee_contracts import load_catalog
from bee_tracker import skills
from tests.conftest import TRACKER_ERAS, error_of
from tests.harness.tracker import TrackerProcess, tracker_client

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ALICE, BOB = "alice@example.com", "bob@example.com"


async def call(client: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        return {"error": error_of(result)}
    body = result.structured_content
    assert json.loads(result.content[0].text) == body
    data: dict[str, Any] = body["data"]
    return data


async def custom(client: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    import mcp_types

    request = mcp_types.Request[dict[str, Any], str](method=method, params=params)
    answer: dict[str, Any] = await client.session.send_request(request, TypeAdapter(dict[str, Any]))
    return answer


@pytest.mark.parametrize("era", TRACKER_ERAS)
async def test_tools_skills_and_instructions(
    store_url: str, tracker_factory: Callable[..., TrackerProcess], era: str
) -> None:
    server = tracker_factory(store_url)
    async with tracker_client(server.url, server.token(ALICE), era) as client:
        listed = await client.list_tools()
        served = [tool.model_dump(by_alias=True, mode="json", exclude_none=True) for tool in listed.tools]
        assert served == [spec.to_wire() for spec in load_catalog("tracker")]
        assert client.protocol_version == ("2025-11-25" if era == "legacy" else "2026-07-28")
        assert client.server_capabilities.extensions == {skills.EXTENSION_ID: {}}
        assert client.server_capabilities.resources is not None
        assert skills.SKILL_URI in client.instructions

        listing = await custom(client, "skills/list", {})
        [entry] = listing["skills"]
        assert entry["uri"] == skills.SKILL_URI
        assert entry["frontmatter"]["name"] == "beads-engineering-backlog"
        got = await custom(client, "skills/get", {"uri": skills.SKILL_URI})
        assert got["skill"] == entry
        if era != "legacy":
            assert listing["ttlMs"] > 0 and listing["cacheScope"] == "public"
        for resource in entry["resources"]:
            read = await client.read_resource(resource["uri"])
            data = read.contents[0].text.encode("utf-8")
            assert "sha256:" + hashlib.sha256(data).hexdigest() == resource["digest"]
            assert len(data) == resource["size"]
        text = (await client.read_resource(skills.SKILL_URI)).contents[0].text
        assert skills.parse_frontmatter(text) == entry["frontmatter"]
        assert "Where Beads stops" in text and "orchestrator" in text
        with pytest.raises(MCPError) as info:
            await custom(client, "skills/get", {"uri": "skill://nope/SKILL.md"})
        assert info.value.error.code == -32602
        with pytest.raises(MCPError):
            await client.read_resource("skill://nope/SKILL.md")


@pytest.mark.parametrize("era", TRACKER_ERAS)
async def test_a_team_workflow_with_attributed_writes(
    store_url: str, tracker_factory: Callable[..., TrackerProcess], era: str
) -> None:
    server = tracker_factory(store_url)
    async with (
        tracker_client(server.url, server.token(ALICE), era) as alice,
        tracker_client(server.url, server.token(BOB), era) as bob,
    ):
        epic = await call(alice, "create", title="Ship search", issue_type="epic", priority=1)
        task = await call(
            alice,
            "create",
            title="Index titles",
            parent=epic["id"],
            labels=["search"],
            acceptance_criteria="search finds titles",
            actor="mallory@example.com",
        )
        assert task["id"] == f"{epic['id']}.1"
        ready = await call(bob, "ready", labels=["search"])
        assert [i["id"] for i in ready["issues"]] == [task["id"]]
        claimed = await call(bob, "claim", id=task["id"], actor=ALICE)
        assert claimed["assignee"] == BOB  # the token decides, never the argument
        refused = await call(alice, "claim", id=task["id"])
        assert refused["error"]["code"] == "conflict" and BOB in refused["error"]["error"]
        await call(alice, "add_note", id=task["id"], text="Titles live in issues.title")
        handed = await call(
            bob, "handoff", id=task["id"], done="schema", remaining="tests", next="write the FTS test", release=True
        )
        assert handed["released"] is True and handed["assignee"] is None
        await call(alice, "claim", id=task["id"])
        blocked = await call(alice, "complete", id=epic["id"])
        assert blocked["error"]["code"] == "blocked" and task["id"] in blocked["error"]["details"]["children"]
        done = await call(alice, "complete", id=task["id"], summary="indexed", evidence="pytest: 4 passed")
        assert done["status"] == "closed"
        got = await call(bob, "get", id=task["id"])
        authors = [c["author"] for c in got["issue"]["comments"]]
        assert authors == [ALICE, BOB, ALICE]
        assert got["issue"]["created_by"] == ALICE and got["state_revision"] >= 4
        found = await call(bob, "search", query="titles", status=["closed"])
        assert [i["id"] for i in found["issues"]] == [task["id"]]
        linked = await call(alice, "link", id=epic["id"], target=task["id"], type="related")
        assert linked["changed"] is True


async def test_every_bad_input_has_a_code(store_url: str, tracker_factory: Callable[..., TrackerProcess]) -> None:
    server = tracker_factory(store_url)
    async with (
        tracker_client(server.url, server.token(ALICE)) as alice,
        tracker_client(server.url, server.token(BOB)) as bob,
    ):
        a = (await call(alice, "create", title="a"))["id"]
        b = (await call(alice, "create", title="b"))["id"]
        cases = [
            (alice, "get", {"id": "t-nope"}, "not_found"),
            (alice, "update", {"id": a, "status": "sideways"}, "invalid_argument"),
            (alice, "update", {"id": a, "priority": 9}, "invalid_argument"),
            (alice, "update", {"id": a, "issue_type": "saga"}, "invalid_argument"),
            (alice, "update", {"id": a}, "invalid_argument"),
            (alice, "create", {"title": "x" * 501}, "invalid_argument"),
            (alice, "create", {"title": "big", "description": "d" * 65537}, "invalid_argument"),
            (alice, "link", {"id": a, "target": a}, "invalid_argument"),
            (alice, "link", {"id": a, "target": "t-nope"}, "not_found"),
            (alice, "handoff", {"id": a}, "invalid_argument"),
            (alice, "update", {"id": a, "defer_until": "not a date"}, "invalid_argument"),
            (alice, "update", {"id": a, "status": "tombstone"}, "invalid_argument"),
            # Schema-valid, but 852 KiB as get would return it: refused, so get can always answer.
            (alice, "create", {"title": "huge", "description": "\x01" * 65536}, "invalid_argument"),
        ]
        for client, tool, arguments, code in cases:
            answer = await call(client, tool, **arguments)
            assert answer.get("error", {}).get("code") == code, (tool, arguments, answer)
        await call(alice, "link", id=a, target=b)
        cycle = await call(alice, "link", id=b, target=a)
        assert cycle["error"]["code"] == "invalid_argument" and "cycle" in cycle["error"]["error"]
        revision = (await call(alice, "get", id=b))["state_revision"]
        await call(alice, "update", id=b, priority=0, expected_revision=revision)
        stale = await call(bob, "update", id=b, priority=4, expected_revision=revision)
        assert stale["error"]["code"] == "conflict"
        assert stale["error"]["details"]["state_revision"] == revision + 1
        await call(alice, "claim", id=b)
        forbidden = await call(bob, "release", id=b, reason="mine")
        assert forbidden["error"]["code"] == "forbidden" and forbidden["error"]["retryable"] is False
        # The claim holds: bob cannot take it, drop it or finish it through any other tool.
        for tool, arguments in (
            ("update", {"id": b, "assignee": BOB}),
            ("update", {"id": b, "status": "open", "assignee": None}),
            ("complete", {"id": b, "summary": "mine"}),
            ("handoff", {"id": b, "done": "x", "release": True}),
        ):
            answer = await call(bob, tool, **arguments)
            assert answer["error"]["code"] == "forbidden" and ALICE in answer["error"]["error"], (tool, answer)
        assert (await call(bob, "update", id=b, title="bob may still edit the title"))["assignee"] == ALICE
        released = await call(alice, "release", id=b)
        assert released["assignee"] is None


async def test_http_edges_auth_methods_body_and_host(
    tracker_factory: Callable[..., TrackerProcess], tmp_path: Path
) -> None:
    server = tracker_factory()
    base = f"http://127.0.0.1:{server.port}"
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    with httpx.Client(timeout=30) as http:
        assert http.get(f"{base}/health").json()["status"] == "ok"
        missing = http.post(f"{base}/mcp", content=body, headers=headers)
        assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith(
            'Bearer realm="bee-tracker"'
        )
        bad = http.post(f"{base}/mcp", content=body, headers={**headers, "Authorization": "Bearer x.y.z"})
        assert bad.status_code == 401 and 'error="invalid_token"' in bad.headers["www-authenticate"]
        token = server.token(ALICE)
        auth = {**headers, "Authorization": f"Bearer {token}"}
        assert http.post(f"{base}/mcp", content=body, headers=auth).status_code == 200
        get = http.get(f"{base}/mcp", headers=auth)
        assert get.status_code == 405 and get.headers["allow"] == "POST"
        huge = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "add_note", "arguments": {"id": "t", "text": "x" * 600_000}},
            }
        )
        assert http.post(f"{base}/mcp", content=huge, headers=auth).status_code == 413
        rebinding = http.post(f"{base}/mcp", content=body, headers={**auth, "Host": "evil.example:80"})
        assert rebinding.status_code == 421
        origin = http.post(f"{base}/mcp", content=body, headers={**auth, "Origin": "http://evil.example"})
        assert origin.status_code == 403


async def test_logs_omit_task_text_tokens_and_secrets(
    tracker_factory: Callable[..., TrackerProcess], tmp_path: Path
) -> None:
    server = tracker_factory(None, "--log-level", "debug", "--access-log")
    token = server.token(ALICE)
    async with tracker_client(server.url, token) as client:
        created = await call(client, "create", title="zebra-secret-title", description="quokka-private-text")
        await call(client, "add_note", id=created["id"], text="narwhal-note-body")
    forged = httpx.post(
        server.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {token}x"},
        timeout=30,
    )
    assert forged.status_code == 401
    server.stop()
    log = server.log.read_text()
    secret = (server.home / "signing-key").read_text().strip()
    for needle in ("zebra-secret-title", "quokka-private-text", "narwhal-note-body", token, secret):
        assert needle not in log
    assert "POST /mcp" in log  # the access log is on: requests are logged, their content is not


def test_cli_import_export_round_trip_and_bad_line(tmp_path: Path) -> None:
    bee = str(Path(sys.executable).parent / "bee")
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "beads" / "NVIDIA__skyhook.jsonl"
    home = tmp_path / "home"
    imported = subprocess.run(
        [bee, "tracker", "import", "--home", str(home), str(fixture)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(imported.stdout)["imported"] == 7
    out = tmp_path / "out.jsonl"
    subprocess.run([bee, "tracker", "export", "--home", str(home), str(out)], check=True, timeout=120)
    assert out.read_bytes() == fixture.read_bytes()
    broken = tmp_path / "broken.jsonl"
    broken.write_text(fixture.read_text().splitlines()[0] + "\n{broken\n")
    fresh = tmp_path / "fresh"
    failed = subprocess.run(
        [bee, "tracker", "import", "--home", str(fresh), str(broken)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert failed.returncode != 0 and "line 2" in failed.stderr
    listing = subprocess.run(
        [bee, "tracker", "export", "--home", str(fresh)], capture_output=True, text=True, timeout=120, check=True
    )
    assert listing.stdout == ""


async def test_serve_and_token_find_the_same_home_from_anywhere_in_a_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.harness.tracker import TrackerProcess

    monkeypatch.delenv("BEE_TRACKER_HOME", raising=False)
    monkeypatch.delenv("BEE_INSTANCE_ROOT", raising=False)
    checkout = tmp_path / "checkout"
    (checkout / ".bee").mkdir(parents=True)
    (checkout / "server" / "dir").mkdir(parents=True)
    (checkout / "client" / "dir").mkdir(parents=True)
    home = checkout / ".bee" / "tracker"
    server = TrackerProcess(home)
    server.pass_home, server.cwd, server.log = False, checkout / "server" / "dir", tmp_path / "server.log"
    server.start()
    try:
        assert oct(home.stat().st_mode & 0o777) == "0o700" and (home / ".gitignore").read_text() == "*\n"
        assert oct((home / "signing-key").stat().st_mode & 0o777) == "0o600"
        bee = str(Path(sys.executable).parent / "bee")
        minted = subprocess.run(
            [bee, "tracker", "token", "--actor", ALICE],
            cwd=checkout / "client" / "dir",
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        async with tracker_client(server.url, minted.stdout.strip()) as client:
            created = await call(client, "create", title="found the same key")
            assert created["id"]
    finally:
        server.stop()


def test_startup_verifies_the_store_before_listening(tmp_path: Path) -> None:
    from tests.harness.postgres import free_port
    from tests.harness.tracker import TrackerProcess

    dead = f"postgresql://nobody@127.0.0.1:{free_port()}/none?connect_timeout=2"
    process = TrackerProcess(tmp_path / "home", dead)
    with pytest.raises(RuntimeError, match="exited"):
        process.start(timeout=60)
