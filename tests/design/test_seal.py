"""Evidence says who produced it: `bee design capture` seals evidence.json with a MAC from this root's own key,
and evidence without a valid one — hand-written, forged, edited, or captured in another root — reads unverified."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_contracts.userconfig import UserSettings
from bee_design import layout
from bee_design.capture import seal
from bee_design.capture.evidence import EVIDENCE_FILE, PRODUCER, Evidence, parse_evidence
from bee_design.layout import DesignFiles
from bee_design.visual.authoring import create_spec
from tests.conftest import ERAS, bee_executable, error_of
from tests.design.helpers import design_client, page_image, write_evidence

SHOTS = {("home", "desktop"): page_image(400, 300)}


def key_path(root: Path) -> Path:
    """Where the root's evidence key lives: among its instance's per-user settings, never in the checkout."""
    return UserSettings(root / ".bee").path(seal.KEY_SETTING)


@pytest.fixture
def spec(root: Path) -> str:
    create_spec(DesignFiles(root), "shop", write_evidence(root / "evidence" / "reference", SHOTS))
    return "shop"


def report(root: Path, evidence: str) -> tuple[int, dict[str, Any]]:
    """`bee visual report --json` as a user runs it: its exit status and result."""
    completed = subprocess.run(
        [str(bee_executable()), "visual", "report", "shop", evidence, "--json", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode in (0, 1, 2), completed.stdout + completed.stderr
    return completed.returncode, json.loads(completed.stdout)


def unverified(result: dict[str, Any]) -> str:
    """The one limitation of a report on evidence that is not vouched for, and what the report says of it."""
    assert result["evidence"]["verified"] is False and result["decision"] == "inconclusive", result
    assert result["trusted"] is False and result["acceptance"] is False
    [limitation] = result["limitations"]
    assert limitation["kind"] == "evidence-unverified"
    message: str = limitation["message"]
    return message


def test_the_key_is_created_once_private_and_outside_the_checkout(root: Path) -> None:
    key = seal.ensure_key(DesignFiles(root))
    path = key_path(root)
    assert len(key) == 32 and seal.ensure_key(DesignFiles(root)) == key == seal.read_key(DesignFiles(root))
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert path.stat().st_uid == os.geteuid()
    assert not path.is_relative_to(root)
    assert not (root / layout.STATE_DIR / layout.KEYS_DIR).exists()
    assert sorted(p.name for p in path.parent.iterdir()) == ["design-evidence-key", "instance.json"]  # nothing aside


def test_captures_starting_together_agree_on_one_key(root: Path) -> None:
    keys: list[bytes] = []
    barrier = threading.Barrier(8)

    def make() -> None:
        barrier.wait()
        keys.append(seal.ensure_key(DesignFiles(root)))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(keys) == 8 and len(set(keys)) == 1


def test_sealed_evidence_round_trips_and_any_change_breaks_the_mac(root: Path) -> None:
    key = seal.ensure_key(DesignFiles(root))
    browser = {"name": "chromium", "version": "156", "executable": "/usr/bin/chromium", "flags": [], "commandLine": ""}
    written = Evidence(PRODUCER, "0.1.0", "2026-01-01T00:00:00+00:00", browser, {}, ())
    data = written.to_bytes(key)
    record = json.loads(data)
    assert parse_evidence(data, "evidence.json") == written
    assert record["mac"].startswith("hmac-sha256:") and seal.unverified(DesignFiles(root), record) is None
    for field, value in (("version", "0.1.1"), ("browser", {**browser, "version": "157"}), ("settings", {"x": 1})):
        changed = {**record, field: value}
        assert "does not match its MAC: it was changed after" in (seal.unverified(DesignFiles(root), changed) or "")
    assert "carries no MAC" in (seal.unverified(DesignFiles(root), json.loads(written.to_bytes())) or "")


@pytest.mark.e2e
def test_hand_written_evidence_with_bees_producer_fields_reads_unverified(root: Path, spec: str) -> None:
    write_evidence(root / "evidence" / "forged", SHOTS, sealed=False)
    code, result = report(root, "evidence/forged")
    assert code == 2 and result["evidence"]["producer"] == PRODUCER
    message = unverified(result)
    assert message.startswith("evidence/forged/evidence.json carries no MAC, so nothing vouches")
    assert message.endswith("capture again here with `bee design capture`")
    assert result["summary"]["compared"] == 1  # still compared: the decision stays diagnostic


@pytest.mark.e2e
def test_a_forged_mac_an_edited_record_and_evidence_from_another_root_read_unverified(
    root: Path, spec: str, tmp_path: Path
) -> None:
    folder = write_evidence(root / "evidence" / "forged-mac", SHOTS, sealed=False)
    record = json.loads((folder / EVIDENCE_FILE).read_text())
    record["mac"] = "hmac-sha256:" + "0" * 16 + ":" + "0" * 64
    (folder / EVIDENCE_FILE).write_text(json.dumps(record))
    assert "was sealed with another evidence key than this root's" in unverified(report(root, "evidence/forged-mac")[1])

    folder = write_evidence(root / "evidence" / "edited", SHOTS)
    record = json.loads((folder / EVIDENCE_FILE).read_text())
    record["capturedAt"] = "2026-06-01T00:00:00+00:00"
    (folder / EVIDENCE_FILE).write_text(json.dumps(record))
    assert "does not match its MAC: it was changed after" in unverified(report(root, "evidence/edited")[1])

    elsewhere = (tmp_path / "other").resolve()
    elsewhere.mkdir()
    write_evidence(elsewhere / "evidence" / "copied", SHOTS)  # sealed with the other root's key
    (root / "evidence" / "copied").mkdir()
    for item in (elsewhere / "evidence" / "copied").iterdir():
        (root / "evidence" / "copied" / item.name).write_bytes(item.read_bytes())
    message = unverified(report(root, "evidence/copied")[1])
    assert "captured on another machine or in another checkout" in message
    assert message.endswith("capture again here with `bee design capture`")


def test_a_root_without_a_key_verifies_nothing(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    folder = write_evidence(root / "evidence" / "reference", SHOTS)
    assert (seal.unverified(DesignFiles(other), json.loads((folder / EVIDENCE_FILE).read_text())) or "").startswith(
        "cannot be verified: this root has no evidence key yet"
    )
    assert not key_path(other).exists() and not (other / ".bee").exists()  # verifying never creates a key


@pytest.mark.e2e
def test_a_key_others_could_read_or_that_is_not_the_users_is_refused(root: Path, spec: str) -> None:
    write_evidence(root / "evidence" / "now", SHOTS)
    key = key_path(root)
    key.chmod(0o644)
    assert "group or others" in unverified(report(root, "evidence/now")[1])
    with pytest.raises(BeeError) as caught:
        seal.ensure_key(DesignFiles(root))
    assert caught.value.code is ErrorCode.FORBIDDEN and "chmod" in caught.value.message
    key.chmod(0o600)
    if os.geteuid() == 0:  # only root can hand a file to another user
        os.chown(key, 65534, 65534)
        assert "65534" in unverified(report(root, "evidence/now")[1])
        os.chown(key, 0, 0)
    moved = key.with_name("elsewhere")
    key.rename(moved)
    key.symlink_to(moved)
    assert "symlink" in unverified(report(root, "evidence/now")[1])
    key.unlink()
    moved.write_text("not hex\n")
    moved.rename(key)
    assert "is damaged" in unverified(report(root, "evidence/now")[1])


@pytest.mark.e2e
def test_capture_refuses_a_key_others_could_write_before_starting_a_browser(root: Path) -> None:
    seal.ensure_key(DesignFiles(root))
    key_path(root).chmod(0o640)
    completed = subprocess.run(
        [str(bee_executable()), "design", "capture", "http://127.0.0.1:9/", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 1
    assert completed.stderr.startswith(f"Error: Bee refuses its per-user settings {key_path(root)}")
    assert "it is a secret" in completed.stderr and f"chmod 600 {key_path(root)}" in completed.stderr
    assert not (root / layout.STATE_DIR / layout.EVIDENCE_DIR).exists()


def test_a_key_a_checkout_ships_vouches_for_nothing(root: Path, spec: str) -> None:
    """A checkout can carry a key in .bee (even one mode 0600, as a clone under umask 077 makes it) and evidence
    sealed with it: Bee never reads a key from the checkout, so that evidence reads unverified."""
    shipped = b"\x07" * 32
    folder = root / layout.STATE_DIR / layout.KEYS_DIR
    folder.mkdir(parents=True, mode=0o700)
    (folder / "evidence").write_text(shipped.hex() + "\n")
    (folder / "evidence").chmod(0o600)
    evidence = write_evidence(root / "evidence" / "shipped", SHOTS, sealed=False)
    record = json.loads((evidence / EVIDENCE_FILE).read_text())
    record[seal.MAC_FIELD] = seal.sign(record, shipped)
    (evidence / EVIDENCE_FILE).write_text(json.dumps(record))
    assert "sealed with another evidence key" in unverified(report(root, "evidence/shipped")[1])


def test_references_are_made_only_from_evidence_sealed_in_this_root(root: Path) -> None:
    folder = write_evidence(root / "evidence" / "forged", SHOTS, sealed=False)
    with pytest.raises(BeeError) as caught:
        create_spec(DesignFiles(root), "shop", folder)
    assert caught.value.code is ErrorCode.INVALID_ARGUMENT
    assert "carries no MAC" in caught.value.message and "captured in this root" in caught.value.message
    folder = write_evidence(root / "evidence" / "sealed", SHOTS)
    (folder / "home--desktop.png").write_bytes(b"GIF89a" + b"\0" * 64)
    with pytest.raises(BeeError) as caught:
        create_spec(DesignFiles(root), "shop", folder)
    assert "changed since capture" in caught.value.message


def test_no_read_through_the_design_state_reaches_a_keys_folder_an_older_bee_left(root: Path) -> None:
    files = DesignFiles(root)
    keys = root / layout.STATE_DIR / layout.KEYS_DIR
    keys.mkdir(parents=True)
    (keys / "evidence").write_text("00" * 32 + "\n")
    evidence = root / layout.STATE_DIR / layout.EVIDENCE_DIR / "run"
    evidence.mkdir(parents=True)
    (evidence / "home--desktop.png").symlink_to(f"../../{layout.KEYS_DIR}/evidence")
    routes: tuple[Callable[[], object], ...] = (
        lambda: files.open_state(f"{layout.KEYS_DIR}/evidence"),
        lambda: files.open_evidence(".bee/design/evidence/run", "home--desktop.png"),
        lambda: files.open_evidence(".bee/design/evidence/run/../../keys", "evidence"),
    )
    for route in routes:
        with pytest.raises(BeeError) as caught:
            route()
        assert caught.value.code is ErrorCode.OUTSIDE_ROOT, caught.value


@pytest.mark.e2e
@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_the_host_reports_unsealed_evidence_unverified_and_never_serves_the_key(
    root: Path, spec: str, era: str
) -> None:
    write_evidence(root / "evidence" / "sealed", SHOTS)
    write_evidence(root / "evidence" / "forged", SHOTS, sealed=False)
    state_evidence = root / layout.STATE_DIR / layout.EVIDENCE_DIR / "run"
    state_evidence.mkdir(parents=True)
    (root / layout.STATE_DIR / layout.KEYS_DIR).mkdir()
    (state_evidence / "home--desktop.png").symlink_to(f"../../{layout.KEYS_DIR}/evidence")
    async with design_client(root, era) as client:
        sealed = await client.call_tool("bee_visual_report", {"spec": spec, "evidence": "evidence/sealed"})
        forged = await client.call_tool("bee_visual_report", {"spec": spec, "evidence": "evidence/forged"})
        key_folder = await client.call_tool("bee_visual_report", {"spec": spec, "evidence": ".bee/design/keys"})
        via_link = await client.call_tool("bee_visual_report", {"spec": spec, "evidence": ".bee/design/evidence/run"})
    assert sealed.structured_content["decision"] == "pass"
    assert sealed.structured_content["evidence"]["verified"] is True
    assert "carries no MAC" in unverified(forged.structured_content)
    for result in (key_folder, via_link):
        assert error_of(result)["code"] == "outside_root"
