"""Import and export stream, in a real `bee tracker` process: export takes about the same memory for ten times the
issues; import adds one small entry per id (the last line for an id wins, so the ids seen must be known), far less
than the lines themselves would take."""

from pathlib import Path

from tests.perf.beads_corpus import write_backup, write_legacy
from tests.perf.peak import run_tracker

#: Peak memory ten times the data may add to an export: what a batch and the store's cache take.
_MARGIN_BYTES = 12 * 1024 * 1024
#: Share of the added data's size ten times the data may add to an import's peak: less than the added lines
#: themselves, which holding them would take (and their parsed records several times that). The entry per id (its
#: id and state, with the allocator's overhead and the id table's growth by doubling) measured +14.7 MB for the
#: 20 MB a legacy file adds from 2,000 to 20,000 issues, +9 MB for the 38 MB a backup adds; the peak at 100,000
#: issues is in tests/perf/reports/transfer.json.
_IMPORT_SHARE = 1.0


def peak_bytes(*argv: str) -> int:
    """Run `bee tracker *argv*` to the end in a process of its own; return the peak resident memory it reached
    itself (its VmHWM: a child's ru_maxrss would carry this test runner's own peak)."""
    measured = run_tracker(list(argv))
    assert measured["exit"] == 0, measured
    return int(measured["peak_mb"] * 1024 * 1024)


def test_legacy_import_and_export_take_flat_memory(tmp_path: Path) -> None:
    peaks = {}
    for count in (2_000, 20_000):
        source = tmp_path / f"{count}.jsonl"
        write_legacy(source, count)
        home = tmp_path / f"home-{count}"
        peaks[count] = (
            peak_bytes("import", "--home", str(home), str(source)),
            peak_bytes("export", "--home", str(home), str(tmp_path / f"out-{count}.jsonl")),
        )
        assert (tmp_path / f"out-{count}.jsonl").read_bytes() == source.read_bytes()
    (small_import, small_export), (large_import, large_export) = peaks[2_000], peaks[20_000]
    added = (tmp_path / "20000.jsonl").stat().st_size - (tmp_path / "2000.jsonl").stat().st_size
    assert large_import - small_import < _IMPORT_SHARE * added, (peaks, added)
    assert large_export - small_export < _MARGIN_BYTES, peaks


def test_backup_import_takes_flat_memory(tmp_path: Path) -> None:
    peaks = {}
    for count in (2_000, 20_000):
        write_backup(tmp_path / f"backup-{count}", count)
        peaks[count] = peak_bytes("import", "--home", str(tmp_path / f"h-{count}"), str(tmp_path / f"backup-{count}"))
    added = sum(f.stat().st_size for f in (tmp_path / "backup-20000").iterdir()) - sum(
        f.stat().st_size for f in (tmp_path / "backup-2000").iterdir()
    )
    assert peaks[20_000] - peaks[2_000] < _IMPORT_SHARE * added, (peaks, added)
