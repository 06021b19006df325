"""The contract check's comparison and its messages: every differing field is named, with both values."""

import json
import sys

import anyio
import pytest

from bee_supervisor.contract import VersionInfo, differences, refusal, triple, version_answer

INSTALLED = {"version": "0.1.0", "contractVersion": "1", "contractDigest": "sha256:aa"}


def test_equal_triples_are_not_refused() -> None:
    assert differences(INSTALLED, dict(INSTALLED)) == []
    assert refusal("GET /health", INSTALLED, {**INSTALLED, "extra": "ignored"}) is None


def test_a_refusal_names_each_field_that_differs_with_both_values() -> None:
    message = refusal("GET /health", INSTALLED, {**INSTALLED, "version": "0.2.0", "contractDigest": "sha256:bb"})
    assert message == (
        "refused: GET /health reports version 0.2.0 (installed: 0.1.0); contractDigest sha256:bb "
        "(installed: sha256:aa) — restart it from the installed Bee, or reinstall"
    )


def test_a_missing_triple_or_field_is_refused() -> None:
    assert (no_triple := refusal("the MCP handshake", INSTALLED, None)) is not None
    assert no_triple.startswith("refused: the MCP handshake reports no version triple")
    assert (no_field := refusal("x", INSTALLED, {"version": "0.1.0", "contractDigest": "sha256:aa"})) is not None
    assert "contractVersion missing (installed: 1)" in no_field


def test_triple_reads_only_the_three_string_fields() -> None:
    assert triple({"status": "ok", **INSTALLED, "host": "tracker"}) == INSTALLED
    assert triple({"version": 1}) is None and triple(["version"]) is None


def run(argv: list[str]) -> VersionInfo | str:
    return anyio.run(lambda: version_answer(argv, env={}, cwd=None, timeout=30))


def test_version_answer_reads_the_json_a_command_prints() -> None:
    assert run([sys.executable, "-c", f"print({json.dumps(json.dumps(INSTALLED))})"]) == INSTALLED


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        ("import sys; sys.exit('boom')", "failed with exit status 1: boom"),
        ("print('not json')", "printed no version triple as JSON"),
    ],
)
def test_version_answer_explains_a_command_that_gives_none(program: str, expected: str) -> None:
    assert expected in run([sys.executable, "-c", program])


def test_version_answer_of_a_program_that_cannot_run() -> None:
    assert "could not run" in run(["/nonexistent/bee"])
