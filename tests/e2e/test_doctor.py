import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import bee_executable, warm_env

pytestmark = pytest.mark.e2e


def test_doctor_checks_the_core_host_and_its_discovery_view_in_both_eras_cold_and_warm(
    checkout: Path, warm_runtime: Path
) -> None:
    completed = subprocess.run(
        [str(bee_executable()), "doctor", "--checkout", str(checkout), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, **warm_env(warm_runtime)},
    )
    assert completed.returncode == 0, completed.stderr
    checks = json.loads(completed.stdout)
    assert {(c["host"], c["view"], c["era"], c["mode"]) for c in checks} >= {
        (host, view, era, mode)
        for host, view in [("core", ""), ("core", "discovery")]
        for era in ("legacy", "2026-07-28")
        for mode in ("cold", "warm")
    }
    assert all(c["ok"] and c["tools"] >= 1 for c in checks)
    assert {c["tools"] for c in checks if c["view"] == "discovery"} == {3}


def test_doctor_fails_a_warm_check_that_fell_back_to_serving_cold(checkout: Path, tmp_path: Path) -> None:
    # A runtime directory open to other users is refused: the front end serves cold, and says why.
    runtime = tmp_path / "run"
    (runtime / "bee").mkdir(parents=True)
    runtime.chmod(0o700)
    (runtime / "bee").chmod(0o755)
    completed = subprocess.run(
        [str(bee_executable()), "doctor", "--checkout", str(checkout), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
    )
    assert completed.returncode == 1, completed.stderr
    checks = json.loads(completed.stdout)
    warm = [c for c in checks if c["mode"] == "warm"]
    assert warm and all(not c["ok"] for c in warm)
    assert all("the warm path was not taken" in c["problems"][0] and "0755" in c["problems"][0] for c in warm)
    assert all(c["ok"] for c in checks if c["mode"] == "cold")
