"""`bee setup-mcp`: each editor's own file format, merged with what is there, removed without a trace, and never a
file overwritten that Bee cannot read back faithfully."""

import json
import stat
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from bee_cli import make_cli
from bee_cli.commands import register as register_cli
from bee_cli.setup_mcp import bee_command
from bee_contracts import hosts as registry
from tests.cli.conftest import CORE_AND_TRACKER

TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl"  # made up
URL = "http://127.0.0.1:8765/mcp"
EDITORS = ("claude", "cursor", "windsurf", "vscode")

pytestmark = pytest.mark.usefixtures("hosts")


def config_path(tool: str, project: Path, home: Path) -> Path:
    return {
        "claude": project / ".mcp.json",
        "cursor": project / ".cursor" / "mcp.json",
        "windsurf": home / ".codeium" / "windsurf" / "mcp_config.json",
        "vscode": project / ".vscode" / "mcp.json",
    }[tool]


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(make_cli([register_cli]), ["setup-mcp", *args], env=env)


def core_entry(tool: str, project: Path) -> dict[str, Any]:
    command = bee_command()
    entry = {"command": command[0], "args": [*command[1:], "mcp", "serve", "--checkout", str(project)]}
    return {"type": "stdio", **entry} if tool in ("claude", "vscode") else entry


#: What each editor gets by default: an entry that signs in through OAuth (no header, no token).
EXPECTED_OAUTH = {
    "claude": {"type": "http", "url": URL},
    "cursor": {"url": URL},
    "windsurf": {"serverUrl": URL},
    "vscode": {"type": "http", "url": URL},
}
#: What each editor gets with --tracker-auth token: a header referring to the token.
EXPECTED_TRACKER = {
    "claude": {"type": "http", "url": URL, "headers": {"Authorization": "Bearer ${BEE_TRACKER_TOKEN}"}},
    "cursor": {"url": URL, "headers": {"Authorization": "Bearer ${env:BEE_TRACKER_TOKEN}"}},
    "windsurf": {"serverUrl": URL, "headers": {"Authorization": "Bearer ${env:BEE_TRACKER_TOKEN}"}},
    "vscode": {"type": "http", "url": URL, "headers": {"Authorization": "Bearer ${input:bee-tracker-token}"}},
}


@pytest.mark.parametrize("tool", EDITORS)
def test_each_editor_gets_an_entry_that_signs_in_through_oauth(tool: str, project: Path, home: Path) -> None:
    result = run("--tool", tool, "--project", str(project), "--tracker-url", URL)
    assert result.exit_code == 0, result.output
    written = json.loads(config_path(tool, project, home).read_text())
    key = "servers" if tool == "vscode" else "mcpServers"
    assert list(written) == [key]  # no token prompt either
    assert written[key] == {"bee-core": core_entry(tool, project), "bee-tracker": EXPECTED_OAUTH[tool]}
    assert "signs in to bee-tracker through your browser the first time it connects" in result.output
    # An earlier header entry (and VS Code's prompt for its token) gives way to it; the user's own header stays.
    run("--tool", tool, "--project", str(project), "--tracker-url", URL, "--tracker-auth", "token")
    path = config_path(tool, project, home)
    document = json.loads(path.read_text())
    document[key]["bee-tracker"]["headers"]["X-Team"] = "blue"
    path.write_text(json.dumps(document))
    again = run("--tool", tool, "--project", str(project), "--tracker-url", URL)
    assert again.exit_code == 0, again.output
    rewritten = json.loads(path.read_text())
    assert rewritten[key]["bee-tracker"] == {**EXPECTED_OAUTH[tool], "headers": {"X-Team": "blue"}}
    assert "inputs" not in rewritten
    assert ("removed   input bee-tracker-token" in again.output) == (tool == "vscode")


def test_an_editor_that_cannot_sign_in_gets_the_header(project: Path, home: Path) -> None:
    from dataclasses import replace

    from bee_cli.setup_mcp import EDITORS as ALL
    from bee_cli.setup_mcp import TrackerAccess, apply
    from bee_contracts.hosts import installed_hosts

    editor = replace(ALL["cursor"], oauth=False)
    access = {"tracker": TrackerAccess(URL, oauth=True)}
    apply(editor, installed_hosts(), project=project, home=home, command=bee_command(), urls=access)
    entry = json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["bee-tracker"]
    assert entry == EXPECTED_TRACKER["cursor"]
    assert access["tracker"].for_editor(ALL["cursor"]).oauth and not access["tracker"].for_editor(editor).oauth


