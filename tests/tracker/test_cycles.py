"""Cycles refused: no cycle through any mix of the dependency types that decide readiness, whether a link or an
import would close it (an import may take them as they come when told to, as Beads' own import does)."""

import json
import shutil
from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_tracker.store import SqlStore, sources
from tests.tracker.calls import bee, call, new, refused

GASTOWN = Path(__file__).resolve().parents[1] / "fixtures" / "beads" / "backup" / "steveyegge__gastown"


def ready_ids(store: SqlStore) -> set[str]:
    return {issue["id"] for issue in call(store, "ready", limit=100)["issues"]}


def test_blocks_then_parent_child_back_is_refused_and_spelled_out(store: SqlStore) -> None:
    a, b = new(store, "A"), new(store, "B")
    call(store, "link", id=a, target=b)  # A blocks-on B
    error = refused(store, "invalid_argument", "link", id=b, target=a, type="parent-child")
    assert error.details is not None
    assert error.details["cycle"] == [b, a, b]
    assert error.details["edges"] == [
        {"id": b, "type": "parent-child", "target": a},
        {"id": a, "type": "blocks", "target": b},
    ]
    assert f"{b} -[parent-child]-> {a} -[blocks]-> {b}" in error.message
    assert b in ready_ids(store)  # nothing was linked: B is still ready


def test_a_longer_mixed_cycle_is_refused(store: SqlStore) -> None:
    a, b, c, d = (new(store, name) for name in "ABCD")
    call(store, "link", id=a, target=b, type="blocks")
    call(store, "link", id=b, target=c, type="waits-for")
    call(store, "link", id=c, target=d, type="conditional-blocks")
    error = refused(store, "invalid_argument", "link", id=d, target=a, type="parent-child")
    assert error.details is not None
    assert error.details["cycle"] == [d, a, b, c, d]
    assert [edge["type"] for edge in error.details["edges"]] == [
        "parent-child",
        "blocks",
        "waits-for",
        "conditional-blocks",
    ]
    assert d in ready_ids(store)


@pytest.mark.parametrize("kind", ["related", "discovered-from", "follows"])
def test_links_that_do_not_decide_readiness_may_close_a_loop(store: SqlStore, kind: str) -> None:
    a, b = new(store, "A"), new(store, "B")
    call(store, "link", id=a, target=b)
    assert call(store, "link", id=b, target=a, type=kind)["changed"] is True


def test_a_new_issue_never_takes_an_id_something_already_depends_on(store: SqlStore) -> None:
    # An imported issue may depend on ids that do not exist yet; a new issue taking one of them would inherit
    # that dependent, and creating it as a child of that dependent would close a cycle.
    store.import_lines(
        [
            '{"id":"t-p","title":"parent","status":"open","priority":2,"issue_type":"epic",'
            '"dependencies":[{"issue_id":"t-p","depends_on_id":"t-p.1","type":"blocks"}]}'
        ]
    )
    child = new(store, "child", parent="t-p")
    assert child == "t-p.2"
    assert call(store, "get", id=child)["dependents_count"] == 0
    assert "t-p" in ready_ids(store)  # its blocker t-p.1 still does not exist, so nothing waits on itself


# -- cycles an import would close -------------------------------------------------------------------------------


def issue(issue_id: str, *links: tuple[str, str]) -> str:
    """A legacy line for ``issue_id`` depending on each ``(type, target)`` of ``links``."""
    deps = [{"issue_id": issue_id, "depends_on_id": target, "type": kind} for kind, target in links]
    return json.dumps({"id": issue_id, "title": issue_id, "status": "open", "dependencies": deps})


def refused_import(store: SqlStore, lines: list[str]) -> BeeError:
    with pytest.raises(BeeError) as info:
        store.import_lines(lines)
    assert info.value.code == "invalid_argument" and "Nothing was imported" in info.value.message
    return info.value


