"""`bee artifact …`: the CLI round trip, idempotence, overwrite refusal, and atomicity under kill -9."""

import hashlib
import json
import os
import pty
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from bee_cli import make_cli
from bee_core.cli import register as register_core
from tests.conftest import bee_executable


@pytest.fixture
def cli() -> click.Group:
    return make_cli([register_core])


@pytest.fixture
def checkout(tmp_path: Path, cli: click.Group) -> Path:
    target = tmp_path / "repo"
    target.mkdir()
    assert CliRunner().invoke(cli, ["init", "--checkout", str(target)]).exit_code == 0
    return target


def run(cli: click.Group, checkout: Path, *args: str, input: bytes | str | None = None) -> Result:
    return CliRunner().invoke(cli, ["artifact", *args, "--checkout", str(checkout)], input=input)


def added(cli: click.Group, checkout: Path, path: Path | str, *extra: str) -> dict[str, Any]:
    result = run(cli, checkout, "add", str(path), "--json", *extra)
    assert result.exit_code == 0, result.output
    found: dict[str, Any] = json.loads(result.output)
    return found


def test_round_trip_text_and_binary_is_exact(cli: click.Group, checkout: Path, tmp_path: Path) -> None:
    for name, data in [("log.txt", b"line 1\r\nline 2\n\xc3\xa9\n"), ("blob.bin", os.urandom(300_000))]:
        source = tmp_path / name
        source.write_bytes(data)
        info = added(cli, checkout, source)
        assert info["outcome"] == "added" and info["sourceBytes"] == len(data)
        assert info["sourceSha256"] == "sha256:" + hashlib.sha256(data).hexdigest()
        out = tmp_path / f"copy-{name}"
        got = run(cli, checkout, "get", info["id"], "--out", str(out))
        assert got.exit_code == 0, got.output
        assert out.read_bytes() == data
        streamed = run(cli, checkout, "get", info["id"])
        assert streamed.stdout_bytes == data


def test_add_from_stdin_with_name_and_media_type(cli: click.Group, checkout: Path) -> None:
    result = run(
        cli, checkout, "add", "-", "--name", "pytest-output", "--media-type", "text/x-log", "--json", input="ok\n"
    )
    info = json.loads(result.output)
    assert (info["name"], info["mediaType"], info["kind"], info["lines"]) == ("pytest-output", "text/x-log", "text", 1)


def test_adding_twice_is_idempotent_and_says_so(cli: click.Group, checkout: Path, tmp_path: Path) -> None:
    source = tmp_path / "a.json"
    source.write_text('[{"a": 1}]')
    first = run(cli, checkout, "add", str(source))
    again = run(cli, checkout, "add", str(source))
    assert first.output.startswith("Added art-") and "json" in first.output
    assert again.output.startswith("Already retained: art-")
    listed = json.loads(run(cli, checkout, "list", "--json").output)["artifacts"]
    assert len(listed) == 1 and listed[0]["kind"] == "json"


def test_get_refuses_to_overwrite_unless_forced(cli: click.Group, checkout: Path, tmp_path: Path) -> None:
    source = tmp_path / "a.txt"
    source.write_text("new\n")
    artifact = added(cli, checkout, source)["id"]
    existing = tmp_path / "existing.txt"
    existing.write_text("keep me\n")
    refused = run(cli, checkout, "get", artifact, "--out", str(existing))
    assert refused.exit_code == 1 and "--force" in refused.output
    assert existing.read_text() == "keep me\n"
    forced = run(cli, checkout, "get", artifact, "--out", str(existing), "--force")
    assert forced.exit_code == 0 and existing.read_text() == "new\n"


