"""bee_artifact_search in process: exact counts, paging across artifacts, long lines, caching and every failure."""

from pathlib import Path
from typing import Any, cast

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_contracts.shapes.core import ArtifactSearchArgs, ArtifactSearchResult
from bee_core.artifacts.search import LINE_CHARS, LISTING_CAP, PROBE_BYTES, PROBE_SAMPLES
from bee_core.context import CoreContext
from bee_core.handlers.artifact_search import bee_artifact_search
from bee_hostkit import Call, Deadline
from bee_hostkit.results import result_bytes
from tests.core.artifacts_helpers import add, blob, initialised, tamper


@pytest.fixture
def ctx(tmp_path: Path) -> CoreContext:
    return initialised(tmp_path)


def search(
    ctx: CoreContext,
    text: str,
    *,
    ids: list[str] | None = None,
    offset: int = 0,
    limit: int = 20,
    budget: int = 262144,
    deadline: Deadline | None = None,
) -> ArtifactSearchResult:
    args: dict[str, Any] = {"text": text, "offset": offset, "limit": limit, "budgetBytes": budget}
    if ids is not None:
        args["ids"] = ids
    return bee_artifact_search(
        ctx, Call("bee_artifact_search", cast(ArtifactSearchArgs, args), deadline or Deadline(30))
    )


def fail(ctx: CoreContext, text: str, **kwargs: Any) -> BeeError:
    with pytest.raises(BeeError) as info:
        search(ctx, text, **kwargs)
    return info.value


def expected_lines(data: bytes, text: str) -> list[tuple[int, int, str]]:
    """The reference answer, computed the slow obvious way: (lineNumber, byteOffset, line) of matching lines."""
    found: list[tuple[int, int, str]] = []
    offset = 0
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if text.encode() in raw:
            found.append((number, offset, raw.removesuffix(b"\r").decode()))
        offset += len(raw) + 1
    return found


def test_matches_carry_line_number_byte_offset_and_line(ctx: CoreContext) -> None:
    data = b"alpha\nbeta alpha alpha\r\ngamma\n\nalpha"
    record = add(ctx, "a.log", data)
    result = search(ctx, "alpha")
    assert result["totalMatches"] == 3 and result["artifactsSearched"] == 1
    assert result["counts"] == [{"id": record.id, "name": "a.log", "matches": 3}]
    got = [(m["lineNumber"], m["byteOffset"], m["line"]) for m in result["matches"]]
    assert got == expected_lines(data, "alpha") == [(1, 0, "alpha"), (2, 6, "beta alpha alpha"), (5, 31, "alpha")]
    assert result["matches"][1]["lineBytes"] == len("beta alpha alpha")
    assert all(m["id"] == record.id and m["cut"] is False for m in result["matches"])
    assert result["nextOffset"] is None and result["returned"] == 3
    assert result["resultBytes"] == result_bytes(result)


def test_literal_not_regex_and_case_sensitive(ctx: CoreContext) -> None:
    add(ctx, "a.log", b"a.c\nabc\nA.C\n(x+)\n-e flag\n")
    assert search(ctx, "a.c")["totalMatches"] == 1
    assert search(ctx, "(x+)")["totalMatches"] == 1
    assert search(ctx, "-e")["totalMatches"] == 1
    assert search(ctx, "A.C")["matches"][0]["lineNumber"] == 3


def test_counts_come_before_the_page_and_pages_cross_artifacts(ctx: CoreContext) -> None:
    first = add(ctx, "one", b"hit 1\nmiss\nhit 2\n")
    add(ctx, "nothing", b"no match here\n")
    third = add(ctx, "three", b"hit 3\nhit 4\nhit 5\n")
    result = search(ctx, "hit", offset=1, limit=3)
    assert list(result)[:4] == ["text", "totalMatches", "artifactsSearched", "counts"]
    assert result["totalMatches"] == 5 and result["artifactsSearched"] == 3
    assert [(c["id"], c["matches"]) for c in result["counts"]] == [(first.id, 2), (third.id, 3)]
    assert [m["line"] for m in result["matches"]] == ["hit 2", "hit 3", "hit 4"]
    assert result["nextOffset"] == 4
    last = search(ctx, "hit", offset=4, limit=3)
    assert [m["line"] for m in last["matches"]] == ["hit 5"] and last["nextOffset"] is None
    beyond = search(ctx, "hit", offset=50)
    assert beyond["matches"] == [] and beyond["totalMatches"] == 5 and beyond["nextOffset"] is None


