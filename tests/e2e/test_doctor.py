import json
import subprocess

import pytest

from tests.conftest import bee_executable

pytestmark = pytest.mark.e2e


def test_doctor_checks_the_core_host_in_both_eras(checkout):
    completed = subprocess.run(
        [str(bee_executable()), "doctor", "--checkout", str(checkout), "--json"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    checks = json.loads(completed.stdout)
    assert {(c["host"], c["era"]) for c in checks} >= {("core", "legacy"), ("core", "2026-07-28")}
    assert all(c["ok"] and c["tools"] >= 1 for c in checks)
