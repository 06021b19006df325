"""bee_context_packet's handler in process: items, budgets, refinement and every bad input."""

import hashlib
import json
import os
from pathlib import Path
from typing import Any, cast

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_contracts.shapes.core import ContextPacketArgs, ContextPacketResult
from bee_core.context import CoreContext
from bee_core.handlers.context_packet import bee_context_packet
from bee_hostkit import Call, Deadline
from bee_hostkit.results import result_bytes
from tests.conftest import make_checkout


@pytest.fixture
def ctx(tmp_path: Path) -> CoreContext:
    return CoreContext.open(make_checkout(tmp_path / "co"))


def run(
    ctx: CoreContext, *selections: dict[str, Any], budget: float = 32768, deadline: Deadline | None = None
) -> ContextPacketResult:
    args = {"manifestJson": json.dumps({"selections": list(selections)}), "budgetBytes": budget}
    return bee_context_packet(ctx, Call("bee_context_packet", cast(ContextPacketArgs, args), deadline or Deadline(15)))


def fail(ctx: CoreContext, *selections: dict[str, Any], budget: float = 32768) -> BeeError:
    with pytest.raises(BeeError) as info:
        run(ctx, *selections, budget=budget)
    return info.value


def test_index_reports_file_facts(ctx: CoreContext) -> None:
    data = (ctx.checkout / "src/a.py").read_bytes()
    result = run(ctx, {"id": "i", "path": "src/a.py", "representation": "index"})
    [item] = result["items"]
    assert result["status"] == "complete" and result["complete"] is True
    assert item["sha256"] == "sha256:" + hashlib.sha256(data).hexdigest()
    assert (item["bytes"], item["lines"], item["language"], item["binary"]) == (len(data), 11, "python", False)
    assert "text" not in item and "symbols" not in item


def test_result_bytes_is_the_exact_size(ctx: CoreContext) -> None:
    result = run(ctx, {"id": "o", "path": "src/a.rs", "representation": "outline"})
    assert result["resultBytes"] == result_bytes(result)


def test_outline_whole_file_and_one_symbol(ctx: CoreContext) -> None:
    whole = run(ctx, {"id": "o", "path": "src/a.py", "representation": "outline"})["items"][0]
    assert whole["outlineSource"] == "tree-sitter"
    assert [s["name"] for s in whole["symbols"]] == ["f", "A", "af"]
    one = run(ctx, {"id": "o", "path": "src/a.py", "representation": "outline", "symbol": "A"})["items"][0]
    assert one["symbol"] == "A" and [c["name"] for c in one["symbols"][0]["children"]] == ["p", "am", "Inner"]


def test_body_whole_symbol_and_range(ctx: CoreContext) -> None:
    text = (ctx.checkout / "src/a.py").read_text()
    whole = run(ctx, {"id": "b", "path": "src/a.py", "representation": "body"})["items"][0]
    assert whole["text"] == text and (whole["startLine"], whole["endLine"]) == (1, 11)
    method = run(ctx, {"id": "b", "path": "src/a.py", "representation": "body", "symbol": "A.p"})["items"][0]
    assert method["text"] == "    @property\n    def p(self): pass\n" and method["symbol"] == "A.p"
    lines = run(ctx, {"id": "b", "path": "src/a.py", "representation": "body", "range": {"start": 2, "end": 3}})
    assert lines["items"][0]["text"] == "".join(text.splitlines(keepends=True)[1:3])


def test_binary_files_are_reported_as_binary_without_content(ctx: CoreContext) -> None:
    for representation in ("index", "outline", "body"):
        [item] = run(ctx, {"id": "x", "path": "logo.bin", "representation": representation})["items"]
        assert item["binary"] is True and "text" not in item and "symbols" not in item


def test_hash_pin_matches_and_mismatch_names_both_hashes(ctx: CoreContext) -> None:
    digest = hashlib.sha256((ctx.checkout / "src/a.go").read_bytes()).hexdigest()
    ok = run(ctx, {"id": "g", "path": "src/a.go", "representation": "index", "hash": digest.upper()})
    assert ok["status"] == "complete"
    failure = fail(ctx, {"id": "g", "path": "src/a.go", "representation": "index", "hash": "sha256:" + "0" * 64})
    assert failure.code is ErrorCode.HASH_MISMATCH
    assert "selection 'g'" in failure.message and "0" * 64 in failure.message and digest in failure.message


