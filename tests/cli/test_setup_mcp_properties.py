"""`bee setup-mcp` over generated user files: whatever their layout, number and string spellings, comments and
trailing commas, setting up only adds Bee's text (every other character stays where it was), the file then holds
exactly the user's values plus Bee's, and removing gives back the original bytes."""

import copy
import json
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bee_cli import make_cli
from bee_cli.commands import register as register_cli
from bee_cli.jsontree import parse, plain
from bee_cli.setup_mcp import EDITORS, TrackerAccess, bee_command, entries, mint_command, token_input
from bee_contracts.hosts import installed_hosts
from bee_contracts.jsonvalues import NUMBER, Lexeme, write_json
from tests.cli.test_setup_mcp import URL

pytestmark = pytest.mark.usefixtures("hosts")

_GAPS = ["", "", " ", "  ", "\n", "\n  ", "\n    ", "\t", "\n\t\t", "\r\n  ", " \n "]
_COMMENTS = ["// note\n", "/* note */", " /* a\nb */ ", "//\n"]
_SPECIAL_NUMBERS = ["1e400", "1E2", "0.10000000000000000555", "-0", "1.50", "123456789012345678901234567890", "-0.0E-0"]
_numbers = st.sampled_from(_SPECIAL_NUMBERS) | st.from_regex(NUMBER, fullmatch=True).filter(lambda n: len(n) < 40)
_scalars = st.none() | st.booleans() | _numbers.map(Lexeme) | st.text(st.characters(codec="utf-8"), max_size=8).map(str)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)
_RESERVED = ("mcpServers", "servers", "inputs")
_names = st.text(min_size=1, max_size=8).filter(lambda name: not name.startswith("bee-"))


def _escaped(char: str) -> str:
    if char == "/":
        return "\\/"
    if ord(char) > 0xFFFF:  # a surrogate pair
        return json.dumps(char)[1:-1]
    return f"\\u{ord(char):04x}"


class Writer:
    """Writes a JSON value the way some person or tool might: random spacing, escapes and (JSONC) comments."""

    def __init__(self, rnd: random.Random, jsonc: bool) -> None:
        self.rnd = rnd
        self.jsonc = jsonc
        #: The text of each value of the user's outside Bee's entries: other servers, other top-level keys.
        self.kept: list[str] = []

    def gap(self) -> str:
        piece = self.rnd.choice(_GAPS)
        if self.jsonc and self.rnd.random() < 0.2:
            piece += self.rnd.choice(_COMMENTS) + self.rnd.choice(_GAPS)
        return piece

    def string(self, text: str) -> str:
        out = ['"']
        for char in text:
            if char in '"\\' or char < " ":
                out.append(json.dumps(char)[1:-1])
            elif self.rnd.random() < 0.2 and not 0xD800 <= ord(char) <= 0xDFFF:
                out.append(
                    "\\/" if char == "/" else json.dumps(char)[1:-1] if ord(char) > 0xFFFF else f"\\u{ord(char):04x}"
                )
            else:
                out.append(char)
        return "".join(out) + '"'

    def value(self, value: Any, *, insertion_spot: bool = False) -> str:
        if isinstance(value, dict | list):
            opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
            if not value:
                # Where Bee adds to an empty object or array, it lays it out afresh (removing gives back "{}").
                return opening + ("" if insertion_spot else self.gap()) + closing
            if isinstance(value, dict):
                parts = [self.member(key, self.value(item)) + self.gap() for key, item in value.items()]
            else:
                parts = [self.gap() + self.value(item) + self.gap() for item in value]
            trailing = "," + self.gap() if self.jsonc and self.rnd.random() < 0.3 else ""
            return opening + ",".join(parts) + trailing + closing
        if isinstance(value, Lexeme):
            return str(value)
        if isinstance(value, str):
            return self.string(value)
        return json.dumps(value)

    def member(self, key: str, text: str) -> str:
        return self.gap() + self.string(key) + self.gap() + ":" + self.gap() + text

    def document(self, top: dict[str, Any], servers_key: str) -> str:
        parts = []
        for key, item in top.items():
            if key == servers_key and item:
                servers = [self.member(name, self.value(entry)) for name, entry in item.items()]
                self.kept += [part for name, part in zip(item, servers, strict=True) if name != "bee-core"]
                text = "{" + ",".join(server + self.gap() for server in servers) + "}"
            else:
                text = self.value(item, insertion_spot=key in (servers_key, "inputs") and not item)
                if key not in (servers_key, "inputs"):
                    self.kept.append(text)
            parts.append(self.member(key, text))
        return self.gap() + "{" + ",".join(part + self.gap() for part in parts) + "}" + self.gap()


