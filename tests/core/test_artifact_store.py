"""The artifact store: content addressing, kinds, atomic ingestion, idempotence, tamper detection."""

import hashlib
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_core.artifacts.content import MAX_JSON_BYTES, ContentScanner
from bee_core.artifacts.lines import BLOCK_BYTES, LineIndex
from bee_core.artifacts.records import ArtifactRecord, DamagedRecord, artifact_id
from bee_core.artifacts.store import REPLACED_RETRIES, ArtifactStore, Listing
from bee_core.artifacts.verify import BytesMissing, Verifier
from bee_core.context import CoreContext
from tests.core.artifacts_helpers import add, blob, initialised, tamper


@pytest.fixture
def ctx(tmp_path: Path) -> CoreContext:
    return initialised(tmp_path)


def test_add_copies_the_bytes_and_records_what_they_are(ctx: CoreContext) -> None:
    data = b"one\ntwo\nthree"
    record = add(ctx, "log.txt", data)
    sha = hashlib.sha256(data).hexdigest()
    assert record.id == artifact_id(sha) == "art-" + sha[:16]
    assert blob(ctx, record).read_bytes() == data
    assert record.public() == {
        "id": record.id,
        "name": "log.txt",
        "mediaType": "text/plain",
        "sourceSha256": f"sha256:{sha}",
        "sourceBytes": len(data),
        "lines": 3,
        "kind": "text",
        "created": record.created,
    }
    assert oct(blob(ctx, record).stat().st_mode & 0o777) == "0o444"


@pytest.mark.parametrize(
    ("data", "kind", "media"),
    [
        (b'[{"a": 1}, {"a": 2}]', "json", "application/json"),
        (b'{"a": 1}\n\n{"a": 2}\n', "jsonl", "application/jsonl"),
        (b'  {"only": "one value"}  \n', "json", "application/json"),
        (b"plain words\n", "text", "text/plain"),
        (b"[1, 2\n", "text", "text/plain"),
        (b'{"a": NaN}', "text", "text/plain"),
        (b"caf\xc3\xa9\n", "text", "text/plain"),
        (b"bad \xff utf-8\n", "binary", "application/octet-stream"),
        (b"text then a NUL\x00", "binary", "application/octet-stream"),
        (b"", "text", "text/plain"),
    ],
)
def test_kinds(ctx: CoreContext, data: bytes, kind: str, media: str) -> None:
    record = add(ctx, "noext", data)
    assert (record.kind, record.media_type.split(";")[0]) == (kind, media)