@pytest.mark.parametrize("tool", EDITORS)
def test_each_editor_gets_its_own_header_format(tool: str, project: Path, home: Path) -> None:
    result = run("--tool", tool, "--project", str(project), "--tracker-url", URL, "--tracker-auth", "token")
    assert result.exit_code == 0, result.output
    written = json.loads(config_path(tool, project, home).read_text())
    key = "servers" if tool == "vscode" else "mcpServers"
    assert list(written) == ([key, "inputs"] if tool == "vscode" else [key])
    assert written[key] == {"bee-core": core_entry(tool, project), "bee-tracker": EXPECTED_TRACKER[tool]}
    if tool == "vscode":
        [prompt] = written["inputs"]
        assert prompt["id"] == "bee-tracker-token" and prompt["type"] == "promptString" and prompt["password"] is True
    assert "added     bee-core" in result.output and "added     bee-tracker" in result.output


@pytest.mark.parametrize("tool", EDITORS)
def test_without_a_tracker_url_only_the_stdio_hosts_are_written(tool: str, project: Path, home: Path) -> None:
    result = run("--tool", tool, "--project", str(project))
    assert result.exit_code == 0, result.output
    written = json.loads(config_path(tool, project, home).read_text())
    assert list(written["servers" if tool == "vscode" else "mcpServers"]) == ["bee-core"]
    assert "inputs" not in written
    assert "skipped   bee-tracker" in result.output


def test_the_tracker_url_can_come_from_the_environment(project: Path, home: Path) -> None:
    result = run("--tool", "claude", "--project", str(project), env={"BEE_TRACKER_URL": URL})
    assert result.exit_code == 0, result.output
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["bee-tracker"]["url"] == URL


