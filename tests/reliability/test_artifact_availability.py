"""The artifact store stays available under a real `bee mcp serve` (outcomes asserted, never speed).

- 500 calls or more (4 concurrent streams, until the other process has churned 20 times), three in five a search over
  all artifacts, while another process adds and removes artifacts in a loop: every call answers, none is a false
  ``hash_mismatch`` or an ``internal``, and the artifacts nobody touches are always counted exactly. One call in
  five searches a churned artifact by id, one reads it: those answer (with its exact bytes) or say ``not_found``.
- One damaged record: searches over all artifacts skip it and say so, naming it is an error that is not retryable,
  and `bee artifact list` reports it while listing the rest.
"""

import base64
import hashlib
import itertools
import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from bee_core.artifacts.records import artifact_id
from tests.conftest import ERAS, bee_executable, core_client, error_of

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

SEARCHES = int(os.environ.get("BEE_RELIABILITY_SEARCHES", "500"))
STREAMS = 4
#: The searches go on past SEARCHES until the other process has churned this often: on a loaded machine it may
#: get little CPU beside four streams of searches, and searches during no churn prove nothing.
MIN_CYCLES = 20
#: Contents the other process cycles through: the same ids are removed and added again, over and over.
CHURNED = [b"hit churn %d\n" % n + b"filler line\n" * 200 for n in range(6)]
STABLE = [b"".join(b"%05d hit stable %d\n" % (line, n) for line in range(50 + n)) for n in range(3)]

CHURNER = textwrap.dedent(
    """
    import io, sys, time
    from pathlib import Path
    from bee_core.artifacts.store import ArtifactStore

    store, stop, progress = ArtifactStore(Path(sys.argv[1])), Path(sys.argv[2]), Path(sys.argv[3])
    contents = [bytes.fromhex(h) for h in sys.argv[4:]]
    ends = time.monotonic() + 300  # bounded even if the test never says stop
    live, cycles = [], 0
    while not stop.exists() and time.monotonic() < ends:
        live.append(store.add(io.BytesIO(contents[cycles % len(contents)]), name=f"churn-{cycles}").record.id)
        if len(live) > 2:  # keep two alive, so searches list them and then find them removed
            store.remove(live.pop(0))
        cycles += 1
        progress.write_text(str(cycles))
    print(cycles, flush=True)
    """
)


def bee(checkout: Path, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [str(bee_executable()), *args], cwd=checkout, input=data, capture_output=True, check=True, timeout=120
    )


def ingest(checkout: Path, name: str, data: bytes) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(
        bee(checkout, "artifact", "add", "-", "--name", name, "--json", data=data).stdout
    )
    return record


