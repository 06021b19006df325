"""`bee bd install-shim`: an opt-in `bd` that runs `bee bd`, written only where the user says, never over a real bd
without --force, and removable; the launcher run as a real process answers as `bee bd` does."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from bee_tracker.bd.shim import MARK
from tests.tracker.bd.run import bd


def _path(*folders: Path) -> dict[str, str]:
    """A PATH of ``folders`` and the system's own (where no bd is)."""
    return {"PATH": os.pathsep.join([*map(str, folders), "/usr/bin", "/bin"])}


def test_the_shim_runs_bee_bd_with_its_arguments_as_they_were(tmp_path: Path) -> None:
    shims = tmp_path / "shims"
    shims.mkdir()
    store = str(tmp_path / "t.db")
    made = bd("create", 'Quote\'s "shim" $HOME `x`', "--silent", store=store).stdout.strip()
    installed = bd("install-shim", str(shims), env=_path())
    assert installed.returncode == 0 and f"wrote {shims / 'bd'}" in installed.stdout
    assert f"export PATH={shims}:" in installed.stdout  # said, never done
    launcher = shims / "bd"
    assert launcher.stat().st_mode & 0o777 == 0o755 and MARK in launcher.read_text()
    ran = subprocess.run(
        [str(launcher), "--store", store, "show", made, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == bd("show", made, "--json", store=store).stdout
    searched = subprocess.run(
        [str(launcher), "--store", store, "search", "$HOME `x`", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert [i["id"] for i in json.loads(searched.stdout)] == [made]  # no shell re-reads the arguments
    refused = subprocess.run([str(launcher), "dolt", "push"], capture_output=True, text=True, timeout=120, check=False)
    assert refused.returncode == 2 and "bd dolt is not supported" in refused.stderr


def test_a_real_bd_on_path_is_never_shadowed_silently(tmp_path: Path) -> None:
    real, shims = tmp_path / "real", tmp_path / "shims"
    real.mkdir()
    shims.mkdir()
    (real / "bd").write_text("#!/bin/sh\necho real bd\n")
    (real / "bd").chmod(0o755)
    refused = bd("install-shim", str(shims), env=_path(shims, real))
    assert refused.returncode == 2 and f"a bd is already on your PATH ({real / 'bd'})" in refused.stderr
    assert not (shims / "bd").exists()
    forced = bd("install-shim", str(shims), "--force", env=_path(real, shims))
    assert forced.returncode == 0 and "still answers `bd`" in forced.stderr  # the real one comes first on this PATH
    assert (real / "bd").read_text() == "#!/bin/sh\necho real bd\n"


def test_a_file_of_someone_else_in_the_directory_is_left_alone(tmp_path: Path) -> None:
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "bd").write_text("mine\n")
    refused = bd("install-shim", str(shims), env=_path())
    assert refused.returncode == 2 and "is not a bee shim" in refused.stderr and (shims / "bd").read_text() == "mine\n"
    not_removed = bd("install-shim", str(shims), "--remove", env=_path())
    assert not_removed.returncode == 2 and (shims / "bd").read_text() == "mine\n"
    assert bd("install-shim", str(shims), "--force", env=_path()).returncode == 0
    assert MARK in (shims / "bd").read_text()


def test_reinstalling_over_its_own_shim_and_removing_it(tmp_path: Path) -> None:
    shims = tmp_path / "shims"
    shims.mkdir()
    assert bd("install-shim", str(shims), env=_path(shims)).returncode == 0
    again = bd("install-shim", str(shims), env=_path(shims))  # its own shim, on PATH: no --force needed
    assert again.returncode == 0 and "not on your PATH" not in again.stdout
    removed = bd("install-shim", str(shims), "--remove", env=_path(shims))
    assert removed.returncode == 0 and not (shims / "bd").exists()
    assert "nothing removed" in bd("install-shim", str(shims), "--remove", env=_path()).stdout
    missing = bd("install-shim", str(tmp_path / "nowhere"), env=_path())
    assert missing.returncode == 2 and "create it first" in missing.stderr
    assert list(shims.iterdir()) == []  # no temporary file left behind