@pytest.mark.parametrize("tool", EDITORS)
def test_merging_keeps_other_servers_unknown_keys_their_order_and_the_indentation(
    tool: str, project: Path, home: Path
) -> None:
    path = config_path(tool, project, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    key = "servers" if tool == "vscode" else "mcpServers"
    theirs: dict[str, Any] = {
        "zeta": 1,
        key: {
            "github": {"command": "npx", "args": ["-y", "github-mcp"], "env": {"GITHUB_TOKEN": "${env:GH}"}},
            "bee-core": {"command": "old", "disabled": False, "alwaysAllow": ["bee_context_packet"]},
            "remote": {"url": "https://example.com/mcp"},
        },
        "alpha": {"nested": [1, 2, {"b": None, "a": True}]},
    }
    if tool == "vscode":
        theirs["inputs"] = [{"type": "promptString", "id": "gh", "password": True}]
    path.write_text(json.dumps(theirs, indent=4) + "\n")
    result = run("--tool", tool, "--project", str(project), "--tracker-url", URL, "--tracker-auth", "token")
    assert result.exit_code == 0, result.output
    text = path.read_text()
    assert text.startswith('{\n    "zeta": 1,\n    "')  # four spaces, as it was
    written = json.loads(text)
    assert list(written) == list(theirs)
    servers = written[key]
    assert list(servers) == ["github", "bee-core", "remote", "bee-tracker"]
    assert servers["github"] == theirs[key]["github"] and servers["remote"] == theirs[key]["remote"]
    # Bee's own entry keeps what the user added to it; Bee's keys are set.
    assert servers["bee-core"]["disabled"] is False and servers["bee-core"]["alwaysAllow"] == ["bee_context_packet"]
    assert {k: v for k, v in servers["bee-core"].items() if k not in ("disabled", "alwaysAllow")} == core_entry(
        tool, project
    )
    assert written["alpha"] == theirs["alpha"]
    if tool == "vscode":
        assert [item["id"] for item in written["inputs"]] == ["gh", "bee-tracker-token"]
    assert "updated   bee-core" in result.output


def test_a_header_the_user_added_to_the_tracker_entry_stays(project: Path, home: Path) -> None:
    path = project / ".mcp.json"
    entry = {"type": "http", "url": "http://old/mcp", "headers": {"X-Team": "blue", "Authorization": "Bearer x"}}
    path.write_text(json.dumps({"mcpServers": {"bee-tracker": entry}}))
    assert (
        run("--tool", "claude", "--project", str(project), "--tracker-url", URL, "--tracker-auth", "token").exit_code
        == 0
    )
    headers = json.loads(path.read_text())["mcpServers"]["bee-tracker"]["headers"]
    assert headers == {"X-Team": "blue", "Authorization": "Bearer ${BEE_TRACKER_TOKEN}"}


@pytest.mark.parametrize("tool", EDITORS)
def test_running_again_changes_nothing(tool: str, project: Path, home: Path) -> None:
    args = ("--tool", tool, "--project", str(project), "--tracker-url", URL)
    assert run(*args).exit_code == 0
    path = config_path(tool, project, home)
    before = path.read_bytes(), path.stat().st_mtime_ns
    again = run(*args)
    assert again.exit_code == 0 and "already up to date" in again.output
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


@pytest.mark.parametrize("tool", EDITORS)
def test_remove_takes_out_only_bees_entries(tool: str, project: Path, home: Path) -> None:
    path = config_path(tool, project, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    key = "servers" if tool == "vscode" else "mcpServers"
    theirs = {key: {"github": {"command": "npx"}}, "inputs": [{"id": "gh"}], "other": True}
    path.write_text(json.dumps(theirs))
    assert run("--tool", tool, "--project", str(project), "--tracker-url", URL).exit_code == 0
    result = run("--tool", tool, "--project", str(project), "--remove")
    assert result.exit_code == 0, result.output
    assert "removed   bee-core" in result.output and "removed   bee-tracker" in result.output
    assert json.loads(path.read_text()) == theirs
    again = run("--tool", tool, "--project", str(project), "--remove")
    assert again.exit_code == 0 and "has no Bee entries" in again.output


@pytest.mark.parametrize("tool", EDITORS)
def test_remove_never_creates_a_file(tool: str, project: Path, home: Path) -> None:
    result = run("--tool", tool, "--project", str(project), "--remove")
    assert result.exit_code == 0, result.output
    assert "does not exist" in result.output
    assert list(project.iterdir()) == [] and list(home.iterdir()) == []  # not even a folder


INVALID = {
    "a trailing comma": ('{\n  "mcpServers": {\n    "x": {"command": "y"},\n  }\n}\n', 4, 3),
    "a missing comma": ('{\n  "mcpServers": {}\n  "other": 1\n}\n', 3, 3),
    "a comment": ('{\n  // my servers\n  "mcpServers": {}\n}\n', 2, 3),
    "truncated": ('{\n  "mcpServers": {\n    "x": {"comm', 3, 11),
}


@pytest.mark.parametrize("tool", ["claude", "cursor", "windsurf"])
@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_json_is_reported_with_line_and_column_and_never_overwritten(
    tool: str, case: str, project: Path, home: Path
) -> None:
    text, line, column = INVALID[case]
    path = config_path(tool, project, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    for extra in ([], ["--remove"]):
        result = run("--tool", tool, "--project", str(project), *extra)
        assert result.exit_code == 1
        assert f"{path} at line {line}, column {column}: not valid JSON" in result.output
        assert path.read_text() == text


def test_vscode_files_with_comments_are_edited_around_them(project: Path, home: Path) -> None:
    path = project / ".vscode" / "mcp.json"
    path.parent.mkdir()
    text = (
        '{\n  // team servers\n  "servers": {\n    /* shared */\n    "github": {"command": "npx",}, // ours\n  },\n}\n'
    )
    path.write_text(text)
    result = run("--tool", "vscode", "--project", str(project), "--tracker-url", URL, "--tracker-auth", "token")
    assert result.exit_code == 0, result.output
    written = path.read_text()
    # Every comment and trailing comma is where it was, and Bee's entries follow the file's trailing commas.
    assert written.startswith(text[: text.index("  },")] + '    "bee-core": {\n')
    assert written.endswith("\n  ],\n}\n")
    assert run("--tool", "vscode", "--project", str(project), "--remove").exit_code == 0
    assert path.read_text() == text  # byte for byte
    # A broken JSONC file is reported like a broken JSON one.
    path.write_text('{\n  "servers": {\n    "github": {"command": "npx"}\n    "x": 1\n  }\n}\n')
    result = run("--tool", "vscode", "--project", str(project))
    assert result.exit_code == 1 and "at line 4, column 5: not valid JSON with comments" in result.output
    path.write_text('{"servers": {} /* never closed')
    result = run("--tool", "vscode", "--project", str(project))
    assert (
        result.exit_code == 1
        and "at line 1, column 16: not valid JSON with comments (a /* comment is never closed)" in result.output
    )


def test_vscode_trailing_commas_are_accepted_and_kept(project: Path, home: Path) -> None:
    path = project / ".vscode" / "mcp.json"
    path.parent.mkdir()
    text = '{\n  "servers": {\n    "github": {"command": "npx", "args": ["a,]", "b",],},\n  },\n}\n'
    path.write_text(text)
    result = run("--tool", "vscode", "--project", str(project))
    assert result.exit_code == 0, result.output
    written = path.read_text()
    assert written.startswith(
        '{\n  "servers": {\n    "github": {"command": "npx", "args": ["a,]", "b",],},\n    "bee-core"'
    )
    assert run("--tool", "vscode", "--project", str(project), "--remove").exit_code == 0
    assert path.read_text() == text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"mcpServers": {"a": {}, "a": {}}}', "the key 'a' appears twice in one object"),
        ('{"mcpServers": []}', '"mcpServers" is a JSON array, not an object'),
        ('{"mcpServers": {"bee-core": "bee"}}', '"mcpServers.bee-core" is a JSON string, not an object'),
        ('[{"mcpServers": {}}]', "the top level is a JSON array, not an object"),
        ('{"timeout": NaN}', "NaN is not JSON"),
    ],
)
def test_a_file_bee_cannot_merge_faithfully_is_refused_and_left_alone(
    text: str, problem: str, project: Path, home: Path
) -> None:
    path = project / ".mcp.json"
    path.write_text(text)
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 1 and problem in result.output
    assert path.read_text() == text