def test_ids_narrow_and_order_the_search(ctx: CoreContext) -> None:
    one = add(ctx, "one", b"x 1\n")
    two = add(ctx, "two", b"x 2\n")
    result = search(ctx, "x", ids=[two.id, one.id])
    assert [m["line"] for m in result["matches"]] == ["x 2", "x 1"]
    assert search(ctx, "x", ids=[one.id])["totalMatches"] == 1


def test_binary_artifacts_are_skipped_and_refused_by_id(ctx: CoreContext) -> None:
    binary = add(ctx, "blob", b"hit\x00\xff")
    add(ctx, "text", b"hit\n")
    assert search(ctx, "hit")["artifactsSearched"] == 1
    error = fail(ctx, "hit", ids=[binary.id])
    assert error.code is ErrorCode.UNSUPPORTED and "bee_artifact_read" in error.message


def test_long_lines_are_cut_around_the_match_with_a_marker(ctx: CoreContext) -> None:
    line = "é" * 3000 + "NEEDLE" + "z" * 3000
    record = add(ctx, "long", (line + "\nshort NEEDLE\n").encode())
    [long, short] = search(ctx, "NEEDLE")["matches"]
    assert long["cut"] is True and short["cut"] is False and "excerptOffsetBytes" not in short
    assert long["line"].startswith("…") and long["line"].endswith("…") and "NEEDLE" in long["line"]
    assert len(long["line"]) == LINE_CHARS + 2
    assert long["lineBytes"] == len(line.encode())
    raw = blob(ctx, record).read_bytes()
    window = long["line"].strip("…").encode()
    start = long["byteOffset"] + long["excerptOffsetBytes"]
    assert raw[start : start + len(window)] == window


def test_mid_length_lines_are_cut_by_characters(ctx: CoreContext) -> None:
    line = "a" * 1000 + "NEEDLE" + "b" * 1000
    add(ctx, "mid", (line + "\n").encode())
    [match] = search(ctx, "NEEDLE")["matches"]
    assert match["cut"] is True and match["lineBytes"] == 2006 and "NEEDLE" in match["line"]
    assert line[match["excerptOffsetBytes"] :].startswith(match["line"].strip("…"))


def test_a_line_that_reads_like_ripgreps_long_line_marker(ctx: CoreContext) -> None:
    add(ctx, "odd", b"[Omitted long matching line]\n")
    [match] = search(ctx, "Omitted")["matches"]
    assert match["line"] == "[Omitted long matching line]" and match["cut"] is False


def test_a_very_long_line_at_the_end_without_terminator(ctx: CoreContext) -> None:
    line = "x" * 9000 + "tail-needle"
    record = add(ctx, "end", ("first\n" + line).encode())
    [match] = search(ctx, "tail-needle")["matches"]
    assert (match["lineNumber"], match["byteOffset"], match["lineBytes"]) == (2, 6, len(line))
    assert match["line"].startswith("…") and match["line"].endswith("tail-needle")
    assert blob(ctx, record).read_bytes()[6 + match["excerptOffsetBytes"] :].decode() == match["line"][1:]


def test_frequent_text_counts_are_exact_beyond_the_listing_cap(ctx: CoreContext) -> None:
    many = LISTING_CAP * 2
    data = b"".join(b"row %d hit\n" % i for i in range(many))
    add(ctx, "dense", data)
    result = search(ctx, "hit", offset=many - 3, limit=10)
    assert result["totalMatches"] == many
    assert [m["lineNumber"] for m in result["matches"]] == [many - 2, many - 1, many]
    assert [m["line"] for m in result["matches"]] == [f"row {i} hit" for i in range(many - 3, many)]


