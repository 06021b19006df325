"""One `bee tracker` command in a process of its own, with the peak resident memory that process itself reached.

The peak is the process's own VmHWM (/proc/self/status), read by it as it ends. `ru_maxrss` from wait4 is no
measure here: Linux carries the parent's high-water mark into a child across fork and exec, so every command a
300 MB benchmark (or test runner) starts reports at least 300 MB, whatever it used itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: Runs `bee tracker ARGS` from whichever bee_tracker comes first on sys.path, then writes its own VmHWM (KiB) to
#: the file named first; in a finally, so a command that exits through SystemExit (as click's do) still reports.
_DRIVER = """
import sys
report = sys.argv.pop(1)
try:
    from bee_tracker.cli import tracker
    tracker(sys.argv[1:], prog_name="bee tracker")
finally:
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(report, "w") as out:
        out.write(peak)
"""


def run_tracker(args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run `bee tracker *args* ` to its end: wall and CPU seconds (user + system), peak MB, exit status, the end
    of its stderr when it failed."""
    with tempfile.TemporaryDirectory(prefix="bee-peak-") as scratch, tempfile.TemporaryFile() as errors:
        report = Path(scratch) / "peak"
        argv = [sys.executable, "-c", _DRIVER, str(report), *args]
        started = time.perf_counter()
        process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        try:
            _, status, usage = os.wait4(process.pid, 0)
        except BaseException:  # interrupted: the measured process goes too
            process.kill()
            process.wait()
            raise
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        tail = errors.read().decode(errors="replace")[-600:]
        peak_kib = int(report.read_text()) if report.exists() else 0
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_mb": round(peak_kib / 1024, 1),
        "exit": process.returncode,
        **({"stderr": tail} if process.returncode else {}),
    }