def test_an_empty_file_is_an_empty_configuration(project: Path, home: Path) -> None:
    (project / ".mcp.json").write_text("\n")
    assert run("--tool", "claude", "--project", str(project)).exit_code == 0
    assert list(json.loads((project / ".mcp.json").read_text())["mcpServers"]) == ["bee-core"]


@pytest.mark.parametrize("tool", EDITORS)
def test_the_token_is_a_reference_unless_asked_for_and_never_printed(tool: str, project: Path, home: Path) -> None:
    path = config_path(tool, project, home)
    env = {"BEE_TRACKER_TOKEN": TOKEN}
    result = run("--tool", tool, "--project", str(project), "--tracker-url", URL, env=env)
    assert result.exit_code == 0, result.output
    assert TOKEN not in path.read_text() and TOKEN not in result.output
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    result = run("--tool", tool, "--project", str(project), "--tracker-url", URL, "--literal-token", env=env)
    assert result.exit_code == 0, result.output
    assert TOKEN not in result.output and "readable by you only" in result.output
    entry = json.loads(path.read_text())["servers" if tool == "vscode" else "mcpServers"]["bee-tracker"]
    assert entry["headers"]["Authorization"] == f"Bearer {TOKEN}"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_token_variable_can_be_named(project: Path, home: Path) -> None:
    result = run("--tool", "cursor", "--project", str(project), "--tracker-url", URL, "--tracker-token-env", "TEAM_JWT")
    assert result.exit_code == 0, result.output
    entry = json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["bee-tracker"]
    assert entry["headers"] == {"Authorization": "Bearer ${env:TEAM_JWT}"}
    # VS Code prompts by default, and uses the variable when one is named.
    result = run("--tool", "vscode", "--project", str(project), "--tracker-url", URL, "--tracker-token-env", "TEAM_JWT")
    assert result.exit_code == 0, result.output
    written = json.loads((project / ".vscode" / "mcp.json").read_text())
    assert written["servers"]["bee-tracker"]["headers"] == {"Authorization": "Bearer ${env:TEAM_JWT}"}
    assert "inputs" not in written


