"""Which Beads form an import reads, and every line that is no Beads issue refused for what it is."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_tracker.store import SqlStore, sources
from tests.tracker.calls import bee

BEADS = Path(__file__).resolve().parents[1] / "fixtures" / "beads"
GASTOWN = BEADS / "backup" / "steveyegge__gastown"
#: A legacy file older than the gastown backup (February 2026 against March).
SKYHOOK = BEADS / "NVIDIA__skyhook.jsonl"
NOT_ISSUES = BEADS / "not-issues"


def beads_dir(root: Path, *, legacy: Path | None = None, backup: bool = False) -> Path:
    """A checkout at ``root`` with a .beads directory holding a legacy file and/or a backup."""
    directory = root / ".beads"
    directory.mkdir(parents=True)
    (directory / "config.yaml").write_text("issue-prefix: x\n")
    if legacy is not None:
        (directory / "issues.jsonl").write_bytes(legacy.read_bytes())
    if backup:
        shutil.copytree(GASTOWN, directory / "backup")
    return directory


def test_a_beads_directory_with_one_form_imports_that_form(store: SqlStore, tmp_path: Path) -> None:
    legacy = beads_dir(tmp_path / "a", legacy=SKYHOOK)
    report = store.import_from(sources.choose(legacy))
    assert report["source"] == {"form": "legacy", "path": f"{legacy}/issues.jsonl"}
    assert "".join(line + "\n" for line in store.export_lines()).encode() == SKYHOOK.read_bytes()
    backup = beads_dir(tmp_path / "b", backup=True)
    choice = sources.choose(tmp_path / "b")  # the checkout holding .beads
    assert choice.describe() == {"form": "backup", "path": f"{backup}/backup"}


def test_a_beads_directory_with_both_forms_imports_the_newer(store: SqlStore, tmp_path: Path) -> None:
    directory = beads_dir(tmp_path / "c", legacy=SKYHOOK, backup=True)
    choice = sources.choose(directory)
    assert choice.describe() == {
        "form": "backup",
        "path": f"{directory}/backup",
        "passedOver": {"path": f"{directory}/issues.jsonl", "form": "legacy", "why": "not newer"},
    }
    newer = json.loads(SKYHOOK.read_text().splitlines()[0])
    newer["updated_at"] = "2026-04-01T00:00:00Z"  # after the backup's 2026-03-06
    (directory / "issues.jsonl").write_text(SKYHOOK.read_text() + json.dumps(newer) + "\n")
    report = store.import_from(sources.choose(directory))
    assert report["source"]["form"] == "legacy" and report["source"]["passedOver"]["why"] == "older"


def test_a_directory_without_beads_data_says_what_it_looked_for(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(BeeError) as info:
        sources.choose(tmp_path / "empty")
    assert info.value.code == "invalid_argument"
    assert "issues.jsonl or beads.jsonl" in info.value.message and "backup" in info.value.message


def test_a_symlink_out_of_the_directory_is_never_read(store: SqlStore, tmp_path: Path) -> None:
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"id":"s-1","title":"a secret the checkout points at"}\n')
    directory = tmp_path / "checkout" / ".beads"
    directory.mkdir(parents=True)
    os.symlink(secret, directory / "issues.jsonl")
    with pytest.raises(BeeError) as info:
        store.import_from(sources.choose(directory))
    assert info.value.code == "outside_root"
    assert store.export_lines() == []
    os.unlink(directory / "issues.jsonl")
    backup = directory / "backup"
    shutil.copytree(GASTOWN, backup)
    (backup / "comments.jsonl").unlink()
    os.symlink(secret, backup / "comments.jsonl")
    with pytest.raises(BeeError) as info:
        store.import_from(sources.choose(directory))
    assert info.value.code == "outside_root" and store.export_lines() == []


def test_a_line_longer_than_any_beads_line_is_refused(
    store: SqlStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sources, "MAX_LINE_BYTES", 4096)
    endless = tmp_path / "endless.jsonl"
    endless.write_bytes(b'{"id":"t-a","title":"fine"}\n' + b"x" * 10_000)
    with pytest.raises(BeeError) as info:
        store.import_from(sources.choose(endless))
    assert info.value.details == {"line": 2} and "longer than" in info.value.message
    assert store.export_lines() == []


REFUSED = [
    ((NOT_ISSUES / "gastownhall__beads__deletions.jsonl").read_text().splitlines()[0], "a deletions manifest entry"),
    ((NOT_ISSUES / "Dicklesworthstone__beads_rust__interactions.jsonl").read_text().splitlines()[1], "interaction log"),
    ((GASTOWN / "labels.jsonl").read_text().splitlines()[0], "labels table"),
    ((GASTOWN / "dependencies.jsonl").read_text().splitlines()[0], "dependencies table"),
    ((GASTOWN / "comments.jsonl").read_text().splitlines()[0], "comments table"),
    ((GASTOWN / "events.jsonl").read_text().splitlines()[0], "events table"),
    ((GASTOWN / "config.jsonl").read_text().splitlines()[0], "config table"),
    ((GASTOWN / "issues.jsonl").read_text().splitlines()[0], "issues table"),
    ('{"_type":"interaction","id":"x-1","title":"t"}', "_type 'interaction', which bd does not write"),
    ('{"id":"t-b","status":"open","priority":2}', "an issue without a title; Beads requires one"),
    ('{"id":"t-b","title":""}', "an issue without a title"),
    ('{"id":"t-b","title":5}', "whose title is not text"),
    ('{"name":"x","size":3}', "not a Beads record (its keys: name, size)"),
]


@pytest.mark.parametrize(("line", "says"), REFUSED, ids=[says for _, says in REFUSED])
def test_a_line_that_is_no_issue_is_named_for_what_it_looks_like(store: SqlStore, line: str, says: str) -> None:
    good = '{"id":"t-a","title":"fine","status":"open","priority":2,"issue_type":"task"}'
    with pytest.raises(BeeError) as info:
        store.import_lines([good, line])
    assert info.value.code == "invalid_argument" and info.value.details == {"line": 2}
    assert info.value.message.startswith("line 2 is ") and says in info.value.message
    assert "nothing was imported" in info.value.message
    assert store.export_lines() == []


def test_cli_refuses_a_deletions_manifest_and_imports_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    manifest = NOT_ISSUES / "gastownhall__beads__deletions.jsonl"
    refused = bee("tracker", "import", "--home", str(home), str(manifest))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "line 1 is a deletions manifest entry" in refused.stderr
    assert bee("tracker", "export", "--home", str(home)).stdout == ""


def test_cli_imports_a_beads_directory(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    beads_dir(checkout, legacy=SKYHOOK)
    home = tmp_path / "home"
    done = bee("tracker", "import", "--home", str(home), str(checkout))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["source"]["form"] == "legacy"
    assert bee("tracker", "export", "--home", str(home)).stdout == SKYHOOK.read_text()
    missing = bee("tracker", "import", "--home", str(home), str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_cli_imports_stdin_as_a_legacy_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    executable = Path(sys.executable).parent / "bee"
    done = subprocess.run(
        [str(executable), "tracker", "import", "--home", str(home), "-"],
        input=SKYHOOK.read_bytes(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["source"] == {"form": "legacy", "path": "-"}
    assert bee("tracker", "export", "--home", str(home)).stdout == SKYHOOK.read_text()


def test_a_directory_holding_only_the_issues_table_is_read_as_a_backup(store: SqlStore, tmp_path: Path) -> None:
    alone = tmp_path / "backup"
    alone.mkdir()
    shutil.copy(GASTOWN / "issues.jsonl", alone / "issues.jsonl")
    report = store.import_from(sources.choose(alone))
    assert report["source"]["form"] == "backup" and report["imported"] == 162
