"""`bee bd` on a local store, as people and agents type it: what each command changes (through the tools' own
rules), what it prints for people, its exit codes, what it refuses and how it takes hostile input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bee_tracker import calls
from bee_tracker.store import open_store
from tests.tracker.bd.run import ALICE, bd

BOB = "bob@example.com"


def _new(url: str, title: str, *flags: str, actor: str = ALICE) -> str:
    made = bd("--actor", actor, "create", title, *flags, "--silent", store=url)
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def _get(url: str, issue_id: str) -> dict[str, Any]:
    store = open_store(url)
    try:
        got: dict[str, Any] = calls.call(store, "get", ALICE, {"id": issue_id, "comments_limit": 200})["data"]
        return got
    finally:
        store.close()


# -- writes, by the tools' rules ---------------------------------------------------------------------------------


def test_create_takes_bds_flags_and_writes_through_the_create_tool(store_url: str) -> None:
    epic = _new(store_url, "Epic", "-t", "epic", "-l", "team")
    blocker = _new(store_url, "Blocker")
    child = bd(
        "--actor", ALICE, "create", "--title", "Child", "-t", "feat", "-p", "P0", "-d", "why", "--design", "how",
        "--acceptance", "done when", "--notes", "n", "--external-ref", "gh-9", "-a", BOB, "-l", "x,y", "--parent", epic,
        "--deps", f"{blocker},discovered-from:{blocker}", "--json", store=store_url,
    ).json  # fmt: skip
    assert child["id"] == f"{epic}.1" and child["issue_type"] == "feature" and child["priority"] == 0
    record = _get(store_url, child["id"])["issue"]
    assert (record["description"], record["design"], record["acceptance_criteria"]) == ("why", "how", "done when")
    assert record["external_ref"] == "gh-9" and record["assignee"] == BOB and record["created_by"] == ALICE
    assert record["labels"] == ["x", "y", "team"]  # the parent's labels too, as bd (GH#2100)
    links = {(d["depends_on_id"], d["type"]) for d in record["dependencies"]}
    assert links == {(epic, "parent-child"), (blocker, "blocks"), (blocker, "discovered-from")}
    assert child["id"] not in [i["id"] for i in bd("ready", "--json", store=store_url).json]  # blocked by its blocker


def test_create_blocks_dep_makes_the_other_issue_wait_and_no_inherit_keeps_labels_apart(store_url: str) -> None:
    parent = _new(store_url, "Parent", "-l", "team")
    later = _new(store_url, "Later")
    first = _new(store_url, "First", "--parent", parent, "--no-inherit-labels", "--deps", f"blocks:{later}")
    assert "labels" not in _get(store_url, first)["issue"]
    later_deps = _get(store_url, later)["issue"]["dependencies"]
    assert [(d["depends_on_id"], d["type"]) for d in later_deps] == [(first, "blocks")]


def test_create_checks_every_id_it_names_before_it_writes(store_url: str) -> None:
    _new(store_url, "Exists")
    for flags in (["--parent", "t-missing"], ["--deps", "t-missing"], ["--deps", "related:t-missing"]):
        failed = bd("create", "Never", *flags, store=store_url)
        assert failed.returncode == 1 and "t-missing" in failed.stderr, flags
    assert [i["title"] for i in bd("list", "--all", "--json", store=store_url).json] == ["Exists"]
    bad = bd("create", "Never", "--deps", "frobs:t-1", store=store_url)
    assert bad.returncode == 1 and "invalid dependency" in bad.stderr and "discovered-from" in bad.stderr


def test_update_claims_with_the_claim_tool_and_the_holder_alone_moves_it(store_url: str) -> None:
    issue = _new(store_url, "Claim me")
    claimed = bd("--actor", ALICE, "update", issue, "--claim", store=store_url)
    assert claimed.returncode == 0 and claimed.stdout == f"✓ Updated issue: {issue} — Claim me\n"
    again = bd("--actor", ALICE, "update", issue, "--claim", "--json", store=store_url)  # idempotent for the holder
    assert again.json[0]["assignee"] == ALICE
    taken = bd("--actor", BOB, "update", issue, "--claim", store=store_url)
    assert taken.returncode == 1 and f"claimed by {ALICE}" in taken.stderr
    moved = bd("--actor", BOB, "update", issue, "--status", "open", store=store_url)
    assert moved.returncode == 1 and "only the holder" in moved.stderr
    edited = bd(
        "--actor",
        BOB,
        "update",
        issue,
        "--title",
        "Renamed",
        "-p",
        "1",
        "--add-label",
        "a,b",
        "--json",
        store=store_url,
    )
    assert edited.json[0]["title"] == "Renamed" and edited.json[0]["labels"] == ["a", "b"]  # content stays open
    history = _get(store_url, issue)["history"]
    assert [event["tool"] for event in history] == ["create", "claim", "update"]


def test_close_claim_next_closes_and_claims_the_next_ready_issue_in_one_call(store_url: str) -> None:
    first, urgent, later = _new(store_url, "First"), _new(store_url, "Urgent", "-p", "0"), _new(store_url, "Later")
    bd("--actor", ALICE, "update", first, "--claim", store=store_url)
    held = _new(store_url, "Held", "-p", "0", "-a", BOB)  # open, but held by BOB: claim-next passes over it
    done = bd("--actor", ALICE, "close", first, "--reason", "Fixed", "--claim-next", store=store_url)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"✓ Closed {first} — First: Fixed\n✓ Auto-claimed next ready issue: {urgent} — Urgent (P0)\n"
    claimed = _get(store_url, urgent)
    assert (claimed["issue"]["status"], claimed["issue"]["assignee"]) == ("in_progress", ALICE)
    assert [event["tool"] for event in claimed["history"]][-1] == "complete"  # claimed in the close's own call
    assert _get(store_url, held)["issue"]["status"] == "open"
    bd("--actor", ALICE, "close", urgent, store=store_url)
    bd("--actor", ALICE, "close", later, store=store_url)
    mine = _new(store_url, "Mine")
    empty = bd("--actor", ALICE, "close", mine, "--claim-next", store=store_url)  # only BOB's issue is left
    assert empty.returncode == 0 and empty.stdout.endswith("\n✨ No ready issues available to claim.\n")
    assert _get(store_url, held)["issue"]["assignee"] == BOB


def test_close_claim_next_of_several_claims_once_even_when_the_last_cannot_close(store_url: str) -> None:
    one, two, next_ = _new(store_url, "One", "-p", "1"), _new(store_url, "Two", "-p", "1"), _new(store_url, "Next")
    bd("--actor", BOB, "update", two, "--claim", store=store_url)
    done = bd("--actor", ALICE, "close", one, two, "--claim-next", "--json", store=store_url)
    assert done.returncode == 0 and f"cannot close {two}" in done.stderr
    answer = done.json
    assert [issue["id"] for issue in answer["closed"]] == [one] and answer["claimed"]["id"] == next_
    assert _get(store_url, next_)["issue"]["assignee"] == ALICE


def test_ready_claim_takes_the_first_ready_issue_nobody_holds(store_url: str) -> None:
    low, urgent = _new(store_url, "Low", "-p", "3", "-l", "ui"), _new(store_url, "Urgent", "-p", "0")
    bd("--actor", BOB, "update", urgent, "--claim", store=store_url)
    taken = bd("--actor", ALICE, "ready", "--claim", store=store_url)
    assert taken.returncode == 0 and taken.stdout == f"✓ Claimed issue: {low} — Low\n"
    assert _get(store_url, low)["issue"]["assignee"] == ALICE
    labelled = _new(store_url, "Tagged", "-p", "4", "-l", "web")
    _new(store_url, "Plain", "-p", "0")
    as_json = bd("--actor", ALICE, "ready", "--claim", "-l", "web", "--json", store=store_url).json
    assert [issue["id"] for issue in as_json] == [labelled] and as_json[0]["status"] == "in_progress"
    assert bd("ready", "--claim", "-l", "web", "--json", store=store_url).stdout == "[]\n"
    nothing = bd("ready", "--claim", "-p", "2", store=store_url)
    assert nothing.returncode == 0 and "No ready work to claim" in nothing.stdout


def test_ready_claim_refuses_what_bd_refuses_and_writes_nothing(store_url: str) -> None:
    issue = _new(store_url, "Open")
    with_assignee = bd("ready", "--claim", "-a", BOB, store=store_url)
    assert with_assignee.returncode == 1 and "--claim cannot be combined with --assignee" in with_assignee.stderr
    read_only = bd("--readonly", "ready", "--claim", store=store_url)
    assert read_only.returncode == 1 and "--readonly" in read_only.stderr
    assert _get(store_url, issue)["issue"]["status"] == "open"


def test_update_fields_labels_notes_parent_and_defer(store_url: str) -> None:
    issue, parent, other = _new(store_url, "Issue", "-l", "old"), _new(store_url, "Parent"), _new(store_url, "Other")
    done = bd(
        "update", issue, "--notes", "one", "--set-labels", "p,q", "--remove-label", "q", "--parent", parent,
        "-t", "bug", "--acceptance", "ok", "--defer", "2999-01-01", "--json", store=store_url,
    ).json[0]  # fmt: skip
    assert done["labels"] == ["p"] and done["issue_type"] == "bug" and done["acceptance_criteria"] == "ok"
    assert done["defer_until"] == "2999-01-01T00:00:00Z" and issue not in _ready(store_url)
    bd("update", issue, "--append-notes", "two", "--parent", other, "--defer", "", store=store_url)
    record = _get(store_url, issue)["issue"]
    assert record["notes"] == "one\ntwo" and "defer_until" not in record
    assert [(d["depends_on_id"], d["type"]) for d in record["dependencies"]] == [(other, "parent-child")]
    assert bd("update", issue, store=store_url).stdout == "No updates specified\n"


def _ready(url: str) -> list[str]:
    return [issue["id"] for issue in bd("ready", "-n", "0", "--json", store=url).json]


def test_close_completes_through_the_complete_tool_and_refuses_what_it_refuses(store_url: str) -> None:
    blocker, blocked = _new(store_url, "Blocker"), _new(store_url, "Blocked")
    bd("dep", "add", blocked, blocker, store=store_url)
    refused = bd("close", blocked, store=store_url)
    assert refused.returncode == 1 and f"blocked by {blocker}" in refused.stderr
    assert _get(store_url, blocked)["issue"]["status"] == "open"
    closed = bd("close", blocker, "-r", "Shipped", store=store_url)
    assert closed.returncode == 0 and closed.stdout == f"✓ Closed {blocker} — Blocker: Shipped\n"
    assert blocked in _ready(store_url)
    done = bd("done", blocked, "All good", "--json", store=store_url).json  # bd done ID MESSAGE
    assert done[0]["close_reason"] == "All good"
    mixed = bd("close", blocker, "t-nope", store=store_url)  # nothing closed: exit 1
    assert mixed.returncode == 1 and "already closed" in mixed.stderr and "t-nope" in mixed.stderr


def test_reopen_opens_again_with_the_reason_as_a_comment(store_url: str) -> None:
    issue = _new(store_url, "Again")
    bd("close", issue, store=store_url)
    reopened = bd("reopen", issue, "-r", "Regressed", store=store_url)
    assert reopened.returncode == 0 and reopened.stdout == f"↻ Reopened {issue}: Regressed\n"
    got = _get(store_url, issue)
    assert got["issue"]["status"] == "open" and "closed_at" not in got["issue"]
    assert got["issue"]["comments"][-1]["text"] == "Reopened: Regressed"
    already = bd("reopen", issue, store=store_url)
    assert already.returncode == 0 and f"{issue} is already open" in already.stderr


def test_dep_add_remove_tree_and_the_blocks_shorthand(store_url: str) -> None:
    a, b, c = _new(store_url, "A"), _new(store_url, "B"), _new(store_url, "C")
    added = bd("dep", "add", a, "--blocked-by", b, store=store_url)
    assert added.stdout == f"✓ Added dependency: {a} (A) depends on {b} (B) (blocks)\n"
    bd("dep", b, "--blocks", c, "--json", store=store_url)
    tree = bd("dep", "tree", a, "--json", store=store_url).json
    assert [(n["id"], n["depth"], n["parent_id"], n.get("edge_from_parent")) for n in tree] == [
        (a, 0, "", None),
        (b, 1, a, "blocks"),
    ]
    up = bd("dep", "tree", b, "--direction", "up", store=store_url).stdout.splitlines()
    assert up[:4] == ["", f"🌲 Dependent tree for {b}:", "", f"{b}: B [P2] (open) [BLOCKED]"]  # open dependents
    assert sorted(line[4:] for line in up[4:6]) == sorted(
        [f"{a}: A [P2] (open) [blocks]", f"{c}: C [P2] (open) [blocks]"]
    )
    assert up[4][:4] == "├── " and up[5][:4] == "└── " and up[6:] == [""]
    bd("dep", "add", c, a, "-t", "related", store=store_url)
    cycle = bd("dep", "add", b, a, store=store_url)
    assert cycle.returncode == 1 and "cycle" in cycle.stderr
    removed = bd("dep", "rm", c, a, "--json", store=store_url).json
    assert removed == {"depends_on_id": a, "issue_id": c, "schema_version": 1, "status": "removed"}
    none = bd("dep", "remove", c, a, store=store_url)
    assert none.returncode == 1 and f"{c} has no dependency on {a}" in none.stderr


def test_label_writes_every_issue_or_none(store_url: str) -> None:
    a, b = _new(store_url, "A"), _new(store_url, "B")
    missing = bd("label", "add", a, "t-missing", "x", store=store_url)
    assert missing.returncode == 1 and "labels" not in _get(store_url, a)["issue"]
    added = bd("label", "add", a, b, "x", store=store_url)
    assert added.stdout == f"✓ Added label 'x' to {a}\n✓ Added label 'x' to {b}\n"
    assert bd("label", "list", a, "--json", store=store_url).json == ["x"]
    assert bd("label", "list", a, store=store_url).stdout == f"\n🏷 Labels for {a}:\n  - x\n\n"
    bd("label", "remove", a, "x", store=store_url)
    assert bd("label", "list", a, store=store_url).stdout == f"\n{a} has no labels\n"
    assert bd("label", "add", a, " ", store=store_url).returncode == 1


def test_comments_list_and_add_as_bd_spells_them(store_url: str, tmp_path: Path) -> None:
    issue = _new(store_url, "Talk")
    assert bd("comments", issue, store=store_url).stdout == f"No comments on {issue}\n"
    bd("--actor", ALICE, "comments", "add", issue, "First", store=store_url)
    note = tmp_path / "note.txt"
    note.write_text("From a file\nsecond line")
    assert (
        bd("--actor", BOB, "comments", "add", issue, "-f", str(note), store=store_url).stdout
        == f"Comment added to {issue}\n"
    )
    listed = bd("comments", "list", issue, "--json", store=store_url).json
    assert [(c["author"], c["text"]) for c in listed] == [(ALICE, "First"), (BOB, "From a file\nsecond line")]
    human = bd("comments", issue, store=store_url).stdout
    assert f"[{BOB}] at " in human and "  From a file\n  second line\n" in human
    forged = bd("--actor", ALICE, "comments", "add", issue, "x", "--author", BOB, store=store_url)
    assert forged.returncode == 2 and "--author" in forged.stderr
    assert bd("comments", "add", issue, " ", store=store_url).returncode == 1


# -- reading, for people -----------------------------------------------------------------------------------------


def test_people_read_bds_lines_without_colour_in_a_pipe(store_url: str) -> None:
    epic = _new(store_url, "Epic", "-t", "epic", "-p", "1")
    child = _new(store_url, "Child task", "--parent", epic, "-a", BOB)
    ready = bd("ready", store=store_url).stdout
    assert "\x1b[" not in ready
    assert f"○ {child} ● P2 Child task ← Epic" in ready and f"○ {epic} ● P1 [epic] Epic" in ready
    assert "Ready: 2 issues with no active blockers" in ready
    plain = bd("ready", "--plain", store=store_url).stdout
    assert f"2. [● P2] [task] {child}: Child task\n   Assignee: {BOB}\n" in plain
    tree = bd("list", store=store_url).stdout
    assert tree.startswith(f"○ {epic} ● P1 [epic] Epic\n└── ○ {child} ● P2 Child task\n")
    flat = bd("list", "--flat", store=store_url).stdout
    assert f"○ {child} [P2] [task] @{BOB} - Child task (parent: {epic})" in flat
    shown = bd("show", epic, store=store_url).stdout
    assert shown.startswith(f"○ {epic} [EPIC] · Epic   [● P1 · OPEN]\n")
    assert f"\nCHILDREN\n  ↳ ○ {child}: Child task ● P2\n" in shown
    assert (
        f"Found 1 issues matching 'child':\n{child} [P2] [task] open @{BOB} - Child task\n"
        == bd("search", "child", store=store_url).stdout
    )
    assert "Total Issues:           2" in bd("stats", store=store_url).stdout
    assert bd("blocked", store=store_url).stdout == "\n✨ No blocked issues\n\n"


def test_an_empty_tracker_says_so(store_url: str) -> None:
    open_store(store_url).close()
    assert bd("ready", store=store_url).stdout == "\n✨ No open issues\n\n"
    assert bd("list", store=store_url).stdout == "No issues found.\n"
    assert bd("ready", "--json", store=store_url).stdout == "[]\n"


def test_limits_say_what_they_hid(store_url: str) -> None:
    for n in range(3):
        _new(store_url, f"Task {n}")
    listed = bd("list", "-n", "2", "--json", store=store_url)
    assert len(listed.json) == 2 and "Use --limit 0 for all" in listed.stderr
    ready = bd("ready", "-n", "2", "--json", store=store_url)
    assert len(ready.json) == 2 and "Showing 2 of 3 ready issues" in ready.stderr
    assert len(bd("ready", "-n", "0", "--json", store=store_url).json) == 3


# -- what Bee refuses ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["dolt", "push"], "bd dolt"),
        (["sync"], "bd sync"),
        (["mol", "pour", "x"], "bd mol"),
        (["export", "-o", "x.jsonl"], "bd export"),
        (["delete", "t-1"], "bd delete"),
        (["ready", "--claim", "-t", "bug"], "bd ready --claim --type"),
        (["ready", "--sort", "oldest"], "bd ready --sort oldest"),
        (["close", "t-1", "--force"], "bd close --force"),
        (["create", "x", "--id", "t-9"], "bd create --id"),
        (["dep", "add", "t-1", "external:p:c"], "an external: dependency"),
    ],
)
def test_what_bee_does_not_do_is_refused_by_name_with_exit_2_and_nothing_changes(
    store_url: str, argv: list[str], named: str
) -> None:
    _new(store_url, "Only")
    before = bd("list", "--all", "--json", store=store_url).json
    refused = bd(*argv, store=store_url)
    assert refused.returncode == 2 and named in refused.stderr and "Nothing was changed" in refused.stderr, refused
    assert bd("list", "--all", "--json", store=store_url).json == before
    as_json = bd("--json", *argv, store=store_url)
    assert as_json.returncode == 2 and named in json.loads(as_json.stdout)["error"]


def test_usage_errors_exit_2_and_say_what_to_change(store_url: str) -> None:
    _new(store_url, "x")
    for argv, says in (
        (["create"], "title required"),
        (["create", "a", "--title", "b"], "different titles"),
        (["create", "x", "-p", "high"], "use 0-4 or P0-P4"),
        (["update"], "give the issue ID"),
        (["show"], "at least one issue ID"),
        (["search"], "search query is required"),
        (["ready", "--nonsense"], "No such option"),
        (["frobnicate"], "No such command"),
    ):
        failed = bd(*argv, store=store_url)
        assert failed.returncode in (1, 2) and says in failed.stderr, (argv, failed.stderr)


def test_no_tracker_here_is_an_error_that_says_how_to_get_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    failed = bd("--home", str(home), "ready")
    assert failed.returncode == 1 and "no tracker here" in failed.stderr and "bee tracker import" in failed.stderr
    assert not home.exists()  # never created by a command that found nothing
    assert "bee tracker init`" not in failed.stderr  # it makes a home and a key, not a store: never named for one


def test_url_and_store_together_are_refused(store_url: str) -> None:
    failed = bd("--url", "http://127.0.0.1:9/mcp", "ready", store=store_url)
    assert failed.returncode == 1 and "not both" in failed.stderr


def test_readonly_refuses_writes_and_allows_reads(store_url: str) -> None:
    issue = _new(store_url, "Stays")
    refused = bd("--readonly", "update", issue, "--title", "Changed", store=store_url)
    assert refused.returncode == 1 and "--readonly" in refused.stderr
    assert bd("--readonly", "show", issue, "--json", store=store_url).json[0]["title"] == "Stays"


# -- hostile input ------------------------------------------------------------------------------------------------


def test_odd_ids_and_hostile_text_get_clear_refusals_and_write_nothing(store_url: str) -> None:
    only = _new(store_url, "Only")
    for issue_id in ("../../etc/passwd", f"{only}; rm -rf /", "-", "x" * 300, f"{only}\x00", "\ud800"):
        shown = bd("show", issue_id, "--json", store=store_url)
        assert shown.returncode == 1 and json.loads(shown.stdout)["error"], issue_id
    for title in ("x" * 501, "lone \ud800", "nul \x00"):
        made = bd("create", "--title", title, store=store_url)
        assert made.returncode == 1 and made.stderr.startswith("Error: "), (title[:10], made.stderr)
    huge = bd("comments", "add", only, "y" * 70000, store=store_url)
    assert huge.returncode == 1 and "Error: " in huge.stderr
    assert [i["title"] for i in bd("list", "--all", "--json", store=store_url).json] == ["Only"]
    assert bd("comments", only, "--json", store=store_url).json == []


def test_control_characters_never_reach_a_terminal_and_json_keeps_them_escaped(store_url: str) -> None:
    """A title is anyone's text: the tracker stores a bell or an escape sequence as bd does, JSON escapes them, and
    the lines for people show U+FFFD instead (a title must not retitle the window or move the cursor)."""
    issue = _new(store_url, "bell \x07 title \x1b]0;pwned\x07 cr\r")
    assert bd("show", issue, "--json", store=store_url).json[0]["title"] == "bell \x07 title \x1b]0;pwned\x07 cr\r"
    assert '"bell \\u0007 title \\u001b]0;pwned\\u0007 cr\\r"' in bd("show", issue, "--json", store=store_url).stdout
    for argv in (["show", issue], ["list"], ["ready"], ["search", "bell"], ["update", issue, "-p", "1"]):
        out = bd(*argv, store=store_url).stdout
        assert "\x07" not in out and "\x1b" not in out and "\r" not in out and "bell \ufffd title" in out, argv


def test_text_bd_escapes_is_escaped_and_kept_whole(store_url: str) -> None:
    issue = _new(store_url, "<b>Tom & Jerry</b> ✓ 🐝")
    raw = bd("show", issue, "--json", store=store_url).stdout
    assert '"\\u003cb\\u003eTom \\u0026 Jerry\\u003c/b\\u003e ✓ 🐝"' in raw
    assert json.loads(raw)[0]["title"] == "<b>Tom & Jerry</b> ✓ 🐝"