@pytest.mark.parametrize(
    ("args", "env", "problem"),
    [
        (["--literal-token"], {}, "$BEE_TRACKER_TOKEN is not set"),
        (["--literal-token"], {"BEE_TRACKER_TOKEN": "two words"}, "$BEE_TRACKER_TOKEN does not hold a bearer token"),
        (["--tracker-token-env", "NOT-A-NAME"], {}, "'NOT-A-NAME' is not an environment variable name"),
    ],
)
def test_bad_token_settings_are_refused_before_anything_is_written(
    args: list[str], env: dict[str, str], problem: str, project: Path, home: Path
) -> None:
    result = run("--tool", "claude", "--project", str(project), "--tracker-url", URL, *args, env=env)
    assert result.exit_code == 1 and problem in result.output
    assert "two words" not in result.output
    assert not (project / ".mcp.json").exists()


@pytest.mark.parametrize("url", ["127.0.0.1:8765/mcp", "ftp://host/mcp", "http:///mcp", "http://host /mcp"])
def test_a_tracker_url_that_is_not_http_is_refused(url: str, project: Path, home: Path) -> None:
    result = run("--tool", "claude", "--project", str(project), "--tracker-url", url)
    assert result.exit_code == 1 and "is not an http:// or https:// URL" in result.output
    assert not (project / ".mcp.json").exists()


def test_the_entries_come_from_the_host_registry(project: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    points = [
        CORE_AND_TRACKER[0],
        EntryPoint(name="design", value="bee_design.registry:DESIGN", group=registry.ENTRY_POINT_GROUP),
    ]
    monkeypatch.setattr(registry, "entry_points", lambda group: points)
    # An entry an earlier release wrote says --root: it still starts the host (the same option), and is brought up
    # to date with --checkout.
    older = ["design", "mcp", "--stdio", "--root", str(project)]
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"bee-design": {"command": "bee", "args": older}}}))
    result = run("--tool", "claude", "--project", str(project))
    assert result.exit_code == 0, result.output
    assert "updated   bee-design" in result.output and "added     bee-core" in result.output
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert set(servers) == {"bee-core", "bee-design"}
    assert servers["bee-design"]["args"][-5:] == ["design", "mcp", "--stdio", "--checkout", str(project)]
    # The tracker's package is "not installed" here: a tracker URL has no host to go with.
    result = run("--tool", "claude", "--project", str(project), "--tracker-url", URL)
    assert result.exit_code == 1 and "no installed HTTP host is named tracker" in result.output
    # And removing takes out only what the registry names.
    assert run("--tool", "claude", "--project", str(project), "--remove").exit_code == 0
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {}}


# -- the merge as a property -------------------------------------------------------------------------------------

_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
)
_names = st.text(min_size=1, max_size=8).filter(lambda name: not name.startswith("bee-"))


@settings(max_examples=200, deadline=None)
@given(
    tool=st.sampled_from(EDITORS),
    others=st.dictionaries(_names, st.dictionaries(st.text(max_size=6), _values, max_size=3), max_size=4),
    extra=st.dictionaries(st.text(max_size=6).filter(lambda k: k not in ("mcpServers", "servers", "inputs")), _values),
    indent=st.sampled_from([2, 4, "\t"]),
)
def test_setting_up_then_removing_gives_back_every_other_byte_of_meaning(
    tool: str, others: dict[str, dict[str, Any]], extra: dict[str, Any], indent: int | str
) -> None:
    import tempfile

    from bee_cli.setup_mcp import EDITORS as FORMATS
    from bee_cli.setup_mcp import TrackerAccess, apply
    from bee_contracts.hosts import installed_hosts

    editor = FORMATS[tool]
    with tempfile.TemporaryDirectory() as folder:
        project, home = Path(folder) / "repo", Path(folder) / "home"
        project.mkdir()
        path = editor.path(project, home)
        path.parent.mkdir(parents=True, exist_ok=True)
        original = {**extra, editor.servers_key: others}
        path.write_text(json.dumps(original, indent=indent))
        common: dict[str, Any] = {"project": project, "home": home, "command": ["/bin/bee"]}
        access = {"tracker": TrackerAccess(URL, token_env=None if editor.token_prompt else "T")}
        apply(editor, installed_hosts(), urls=access, **common)
        merged = json.loads(path.read_text())
        assert {k: v for k, v in merged[editor.servers_key].items() if not k.startswith("bee-")} == others
        assert {k: v for k, v in merged.items() if k not in (editor.servers_key, "inputs")} == extra
        apply(editor, installed_hosts(), urls={}, removing=True, **common)
        restored = json.loads(path.read_text())
        assert restored == original
        assert list(restored) == list(original) and list(restored[editor.servers_key]) == list(others)