def only_insertions(before: str, after: str) -> None:
    """``after`` is ``before`` with characters added and none changed or taken out (``before`` is a subsequence)."""
    rest = iter(after)
    assert all(char in rest for char in before), (before, after)


def values_of(text: str, jsonc: bool) -> Any:
    if not jsonc:
        return json.loads(text, parse_int=Lexeme, parse_float=Lexeme)
    tree = parse(text, jsonc=True)
    assert tree is not None
    return plain(tree, text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tool=st.sampled_from(sorted(EDITORS)),
    others=st.dictionaries(_names, st.dictionaries(st.text(max_size=6), _values, max_size=3), max_size=4),
    extra=st.dictionaries(
        st.text(max_size=6).filter(lambda k: k not in ("mcpServers", "servers", "inputs")), _values, max_size=3
    ),
    inputs=st.lists(st.fixed_dictionaries({"id": st.text(max_size=4), "type": st.just("promptString")}), max_size=2),
    ours_already=st.none() | st.dictionaries(st.sampled_from(["disabled", "timeout", "env"]), _values, min_size=1),
    rnd=st.randoms(use_true_random=False),
)
def test_setting_up_adds_only_bees_text_and_removing_gives_back_every_byte(
    tool: str,
    others: dict[str, dict[str, Any]],
    extra: dict[str, Any],
    inputs: list[dict[str, str]],
    ours_already: dict[str, Any] | None,
    rnd: random.Random,
) -> None:
    editor = EDITORS[tool]
    servers = dict(others)
    if ours_already is not None:  # an entry Bee wrote earlier, to which the user added keys of their own
        servers["bee-core"] = {"command": "old", **ours_already}
    top = {**extra, editor.servers_key: servers}
    if editor.token_prompt and inputs:  # (an empty list of inputs Bee emptied is taken out, not given back)
        top["inputs"] = inputs
    writer = Writer(rnd, editor.jsonc)
    original = writer.document(top, editor.servers_key)

    with tempfile.TemporaryDirectory() as folder:
        project, home = Path(folder) / "repo", Path(folder) / "home"
        project.mkdir()
        home.mkdir()
        path = editor.path(project, home)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(original.encode("utf-8", "surrogatepass"))
        args = ["setup-mcp", "--tool", tool, "--project", str(project), "--tracker-url", URL, "--tracker-auth", "token"]
        cli = make_cli([register_cli])
        env = {"HOME": str(home), "BEE_TRACKER_URL": None, "BEE_TRACKER_TOKEN": None}
        result = CliRunner().invoke(cli, args, env=env)
        assert result.exit_code == 0, result.output
        written = path.read_bytes().decode()

        # The values: the user's, plus Bee's entries (in Bee's own entry, the user's keys kept, Bee's set).
        access = {"tracker": TrackerAccess(URL, token_env=None if editor.token_prompt else "BEE_TRACKER_TOKEN")}
        wanted = entries(editor, installed_hosts(), checkout=project, command=bee_command(), urls=access)
        expected = copy.deepcopy(top)
        for name, entry in wanted.items():
            expected[editor.servers_key][name] = {**expected[editor.servers_key].get(name, {}), **entry}
        if editor.token_prompt:
            expected.setdefault("inputs", []).append(token_input(mint_command(bee_command(), project)))
        assert write_json(values_of(written, editor.jsonc)) == write_json(expected)

        # The text: with no entry of Bee's there before, setting up only inserts; removing restores every byte.
        if ours_already is None:
            only_insertions(original, written)
        result = CliRunner().invoke(cli, [*args[:5], "--remove"], env=env)
        assert result.exit_code == 0, result.output
        restored = path.read_bytes().decode()
        if ours_already is None:
            assert restored == original
        else:
            del expected[editor.servers_key]["bee-core"], expected[editor.servers_key]["bee-tracker"]
            for name in wanted:
                expected[editor.servers_key].pop(name, None)
            if editor.token_prompt:
                expected["inputs"].pop()
                if not expected["inputs"]:
                    del expected["inputs"]
            assert write_json(values_of(restored, editor.jsonc)) == write_json(expected)
        # Every value of the user's outside Bee's entries is written as it was, in both files.
        for piece in writer.kept:
            assert piece in written and piece in restored