def test_list_show_rm(cli: click.Group, checkout: Path, tmp_path: Path) -> None:
    assert "No artifacts yet" in run(cli, checkout, "list").output
    source = tmp_path / "a.log"
    source.write_text("x\n")
    artifact = added(cli, checkout, source)["id"]
    listing = run(cli, checkout, "list").output
    assert artifact in listing and "a.log" in listing and "text" in listing
    shown = json.loads(run(cli, checkout, "show", artifact).output)
    assert shown["id"] == artifact and shown["intact"] is True
    assert run(cli, checkout, "rm", artifact).output.startswith(f"Removed {artifact}")
    gone = run(cli, checkout, "show", artifact)
    assert gone.exit_code == 1 and "no artifact" in gone.output
    assert run(cli, checkout, "rm", artifact).exit_code == 1


def test_a_tampered_artifact_is_shown_as_such_and_never_written_out(
    cli: click.Group, checkout: Path, tmp_path: Path
) -> None:
    source = tmp_path / "a.log"
    source.write_text("original\n")
    info = added(cli, checkout, source)
    stored = checkout / ".bee" / "artifacts" / "blobs" / info["sourceSha256"].removeprefix("sha256:")
    os.chmod(stored, 0o644)
    stored.write_text("tampered\n")
    shown = json.loads(run(cli, checkout, "show", info["id"]).output)
    assert shown["intact"] is False and "behind Bee's back" in shown["problem"]
    out = tmp_path / "out.log"
    refused = run(cli, checkout, "get", info["id"], "--out", str(out))
    assert refused.exit_code == 1 and "hash" in refused.output and not out.exists()
    assert not list(tmp_path.glob(".out.log.*"))
    assert run(cli, checkout, "get", info["id"]).exit_code == 1
    repaired = run(cli, checkout, "add", str(source))
    assert repaired.output.startswith("Repaired")
    assert json.loads(run(cli, checkout, "show", info["id"]).output)["intact"] is True


def test_commands_need_an_initialised_instance(cli: click.Group, tmp_path: Path) -> None:
    for args in (["list"], ["add", "-"], ["get", "art-0123456789abcdef"]):
        result = CliRunner().invoke(cli, ["artifact", *args, "--checkout", str(tmp_path)], input="")
        assert result.exit_code == 1 and "bee init" in result.output, args


