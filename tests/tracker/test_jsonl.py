"""Beads JSONL: every real fixture round-trips byte for byte; bad lines stop the import whole."""

import json
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import BeeError
from bee_tracker.store import SqlStore
from tests.tracker.calls import bee, call

#: Real exports from public repositories (see fixtures/beads/SOURCES.tsv).
BEADS = Path(__file__).resolve().parents[1] / "fixtures" / "beads"
FIXTURES = sorted(BEADS.glob("*.jsonl"))


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_real_exports_round_trip_exactly(store: SqlStore, fixture: Path) -> None:
    data = fixture.read_bytes()
    lines = data.decode("utf-8").splitlines()
    report = store.import_lines(data.splitlines(keepends=True))
    kept = report["tombstones"] + sum(report["otherRecords"].values()) + len(report["shadowed"])
    assert report["imported"] + kept == len(lines)
    exported = store.export_lines()
    assert exported == lines
    assert "".join(line + "\n" for line in exported).encode("utf-8") == data


def test_the_tombstone_fixture_keeps_its_204_tombstones(store: SqlStore) -> None:
    data = (BEADS / "gastownhall__beads__tombstones.jsonl").read_bytes()
    report = store.import_lines(data.splitlines())
    assert (report["imported"], report["tombstones"]) == (421, 204)
    assert sum(json.loads(line).get("status") == "tombstone" for line in store.export_lines()) == 204


def test_touched_issues_keep_every_key_and_their_order(store: SqlStore) -> None:
    line = (
        '{"id":"t-1","title":"A \\u003cb\\u003e","status":"open","priority":1,"issue_type":"task",'
        '"work_type":"mutex","estimated_minutes":30,"labels":["x"],'
        '"dependencies":[{"issue_id":"t-1","depends_on_id":"t-zz","type":"follows","metadata":"{}"}],'
        '"comments":[{"id":"c-uuid","issue_id":"t-1","author":"a","text":"hi","created_at":"2026-01-01T00:00:00Z"}]}'
    )
    store.import_lines([line])
    call(store, "add_note", "bob@example.com", id="t-1", text="later")
    [exported] = store.export_lines()
    original, now = json.loads(line), json.loads(exported)
    assert list(now)[: len(original)] == list(original)
    assert now["work_type"] == "mutex" and now["estimated_minutes"] == 30
    assert now["dependencies"] == original["dependencies"]
    assert now["comments"][0] == original["comments"][0] and now["comments"][1]["text"] == "later"
    assert "\\u003cb\\u003e" in exported  # escaped the way Beads (Go) escapes


def test_missing_ids_are_generated_and_other_records_kept_in_place(store: SqlStore) -> None:
    lines = [
        '{"_schema":"beads-jsonl/1","_sort":"stable-v1"}',
        '{"id":"t-a","title":"kept","status":"open","priority":2,"issue_type":"task"}',
        '{"title":"no id","status":"open","priority":2,"issue_type":"task"}',
        '{"_type":"memory","key":"x","value":"remember"}',
        "",
    ]
    report = store.import_lines(lines)
    assert report["imported"] == 2 and report["otherRecords"] == {"header": 1, "memory": 1}
    [generated] = report["generatedIds"]
    assert generated["line"] == 3 and call(store, "get", id=generated["id"])["issue"]["title"] == "no id"
    exported = store.export_lines()
    assert exported[:2] == lines[:2] and exported[3] == lines[3]
    assert json.loads(exported[2])["id"] == generated["id"]  # rebuilt: the line as given had no id
    assert call(store, "search")["total"] == 2  # neither the header nor the memory became an issue
    store.import_lines(lines[:1] + lines[3:4])  # a re-import replaces them, never duplicates them
    assert len(store.export_lines()) == 4


def test_custom_statuses_and_types_are_registered_by_import(store: SqlStore) -> None:
    store.import_lines(
        [
            '{"id":"t-h","title":"h","status":"hooked","priority":2,"issue_type":"convoy"}',
            '{"id":"t-q","title":"q","status":"review","priority":2,"issue_type":"saga"}',
        ]
    )
    vocabulary = store.vocabulary()
    assert "review" in vocabulary["statuses"] and "saga" in vocabulary["types"]