def test_an_imported_cycle_is_refused_naming_it_and_nothing_is_imported(store: SqlStore) -> None:
    lines = [
        issue("t-a", ("blocks", "t-b")),
        issue("t-b", ("waits-for", "t-c")),
        issue("t-c", ("parent-child", "t-a")),
        issue("t-d", ("blocks", "t-d")),  # depends on itself
        issue("t-e", ("related", "t-a")),
    ]
    error = refused_import(store, lines)
    assert "would close a dependency cycle: t-a -[blocks]-> t-b -[waits-for]-> t-c -[parent-child]-> t-a" in (
        error.message
    )
    assert "(and 1 more cycle, listed in the details)" in error.message and "--allow-cycles" in error.message
    assert error.details is not None and error.details["cycleCount"] == 2
    assert [c["cycle"] for c in error.details["cycles"]] == [["t-a", "t-b", "t-c", "t-a"], ["t-d", "t-d"]]
    assert store.export_lines() == []


def test_a_cycle_closed_through_issues_already_in_the_store_is_refused(store: SqlStore) -> None:
    # t-a blocks-on t-b, and t-x on t-new, which does not exist yet
    store.import_lines([issue("t-a", ("blocks", "t-b")), issue("t-b"), issue("t-x", ("waits-for", "t-new"))])
    error = refused_import(store, [issue("t-b", ("parent-child", "t-a"))])  # replacing t-b closes one
    assert "t-b -[parent-child]-> t-a -[blocks]-> t-b" in error.message
    error = refused_import(store, [issue("t-new", ("blocks", "t-x"))])  # so does the issue t-x waited for
    assert "t-new -[blocks]-> t-x -[waits-for]-> t-new" in error.message
    assert len(store.export_lines()) == 3


def test_allow_cycles_takes_them_as_beads_does_and_lists_them(store: SqlStore) -> None:
    lines = [issue("t-a", ("blocks", "t-b")), issue("t-b", ("conditional-blocks", "t-a")), issue("t-c")]
    report = store.import_from(sources.from_lines(lines), allow_cycles=True)
    assert report["imported"] == 3
    assert report["cycles"] == [
        {
            "cycle": ["t-a", "t-b", "t-a"],
            "edges": [
                {"id": "t-a", "type": "blocks", "target": "t-b"},
                {"id": "t-b", "type": "conditional-blocks", "target": "t-a"},
            ],
        }
    ]
    assert ready_ids(store) == {"t-c"}  # every issue in the cycle waits on itself
    # an earlier cycle does not hold back later imports that close none, whatever they link to
    later = store.import_lines([issue("t-d", ("blocks", "t-a")), issue("t-e", ("related", "t-b"))])
    assert later["imported"] == 2 and "cycles" not in later


def test_a_cycle_in_a_backup_dump_is_refused_alike(store: SqlStore, tmp_path: Path) -> None:
    backup = tmp_path / "backup"
    shutil.copytree(GASTOWN, backup)
    (backup / "backup_state.json").unlink()
    deps = [json.loads(text) for text in (backup / "dependencies.jsonl").read_text().splitlines()]
    ids = {json.loads(text)["id"] for text in (backup / "issues.jsonl").read_text().splitlines()}
    first = next(dep for dep in deps if dep["type"] == "blocks" and dep["depends_on_id"] in ids)
    back = {**first, "issue_id": first["depends_on_id"], "depends_on_id": first["issue_id"]}
    with (backup / "dependencies.jsonl").open("a") as out:
        out.write(json.dumps(back) + "\n")
    with pytest.raises(BeeError) as info:
        store.import_from(sources.choose(backup))
    spelled = f"{first['issue_id']} -[blocks]-> {first['depends_on_id']} -[blocks]-> {first['issue_id']}"
    assert info.value.code == "invalid_argument" and spelled in info.value.message
    assert store.export_lines() == []


def test_cli_refuses_a_cycle_and_takes_it_with_the_flag(tmp_path: Path) -> None:
    source = tmp_path / "issues.jsonl"
    source.write_text(issue("t-a", ("blocks", "t-b")) + "\n" + issue("t-b", ("blocks", "t-a")) + "\n")
    home = tmp_path / "home"
    failed = bee("tracker", "import", "--home", str(home), str(source))
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert "t-a -[blocks]-> t-b -[blocks]-> t-a" in failed.stderr
    done = bee("tracker", "import", "--home", str(home), "--allow-cycles", str(source))
    assert done.returncode == 0 and json.loads(done.stdout)["cycles"][0]["cycle"] == ["t-a", "t-b", "t-a"]
