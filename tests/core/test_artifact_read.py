"""bee_artifact_read in process: pages reassemble the exact bytes; offsets past the end and tampering fail."""

import base64
import hashlib
import os
from pathlib import Path

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_contracts.shapes.core import ArtifactReadResult
from bee_core.context import CoreContext
from bee_core.handlers.artifact_read import bee_artifact_read
from bee_hostkit import Call, Deadline
from tests.core.artifacts_helpers import add, blob, initialised, tamper


@pytest.fixture
def ctx(tmp_path: Path) -> CoreContext:
    return initialised(tmp_path)


def read(ctx: CoreContext, artifact: str, offset: int = 0, length: int = 65536) -> ArtifactReadResult:
    return bee_artifact_read(
        ctx, Call("bee_artifact_read", {"id": artifact, "offsetBytes": offset, "lengthBytes": length}, Deadline(30))
    )


def test_pages_reassemble_the_exact_bytes(ctx: CoreContext) -> None:
    data = os.urandom(200_001)
    record = add(ctx, "random.bin", data)
    pieces: list[bytes] = []
    offset: int | None = 0
    while offset is not None:
        page = read(ctx, record.id, offset, 65536)
        assert page["offsetBytes"] == offset and page["sourceBytes"] == len(data)
        pieces.append(base64.b64decode(page["base64"]))
        assert page["lengthBytes"] == len(pieces[-1])
        offset = page["nextOffsetBytes"]
    whole = b"".join(pieces)
    assert whole == data and len(pieces) == 4
    assert page["sourceSha256"] == "sha256:" + hashlib.sha256(whole).hexdigest()


def test_a_short_page_in_the_middle_and_the_last_byte(ctx: CoreContext) -> None:
    record = add(ctx, "t", b"0123456789")
    middle = read(ctx, record.id, 3, 4)
    assert base64.b64decode(middle["base64"]) == b"3456" and middle["nextOffsetBytes"] == 7
    last = read(ctx, record.id, 9, 100)
    assert base64.b64decode(last["base64"]) == b"9" and last["nextOffsetBytes"] is None


def test_an_empty_artifact_has_one_empty_page(ctx: CoreContext) -> None:
    record = add(ctx, "empty", b"")
    page = read(ctx, record.id)
    assert (page["base64"], page["lengthBytes"], page["nextOffsetBytes"]) == ("", 0, None)


@pytest.mark.parametrize("offset", [10, 11, 10**9])
def test_offset_past_the_end(ctx: CoreContext, offset: int) -> None:
    record = add(ctx, "t", b"0123456789")
    with pytest.raises(BeeError) as info:
        read(ctx, record.id, offset)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    assert "past the end" in info.value.message and "nextOffsetBytes" in info.value.message


def test_a_tampered_artifact_serves_no_page(ctx: CoreContext) -> None:
    record = add(ctx, "t", b"original content\n")
    read(ctx, record.id)
    tamper(blob(ctx, record), b"original CONTENT\n")
    with pytest.raises(BeeError) as info:
        read(ctx, record.id, 0, 8)
    assert info.value.code is ErrorCode.HASH_MISMATCH


def test_unknown_and_malformed_ids(ctx: CoreContext) -> None:
    with pytest.raises(BeeError) as info:
        read(ctx, "art-ffffffffffffffff")
    assert info.value.code is ErrorCode.NOT_FOUND
    with pytest.raises(BeeError) as info:
        read(ctx, "../../x")
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
