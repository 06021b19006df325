"""`bee setup-mcp` never damages a user's file: every byte it does not change stays, it writes nowhere a symlink from
the checkout leads outside the project, it does not replace a protected file, and a save by another program while
it writes is never lost."""

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bee_cli import jsonfile
from bee_cli.setup_mcp import bee_command
from bee_contracts import files
from tests.cli.test_setup_mcp import URL, run

pytestmark = pytest.mark.usefixtures("hosts")

# Numbers that parsers which canonicalise rewrite (1e400 became Infinity, 1E2 became 100.0), escapes, odd spacing.
THEIRS = """{
  "mcpServers": {
    "calc": {"command": "calc",   "timeout": 1e400, "scale": 1E2, "ratio": 0.10000000000000000555,
             "zero": -0, "price": 1.50, "big": 123456789012345678901234567890, "name": "caf\\u00e9 \\/ \\ud83d\\ude00"},
    "empty": {}
  },
  "alpha":[1,2 ,3]
}
"""


def test_every_number_spelling_and_every_untouched_byte_survive(project: Path, home: Path) -> None:
    path = project / ".mcp.json"
    path.write_text(THEIRS)
    result = run("--tool", "claude", "--project", str(project), "--tracker-url", URL)
    assert result.exit_code == 0, result.output
    written = path.read_text()
    # One comma and Bee's two entries are inserted after the user's last server; nothing else changes.
    after = THEIRS.index('"empty": {}') + len('"empty": {}')
    ours = written[written.index('\n    "bee-core"') : written.index('\n  },\n  "alpha"')]
    assert written == THEIRS[:after] + "," + ours + THEIRS[after:]
    assert list(json.loads("{" + ours + "}")) == ["bee-core", "bee-tracker"]
    assert "1e400" in written and "1E2" in written and "0.10000000000000000555" in written
    servers = json.loads(written, parse_float=str, parse_int=str, parse_constant=str)["mcpServers"]
    assert servers["calc"]["timeout"] == "1e400" and servers["calc"]["zero"] == "-0"
    assert list(servers) == ["calc", "empty", "bee-core", "bee-tracker"]
    assert run("--tool", "claude", "--project", str(project), "--remove").exit_code == 0
    assert path.read_text() == THEIRS


def test_in_bees_own_entry_only_bees_values_change(project: Path, home: Path) -> None:
    path = project / ".mcp.json"
    entry = '{"command": "old", "timeout": 1e400, "args": [ "x" ], "env": {"A": "caf\\u00e9"}}'
    text = '{"mcpServers": {"bee-core": ' + entry + "}}"
    path.write_text(text)
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 0 and "updated   bee-core" in result.output, result.output
    command, *args = [*bee_command(), "mcp", "serve", "--checkout", str(project)]
    # The two values Bee sets are replaced where they stand; the key it lacked is added after the user's last.
    expected = (
        text.replace('"old"', json.dumps(command))
        .replace('[ "x" ]', json.dumps(args))
        .replace('caf\\u00e9"}}', 'caf\\u00e9"}, "type": "stdio"}')
    )
    assert path.read_text() == expected


def test_line_endings_byte_order_mark_and_tabs_are_kept(project: Path, home: Path) -> None:
    path = project / ".mcp.json"
    original = b'\xef\xbb\xbf{\r\n\t"mcpServers": {\r\n\t\t"x": {"command": "y"}\r\n\t}\r\n}\r\n'
    path.write_bytes(original)
    assert run("--tool", "claude", "--project", str(project)).exit_code == 0
    written = path.read_bytes()
    assert written.startswith(original[:-9] + b',\r\n\t\t"bee-core": {\r\n\t\t\t"type": "stdio",\r\n')
    assert b"\n" not in written.replace(b"\r\n", b"")  # every line break Bee wrote is the file's own
    assert run("--tool", "claude", "--project", str(project), "--remove").exit_code == 0
    assert path.read_bytes() == original


def test_a_file_that_is_not_utf8_is_refused(project: Path, home: Path) -> None:
    path = project / ".mcp.json"
    path.write_bytes(b'{"mcpServers": {"x": {"command": "caf\xe9"}}}')
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 1 and "not UTF-8 (byte 37)" in result.output
    assert path.read_bytes() == b'{"mcpServers": {"x": {"command": "caf\xe9"}}}'


def test_nesting_too_deep_is_a_clear_error(project: Path, home: Path) -> None:
    path = project / ".mcp.json"
    text = '{"deep": ' + "[" * 5000 + "]" * 5000 + "}"
    path.write_text(text)
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 1 and "objects and arrays nest more than 256 deep" in result.output, result.output
    assert path.read_text() == text


def test_a_file_over_the_size_limit_is_refused_without_parsing(project: Path, home: Path) -> None:
    path = project / ".mcp.json"
    with path.open("w") as stream:
        stream.write('{"padding": "')
        stream.write("x" * jsonfile.MAX_BYTES)
        stream.write('"}')
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 1 and "is over 1 MiB" in result.output
    assert path.stat().st_size == jsonfile.MAX_BYTES + 15


