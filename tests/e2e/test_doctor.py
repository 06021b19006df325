import json
import subprocess

import pytest

from tests.conftest import bee_executable

pytestmark = pytest.mark.e2e


def test_doctor_checks_the_core_host_and_its_discovery_view_in_both_eras(checkout):
    completed = subprocess.run(
        [str(bee_executable()), "doctor", "--checkout", str(checkout), "--json"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    checks = json.loads(completed.stdout)
    assert {(c["host"], c["view"], c["era"]) for c in checks} >= {
        ("core", "", "legacy"),
        ("core", "", "2026-07-28"),
        ("core", "discovery", "legacy"),
        ("core", "discovery", "2026-07-28"),
    }
    assert all(c["ok"] and c["tools"] >= 1 for c in checks)
    assert {c["tools"] for c in checks if c["view"] == "discovery"} == {3}