def test_a_malformed_line_is_named_and_nothing_is_imported(store: SqlStore) -> None:
    with pytest.raises(BeeError) as info:
        store.import_lines(
            ['{"id":"t-a","title":"a","status":"open","priority":2,"issue_type":"task"}', '{"id":"t-b", oops}']
        )
    assert info.value.code == "invalid_argument" and info.value.details == {"line": 2}
    assert "nothing was imported" in info.value.message
    assert call(store, "search")["total"] == 0
    with pytest.raises(BeeError, match="line 1 is not a JSON object"):
        store.import_lines(["[1, 2]"])


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (b'{"id":"t-b","title":"caf\xe9"}', "is not valid UTF-8"),
        (b'{"id":"t-b","title":"nul \\u0000"}', "NUL"),
        (b'{"id":"t-b","title":"\\ud800"}', "unpaired surrogate"),
        (b'{"id":"t-' + b"b" * 300 + b'","title":"long id"}', "id"),
        (b'{"id":"t-b","title":"deep","extra":' + b"[" * 40 + b"]" * 40 + b"}", "nested"),
    ],
)
def test_a_line_the_store_cannot_hold_is_named_and_nothing_is_imported(store: SqlStore, bad: bytes, says: str) -> None:
    good = b'{"id":"t-a","title":"a","status":"open","priority":2,"issue_type":"task"}\n'
    with pytest.raises(BeeError) as info:
        store.import_lines([good, bad + b"\n"])
    assert info.value.code == "invalid_argument" and info.value.details == {"line": 2}
    assert says in info.value.message and "nothing was imported" in info.value.message
    assert store.export_lines() == []


def test_a_crlf_file_imports_and_exports_with_lf(store: SqlStore) -> None:
    crlf = (
        b'{"id":"t-a","title":"a","status":"open","priority":2,"issue_type":"task"}\r\n'
        b'{"id":"t-b","title":"b","status":"closed","priority":2,"issue_type":"task"}\r\n'
    )
    assert store.import_lines(crlf.splitlines(keepends=True))["imported"] == 2
    assert "".join(line + "\n" for line in store.export_lines()).encode() == crlf.replace(b"\r\n", b"\n")


def test_reimport_replaces_and_new_comment_ids_continue_above_imported_ones(store: SqlStore) -> None:
    line = (
        '{"id":"t-c","title":"c","status":"open","priority":2,"issue_type":"task",'
        '"comments":[{"id":41,"issue_id":"t-c","author":"a","text":"old","created_at":"2026-01-01T00:00:00Z"}]}'
    )
    store.import_lines([line])
    report = store.import_lines([line])
    assert report["replaced"] == 1
    note = call(store, "add_note", "a@example.com", id="t-c", text="new")
    assert note["comment"]["id"] > 41


def test_cli_import_of_invalid_utf8_names_the_line_and_imports_nothing(tmp_path: Path) -> None:
    source = tmp_path / "issues.jsonl"
    source.write_bytes(
        b'{"id":"t-a","title":"fine","status":"open","priority":2,"issue_type":"task"}\n'
        b'{"id":"t-b","title":"caf\xe9","status":"open","priority":2,"issue_type":"task"}\n'
    )
    home = tmp_path / "home"
    failed = bee("tracker", "import", "--home", str(home), str(source))
    assert failed.returncode == 1 and "line 2" in failed.stderr and "UTF-8" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert bee("tracker", "export", "--home", str(home)).stdout == ""


def test_cli_import_of_a_crlf_file_and_of_tombstones_round_trips(tmp_path: Path) -> None:
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(b'{"id":"t-a","title":"a","status":"open","priority":2,"issue_type":"task"}\r\n')
    home = tmp_path / "home"
    assert json.loads(bee("tracker", "import", "--home", str(home), str(crlf)).stdout)["imported"] == 1
    exported = bee("tracker", "export", "--home", str(home)).stdout
    assert exported.encode() == crlf.read_bytes().replace(b"\r\n", b"\n")
    fixture = BEADS / "gastownhall__beads__tombstones.jsonl"
    other = tmp_path / "other"
    report = json.loads(bee("tracker", "import", "--home", str(other), str(fixture)).stdout)
    assert (report["imported"], report["tombstones"]) == (421, 204)
    out = tmp_path / "out.jsonl"
    assert bee("tracker", "export", "--home", str(other), str(out)).returncode == 0
    assert out.read_bytes() == fixture.read_bytes()