def test_a_checkout_without_an_instance_is_warned_with_the_command_that_creates_one(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BEE_INSTANCE_ROOT", raising=False)
    bare = run("--tool", "claude", "--project", str(project))
    assert bare.exit_code == 0, bare.output
    assert "has no Bee instance (.bee) yet" in bare.stderr and f"bee init --checkout {project}" in bare.stderr
    (project / ".bee").mkdir()
    again = run("--tool", "claude", "--project", str(project))
    assert again.exit_code == 0 and "no Bee instance" not in again.output + again.stderr


def test_the_token_hint_leaves_no_empty_token_exported_when_minting_fails(project: Path, home: Path) -> None:
    bee = " ".join(bee_command())
    result = run("--tool", "claude", "--project", str(project), "--tracker-url", URL, "--tracker-auth", "token")
    hint = f"BEE_TRACKER_TOKEN=$({bee} tracker token --actor you@example.com) && export BEE_TRACKER_TOKEN"
    assert hint in result.output


def test_the_token_hint_names_the_projects_tracker_home_when_it_has_one(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pasted into a new shell in another folder, `bee tracker token` would not find the home from there.
    monkeypatch.delenv("BEE_TRACKER_HOME", raising=False)
    monkeypatch.delenv("BEE_INSTANCE_ROOT", raising=False)
    tracker_home = project / ".bee" / "tracker"
    tracker_home.mkdir(parents=True)
    (tracker_home / "signing-key").write_bytes(b"k" * 32)
    result = run("--tool", "claude", "--project", str(project), "--tracker-url", URL, "--tracker-auth", "token")
    bee = " ".join(bee_command())
    assert f"$({bee} tracker token --home {tracker_home.resolve()} --actor you@example.com)" in result.output


def test_vscodes_token_prompt_names_the_same_full_command_as_the_printed_hint(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The prompt is read in the editor, far from the shell setup-mcp ran in: bare `bee tracker token` would find
    # neither bee nor the project's tracker home there.
    monkeypatch.delenv("BEE_TRACKER_HOME", raising=False)
    monkeypatch.delenv("BEE_INSTANCE_ROOT", raising=False)
    tracker_home = project / ".bee" / "tracker"
    tracker_home.mkdir(parents=True)
    (tracker_home / "signing-key").write_bytes(b"k" * 32)
    result = run("--tool", "vscode", "--project", str(project), "--tracker-url", URL, "--tracker-auth", "token")
    assert result.exit_code == 0, result.output
    mint = f"{' '.join(bee_command())} tracker token --home {tracker_home.resolve()} --actor you@example.com"
    [prompt] = json.loads((project / ".vscode" / "mcp.json").read_text())["inputs"]
    assert prompt["description"].endswith(f"what this command prints: {mint}")
    assert result.output.rstrip().endswith(f"give it what this prints: {mint}")

    # A prompt written by an earlier setup-mcp (or another bee) is brought up to date, and then left alone.
    monkeypatch.setenv("BEE_TRACKER_HOME", str(project / "elsewhere"))
    moved = run("--tool", "vscode", "--project", str(project), "--tracker-url", URL, "--tracker-auth", "token")
    assert "updated   input bee-tracker-token" in moved.output
    [prompt] = json.loads((project / ".vscode" / "mcp.json").read_text())["inputs"]
    assert f"--home {(project / 'elsewhere').resolve()} --actor" in prompt["description"]
    again = run("--tool", "vscode", "--project", str(project), "--tracker-url", URL, "--tracker-auth", "token")
    assert "already up to date" in again.output and "input bee-tracker-token" not in again.output