def test_dependency_order_in_items(ctx: CoreContext) -> None:
    result = run(
        ctx,
        {"id": "use", "path": "src/a.py", "representation": "body", "symbol": "f", "dependsOn": ["def"]},
        {"id": "def", "path": "src/a.py", "representation": "outline"},
    )
    assert [item["id"] for item in result["items"]] == ["def", "use"]


def test_optional_selection_that_does_not_fit_is_listed_not_delivered(ctx: CoreContext) -> None:
    big = {"id": "big", "path": "src/a.ts", "representation": "body", "required": False}
    small = {"id": "small", "path": "src/a.py", "representation": "index"}
    result = run(ctx, small, big, budget=1500)
    assert result["status"] == "incomplete" and result["complete"] is False
    assert [item["id"] for item in result["items"]] == ["small"]
    [omitted] = result["omitted"]
    assert omitted["id"] == "big" and omitted["reason"] == "budget" and omitted["bytes"] > 0
    assert result["resultBytes"] <= 1500


def test_omitted_dependency_omits_its_dependents(ctx: CoreContext) -> None:
    result = run(
        ctx,
        {"id": "small", "path": "src/a.py", "representation": "index"},
        {"id": "big", "path": "src/a.ts", "representation": "body", "required": False},
        {"id": "after", "path": "src/a.go", "representation": "index", "required": False, "dependsOn": ["big"]},
        budget=1200,
    )
    reasons = {o["id"]: o["reason"] for o in result["omitted"]}
    assert reasons == {"big": "budget", "after": "dependency_omitted"}


def test_required_content_that_does_not_fit_needs_refinement_and_delivers_nothing(ctx: CoreContext) -> None:
    result = run(
        ctx,
        {"id": "big", "path": "src/a.ts", "representation": "body"},
        {"id": "opt", "path": "src/a.py", "representation": "index", "required": False},
        budget=1024,
    )
    assert result["status"] == "needs_refinement" and result["complete"] is False
    assert result["items"] == []
    assert {o["id"] for o in result["omitted"]} == {"big", "opt"}
    assert result["overByBytes"] > 0
    assert result["resultBytes"] <= 1024
    # The listing says exactly how much the required item needs: raising the budget by overByBytes works.
    fits = run(
        ctx, {"id": "big", "path": "src/a.ts", "representation": "body"}, budget=1024 + result["overByBytes"] + 200
    )
    assert fits["items"] and fits["items"][0]["id"] == "big"


def test_a_required_dependency_of_a_required_selection_is_required(ctx: CoreContext) -> None:
    result = run(
        ctx,
        {"id": "dep", "path": "src/a.ts", "representation": "body", "required": False},
        {"id": "top", "path": "src/a.py", "representation": "index", "dependsOn": ["dep"]},
        budget=1024,
    )
    assert result["status"] == "needs_refinement"


def test_budget_so_small_that_even_the_listing_fails(ctx: CoreContext) -> None:
    selections = [{"id": f"s{i}", "path": "src/a.ts", "representation": "body"} for i in range(20)]
    failure = fail(ctx, *selections, budget=512)
    assert failure.details is not None
    assert failure.code is ErrorCode.BUDGET_EXCEEDED and failure.details["budgetBytes"] == 512


@pytest.mark.parametrize(
    ("selection", "code", "text"),
    [
        ({"path": "../outside.py", "representation": "index"}, ErrorCode.OUTSIDE_ROOT, "climbs out"),
        ({"path": "/etc/passwd", "representation": "index"}, ErrorCode.OUTSIDE_ROOT, "absolute"),
        ({"path": ".git/config", "representation": "index"}, ErrorCode.OUTSIDE_ROOT, ".git"),
        ({"path": "src/missing.py", "representation": "index"}, ErrorCode.NOT_FOUND, "no file"),
        ({"path": "src", "representation": "index"}, ErrorCode.INVALID_ARGUMENT, "is a directory"),
        ({"path": "src/a.py", "representation": "body", "symbol": "nope"}, ErrorCode.NOT_FOUND, "no symbol 'nope'"),
        ({"path": "src/a.py", "representation": "body", "symbol": "A.q"}, ErrorCode.NOT_FOUND, "close matches: A.p"),
        ({"path": "src/a.cs", "representation": "body", "symbol": "M"}, ErrorCode.INVALID_ARGUMENT, "ambiguous"),
        (
            {"path": "src/a.py", "representation": "body", "range": {"start": 5, "end": 99}},
            ErrorCode.INVALID_ARGUMENT,
            "has 11 lines",
        ),
    ],
)
def test_bad_selections(ctx: CoreContext, selection: dict[str, Any], code: ErrorCode, text: str) -> None:
    failure = fail(ctx, {"id": "x", **selection})
    assert failure.code is code
    assert text in failure.message


