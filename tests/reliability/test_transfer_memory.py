"""Import and export stream: ten times the issues take about the same memory, in a real `bee tracker` process."""

import os
import subprocess
import sys
from pathlib import Path

from tests.perf.beads_corpus import write_backup, write_legacy

BEE = Path(sys.executable).parent / "bee"
#: Peak memory ten times the data may add: what a batch and one small entry per id take. Holding the data whole
#: (the file, its parsed records) would add several times the larger file's size (22 MB for the legacy file).
_MARGIN_BYTES = 12 * 1024 * 1024


def peak_bytes(*argv: str) -> int:
    """Run ``bee`` with ``argv`` to the end; return its peak resident memory (Linux reports KiB)."""
    process = subprocess.Popen([str(BEE), *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, process.stderr.read() if process.stderr else ""
    if process.stderr:
        process.stderr.close()
    return usage.ru_maxrss * 1024


def test_legacy_import_and_export_take_flat_memory(tmp_path):
    peaks = {}
    for count in (2_000, 20_000):
        source = tmp_path / f"{count}.jsonl"
        write_legacy(source, count)
        home = tmp_path / f"home-{count}"
        peaks[count] = (
            peak_bytes("tracker", "import", "--home", str(home), str(source)),
            peak_bytes("tracker", "export", "--home", str(home), str(tmp_path / f"out-{count}.jsonl")),
        )
        assert (tmp_path / f"out-{count}.jsonl").read_bytes() == source.read_bytes()
    (small_import, small_export), (large_import, large_export) = peaks[2_000], peaks[20_000]
    assert large_import - small_import < _MARGIN_BYTES, peaks
    assert large_export - small_export < _MARGIN_BYTES, peaks


def test_backup_import_takes_flat_memory(tmp_path):
    peaks = {}
    for count in (2_000, 20_000):
        write_backup(tmp_path / f"backup-{count}", count)
        peaks[count] = peak_bytes(
            "tracker", "import", "--home", str(tmp_path / f"h-{count}"), str(tmp_path / f"backup-{count}")
        )
    assert peaks[20_000] - peaks[2_000] < _MARGIN_BYTES, peaks
