"""`bee collab …` and `bee plan …` as a user runs them, against a real `bee tracker serve` with real tokens.

Most commands run in this process (:func:`tests.harness.collab.bee_here`, the click group the console script runs);
the console script runs as a process of its own where a process is the point: keepalive's signals, a token
inherited from the environment, a prompt read from stdin, and one status.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from bee_contracts.userconfig import UserSettings
from tests.conftest import bee_executable, make_checkout
from tests.harness.collab import BOB, Joined, bee, bee_here, join
from tests.harness.tracker import TrackerProcess

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture
def tracker(tracker_factory: Callable[..., TrackerProcess], tmp_path: Path) -> TrackerProcess:
    return tracker_factory(str(tmp_path / "tracker.db"))


@pytest.fixture
def joined(tmp_path: Path, tracker: TrackerProcess) -> Joined:
    return join(tmp_path, tracker)


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (done.args, done.stdout, done.stderr)
    return done.stdout


def failed(done: subprocess.CompletedProcess[str], text: str, code: int = 1) -> None:
    assert done.returncode == code, (done.args, done.stdout, done.stderr)
    assert text in done.stdout + done.stderr, (done.stdout, done.stderr)


async def until_not_live(joined: Joined) -> None:
    with anyio.fail_after(30):
        while (await joined.lease())["live"]:
            await anyio.sleep(0.2)


async def test_join_status_renew_and_leave(joined: Joined) -> None:
    binding = joined.binding()
    assert binding["tracker"] == joined.tracker.url and binding["space"] == "team" and binding["holder"] == joined.actor
    assert binding["tokenFile"] == str(joined.token_file) and joined.token not in json.dumps(binding)
    assert binding["checkoutId"].startswith("chk-") and binding["leaseId"].startswith("lease-")
    lease = await joined.lease()
    assert lease["live"] is True and lease["checkout_id"] == binding["checkoutId"] and lease["ttl_seconds"] == 600

    assert "Live: space 'team'" in ok(joined.bee_process("collab", "status"))  # the console script, once
    status = json.loads(ok(joined.bee("collab", "status", "--json")))
    assert status["live"] is True and status["lease"]["id"] == binding["leaseId"]
    assert "Renewed lease" in ok(joined.bee("collab", "renew", "--ttl", "900"))
    assert (await joined.lease())["ttl_seconds"] == 900

    again = ok(joined.bee("collab", "join", "--tracker", joined.tracker.url, "--space", "team"))
    assert "Renewed the binding" in again and joined.binding()["leaseId"] == binding["leaseId"]  # token file kept
    failed(
        joined.bee("collab", "join", "--tracker", joined.tracker.url, "--space", "elsewhere"),
        "bound to space 'team'",
    )

    assert "Left space 'team'" in ok(joined.bee("collab", "leave"))
    failed(joined.bee("collab", "status"), "Not joined")
    assert "Not joined" in ok(joined.bee("collab", "leave"))


async def test_leaving_ends_the_lease_on_the_tracker(joined: Joined) -> None:
    lease_id = joined.binding()["leaseId"]
    ok(joined.bee("collab", "leave"))
    [lease] = await joined.calls(("lease_get", {"id": lease_id}))
    assert lease["live"] is False and lease["left_at"] is not None


async def test_an_expired_lease_cannot_be_renewed_and_status_says_so(tmp_path: Path, tracker: TrackerProcess) -> None:
    joined = join(tmp_path, tracker, ttl=1)
    await until_not_live(joined)
    failed(joined.bee("collab", "renew"), "expired at")
    failed(joined.bee("collab", "status"), "Not live")
    failed(joined.bee("plan", "create", "Too late"), "is not live")
    rejoined = ok(joined.bee("collab", "join", "--tracker", tracker.url, "--space", "team", "--ttl", "60"))
    assert "Joined space 'team'" in rejoined and (await joined.lease())["live"] is True


async def test_the_token_can_come_from_the_environment(tmp_path: Path, tracker: TrackerProcess) -> None:
    checkout = make_checkout(tmp_path / "env-checkout")
    ok(bee_here("init", cwd=checkout))
    token = {"BEE_TRACKER_TOKEN": tracker.token(BOB)}
    failed(bee_here("collab", "join", "--tracker", tracker.url, "--space", "team", cwd=checkout), "$BEE_TRACKER_TOKEN")
    ok(bee_here("collab", "join", "--tracker", tracker.url, "--space", "team", cwd=checkout, env=token))
    binding = json.loads(UserSettings(checkout / ".bee").path("collab.json").read_text())
    assert binding["tokenFile"] is None and binding["holder"] == BOB
    assert token["BEE_TRACKER_TOKEN"] not in json.dumps(binding)
    ok(bee("collab", "status", cwd=checkout, env=token))  # a process, inheriting the token from its environment
    failed(bee_here("collab", "status", cwd=checkout, env={"BEE_TRACKER_TOKEN": "x.y.z"}), "refused the token")


def test_join_needs_an_instance_and_a_tracker_url(tmp_path: Path, tracker: TrackerProcess) -> None:
    checkout = make_checkout(tmp_path / "bare")
    failed(
        bee_here("collab", "join", "--tracker", tracker.url, "--space", "team", cwd=checkout), "run `bee init` first"
    )
    ok(bee_here("init", cwd=checkout))
    failed(bee_here("collab", "join", "--tracker", "localhost:1/mcp", "--space", "t", cwd=checkout), "must be http(s)")
    failed(bee_here("collab", "renew", cwd=checkout), "no collaboration binding")
    failed(bee_here("collab", "status", cwd=checkout), "Not joined")


async def test_keepalive_renews_until_stopped(tmp_path: Path, tracker: TrackerProcess) -> None:
    joined = join(tmp_path, tracker, ttl=60)
    first = await joined.lease()
    keeper = subprocess.Popen(
        [str(bee_executable()), "collab", "keepalive", "--every", "0.3"],
        cwd=joined.checkout,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with anyio.fail_after(60):
            renewals = 0
            seen = first["renewed_at"]
            while renewals < 2:  # renewed again and again, not just once
                assert keeper.poll() is None, keeper.communicate()
                lease = await joined.lease()
                if lease["renewed_at"] != seen:
                    renewals, seen = renewals + 1, lease["renewed_at"]
                await anyio.sleep(0.2)
    finally:
        keeper.send_signal(signal.SIGTERM)
        _, stderr = keeper.communicate(timeout=30)
    assert keeper.returncode == 0, stderr
    assert "Stopped renewing" in stderr
    assert (await joined.lease())["live"] is True  # stopping does not leave


async def test_keepalive_exits_when_the_tracker_says_the_lease_is_gone(joined: Joined) -> None:
    keeper = subprocess.Popen(
        [str(bee_executable()), "collab", "keepalive", "--every", "0.3"],
        cwd=joined.checkout,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        await joined.calls(("lease_leave", {"id": joined.binding()["leaseId"]}))
        _, stderr = keeper.communicate(timeout=60)
    finally:
        if keeper.poll() is None:
            keeper.kill()
    assert keeper.returncode == 1 and "was left at" in stderr, stderr


def test_leaving_while_the_tracker_is_down_keeps_the_binding_unless_told_to_forget(joined: Joined) -> None:
    joined.tracker.stop()
    failed(joined.bee("collab", "leave"), "bee collab leave --forget")
    assert joined.binding_file.is_file()
    done = joined.bee("collab", "leave", "--forget")
    assert done.returncode == 0 and "removing the binding anyway" in done.stderr, done.stderr
    assert not joined.binding_file.exists()


async def test_plan_commands_write_a_plan_in_the_space(tmp_path: Path, joined: Joined) -> None:
    plan = ok(joined.bee("plan", "create", "Ship search", "--description", "the search feature")).strip()
    contract = tmp_path / "contract.md"
    contract.write_text("`make test` passes\nand the docs say how\n")
    design = ok(joined.bee("plan", "step", "add", plan, "Design", "--contract", "a reviewed design")).strip()
    build = ok(joined.bee("plan", "step", "add", plan, "Build", "--contract-file", str(contract), "--after", design))
    build = build.strip()
    docs = ok(joined.bee("plan", "step", "add", plan, "Docs", "--contract", "docs updated")).strip()
    assert (design, build, docs) == (f"{plan}.1", f"{plan}.2", f"{plan}.3")
    assert "comes after" in ok(joined.bee("plan", "step", "link", docs, "--after", build))
    assert "(already)" in ok(joined.bee("plan", "step", "link", docs, "--after", build))
    ok(joined.bee("plan", "step", "edit", design, "--title", "Design it", "--contract", "a design two people read"))

    shown = json.loads(ok(joined.bee("plan", "show", plan, "--json")))
    assert [(s["id"], s["state"], s["after"]) for s in shown["steps"]] == [
        (design, "ready", []),
        (build, "waiting", [design]),
        (docs, "waiting", [build]),
    ]
    assert shown["steps"][0]["title"] == "Design it" and shown["steps"][0]["contract"] == "a design two people read"
    assert shown["steps"][1]["contract"] == contract.read_text()
    text = ok(joined.bee("plan", "show", plan))
    assert f"{plan}  Ship search  [open]  space 'team'" in text and "`make test` passes" in text

    assert "no longer comes after" in ok(joined.bee("plan", "step", "link", docs, "--after", build, "--remove"))
    assert ok(joined.bee("plan", "list")).splitlines() == [f"{plan}\topen\tShip search"]
    [epic] = await joined.calls(("get", {"id": plan}))
    assert epic["issue"]["issue_type"] == "epic" and epic["issue"]["labels"] == ["space:team"]


async def test_plan_commands_refuse_what_is_not_a_step_of_this_space(tmp_path: Path, joined: Joined) -> None:
    plan = ok(joined.bee("plan", "create", "Mine")).strip()
    other = ok(joined.bee("plan", "create", "Another")).strip()
    step = ok(joined.bee("plan", "step", "add", plan, "One", "--contract", "done")).strip()
    elsewhere = ok(joined.bee("plan", "step", "add", other, "Two", "--contract", "done")).strip()
    [theirs, loose] = await joined.calls(
        ("create", {"title": "Theirs", "issue_type": "epic", "labels": ["space:other"]}),
        ("create", {"title": "Loose task"}),
    )
    failed(joined.bee("plan", "step", "add", plan, "Bad", "--contract", "x", "--after", elsewhere), "not steps of")
    failed(joined.bee("plan", "step", "link", step, "--after", elsewhere), "is not a step of plan")
    failed(joined.bee("plan", "step", "add", theirs["id"], "Sneak", "--contract", "x"), "belongs to space 'other'")
    failed(joined.bee("plan", "step", "edit", loose["id"], "--title", "x"), "not a step of any plan")
    failed(joined.bee("plan", "show", "bd-nope"), "the tracker has no issue bd-nope")
    failed(joined.bee("plan", "step", "add", plan, "No contract"), "needs a contract", code=2)
    failed(joined.bee("plan", "step", "edit", step), "nothing to change", code=2)
    assert ok(joined.bee("plan", "list")).count("\n") == 2  # the other space's plan is not listed


async def test_a_shipped_binding_is_ignored_noted_once_and_adopted_only_on_purpose(
    tmp_path: Path, joined: Joined
) -> None:
    # Another checkout arrives with this one's binding committed in its .bee (the lease is live on the tracker).
    other = make_checkout(tmp_path / "cloned")
    ok(bee_here("init", cwd=other))
    shipped = other / ".bee" / "collab.json"
    shipped.write_bytes(joined.binding_file.read_bytes())
    note = (
        f"note: this checkout ships a collaboration binding (a tracker URL and its token) in {shipped}; Bee ignores "
        "it. To adopt it on purpose after reading it, run `bee collab trust`"
    )
    status = bee_here("collab", "status", cwd=other)
    failed(status, "Not joined")
    assert status.stderr.count(note) == 1
    for argv in (("collab", "renew"), ("plan", "list"), ("plan", "show", "bd-x"), ("collab", "keepalive")):
        done = bee_here(*argv, cwd=other)
        failed(done, "this checkout has no collaboration binding")
        assert done.stderr.count("this checkout ships a collaboration binding") == 1, (argv, done.stderr)
    left = bee_here("collab", "leave", cwd=other)
    assert left.returncode == 0 and "Not joined" in left.stdout and left.stderr.count(note) == 1

    declined = subprocess.run(
        [str(bee_executable()), "collab", "trust"], cwd=other, input="n\n", capture_output=True, text=True, check=False
    )
    assert declined.returncode == 1 and "Aborted" in declined.stderr, declined
    binding = joined.binding()
    assert (
        f"{shipped} asks Bee to use the tracker at {joined.tracker.url} for this checkout: space 'team', lease "
        f"{binding['leaseId']} held by {joined.actor}, sending the token from the token file {joined.token_file}."
    ) in declined.stdout
    failed(bee_here("collab", "status", cwd=other), "Not joined")

    adopted = ok(bee_here("collab", "trust", "--yes", cwd=other))
    assert "Adopted." in adopted
    live = bee_here("collab", "status", cwd=other)
    assert live.returncode == 0 and "Live: space 'team'" in live.stdout and live.stderr == "", live
    assert json.loads(UserSettings(other / ".bee").path("collab.json").read_text()) == binding


def test_a_shipped_binding_that_is_not_one_cannot_be_adopted(tmp_path: Path, joined: Joined) -> None:
    other = make_checkout(tmp_path / "cloned")
    ok(bee_here("init", cwd=other))
    shipped = other / ".bee" / "collab.json"
    shipped.write_text(json.dumps({**joined.binding(), "tracker": "ftp://tracker/mcp"}))
    failed(bee_here("collab", "trust", "--yes", cwd=other), "cannot be adopted: the tracker URL must be http(s)")
    shipped.write_text("{oops")
    failed(bee_here("collab", "trust", "--yes", cwd=other), "cannot be adopted: the collaboration binding")
    failed(joined.bee("collab", "trust"), "This checkout ships no collaboration binding", code=0)
    shipped.write_text(json.dumps(joined.binding()))
    ok(
        bee_here(
            "collab",
            "join",
            "--tracker",
            joined.tracker.url,
            "--space",
            "other",
            "--token-file",
            str(joined.token_file),
            cwd=other,
        )
    )
    failed(bee_here("collab", "trust", "--yes", cwd=other), "is bound to space 'other'")