def test_symlink_out_of_the_checkout_is_refused(ctx: CoreContext, tmp_path: Path) -> None:
    (tmp_path / "secret.py").write_text("TOKEN = 1\n")
    os.symlink(tmp_path / "secret.py", ctx.checkout / "src" / "secret.py")
    assert fail(ctx, {"id": "x", "path": "src/secret.py", "representation": "body"}).code is ErrorCode.OUTSIDE_ROOT


def test_bee_state_is_never_served(ctx: CoreContext) -> None:
    # The exploit this guards: the tracker's signing key lives under .bee/, and a packet used to return it.
    key = ctx.checkout / ".bee" / "tracker" / "signing-key"
    key.parent.mkdir(parents=True)
    key.write_text("not for agents\n")
    os.symlink(".bee/tracker", ctx.checkout / "src" / "keys")
    for path in (".bee/tracker/signing-key", "src/keys/signing-key"):
        failure = fail(ctx, {"id": "x", "path": path, "representation": "body"})
        assert failure.code is ErrorCode.OUTSIDE_ROOT and ".bee" in failure.message, path


@pytest.mark.parametrize(
    ("path", "why"),
    [
        (".git/config", "lies in .git"),
        (".git", "names .git"),
        ("vendor/lib/.git/config", "lies in vendor/lib/.git"),  # a nested repository's (a submodule, a vendored one)
        ("vendor/lib/.git", "names vendor/lib/.git"),
        (".bee/instance.json", "lies in .bee"),
        (".bee", "names .bee"),
        ("src/git-link/config", "resolves through a symlink to .git"),
    ],
)
def test_internals_and_bees_state_are_refused_as_never_served(ctx: CoreContext, path: str, why: str) -> None:
    # Each of these is already a repository-relative path inside the checkout: the advice to give one would not help.
    for folder in (ctx.checkout / ".git", ctx.checkout / "vendor" / "lib" / ".git", ctx.checkout / ".bee"):
        folder.mkdir(parents=True, exist_ok=True)
    (ctx.checkout / ".git" / "config").write_text("[core]\n")
    (ctx.checkout / "vendor" / "lib" / ".git" / "config").write_text("[core]\n")
    (ctx.checkout / ".bee" / "instance.json").write_text("{}\n")
    os.symlink("../.git", ctx.checkout / "src" / "git-link")
    failure = fail(ctx, {"id": "x", "path": path, "representation": "body"})
    assert failure.code is ErrorCode.OUTSIDE_ROOT
    assert failure.message == (
        f"path {path!r} {why}: repository internals (.git) and Bee's own state (.bee) are never served; "
        "select one of the project's own files"
    )


def test_an_instance_root_selected_inside_the_checkout_is_never_served(tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "co")
    ctx = CoreContext.open(checkout, checkout / "state" / "bee")
    ctx.instance.init()
    (ctx.instance.root / "artifacts" / "note.txt").write_text("instance data\n")
    os.symlink("../state", checkout / "src" / "state-link")
    for path in ("state/bee/instance.json", "state/bee/artifacts/note.txt", "src/state-link/bee/instance.json"):
        failure = fail(ctx, {"id": "x", "path": path, "representation": "body"})
        assert failure.code is ErrorCode.OUTSIDE_ROOT and "instance state" in failure.message, path


@pytest.mark.timeout(20)  # before race-free reads, a FIFO could block the handler thread for ever
def test_special_files_are_refused_without_blocking(ctx: CoreContext) -> None:
    os.mkfifo(ctx.checkout / "src" / "pipe")
    failure = fail(ctx, {"id": "x", "path": "src/pipe", "representation": "index"})
    assert failure.code is ErrorCode.INVALID_ARGUMENT and "FIFO" in failure.message