def test_media_type_comes_from_the_name_or_the_option(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    assert add(ctx, "page.html", b"<p>hi</p>\n").media_type == "text/html"
    chosen = store.add(io.BytesIO(b"x,y\n"), name="t", media_type="text/csv").record
    assert chosen.media_type == "text/csv"


def test_line_counts() -> None:
    for data, lines in [(b"", 0), (b"a", 1), (b"a\n", 1), (b"a\nb", 2), (b"\n\n", 2), (b"a\r\nb\r\n", 2)]:
        scanner = ContentScanner()
        scanner.update(data)
        assert scanner.finish().lines == lines, data


def test_utf8_split_across_chunks_is_still_text() -> None:
    scanner = ContentScanner()
    for chunk in (b"caf\xc3", b"\xa9 ok\n"):
        scanner.update(chunk)
    assert scanner.finish().text is True
    truncated = ContentScanner()
    truncated.update(b"caf\xc3")
    assert truncated.finish().text is False


def test_large_json_is_retained_as_text(ctx: CoreContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("bee_core.artifacts.content.MAX_JSON_BYTES", 10)
    assert add(ctx, "big.json", b"[1, 2, 3, 4, 5, 6]").kind == "text"
    assert MAX_JSON_BYTES == 64 * 1024 * 1024


def test_adding_the_same_bytes_twice_is_one_artifact(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    first = store.add(io.BytesIO(b"same\n"), name="a")
    again = store.add(io.BytesIO(b"same\n"), name="b")
    assert (first.outcome, again.outcome) == ("added", "existing")
    assert again.record == first.record and again.record.name == "a"
    assert [r.id for r in store.list().records] == [first.record.id]
    assert list(store.tmp.iterdir()) == []


def test_list_is_oldest_first_and_rm_forgets_record_and_bytes(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    records = [add(ctx, f"f{i}", f"content {i}\n".encode()) for i in range(3)]
    assert [r.id for r in store.list().records] == [r.id for r in records]
    removed = store.remove(records[1].id)
    assert removed == records[1]
    assert [r.id for r in store.list().records] == [records[0].id, records[2].id]
    assert not blob(ctx, records[1]).exists()
    with pytest.raises(BeeError) as info:
        store.get(records[1].id)
    assert info.value.code is ErrorCode.NOT_FOUND
    with pytest.raises(BeeError) as info:
        store.remove(records[1].id)
    assert info.value.code is ErrorCode.NOT_FOUND


def test_malformed_ids_are_refused_before_touching_files(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    for bad in ["../../etc/passwd", "art-XYZ", "art-0123", ""]:
        with pytest.raises(BeeError) as info:
            store.get(bad)
        assert info.value.code is ErrorCode.INVALID_ARGUMENT
        assert "art-0123456789abcdef" in info.value.message


def test_a_failed_add_leaves_nothing_visible(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)

    class Broken(io.RawIOBase):
        calls = 0

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int:
            self.calls += 1
            if self.calls > 3:
                raise OSError("disk unplugged")
            buffer[:4] = b"data"
            return 4

    with pytest.raises(OSError, match="unplugged"):
        store.add(io.BufferedReader(Broken()), name="half")
    assert store.list().records == []
    assert list(store.tmp.iterdir()) == []
    assert list(store.blobs.iterdir()) == []


def test_stale_temp_files_of_dead_processes_are_swept(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    add(ctx, "first", b"x\n")
    dead = store.tmp / "999999999-deadbeef.part"
    dead.write_bytes(b"half an artifact")
    live = store.tmp / f"{os.getpid()}-cafe.part"
    live.write_bytes(b"in flight")
    add(ctx, "second", b"y\n")
    assert not dead.exists() and live.exists()


def test_tampering_is_detected_and_a_readd_repairs_it(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    record = add(ctx, "log", b"original bytes\n")
    path = blob(ctx, record)
    tamper(path, b"modified bytes\n")
    fresh = Verifier()  # a new process: only the recorded status to go on
    with pytest.raises(BeeError) as info:
        fresh.check(record, path)
    assert info.value.code is ErrorCode.HASH_MISMATCH
    assert "bee artifact add" in info.value.message and record.id in info.value.message
    assert info.value.details is not None
    assert info.value.details["foundSha256"] == "sha256:" + hashlib.sha256(b"modified bytes\n").hexdigest()

    repaired = store.add(io.BytesIO(b"original bytes\n"), name="again")
    assert repaired.outcome == "repaired" and repaired.record.name == "log"
    Verifier().check(store.get(record.id), path)
    assert path.read_bytes() == b"original bytes\n"


def test_same_size_rewrite_with_restored_mtime_is_still_detected(ctx: CoreContext) -> None:
    record = add(ctx, "log", b"abcdef\n")
    path = blob(ctx, record)
    before = path.stat()
    tamper(path, b"ABCDEF\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # ctime still moves
    with pytest.raises(BeeError) as info:
        Verifier().check(record, path)
    assert info.value.code is ErrorCode.HASH_MISMATCH


def test_a_status_change_without_a_content_change_is_rehashed_once(ctx: CoreContext) -> None:
    record = add(ctx, "log", b"stable\n")
    path = blob(ctx, record)
    verifier = Verifier()
    verifier.check(record, path)
    assert verifier.rehashes == 0
    os.chmod(path, 0o400)  # ctime moves, bytes do not
    verifier.check(record, path)
    verifier.check(record, path)
    assert verifier.rehashes == 1


def test_bytes_lost_while_the_record_stays_are_a_hash_mismatch(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    record = add(ctx, "log", b"bytes\n")
    blob(ctx, record).unlink()
    with pytest.raises(BytesMissing):
        Verifier().check(record, blob(ctx, record))
    with pytest.raises(BeeError) as info:
        store.serve(record, lambda record, path: Verifier().read(record, path, os.fstat))
    assert info.value.code is ErrorCode.HASH_MISMATCH and "missing" in info.value.message
    assert info.value.retryable is False


def test_records_keep_a_line_index_that_numbers_lines_like_a_scan(ctx: CoreContext, tmp_path: Path) -> None:
    lines = [f"line {i} " + "x" * (i % 97) for i in range(20000)]
    data = ("\n".join(lines) + "\n").encode()
    assert len(data) > 3 * BLOCK_BYTES
    record = add(ctx, "big", data)
    stored = json.loads((ctx.artifacts.store(ctx.instance).records / f"{record.id}.json").read_text())
    assert stored["lineIndex"]["blockBytes"] == BLOCK_BYTES
    fd = os.open(blob(ctx, record), os.O_RDONLY)
    try:
        assert record.line_blocks is not None
        recorded, built = LineIndex(record.line_blocks), LineIndex.build(fd)
        offset = 0
        for number, line in enumerate(lines, start=1):
            if number % 997 == 0 or number in (1, 20000):
                assert recorded.line_number(fd, offset) == built.line_number(fd, offset) == number
            offset += len(line) + 1
    finally:
        os.close(fd)


def test_a_damaged_record_can_be_removed_or_overwritten_by_adding_again(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    record = add(ctx, "log", b"bytes\n")
    (store.records / f"{record.id}.json").write_text("{not json")
    again = ArtifactStore(store.root).add(io.BytesIO(b"bytes\n"), name="log again")
    assert again.outcome == "added" and ArtifactStore(store.root).get(record.id).name == "log again"
    (store.records / f"{record.id}.json").write_text("{not json")
    assert ArtifactStore(store.root).remove(record.id) is None
    assert ArtifactStore(store.root).list() == Listing([], [])


def _rewritten(raw: dict[str, Any], **changes: Any) -> bytes:
    return json.dumps({**raw, **changes}).encode()


OTHER_ID = "art-0123456789abcdef"
DAMAGE = [
    ("truncated", lambda raw, data: data[: len(data) // 2], "it is truncated"),
    ("cut inside a string", lambda raw, data: data[: data.index(b'"name"') + 3], "it is truncated"),
    ("not JSON", lambda raw, data: b"this is not json\n", "it is not JSON (Expecting value at line 1, column 1)"),
    ("empty", lambda raw, data: b"", "it is empty"),
    ("not UTF-8", lambda raw, data: b'{"id": "\xff"}', "it is not UTF-8 text"),
    ("an array", lambda raw, data: b"[1, 2]", "it holds an array, not a record object"),
    ("another format", lambda raw, data: _rewritten(raw, format=2), "its format is 2, but this Bee reads format 1"),
    ("no format", lambda raw, data: _rewritten({k: v for k, v in raw.items() if k != "format"}), "format is missing"),
    ("a bad id", lambda raw, data: _rewritten(raw, id="art-XYZ"), "its id 'art-XYZ' is not an artifact id"),
    ("another id", lambda raw, data: _rewritten(raw, id=OTHER_ID), f"it holds the record of {OTHER_ID}, not of"),
    ("a bad hash", lambda raw, data: _rewritten(raw, sourceSha256="sha256:beef"), "is not sha256: and 64 hex"),
    ("a missing field", lambda raw, data: _rewritten({k: v for k, v in raw.items() if k != "name"}), "name is missing"),
    ("a wrong type", lambda raw, data: _rewritten(raw, sourceBytes="6"), "sourceBytes is a string, not an integer"),
    ("a boolean size", lambda raw, data: _rewritten(raw, lines=True), "lines is a boolean, not an integer"),
    ("a negative size", lambda raw, data: _rewritten(raw, sourceBytes=-1), "sourceBytes is negative"),
    ("an unknown kind", lambda raw, data: _rewritten(raw, kind="video"), "its kind 'video' is not one of"),
    ("a bad status", lambda raw, data: _rewritten(raw, stored={"device": 1}), "its field stored.inode is missing"),
    ("a bad line index", lambda raw, data: _rewritten(raw, lineIndex={"newlines": "x"}), "lineIndex is not an object"),
]


@pytest.mark.parametrize(("damage", "problem"), [(d[1], d[2]) for d in DAMAGE], ids=[d[0] for d in DAMAGE])
def test_a_damaged_record_is_reported_and_the_rest_stay_available(
    ctx: CoreContext, damage: Callable[[dict[str, Any], bytes], bytes], problem: str
) -> None:
    store = ctx.artifacts.store(ctx.instance)
    sound = add(ctx, "sound.log", b"still here\n")
    record = add(ctx, "log", b"bytes\n")
    path = store.records / f"{record.id}.json"
    data = path.read_bytes()
    path.write_bytes(damage(json.loads(data), data))

    for fresh in (store, ArtifactStore(store.root)):  # this process (cached parse) and a new one
        listing = fresh.list()
        assert listing.records == [sound]
        [damaged] = listing.damaged
        assert (damaged.id, damaged.file) == (record.id, path)
        assert damaged.problem.startswith("it") and problem in damaged.problem, damaged.problem
        assert damaged.repair.startswith(f"run `bee artifact rm {record.id}`, then `bee artifact add`")
        assert fresh.lookup(record.id) == damaged
        with pytest.raises(BeeError) as info:
            fresh.get(record.id)
        error = info.value
        assert error.code is ErrorCode.INTERNAL and error.retryable is False
        assert str(path) in error.message and problem in error.message and "bee artifact rm" in error.message
        assert error.details == {"id": record.id, "recordFile": str(path), "problem": damaged.problem}
        assert fresh.get(sound.id) == sound


def test_a_stray_file_in_records_is_reported_with_how_to_remove_it(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    sound = add(ctx, "sound.log", b"x\n")
    stray = store.records / "notes.json"
    stray.write_text("{}")
    (store.records / "README").write_text("not a record file: ignored")
    listing = store.list()
    assert listing.records == [sound]
    [damaged] = listing.damaged
    assert damaged.id == "notes" and damaged.repair == (
        f"remove {stray}: its name is not an artifact id, so no artifact record was ever written there"
    )


def test_a_damaged_record_is_removed_with_rm_and_repaired_by_adding_again(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    record = add(ctx, "log", b"bytes\n")
    (store.records / f"{record.id}.json").write_text("{not json")
    assert store.remove(record.id) is None
    assert store.list() == Listing([], [])
    again = store.add(io.BytesIO(b"bytes\n"), name="log again")
    assert again.outcome == "added" and store.get(record.id).name == "log again"


def test_bytes_removed_under_a_reader_mean_not_found(ctx: CoreContext) -> None:
    """rm deletes the record, then the bytes: a reader that loaded the record first finds the bytes gone."""
    store = ctx.artifacts.store(ctx.instance)
    record = add(ctx, "log", b"bytes\n")
    loaded = store.get(record.id)
    ArtifactStore(store.root).remove(record.id)  # `bee artifact rm` from another process
    with pytest.raises(BytesMissing):
        store.verifier.check(loaded, store.blob_path(loaded))
    assert store.recheck(loaded) is None
    with pytest.raises(BeeError) as info:
        store.serve(loaded, lambda record, path: store.verifier.read(record, path, os.fstat))
    assert info.value.code is ErrorCode.NOT_FOUND and record.id in info.value.message


def test_bytes_removed_and_added_again_under_a_reader_are_read_in_their_new_form(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    record = add(ctx, "log", b"bytes\n")
    other = ArtifactStore(store.root)  # another process
    seen: list[ArtifactRecord] = []

    def read(current: ArtifactRecord, path: Path) -> bytes:
        seen.append(current)
        if len(seen) == 1:  # the open fails between that process's rm and its add of the same bytes
            other.remove(record.id)
            other.add(io.BytesIO(b"bytes\n"), name="log again")
            raise BytesMissing(current)
        return store.verifier.read(current, path, lambda fd: os.pread(fd, 100, 0))

    assert store.serve(record, read) == b"bytes\n"
    assert seen[0] == record and seen[1].name == "log again"
    assert store.recheck(record) == seen[1]


def test_an_artifact_replaced_again_and_again_under_a_reader_is_a_retryable_conflict(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    record = add(ctx, "log", b"bytes\n")
    other = ArtifactStore(store.root)

    def read(current: ArtifactRecord, path: Path) -> NoReturn:
        other.remove(record.id)
        other.add(io.BytesIO(b"bytes\n"), name="churn")
        raise BytesMissing(current)

    with pytest.raises(BeeError) as info:
        store.serve(record, read)
    assert info.value.code is ErrorCode.CONFLICT and info.value.retryable is True
    assert f"{REPLACED_RETRIES + 1} times" in info.value.message


def test_a_damaged_record_found_on_recheck_is_reported(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    record = add(ctx, "log", b"bytes\n")
    blob(ctx, record).unlink()
    (store.records / f"{record.id}.json").write_text("[]")
    with pytest.raises(BeeError) as info:
        store.recheck(record)
    assert info.value.code is ErrorCode.INTERNAL and info.value.retryable is False


def test_lost_bytes_are_repaired_by_adding_again(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    record = add(ctx, "log", b"bytes\n")
    blob(ctx, record).unlink()
    again = store.add(io.BytesIO(b"bytes\n"), name="log")
    assert again.outcome == "repaired" and blob(ctx, record).read_bytes() == b"bytes\n"


def test_recheck_of_bytes_that_are_back_or_changed_under_an_unchanged_record(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    record = add(ctx, "log", b"bytes\n")
    assert store.recheck(record) == record  # found missing a moment ago, there and intact now: read it again
    tamper(blob(ctx, record), b"other\n")
    with pytest.raises(BeeError) as info:
        store.recheck(record)
    assert info.value.code is ErrorCode.HASH_MISMATCH
    assert info.value.details is not None
    assert info.value.details["foundSha256"] == "sha256:" + hashlib.sha256(b"other\n").hexdigest()


def test_the_parsed_records_of_removed_artifacts_are_forgotten_by_the_next_listing(ctx: CoreContext) -> None:
    store = ctx.artifacts.store(ctx.instance)
    kept, gone = add(ctx, "kept", b"a\n"), add(ctx, "gone", b"b\n")
    store.list()
    assert set(store._cache) == {f"{kept.id}.json", f"{gone.id}.json"}
    ArtifactStore(store.root).remove(gone.id)  # another process
    assert store.list().records == [kept]
    assert set(store._cache) == {f"{kept.id}.json"}


def test_a_record_path_that_is_no_regular_file_is_damaged_and_never_blocks(
    ctx: CoreContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ctx.artifacts.store(ctx.instance)
    record = add(ctx, "log", b"bytes\n")
    path = store.records / f"{record.id}.json"
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(path.read_bytes())
    replacements: list[tuple[Callable[[], object], str]] = [
        (lambda: os.mkfifo(path), "it is not a regular file"),  # a FIFO: reading it by name would block
        (lambda: path.symlink_to(elsewhere), "it cannot be read (Too many levels of symbolic links)"),
        (path.mkdir, "it is not a regular file"),
    ]
    for make, problem in replacements:
        path.unlink()  # the record, then each of these in turn
        make()
        found = ArtifactStore(store.root).lookup(record.id)
        assert isinstance(found, DamagedRecord) and found.problem == problem
        assert ArtifactStore(store.root).list().damaged == [found]
    path.rmdir()
    path.write_bytes(b" " * 100)
    monkeypatch.setattr("bee_core.artifacts.store.MAX_RECORD_BYTES", 10)
    damaged = ArtifactStore(store.root).lookup(record.id)
    assert isinstance(damaged, DamagedRecord)
    assert "larger than any record Bee writes" in damaged.problem
