"""Signing in with two tracker replicas on one PostgreSQL store behind one address, as a team runs them: the
official Python and TypeScript SDK clients sign in through the board in the system Chromium and work, whichever
replica answers each request (the kernel hands each connection to either); a code raced to both replicas at once
is spent by exactly one and its grant revoked; a refresh token rotated on one replica is refused as a replay on the
other.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import NEEDS_CHROMIUM, _pg_missing_reason
from tests.harness.node import missing_reason
from tests.harness.postgres import PostgresServer
from tests.harness.signin import (
    BrowserFlow,
    OAuthClient,
    Person,
    RoundRobin,
    board_link_sign_in,
    chromium,
    close_all,
    python_client,
    structured,
    typescript_client,
)
from tests.harness.tracker import TrackerProcess

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(_pg_missing_reason() is not None, reason=str(_pg_missing_reason())),
    NEEDS_CHROMIUM,
]


class Replicas:
    """Two `bee tracker serve --sign-in builtin` on one store behind one address (a round-robin in front of them, as
    a load balancer: each connection to the next replica), each also reachable on its own port (with the shared
    address as its Host, so a test can send one request to each)."""

    def __init__(self, folder: Path, store: str) -> None:
        self.replicas = []
        for number in range(2):
            replica = TrackerProcess(folder / f"replica-{number}", store, "--sign-in", "builtin", "--access-log")
            replica.home.mkdir(parents=True)
            if number:  # one key for the pasted tokens of both, as a team's secret file is
                (replica.home / "signing-key").write_bytes((folder / "replica-0" / "signing-key").read_bytes())
                (replica.home / "signing-key").chmod(0o600)
            replica.start()
            self.replicas.append(replica)
        self.front = RoundRobin([replica.port for replica in self.replicas])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.front.port}/mcp"

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.front.port}"

    def stop(self) -> None:
        self.front.close()
        for replica in self.replicas:
            replica.stop()


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory, postgres_server: PostgresServer) -> Iterator[Replicas]:
    pair = Replicas(tmp_path_factory.mktemp("replicas"), postgres_server.create_database())
    yield pair
    pair.stop()
    for replica in pair.replicas:
        assert "Traceback" not in replica.log.read_text()


@pytest.fixture(scope="module")
async def browser() -> AsyncIterator[Any]:
    async with chromium() as launched:
        yield launched


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    close_all()


async def test_both_sdk_clients_sign_in_and_work_across_replicas(replicas: Replicas, browser: Any) -> None:
    first = replicas.replicas[0]
    ann = BrowserFlow(browser, board_link_sign_in(first, "ann@example.com"))
    async with python_client(replicas.url, ann) as (client, provider):
        issue = structured(await client.call_tool("create", {"title": "Across replicas", "priority": 1}))
        for _ in range(6):  # connections land on either replica; each answers with the same state
            assert issue["id"] in [i["id"] for i in structured(await client.call_tool("ready", {}))["issues"]]
        assert structured(await client.call_tool("claim", {"id": issue["id"]}))["assignee"] == "ann@example.com"
        provider.context.token_expiry_time = 1.0  # expired: it refreshes, on whichever replica
        done = structured(await client.call_tool("complete", {"id": issue["id"], "summary": "done"}))
        assert done["status"] == "closed"
    if reason := missing_reason():
        pytest.skip(reason)
    bob = BrowserFlow(browser, board_link_sign_in(first, "bob@example.com"))
    created = await typescript_client(replicas.url, bob, [("create", {"title": "TS across replicas", "priority": 2})])
    other = structured(created["calls"][0]["result"])
    answered = await typescript_client(
        replicas.url, bob, [("ready", {}), ("claim", {"id": other["id"]}), ("complete", {"id": other["id"]})]
    )
    ready, claimed, completed = (structured(c["result"]) for c in answered["calls"])
    assert other["id"] in [i["id"] for i in ready["issues"]]
    assert claimed["assignee"] == "bob@example.com" and completed["status"] == "closed"
    # Both replicas served the sign-ins and the calls (each logs the requests it answered).
    assert min(replicas.front.served) > 0, replicas.front.served
    for replica in replicas.replicas:
        log = replica.log.read_text()
        assert '"POST /mcp HTTP/1.1" 200' in log, f"replica {replica.home.name} answered no call"


def test_a_code_raced_to_two_replicas_is_spent_once_and_its_grant_revoked(replicas: Replicas) -> None:
    one, two = replicas.replicas
    client = OAuthClient(f"http://127.0.0.1:{one.port}", host=replicas.host)
    code, verifier = client.code(Person(one, "ann@example.com", host=replicas.host))
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": client.redirect_uri,
        "client_id": client.client_id,
    }

    def exchange(replica: TrackerProcess) -> httpx.Response:
        return httpx.post(
            f"http://127.0.0.1:{replica.port}/token", data=form, headers={"Host": replicas.host}, timeout=30
        )

    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(exchange, [one, two]))
    assert sorted(a.status_code for a in answers) == [200, 400], [a.text for a in answers]
    [won] = [a.json() for a in answers if a.status_code == 200]
    [lost] = [a.json() for a in answers if a.status_code == 400]
    assert lost["error"] == "invalid_grant" and "already used" in lost["error_description"]
    # The winner's grant went with the race: its refresh token is refused on either replica.
    refreshed = httpx.post(
        f"http://127.0.0.1:{two.port}/token",
        data={"grant_type": "refresh_token", "refresh_token": won["refresh_token"], "client_id": client.client_id},
        headers={"Host": replicas.host},
        timeout=30,
    )
    assert refreshed.status_code == 400 and "revoked" in refreshed.json()["error_description"]


def test_a_refresh_token_rotated_on_one_replica_is_a_replay_on_the_other(replicas: Replicas) -> None:
    one, two = replicas.replicas
    client = OAuthClient(f"http://127.0.0.1:{one.port}", host=replicas.host)
    tokens = client.tokens(Person(one, "ann@example.com", host=replicas.host))
    rotated = client.refresh(tokens["refresh_token"])
    assert rotated.status_code == 200
    replay = httpx.post(
        f"http://127.0.0.1:{two.port}/token",
        data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client.client_id},
        headers={"Host": replicas.host},
        timeout=30,
    )
    assert replay.status_code == 400 and "already used" in replay.json()["error_description"]
    # The access token the rotation gave still works on both until it expires (no lookup per request); its
    # refresh token does not.
    for replica in (one, two):
        listed = httpx.post(
            f"http://127.0.0.1:{replica.port}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={
                "Host": replicas.host,
                "Accept": "application/json, text/event-stream",
                "Authorization": f"Bearer {rotated.json()['access_token']}",
            },
            timeout=30,
        )
        assert listed.status_code == 200
    assert client.refresh(rotated.json()["refresh_token"]).status_code == 400