# -- where Bee writes ------------------------------------------------------------------------------------------


def test_a_dangling_symlink_from_the_checkout_creates_nothing_outside(
    project: Path, home: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (project / ".mcp.json").symlink_to("../outside/deep/er/mcp.json")
    for extra in ([], ["--remove"]):
        result = run("--tool", "claude", "--project", str(project), *extra)
        assert result.exit_code == 1, result.output
        assert f"leads through a symlink to {outside}/deep/er/mcp.json, outside the project" in result.output
        assert not outside.exists()
    assert (project / ".mcp.json").is_symlink()


def test_a_symlink_to_a_file_outside_is_refused_and_the_file_left_alone(
    project: Path, home: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "elsewhere.json"
    secret.write_text('{"mcpServers": {}}')
    (project / ".mcp.json").symlink_to(secret)
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 1 and "outside the project" in result.output
    assert secret.read_text() == '{"mcpServers": {}}'


@pytest.mark.parametrize("target", ["../elsewhere", "/proc/self"])
def test_a_symlinked_folder_leading_outside_is_refused(target: str, project: Path, home: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (project / ".vscode").symlink_to(target)
    result = run("--tool", "vscode", "--project", str(project))
    assert result.exit_code == 1 and "outside the project" in result.output, result.output
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_symlink_into_the_repositorys_internals_is_refused(project: Path, home: Path) -> None:
    (project / ".git").mkdir()
    (project / ".mcp.json").symlink_to(".git/mcp.json")
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 1 and "leads through a symlink into .git" in result.output
    assert list((project / ".git").iterdir()) == []


def test_a_symlink_inside_the_project_is_written_through(project: Path, home: Path) -> None:
    shared = project / "config" / "mcp.json"
    shared.parent.mkdir()
    shared.write_text('{"mcpServers": {"mine": {"command": "x"}}}')
    (project / ".mcp.json").symlink_to("config/mcp.json")
    assert run("--tool", "claude", "--project", str(project)).exit_code == 0
    assert (project / ".mcp.json").is_symlink()
    assert list(json.loads(shared.read_text())["mcpServers"]) == ["mine", "bee-core"]
    # A dangling one into a folder that exists: the file is created there.
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").symlink_to("../config/cursor.json")
    assert run("--tool", "cursor", "--project", str(project)).exit_code == 0
    assert "bee-core" in json.loads((project / "config" / "cursor.json").read_text())["mcpServers"]


def test_no_folder_is_created_for_a_symlinks_target(project: Path, home: Path) -> None:
    (project / ".mcp.json").symlink_to("not/yet/there.json")
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 1 and "Bee creates no folders for a symlink" in result.output
    assert sorted(os.listdir(project)) == [".mcp.json"]


def test_a_symlink_loop_is_a_clear_error(project: Path, home: Path) -> None:
    (project / ".mcp.json").symlink_to(".mcp.json")
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 1 and "is a symlink Bee cannot follow" in result.output, result.output


def test_a_per_user_file_follows_links_inside_the_home_folder_only(project: Path, home: Path, tmp_path: Path) -> None:
    dotfiles = home / "dotfiles" / "mcp_config.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"mcpServers": {"mine": {"command": "x"}}}')
    link = home / ".codeium" / "windsurf" / "mcp_config.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(dotfiles)
    assert run("--tool", "windsurf", "--project", str(project)).exit_code == 0
    assert link.is_symlink()
    assert list(json.loads(dotfiles.read_text())["mcpServers"]) == ["mine", "bee-core"]
    link.unlink()
    link.symlink_to(tmp_path / "outside.json")
    result = run("--tool", "windsurf", "--project", str(project))
    assert result.exit_code == 1 and "outside your home folder" in result.output
    assert not (tmp_path / "outside.json").exists()


# -- what Bee replaces -----------------------------------------------------------------------------------------


def test_a_read_only_file_is_refused_not_replaced(project: Path, home: Path) -> None:
    path = project / ".mcp.json"
    path.write_text('{"mcpServers": {}}')
    path.chmod(0o444)
    before = path.stat()
    for extra in ([], ["--tracker-url", URL]):
        result = run("--tool", "claude", "--project", str(project), *extra)
        assert result.exit_code == 1 and "is read-only (mode 0444)" in result.output, result.output
    after = path.stat()
    assert path.read_text() == '{"mcpServers": {}}'
    assert (after.st_ino, stat.S_IMODE(after.st_mode)) == (before.st_ino, 0o444)
    # Up to date already: nothing to write, nothing refused.
    path.chmod(0o644)
    assert run("--tool", "claude", "--project", str(project)).exit_code == 0
    path.chmod(0o444)
    again = run("--tool", "claude", "--project", str(project))
    assert again.exit_code == 0 and "already up to date" in again.output
    removing = run("--tool", "claude", "--project", str(project), "--remove")
    assert removing.exit_code == 1 and "is read-only" in removing.output


def test_the_files_permission_bits_and_owner_are_kept(project: Path, home: Path) -> None:
    path = project / ".mcp.json"
    path.write_text("{}")
    path.chmod(0o640)
    if os.geteuid() == 0:
        os.chown(path, 4321, 4322)
    assert run("--tool", "claude", "--project", str(project)).exit_code == 0
    info = path.stat()
    assert stat.S_IMODE(info.st_mode) == 0o640
    if os.geteuid() == 0:
        assert (info.st_uid, info.st_gid) == (4321, 4322)


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_something_other_than_a_file_is_refused_without_blocking(kind: str, project: Path, home: Path) -> None:
    path = project / ".mcp.json"
    os.mkfifo(path) if kind == "fifo" else path.mkdir()
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 1 and "is not a regular file" in result.output, result.output


def test_a_file_in_the_way_of_a_folder_is_a_clear_error(project: Path, home: Path) -> None:
    (project / ".cursor").write_text("not a folder")
    result = run("--tool", "cursor", "--project", str(project))
    assert result.exit_code == 1 and f"{project / '.cursor'} is not a folder: move it away" in result.output
    assert (project / ".cursor").read_text() == "not a folder"


def test_a_folder_that_cannot_be_written_is_a_clear_error(project: Path, home: Path) -> None:
    folder = project / ".cursor"
    folder.mkdir()
    chattr = shutil.which("chattr")
    # An immutable folder refuses new files to root too (permission bits would not stop root).
    if chattr is None or subprocess.run([chattr, "+i", str(folder)], capture_output=True, check=False).returncode:
        pytest.skip("chattr +i is not available here")
    try:
        result = run("--tool", "cursor", "--project", str(project))
    finally:
        subprocess.run([chattr, "-i", str(folder)], check=True)
    assert result.exit_code == 1 and "cannot write" in result.output, result.output
    assert list(folder.iterdir()) == []


# -- another program saving at the same time -------------------------------------------------------------------


def editor_saves(path: Path, monkeypatch: pytest.MonkeyPatch, *, times: int) -> list[object]:
    """Make another program save ``path`` (adding an entry of its own) just before each of Bee's first ``times``
    writes: the real write then finds the file changed since Bee read it."""
    real = files.write_if_unchanged
    saves: list[object] = []

    def saving(folder: int, name: str, data: bytes, **kwargs: Any) -> bool:
        if len(saves) < times:
            document = json.loads(path.read_text())
            document["mcpServers"][f"user-{len(saves)}"] = {"command": "theirs"}
            path.write_text(json.dumps(document))
            saves.append(name)
        return real(folder, name, data, **kwargs)

    monkeypatch.setattr(jsonfile, "write_if_unchanged", saving)
    return saves


def test_a_save_while_bee_writes_is_kept_and_bee_makes_its_change_again(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = project / ".mcp.json"
    path.write_text('{"mcpServers": {"mine": {"command": "x"}}}')
    saves = editor_saves(path, monkeypatch, times=3)
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 0, result.output
    assert len(saves) == 3
    assert list(json.loads(path.read_text())["mcpServers"]) == ["mine", "user-0", "user-1", "user-2", "bee-core"]


def test_a_file_that_keeps_changing_is_refused_with_nothing_written(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = project / ".mcp.json"
    path.write_text('{"mcpServers": {}}')
    editor_saves(path, monkeypatch, times=jsonfile.ATTEMPTS)
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 1, result.output
    assert f"another program kept saving it while Bee was changing it ({jsonfile.ATTEMPTS} tries)" in result.output
    servers = json.loads(path.read_text())["mcpServers"]
    assert list(servers) == [f"user-{k}" for k in range(jsonfile.ATTEMPTS)]  # every save kept, Bee's not added
    assert sorted(os.listdir(project)) == [".mcp.json"]


def test_an_edit_bee_cannot_make_faithfully_writes_nothing(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bee_cli.jsonedit import JsonText

    path = project / ".mcp.json"
    path.write_text('{"mcpServers": {"mine": {"command": "x"}}}')
    # A defect that would put Bee's text one character off: the check after the edit catches it.
    monkeypatch.setattr(JsonText, "_insert", lambda self, parent, key, value: [(3, 4, "M")])
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 1 and "this is a defect in Bee" in result.output, result.output
    assert path.read_text() == '{"mcpServers": {"mine": {"command": "x"}}}'


def test_a_project_whose_path_is_not_utf8_is_refused(tmp_path: Path, home: Path) -> None:
    project = tmp_path / os.fsdecode(b"caf\xe9")
    project.mkdir()
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 1 and "is not valid UTF-8" in result.output, result.output
    assert list(project.iterdir()) == []