ODD_RECORDS = [
    {"id": "t-a", "title": "odd", "status": None, "issue_type": None},
    {"id": "t-a", "title": "odd", "created_at": 5, "defer_until": "garbage"},
    {"id": "t-a", "title": "odd", "labels": 5, "dependencies": {"not": "a list"}, "comments": "none"},
    {"id": "t-a", "title": "odd", "labels": [None, 1, {"a": 1}]},
    {"id": "t-a", "title": "odd", "dependencies": [{"depends_on_id": 5}, {"depends_on_id": "t-b", "type": 5}, "x"]},
    {"id": "t-a", "title": "odd", "comments": [{"id": True, "text": {"a": 1}}, {"id": 2**70, "text": "x"}, {"id": -5}]},
    {"id": "t-a", "title": "odd", "priority": 2**70, "n": 12345678901234567890123},
    {"id": "t-a", "title": "odd", "priority": "high"},
]


@pytest.mark.parametrize("record", ODD_RECORDS, ids=[str(n) for n in range(len(ODD_RECORDS))])
def test_odd_records_import_export_exactly_and_stay_usable(store: SqlStore, record: dict[str, Any]) -> None:
    line = json.dumps(record, separators=(",", ":"))
    assert store.import_lines([line])["imported"] == 1
    assert store.export_lines() == [line]
    call(store, "add_note", id="t-a", text="touched")
    call(store, "update", id="t-a", title="renamed")
    assert call(store, "get", id="t-a")["issue"]["title"] == "renamed"
    assert json.loads(store.export_lines()[0])["title"] == "renamed"


def test_a_tombstone_without_an_id_is_kept_and_deletes_nothing(store: SqlStore) -> None:
    lines = ['{"status":"tombstone","title":"no id"}', '{"id":"t-a","title":"live"}']
    report = store.import_lines(lines)
    assert report["imported"] == 1 and report["otherRecords"] == {"tombstone": 1}
    assert call(store, "search")["total"] == 1 and store.export_lines() == lines


def test_a_generated_id_never_takes_an_id_a_later_line_names(store: SqlStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("bee_tracker.store.ids.secrets.choice", lambda alphabet: "0")  # first pick: t-0000
    report = store.import_lines(['{"title":"no id"}', '{"id":"t-0000","title":"named"}'])
    [generated] = report["generatedIds"]
    assert generated["id"] == "t-00000" and (report["imported"], report["replaced"]) == (2, 0)


def test_a_missing_priority_is_zero_as_in_beads(store: SqlStore) -> None:
    store.import_lines(['{"id":"t-p","title":"no priority","status":"open","issue_type":"task"}'])
    assert call(store, "get", id="t-p")["issue"]["priority"] == 0
    assert store.export_lines() == ['{"id":"t-p","title":"no priority","status":"open","issue_type":"task"}']


def test_a_refused_import_leaves_search_indexing_new_issues(store: SqlStore) -> None:
    good = '{"id":"t-a","title":"walrus","status":"open","priority":2,"issue_type":"task"}'
    with pytest.raises(BeeError):
        store.import_lines([good, "{broken"])
    created = call(store, "create", title="narwhal")["id"]
    assert [i["id"] for i in call(store, "search", query="narwhal")["issues"]] == [created]
    store.import_lines([good])
    assert [i["id"] for i in call(store, "search", query="walrus")["issues"]] == ["t-a"]
    call(store, "create", title="walrus too")
    assert call(store, "search", query="walrus")["total"] == 2


def _many(count: int, prefix: str = "t-m") -> list[str]:
    return [json.dumps({"id": f"{prefix}{n}", "title": f"issue {n}", "labels": ["x"]}) for n in range(count)]


def test_a_bad_line_after_many_written_batches_leaves_nothing(store: SqlStore) -> None:
    lines = _many(6000)  # several batches, written while the next are read
    with pytest.raises(BeeError) as info:
        store.import_lines([*lines, "{broken"])
    assert info.value.details == {"line": 6001}
    assert store.export_lines() == [] and call(store, "search")["total"] == 0
    assert store.import_lines(lines)["imported"] == 6000
    assert len(store.export_lines()) == 6000


def test_a_batch_the_database_refuses_stops_the_import_whole(store: SqlStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from bee_tracker.store import bulk

    real = bulk.Bulk._write
    calls = []

    def failing(self: bulk.Bulk, batch: list[Any]) -> None:
        calls.append(len(batch))
        if len(calls) == 2:
            raise RuntimeError("the disk is full")
        real(self, batch)

    monkeypatch.setattr(bulk.Bulk, "_write", failing)
    with pytest.raises(RuntimeError, match="the disk is full"):
        store.import_lines(_many(6000))
    monkeypatch.setattr(bulk.Bulk, "_write", real)
    assert store.export_lines() == []
    assert store.import_lines(_many(10))["imported"] == 10