def test_a_file_over_the_source_cap_is_hashed_as_a_stream_and_only_indexed(
    ctx: CoreContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bee_core.packet import source

    monkeypatch.setattr(source, "MAX_SOURCE_BYTES", 64)
    data = (ctx.checkout / "src/a.ts").read_bytes()
    assert len(data) > 64
    [item] = run(ctx, {"id": "i", "path": "src/a.ts", "representation": "index"})["items"]
    assert item["sha256"] == "sha256:" + hashlib.sha256(data).hexdigest() and item["bytes"] == len(data)
    failure = fail(ctx, {"id": "b", "path": "src/a.ts", "representation": "body"})
    assert failure.code is ErrorCode.INVALID_ARGUMENT and "too large" in failure.message


def test_expired_deadline_delivers_nothing(ctx: CoreContext) -> None:
    with pytest.raises(BeeError) as info:
        run(ctx, {"id": "x", "path": "src/a.py", "representation": "index"}, deadline=Deadline(0))
    assert info.value.code is ErrorCode.DEADLINE_EXCEEDED


def test_cache_serves_repeats_and_never_stale_content(ctx: CoreContext) -> None:
    selection = {"id": "o", "path": "src/a.py", "representation": "outline"}
    run(ctx, selection)
    run(ctx, selection)
    assert ctx.content.hits >= 1
    (ctx.checkout / "src/a.py").write_text("def renamed():\n    pass\n")
    [item] = run(ctx, selection)["items"]
    assert [s["name"] for s in item["symbols"]] == ["renamed"]


def test_outlines_parse_once_per_content_hash_across_calls_and_paths(ctx: CoreContext) -> None:
    (ctx.checkout / "src/copy_of_a.py").write_bytes((ctx.checkout / "src/a.py").read_bytes())
    selections = [
        {"id": "a", "path": "src/a.py", "representation": "outline"},
        {"id": "copy", "path": "src/copy_of_a.py", "representation": "outline"},
        {"id": "sym", "path": "src/a.py", "representation": "body", "symbol": "A.p"},
    ]
    first = run(ctx, *selections)
    for _ in range(3):
        assert run(ctx, *selections) == first
    assert ctx.content.misses == 1  # one parse, for one content, whatever the path, the call or the selection
    assert first["items"][0]["symbols"] == first["items"][1]["symbols"]


def test_whole_file_and_line_range_bodies_never_parse(ctx: CoreContext) -> None:
    run(
        ctx,
        {"id": "whole", "path": "src/a.py", "representation": "body"},
        {"id": "lines", "path": "src/a.ts", "representation": "body", "range": {"start": 1, "end": 2}},
    )
    assert (ctx.content.misses, ctx.content.hits) == (0, 0)


def attempt(ctx: CoreContext, *selections: dict[str, Any], budget: int) -> Any:
    try:
        return run(ctx, *selections, budget=budget)
    except BeeError as failure:
        return failure


MIXED: list[dict[str, Any]] = [
    {"id": "idx", "path": "src/a.py", "representation": "index"},
    {"id": "out", "path": "src/a.rs", "representation": "outline", "required": False},
    {"id": "py", "path": "src/a.py", "representation": "outline", "required": False, "dependsOn": ["out"]},
    {"id": "ts", "path": "src/a.ts", "representation": "body", "required": False},
    {"id": "go", "path": "src/a.go", "representation": "outline", "required": False, "dependsOn": ["ts"]},
    {"id": "sym", "path": "src/a.py", "representation": "body", "symbol": "A.p", "required": False},
]


@pytest.mark.parametrize("budget", [512, 700, 900, 1200, 1600, 2000, 2600, 3500, 5000, 8000, 32768])
def test_counted_sizes_are_exact_and_never_over_budget_for_every_packing(ctx: CoreContext, budget: int) -> None:
    result = attempt(ctx, *MIXED, budget=budget)
    if isinstance(result, BeeError):  # not even the listing of the six selections fits
        assert result.details is not None
        assert result.code is ErrorCode.BUDGET_EXCEEDED and result.details["resultBytes"] > budget
        return
    assert result["resultBytes"] == result_bytes(result) <= budget
    delivered = {item["id"] for item in result["items"]}
    omitted = {entry["id"]: entry for entry in result["omitted"]}
    assert delivered | set(omitted) == {s["id"] for s in MIXED} and not delivered & set(omitted)
    assert result["status"] in (("complete",) if not omitted else ("incomplete", "needs_refinement"))
    if result["status"] == "needs_refinement":
        assert result["items"] == [] and result["overByBytes"] > 0
    # Each omission's bytes is exactly what delivering that item would have added.
    full = run(ctx, *MIXED, budget=262144)
    for item in full["items"]:
        if item["id"] in omitted:
            assert omitted[item["id"]]["bytes"] == result_bytes({"x": [item, item]}) - result_bytes({"x": [item]})