@pytest.mark.timeout(900)
async def test_searches_while_another_process_adds_and_removes_artifacts(checkout: Path, tmp_path: Path) -> None:
    bee(checkout, "init")
    stable = {ingest(checkout, f"stable-{n}.log", data)["id"]: data.count(b"\n") for n, data in enumerate(STABLE)}
    churned_ids = [artifact_id(hashlib.sha256(data).hexdigest()) for data in CHURNED]
    stop, progress = tmp_path / "stop", tmp_path / "cycles"
    churner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CHURNER,
            str(checkout / ".bee" / "artifacts"),
            str(stop),
            str(progress),
            *(c.hex() for c in CHURNED),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    outcomes: Counter[str] = Counter()
    problems: list[object] = []
    churn_seen = 0
    asked = 0

    def churned() -> int:
        try:
            return int(progress.read_text() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    async def stream(client: Any, number: int) -> None:
        nonlocal churn_seen, asked
        for call in itertools.count():
            enough = call >= SEARCHES // STREAMS and churned() >= MIN_CYCLES
            if enough or call >= 20 * SEARCHES:  # the second: a give-up guard, should the other process hang
                break
            asked += 1
            named = churned_ids[call % len(churned_ids)]
            tool, arguments = "bee_artifact_search", {"text": "hit", "limit": 5}
            if call % 5 == number % 5:  # one call in five names a churned artifact
                arguments["ids"] = [named]
            elif call % 5 == (number + 1) % 5:  # and one reads it
                tool, arguments = "bee_artifact_read", {"id": named, "lengthBytes": 64}
            with anyio.fail_after(60):  # every call answers
                result = await client.call_tool(tool, arguments)
            if result.is_error:
                body = error_of(result)
                outcomes[body["code"]] += 1
                if not (body["code"] == "not_found" and ("ids" in arguments or "id" in arguments)):
                    problems.append((tool, arguments, body))
                continue
            outcomes["ok"] += 1
            if tool == "bee_artifact_read":
                page = base64.b64decode(result.structured_content["base64"])
                if page != CHURNED[churned_ids.index(named)][:64]:
                    problems.append((tool, arguments, page))
                continue
            counts = {count["id"]: count["matches"] for count in result.structured_content["counts"]}
            if "ids" not in arguments:
                churn_seen += any(found in churned_ids for found in counts)
                if {found: counts.get(found) for found in stable} != stable:
                    problems.append(("stable counts", counts))

    try:
        async with core_client(checkout, "2026-07-28") as client, anyio.create_task_group() as group:
            for number in range(STREAMS):
                group.start_soon(stream, client, number)
    finally:
        stop.touch()
        out, err = churner.communicate(timeout=60)
    cycles = int(out.decode().strip() or 0)
    calls = sum(outcomes.values())
    print(f"\n{calls} calls: {dict(outcomes)}; {churn_seen} searches saw a churned artifact; {cycles} churns")
    assert churner.returncode == 0, err.decode()
    assert problems == []
    assert calls == asked >= SEARCHES // STREAMS * STREAMS
    assert outcomes["hash_mismatch"] == outcomes["internal"] == 0
    assert cycles >= MIN_CYCLES and churn_seen > 0, "the other process did not churn while the searches ran"


@pytest.mark.parametrize("era", ERAS)
async def test_one_damaged_record_blocks_nothing_over_the_real_host(checkout: Path, era: str) -> None:
    bee(checkout, "init")
    sound = ingest(checkout, "sound.log", b"hit one\nhit two\n")["id"]
    rows = ingest(checkout, "rows.json", b'[{"hit": 1}]')["id"]
    broken = ingest(checkout, "broken.log", b"hit three\n")["id"]
    record_file = checkout / ".bee" / "artifacts" / "records" / f"{broken}.json"
    record_file.write_bytes(record_file.read_bytes()[:25])

    async with core_client(checkout, era) as client:
        result = await client.call_tool("bee_artifact_search", {"text": "hit"})
        assert result.is_error is False
        found = result.structured_content
        assert (found["damagedSkipped"], found["artifactsSearched"], found["totalMatches"]) == (1, 2, 3)
        assert [count["id"] for count in found["counts"]] == [sound, rows]

        for tool, arguments in [
            ("bee_artifact_search", {"text": "hit", "ids": [sound, broken]}),
            ("bee_artifact_read", {"id": broken}),
            ("bee_artifact_query", {"id": broken, "queryJson": "{}"}),
        ]:
            body = error_of(await client.call_tool(tool, arguments))
            assert (body["code"], body["retryable"]) == ("internal", False), (tool, body)
            assert str(record_file) in body["error"] and "truncated" in body["error"], body
            assert f"bee artifact rm {broken}" in body["error"], body
            assert body["details"]["id"] == broken

        rows_answer = await client.call_tool("bee_artifact_query", {"id": rows, "queryJson": "{}"})
        assert rows_answer.structured_content["totalRows"] == 1

    listing = subprocess.run(
        [str(bee_executable()), "artifact", "list"], cwd=checkout, capture_output=True, timeout=120, check=False
    )
    assert listing.returncode == 0
    assert sound.encode() in listing.stdout and broken.encode() not in listing.stdout
    assert f"{broken}: {record_file} is damaged".encode() in listing.stderr