def test_instance_root_option_is_honoured(cli: click.Group, tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert CliRunner().invoke(cli, ["init", "--checkout", str(tmp_path), "--instance-root", str(state)]).exit_code == 0
    result = CliRunner().invoke(cli, ["artifact", "add", "-", "--instance-root", str(state)], input="x\n")
    assert result.exit_code == 0 and (state / "artifacts" / "records").is_dir()


def test_malformed_id_is_refused(cli: click.Group, checkout: Path) -> None:
    result = run(cli, checkout, "get", "../../etc/passwd")
    assert result.exit_code == 1 and "not an artifact id" in result.output


def test_killed_mid_add_leaves_no_artifact(checkout: Path) -> None:
    """kill -9 while the bytes stream in: nothing becomes visible, and the next add sweeps the leftovers."""
    process = subprocess.Popen(
        [str(bee_executable()), "artifact", "add", "-", "--name", "partial"],
        cwd=checkout,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    tmp = checkout / ".bee" / "artifacts" / "tmp"
    chunk = b"x" * 65536 + b"\n"
    deadline = time.monotonic() + 30
    assert process.stdin is not None
    while not (tmp.is_dir() and any(tmp.iterdir()) and any(p.stat().st_size > 0 for p in tmp.iterdir())):
        assert time.monotonic() < deadline, "the add never started writing"
        process.stdin.write(chunk)
        process.stdin.flush()
    process.send_signal(signal.SIGKILL)
    process.wait()
    process.stdin.close()
    records = checkout / ".bee" / "artifacts" / "records"
    assert not any(records.iterdir())
    assert any(tmp.iterdir())  # the half-written temp file is there, but invisible
    follow = subprocess.run(
        [str(bee_executable()), "artifact", "add", "-"], cwd=checkout, input=b"next\n", capture_output=True, check=True
    )
    assert follow.stdout.startswith(b"Added art-")
    assert not any(tmp.iterdir())
    assert len(list(records.iterdir())) == 1


def test_large_add_shows_a_progress_bar_on_a_terminal(checkout: Path, tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    big.write_bytes(b"0123456789abcdef\n" * (17 * 1024 * 1024 // 17 + 1))
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [str(bee_executable()), "artifact", "add", str(big)],
        cwd=checkout,
        stdout=subprocess.PIPE,
        stderr=secondary,
        env={**os.environ, "COLUMNS": "100", "TERM": "xterm"},
    )
    os.close(secondary)
    seen = b""
    while True:
        ready, _, _ = select.select([primary], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(primary, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not data:
            break
        seen += data
    out, _ = process.communicate(timeout=60)
    os.close(primary)
    assert process.returncode == 0 and out.startswith(b"Added art-")
    assert b"ingesting" in seen and b"MB" in seen


def test_a_damaged_record_is_reported_by_list_and_show_while_the_rest_stay_listed(
    cli: click.Group, checkout: Path, tmp_path: Path
) -> None:
    sources = []
    for name in ("a.log", "b.log"):
        sources.append(tmp_path / name)
        sources[-1].write_text(f"{name}\n")
    sound, broken = (added(cli, checkout, source)["id"] for source in sources)
    record_file = checkout / ".bee" / "artifacts" / "records" / f"{broken}.json"
    record_file.write_bytes(record_file.read_bytes()[:30])

    listing = run(cli, checkout, "list")
    assert listing.exit_code == 0
    assert sound in listing.stdout and broken not in listing.stdout  # stdout: the sound artifacts only
    assert "1 damaged record, not served and skipped by searches:" in listing.stderr
    assert f"{broken}: {record_file} is damaged: it is truncated" in listing.stderr
    assert f"repair: run `bee artifact rm {broken}`, then `bee artifact add` the original file again" in listing.stderr

    as_json = json.loads(run(cli, checkout, "list", "--json").stdout)
    assert [artifact["id"] for artifact in as_json["artifacts"]] == [sound]
    [damaged] = as_json["damaged"]
    assert damaged["id"] == broken and damaged["recordFile"] == str(record_file)
    assert damaged["problem"].startswith("it is truncated") and f"bee artifact rm {broken}" in damaged["repair"]

    shown = run(cli, checkout, "show", broken)
    assert shown.exit_code == 0
    assert json.loads(shown.stdout) == {**damaged, "intact": False, "damaged": True}
    refused = run(cli, checkout, "get", broken)
    assert refused.exit_code == 1 and "damaged" in refused.output and f"bee artifact rm {broken}" in refused.output

    assert run(cli, checkout, "rm", broken).output.startswith(f"Removed {broken} (its record was damaged)")
    assert added(cli, checkout, sources[1])["outcome"] == "added"
    healed = run(cli, checkout, "list")
    assert healed.stderr == "" and broken in healed.stdout and sound in healed.stdout


def test_only_damaged_records_are_still_reported(cli: click.Group, checkout: Path, tmp_path: Path) -> None:
    source = tmp_path / "a.log"
    source.write_text("x\n")
    artifact = added(cli, checkout, source)["id"]
    (checkout / ".bee" / "artifacts" / "records" / f"{artifact}.json").write_text('{"format": 7}')
    listing = run(cli, checkout, "list")
    assert listing.exit_code == 0 and listing.stdout == ""
    assert "its format is 7, but this Bee reads format 1" in listing.stderr


def test_get_of_an_artifact_whose_bytes_were_lost_is_refused(cli: click.Group, checkout: Path, tmp_path: Path) -> None:
    source = tmp_path / "a.log"
    source.write_text("x\n")
    info = added(cli, checkout, source)
    (checkout / ".bee" / "artifacts" / "blobs" / info["sourceSha256"].removeprefix("sha256:")).unlink()
    refused = run(cli, checkout, "get", info["id"])
    assert refused.exit_code == 1 and "stored bytes are missing" in refused.output
    shown = json.loads(run(cli, checkout, "show", info["id"]).stdout)
    assert shown["intact"] is False and "missing" in shown["problem"]