def test_a_text_the_probe_misses_is_still_counted_exactly(ctx: CoreContext) -> None:
    # The probe samples evenly spaced 4 KiB windows; the matching lines sit in one gap between two of them, so
    # the probe predicts a rare text, the listing runs into its cap, and the artifact is counted instead.
    size = 1_600_000
    step = (size - PROBE_BYTES) // (PROBE_SAMPLES - 1)
    quiet = b"quiet line\n"
    burst = b"".join(b"burst %06d\n" % i for i in range(LISTING_CAP + 500))  # 13 bytes a line, ~60 KB
    assert len(burst) < step - 2 * PROBE_BYTES - 20_000
    head = quiet * ((step + PROBE_BYTES + 8_000) // len(quiet))
    tail = quiet * ((size - len(head) - len(burst)) // len(quiet) + 1)
    add(ctx, "late", head + burst + tail)
    first = search(ctx, "burst", limit=2)
    assert first["totalMatches"] == LISTING_CAP + 500
    assert first["matches"][0]["lineNumber"] == len(head) // len(quiet) + 1
    deep = search(ctx, "burst", offset=LISTING_CAP + 499, limit=5)
    assert [m["line"] for m in deep["matches"]] == [f"burst {LISTING_CAP + 499:06d}"]


def test_a_frequent_first_artifact_serves_the_page_it_fetched_alongside_the_count(ctx: CoreContext) -> None:
    dense = b"".join(b"hit %d\n" % i for i in range(LISTING_CAP * 3))
    add(ctx, "dense", dense)
    add(ctx, "light", b"hit light\n")
    page = search(ctx, "hit", offset=5, limit=3)
    assert page["totalMatches"] == LISTING_CAP * 3 + 1
    assert [(m["lineNumber"], m["line"]) for m in page["matches"]] == [(6, "hit 5"), (7, "hit 6"), (8, "hit 7")]
    later = search(ctx, "hit", offset=LISTING_CAP * 3 - 1, limit=3)
    assert [m["line"] for m in later["matches"]] == [f"hit {LISTING_CAP * 3 - 1}", "hit light"]


def test_the_page_of_a_frequent_first_artifact_and_later_ones(ctx: CoreContext) -> None:
    dense = b"".join(b"hit %d\n" % i for i in range(5000))
    add(ctx, "dense", dense)
    add(ctx, "sparse", b"x\nhit tail\n")
    page = search(ctx, "hit", offset=4998, limit=5)
    assert page["totalMatches"] == 5001
    assert [m["line"] for m in page["matches"]] == ["hit 4998", "hit 4999", "hit tail"]
    assert page["matches"][-1]["lineNumber"] == 2


def test_repeated_and_narrowed_queries_reuse_the_cache_and_agree(ctx: CoreContext) -> None:
    records = [add(ctx, f"f{i}", b"".join(b"k%d v\n" % j for j in range(i * 300))) for i in range(1, 4)]
    cold = search(ctx, "v", offset=100, limit=7)
    cached = len(ctx.artifacts.search)
    again = search(ctx, "v", offset=100, limit=7)
    assert again == cold and len(ctx.artifacts.search) == cached
    narrowed = search(ctx, "v", ids=[records[2].id], limit=3)
    assert narrowed["totalMatches"] == 900 and len(ctx.artifacts.search) == cached


def test_matching_the_slow_reference_on_varied_text(ctx: CoreContext) -> None:
    lines = [f"{i:05d} {'needle' if i % 7 == 0 else 'hay'} {'ü' * (i % 5)}" for i in range(3000)]
    data = "\r\n".join(lines).encode()
    add(ctx, "crlf", data)
    result = search(ctx, "needle", limit=200, offset=100)
    reference = expected_lines(data, "needle")
    assert result["totalMatches"] == len(reference)
    got = [(m["lineNumber"], m["byteOffset"], m["line"]) for m in result["matches"]]
    assert got == reference[100:300]


def test_no_artifacts_no_matches(ctx: CoreContext) -> None:
    result = search(ctx, "anything")
    assert (result["totalMatches"], result["counts"], result["matches"]) == (0, [], [])


def test_bad_texts(ctx: CoreContext) -> None:
    add(ctx, "a", b"a\n")
    assert "line break" in fail(ctx, "two\nlines").message
    assert "NUL" in fail(ctx, "nul\x00").message


def test_unknown_id_is_not_found(ctx: CoreContext) -> None:
    error = fail(ctx, "x", ids=["art-0123456789abcdef"])
    assert error.code is ErrorCode.NOT_FOUND and "bee artifact list" in error.message


def test_not_initialised(tmp_path: Path) -> None:
    (tmp_path / "bare").mkdir()
    error = fail(CoreContext.open(tmp_path / "bare"), "x")
    assert error.code is ErrorCode.NOT_INITIALIZED and "bee init" in error.message


def test_budget_too_small_for_the_page_says_what_fits(ctx: CoreContext) -> None:
    add(ctx, "a", b"".join(b"match number %d with some padding text\n" % i for i in range(50)))
    error = fail(ctx, "match", limit=50, budget=2048)
    assert error.code is ErrorCode.BUDGET_EXCEEDED
    assert error.details is not None
    assert "Lower limit to" in error.message and error.details["budgetBytes"] == 2048
    fits = int(error.message.split("Lower limit to ")[1].split()[0])
    assert search(ctx, "match", limit=fits, budget=2048)["resultBytes"] <= 2048
    assert fail(ctx, "match", limit=fits + 1, budget=2048).code is ErrorCode.BUDGET_EXCEEDED


def test_budget_too_small_for_even_the_counts(ctx: CoreContext) -> None:
    for i in range(12):
        add(ctx, f"a-rather-long-artifact-name-number-{i}.log", b"common %d\n" % i)
    error = fail(ctx, "common", budget=600)
    assert error.code is ErrorCode.BUDGET_EXCEEDED and "even the counts" in error.message


def test_tampered_artifact_is_refused(ctx: CoreContext) -> None:
    record = add(ctx, "a", b"secret line\n")
    search(ctx, "secret")  # cached now
    tamper(blob(ctx, record), b"forged line\n")
    error = fail(ctx, "secret")
    assert error.code is ErrorCode.HASH_MISMATCH and record.id in error.message


def test_deadline(ctx: CoreContext) -> None:
    add(ctx, "a", b"x\n")
    error = fail(ctx, "x", deadline=Deadline(0))
    assert error.code is ErrorCode.DEADLINE_EXCEEDED


@pytest.mark.parametrize("long_line", [False, True])
def test_a_narrowed_text_agrees_with_a_fresh_search(ctx: CoreContext, long_line: bool) -> None:
    # Without a long line the narrowed query filters the cached listing of "ERROR"; with one (which ripgrep
    # lists as a marker) it searches again. Either way the answer is the same as from a host that knows nothing.
    lines = [f"{i} ERROR {'disk full' if i % 3 == 0 else 'timeout'}" for i in range(300)]
    if long_line:
        lines.append("x" * 5000 + " ERROR disk")
    add(ctx, "a", ("\n".join(lines) + "\n").encode())
    search(ctx, "ERROR")
    narrowed = search(ctx, "ERROR disk", offset=95, limit=10)
    fresh = search(CoreContext.open(ctx.checkout), "ERROR disk", offset=95, limit=10)
    assert narrowed == fresh
    assert narrowed["totalMatches"] == 100 + long_line
    assert [m["lineNumber"] for m in narrowed["matches"]][:5] == [286, 289, 292, 295, 298]


def test_a_deadline_that_passes_while_ripgrep_runs_kills_it(ctx: CoreContext) -> None:
    from bee_core.artifacts import ripgrep

    record = add(ctx, "big", b"".join(b"line %d of a larger log\n" % i for i in range(400_000)))
    with pytest.raises(BeeError) as info:
        ripgrep.counts([blob(ctx, record)], "absent", Deadline(0))  # expires before ripgrep can answer
    assert info.value.code is ErrorCode.DEADLINE_EXCEEDED and "nothing partial" in info.value.message
