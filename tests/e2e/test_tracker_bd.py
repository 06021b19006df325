"""`bee bd --url`: Beads' command line against a real `bee tracker serve` over HTTP with real tokens, answering as
the local store answers, byte for byte; failing as a network client must; and claims raced from many processes,
the command line mixed with an MCP client, with exactly one winner."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.harness.tracker import TrackerProcess, tracker_client
from tests.tracker.bd.run import ALICE, EXPORTS, bd, loaded

pytestmark = pytest.mark.e2e

VC = next(p for p in EXPORTS if p.stem == "steveyegge__vc")
SQLITE_ERA = next(p for p in EXPORTS if p.stem == "gastownhall__beads__sqlite-era")


def _remote(server: TrackerProcess, *argv: str, actor: str = ALICE) -> subprocess.CompletedProcess[str]:
    return bd("--url", server.url, *argv, env={"BEE_TRACKER_TOKEN": server.token(actor)})


def test_every_reading_command_answers_the_same_bytes_locally_and_over_http(
    store_url: str, tracker_factory: Callable[..., TrackerProcess]
) -> None:
    url = loaded(store_url, SQLITE_ERA)
    server = tracker_factory(url)
    listed = bd("list", "--all", "-n", "0", "--json", store=url).json
    linked = next(i["id"] for i in listed if i.get("dependencies"))
    commented = next(i["id"] for i in listed if i["comment_count"])
    for argv in (
        ["ready", "--json"],
        ["ready"],
        ["ready", "-n", "3", "--plain"],
        ["list", "--json"],
        ["list", "--all", "-n", "0", "--json"],
        ["list", "--status", "closed", "--flat"],
        ["show", linked, commented, "--json"],
        ["show", commented],
        ["search", "bd-1", "--status", "all", "--json"],
        ["search", "import"],
        ["blocked", "--json"],
        ["stats", "--json"],
        ["dep", "tree", linked, "--direction", "both", "--json"],
        ["comments", commented, "--json"],
        ["label", "list", linked, "--json"],
        ["prime"],
    ):
        as_alice = ["--actor", ALICE] if argv[0] == "prime" else []  # prime is about whoever runs it: the token's
        local, remote = bd(*as_alice, *argv, store=url), _remote(server, *argv)
        assert remote.returncode == local.returncode == 0, (argv, remote.stderr)
        if argv[0] == "prime":  # the one line that names where the commands go
            assert remote.stdout.replace(f"the tracker at {server.url}", "X") == local.stdout.replace(
                f"the store at {url}", "X"
            )
            continue
        assert remote.stdout == local.stdout, argv


#: A time written during the session (the two sessions run a moment apart).
_NOW = re.compile(r'"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z"')


def _session(run: Callable[..., subprocess.CompletedProcess[str]]) -> list[str]:
    """An agent's loop as its instruction file spells it: ready, claim, comment, close with claim-next, then the
    next by ready --claim."""
    ready = run("ready", "-n", "2", "--json")
    first = json.loads(ready.stdout)[0]["id"]
    steps = [
        ready,
        run("update", first, "--claim", "--json"),
        run("comments", "add", first, "Working on it: <parser> & tests", "--json"),
        run("show", first, "--json"),
        run("close", first, "--reason", "Done: parser fixed", "--claim-next", "--json"),
    ]
    following = json.loads(steps[-1].stdout)["claimed"]["id"]
    steps += [
        run("close", following, "--reason", "Done too", "--json"),
        run("ready", "--claim", "--json"),
        run("ready", "-n", "2", "--json"),
    ]
    return [f"{step.returncode}\n{_NOW.sub('<now>', step.stdout)}\n{step.stderr}" for step in steps]


def _answer(step: str) -> Any:
    """The JSON answer of a step (its stdout; its stderr follows)."""
    return json.JSONDecoder().raw_decode(step.split("\n", 1)[1].replace("<now>", '"t"'))[0]


def test_a_scripted_agent_session_prints_the_same_bytes_locally_and_over_http(
    store_url: str, tmp_path: Path, tracker_factory: Callable[..., TrackerProcess]
) -> None:
    local_store = loaded(store_url, VC)
    served = loaded(str(tmp_path / "served.db"), VC)
    server = tracker_factory(served)
    local = _session(lambda *argv: bd("--actor", ALICE, *argv, store=local_store))
    remote = _session(lambda *argv: _remote(server, *argv))
    assert remote == local
    assert [step.split("\n", 1)[0] for step in local] == ["0"] * 8
    shown = _answer(local[3])
    assert shown[0]["comments"][-1]["text"] == "Working on it: <parser> & tests"
    closed = _answer(local[4])
    assert closed["closed"][0]["status"] == "closed" and closed["closed"][0]["assignee"] == ALICE
    assert closed["claimed"]["status"] == "in_progress" and closed["claimed"]["assignee"] == ALICE
    assert _answer(local[5])[0]["status"] == "closed"
    (taken,) = _answer(local[6])
    assert taken["status"] == "in_progress" and taken["id"] not in (closed["claimed"]["id"], shown[0]["id"])
    assert taken["id"] not in [issue["id"] for issue in _answer(local[7])]


def _token_file(tmp_path: Path, token: str, mode: int) -> Path:
    path = tmp_path / "token"
    path.write_text(token + "\n")
    path.chmod(mode)
    return path


def test_tokens_urls_and_trackers_that_fail_say_what_to_change(
    tmp_path: Path, tracker_factory: Callable[..., TrackerProcess]
) -> None:
    server = tracker_factory()
    bd("--url", server.url, "create", "x", env={"BEE_TRACKER_TOKEN": server.token(ALICE)})
    cases = [
        ({}, ["ready"], "no token: give --token-file FILE or set $BEE_TRACKER_TOKEN"),
        ({"BEE_TRACKER_TOKEN": "not a token"}, ["ready"], "does not hold a bearer token"),
        ({"BEE_TRACKER_TOKEN": "abc.def.ghi"}, ["ready"], "refused the token (HTTP 401"),
        ({}, ["--token-file", str(_token_file(tmp_path, server.token(ALICE), 0o644)), "ready"], "chmod 600"),
        ({}, ["--token-file", "token", "ready"], "absolute path"),
    ]
    for env, argv, says in cases:
        failed = bd("--url", server.url, *argv, env={"BEE_TRACKER_TOKEN": "", **env})
        assert failed.returncode == 1 and says in failed.stderr, (argv, failed.stderr)
    good = _token_file(tmp_path, server.token(ALICE), 0o600)
    assert bd("--url", server.url, "--token-file", str(good), "list", "--json").json[0]["title"] == "x"
    token = {"BEE_TRACKER_TOKEN": server.token(ALICE)}
    for url, says in (
        (server.url.replace("/mcp", "/nope"), "answered HTTP 404"),
        ("http://127.0.0.1:9/mcp", "cannot be reached"),
        ("file:///etc/passwd", "http(s) MCP endpoint"),
        ("http://user:secret@127.0.0.1:9/mcp", "must not carry credentials"),
    ):
        failed = bd("--url", url, "ready", env=token)
        assert failed.returncode == 1 and says in failed.stderr and "secret" not in failed.stderr, url
    as_json = bd("--url", "http://127.0.0.1:9/mcp", "ready", "--json", env=token)
    assert as_json.returncode == 1 and "cannot be reached" in json.loads(as_json.stdout)["error"]
    assert "--actor names who writes" in bd("--url", server.url, "--actor", "x", "ready", env=token).stderr
    refused = bd("--url", server.url, "--readonly", "create", "y", env=token)
    assert refused.returncode == 1 and "--readonly" in refused.stderr
    assert len(bd("--url", server.url, "list", "--json", env=token).json) == 1


def test_the_url_comes_from_the_environment_as_for_every_bee_client(
    tracker_factory: Callable[..., TrackerProcess],
) -> None:
    server = tracker_factory()
    env = {"BEE_TRACKER_URL": server.url, "BEE_TRACKER_TOKEN": server.token(ALICE)}
    made = bd("create", "From the environment", "--json", env=env).json
    assert made["created_by"] == ALICE  # the token's actor writes
    assert bd("show", made["id"], "--json", env=env).json[0]["title"] == "From the environment"


def _bee_bd(*argv: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "bee"), "bd", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


def test_claims_raced_from_many_processes_and_an_mcp_client_have_one_winner(
    tmp_path: Path, tracker_factory: Callable[..., TrackerProcess]
) -> None:
    """Remote `bee bd` processes, local ones on the store the tracker serves (SQLite beside a running server) and an
    MCP client all claim one issue at once: exactly one wins, every other is told who holds it."""
    store = str(tmp_path / "shared.db")
    server = tracker_factory(store)
    issue = bd("--url", server.url, "create", "Contended", "--silent", env={"BEE_TRACKER_TOKEN": server.token(ALICE)})
    issue_id = issue.stdout.strip()
    racers = [
        _bee_bd("--url", server.url, "update", issue_id, "--claim", env={"BEE_TRACKER_TOKEN": server.token(f"r{n}@x")})
        for n in range(3)
    ]
    racers += [_bee_bd("--store", store, "--actor", f"l{n}@x", "update", issue_id, "--claim", env={}) for n in range(2)]

    async def mcp_claim() -> bool:
        async with tracker_client(server.url, server.token("mcp@x")) as client:
            result = await client.call_tool("claim", {"id": issue_id})
            return not result.is_error

    mcp_won = anyio.run(mcp_claim)
    outcomes = [(racer.wait(timeout=120), *racer.communicate()) for racer in racers]
    winners = [out for code, out, _ in outcomes if code == 0] + (["mcp"] if mcp_won else [])
    assert len(winners) == 1, outcomes
    for code, _, err in outcomes:
        assert code == 0 or "is claimed by" in err, err
    holder = bd("show", issue_id, "--json", store=store).json[0]["assignee"]
    assert holder in ("mcp@x", *(f"r{n}@x" for n in range(3)), *(f"l{n}@x" for n in range(2)))


def test_ready_claim_raced_from_many_processes_and_an_mcp_client_takes_distinct_issues(
    tmp_path: Path, tracker_factory: Callable[..., TrackerProcess]
) -> None:
    """`bd ready --claim` is the tracker's claim-next: remote and local processes and an MCP client's claim without
    an id, all at once on a few issues, each take a different one, and those left over get nothing."""
    store = str(tmp_path / "shared.db")
    server = tracker_factory(store)
    made = [
        bd("--url", server.url, "create", f"Work {n}", "--silent", env={"BEE_TRACKER_TOKEN": server.token(ALICE)})
        for n in range(5)
    ]
    issues = {made_.stdout.strip() for made_ in made}
    racers = [
        _bee_bd("--url", server.url, "ready", "--claim", "--json", env={"BEE_TRACKER_TOKEN": server.token(f"r{n}@x")})
        for n in range(3)
    ]
    racers += [_bee_bd("--store", store, "--actor", f"l{n}@x", "ready", "--claim", "--json", env={}) for n in range(3)]

    async def mcp_claim() -> list[str]:
        async with tracker_client(server.url, server.token("mcp@x")) as client:
            result = await client.call_tool("claim", {})
            assert not result.is_error and result.structured_content is not None
            data = result.structured_content["data"]
            return [data["id"]] if data.get("claimed") else []

    taken = anyio.run(mcp_claim)
    for racer in racers:
        code, out, err = racer.wait(timeout=120), *racer.communicate()
        assert code == 0, err
        taken += [issue["id"] for issue in json.loads(out)]
    assert len(taken) == len(set(taken)) == len(issues) and set(taken) == issues  # 7 claimers, 5 issues
    holders = {issue["assignee"] for issue in bd("list", "--json", store=store).json}
    assert len(holders) == 5
