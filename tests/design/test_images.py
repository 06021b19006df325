"""Images are PNG and nothing else, decoded within bounds: no other decoder (and no program one starts) ever runs,
and a header over the pixel limit, or of another size than the reference, is refused before a pixel is decoded."""

from __future__ import annotations

import io
import os
import struct
import subprocess
import zlib
from pathlib import Path
from typing import cast

import anyio
import pytest
from PIL import Image

from bee_contracts import BeeError, ErrorCode
from bee_contracts.limits import IMAGE_MAX_BYTES, IMAGE_MAX_PIXELS
from bee_contracts.shapes.design import VisualReportArgs
from bee_design.capture.evidence import EVIDENCE_FILE, RECORD_MAX_BYTES
from bee_design.context import DesignContext
from bee_design.handlers.visual_report import bee_visual_report
from bee_design.layout import DesignFiles
from bee_design.visual.authoring import create_spec
from bee_design.visual.images import decode_rgba, png_size, read_png
from bee_hostkit import local_call
from tests.conftest import ERAS, bee_executable, error_of
from tests.design.helpers import design_client, design_process, page_image, save_png, write_evidence

# An EPS whose PostScript never ends: Ghostscript, once started on it, keeps a core busy until it is killed.
EPS = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 400 300\n%%EndComments\n{ } loop\n%%EOF\n"


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, *, rows: int | None = None) -> bytes:
    """A white RGBA PNG of ``width``×``height`` whose header is true, with ``rows`` rows of pixel data (all of
    them by default; fewer gives a header that promises more than the file holds). Built row by row, so a large
    image costs the test little memory."""
    packer = zlib.compressobj(9)
    row = b"\x00" + b"\xff" * (4 * width)
    data = b"".join(packer.compress(row) for _ in range(height if rows is None else rows)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


def other_format(kind: str) -> bytes:
    if kind == "eps":
        return EPS
    buffer = io.BytesIO()
    Image.new("RGB", (400, 300), (255, 255, 255)).save(buffer, format=kind)
    return buffer.getvalue()


def refused(data: bytes, text: str) -> BeeError:
    with pytest.raises(BeeError) as caught:
        decode_rgba(data, "shot.png")
    assert caught.value.code is ErrorCode.INVALID_ARGUMENT and text in caught.value.message, caught.value
    return caught.value


@pytest.mark.parametrize("kind", ["eps", "GIF", "JPEG", "BMP", "TIFF", "WEBP"])
def test_an_image_in_any_format_but_png_is_refused_whatever_pillow_could_read(kind: str) -> None:
    refused(other_format(kind), "shot.png is not a PNG image; Bee compares PNG files only")


def test_a_png_decodes_to_rgba_pixels() -> None:
    pixels = page_image(120, 80)
    buffer = io.BytesIO()
    Image.fromarray(pixels, "RGBA").save(buffer, format="PNG")
    assert (decode_rgba(buffer.getvalue(), "shot.png") == pixels).all()
    assert png_size(buffer.getvalue(), "shot.png") == (120, 80)


def test_a_header_over_the_pixel_limit_is_refused_before_decoding() -> None:
    error = refused(png(100_000, 100_000, rows=1), f"is 100000×100000, over the {IMAGE_MAX_PIXELS}-pixel limit")
    assert error.details == {"width": 100_000, "height": 100_000}
    assert "nothing was decoded" in error.message


def test_damaged_empty_and_truncated_pngs_are_refused_clearly() -> None:
    whole = png(40, 30)
    broken_crc = whole[:29] + bytes([whole[29] ^ 1]) + whole[30:]
    refused(broken_crc, "its header chunk is damaged")
    refused(whole[:20], "is not a PNG image")
    refused(png(0, 30, rows=0), "a PNG of 0×30 pixels")
    refused(whole[:-30], "is not a readable PNG image")


def test_an_image_file_over_the_byte_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    huge = tmp_path / "huge.png"
    with huge.open("wb") as file:  # sparse: no disk is used and nothing is written
        file.truncate(IMAGE_MAX_BYTES + 1)
    with pytest.raises(BeeError) as caught:
        read_png(huge, "huge.png")
    assert f"over the {IMAGE_MAX_BYTES}-byte limit" in caught.value.message
    fifo = tmp_path / "fifo.png"
    os.mkfifo(fifo)
    with pytest.raises(BeeError) as caught:
        read_png(fifo, "fifo.png")  # opened non-blocking: refused, never waited on
    assert "is not a regular file" in caught.value.message


def test_an_evidence_record_over_its_limit_is_refused_before_it_is_read(root: Path, spec: str) -> None:
    folder = root / "evidence" / "huge"
    folder.mkdir(parents=True)
    with (folder / EVIDENCE_FILE).open("wb") as file:  # sparse, like the image above
        file.truncate(RECORD_MAX_BYTES + 1)
    arguments = {"spec": spec, "evidence": "evidence/huge"}
    with pytest.raises(BeeError) as caught:
        bee_visual_report(DesignContext.open(root), local_call("bee_visual_report", cast(VisualReportArgs, arguments)))
    assert caught.value.code is ErrorCode.INVALID_ARGUMENT
    assert f"evidence/huge/evidence.json is {RECORD_MAX_BYTES + 1} bytes, over the" in caught.value.message


# -- no program ever starts ------------------------------------------------------------------------------------


@pytest.fixture
def fake_gs(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A `gs` first on PATH that records each run and then hangs as the real one would on EPS."""
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    ran = tmp_path / "gs-ran"
    script = folder / "gs"
    script.write_text(f'#!/bin/sh\necho "$$ $*" >> {ran}\nexec sleep 60\n')
    script.chmod(0o755)
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"}
    return env, ran


def children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (every thread's)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def host_pid(root: Path) -> int:
    """The pid of the `bee design mcp` host serving ``root`` (found by its command line)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"mcp" in argv and b"--root" in argv and os.fsencode(root) in argv:
                return int(entry.name)
    raise AssertionError(f"no design host for {root} is running")


@pytest.fixture
def spec(root: Path) -> str:
    create_spec(
        DesignFiles(root),
        "shop",
        write_evidence(root / "evidence" / "reference", {("home", "desktop"): page_image(400, 300)}),
    )
    return "shop"


@pytest.mark.e2e
@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_an_eps_named_as_evidence_starts_no_program_and_is_refused_at_once(
    root: Path, spec: str, fake_gs: tuple[dict[str, str], Path], era: str
) -> None:
    env, ran = fake_gs
    folder = root / "evidence" / "eps"
    folder.mkdir(parents=True)
    (folder / "home--desktop.png").write_bytes(EPS)
    async with design_process(root, era, env=env) as client:
        with anyio.fail_after(20):  # a give-up guard: the real answer comes at once
            result = await client.call_tool("bee_visual_report", {"spec": spec, "evidence": "evidence/eps"})
        host = host_pid(root)
        assert children(host) == []
        body = error_of(result)
        # The host keeps serving.
        listed = await client.call_tool("bee_design_list", {})
    assert body["code"] == "invalid_argument"
    assert "the screenshot of home at desktop is not a PNG image; Bee compares PNG files only" in body["error"]
    assert listed.is_error is not True
    assert not ran.exists(), ran.read_text()


@pytest.mark.e2e
def test_bee_visual_diff_refuses_an_eps_and_a_gif_without_starting_a_program(
    tmp_path: Path, fake_gs: tuple[dict[str, str], Path]
) -> None:
    env, ran = fake_gs
    reference = tmp_path / "reference.png"
    save_png(reference, page_image(400, 300))
    for kind in ("eps", "GIF"):
        evidence = tmp_path / f"{kind}.png"
        evidence.write_bytes(other_format(kind))
        completed = subprocess.run(
            [str(bee_executable()), "visual", "diff", str(reference), str(evidence)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        assert completed.returncode == 1, completed.stdout + completed.stderr
        assert f"Error: {kind}.png is not a PNG image; Bee compares PNG files only" in completed.stderr
    assert not ran.exists(), ran.read_text()


# -- memory stays bounded --------------------------------------------------------------------------------------


def peak_rss(args: list[str], out: Path) -> tuple[int, str]:
    """Run ``bee ARGS``; its exit status and output, and (first) its peak resident memory in bytes."""
    with (out / "stdout").open("wb") as stdout, (out / "stderr").open("wb") as stderr:
        process = subprocess.Popen([str(bee_executable()), *args], stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, so Popen must not wait again
    output = (out / "stdout").read_text() + (out / "stderr").read_text()
    return usage.ru_maxrss * 1024, f"exit {process.returncode}: {output}"


MIB = 1024 * 1024


@pytest.mark.e2e
def test_a_huge_evidence_header_costs_no_memory_and_a_wrong_size_is_judged_from_the_header(
    root: Path, spec: str, tmp_path: Path
) -> None:
    """The baseline is a report that decodes and compares two 400×300 images; a bomb's header and a 6000×6000
    screenshot (509 MiB when it was decoded before its size was checked) must stay within a few MiB of it."""
    baseline_folder = write_evidence(root / "evidence" / "same", {("home", "desktop"): page_image(400, 300)})
    assert baseline_folder.is_dir()
    baseline, said = peak_rss(["visual", "report", "shop", "evidence/same", "--root", str(root)], tmp_path)
    assert said.startswith("exit 0: decision: pass"), said
    for name, data, expected in (
        ("bomb", png(100_000, 100_000, rows=1), f"over the {IMAGE_MAX_PIXELS}-pixel limit for an image"),
        ("large", png(6000, 6000), "sizes differ: reference 400×300, evidence 6000×6000"),
    ):
        folder = root / "evidence" / name
        folder.mkdir()
        (folder / "home--desktop.png").write_bytes(data)
        peak, said = peak_rss(["visual", "report", "shop", f"evidence/{name}", "--root", str(root)], tmp_path)
        assert expected in said, said
        assert peak < baseline + 32 * MIB, (name, peak // MIB, baseline // MIB)


@pytest.mark.e2e
@pytest.mark.anyio
async def test_a_decompression_bomb_is_invalid_argument_through_the_host(root: Path, spec: str) -> None:
    folder = root / "evidence" / "bomb"
    folder.mkdir(parents=True)
    (folder / "home--desktop.png").write_bytes(png(100_000, 100_000, rows=1))
    async with design_client(root, "2026-07-28") as client:
        body = error_of(await client.call_tool("bee_visual_report", {"spec": spec, "evidence": "evidence/bomb"}))
        assert (await client.call_tool("bee_design_list", {})).is_error is not True
    assert body["code"] == "invalid_argument"
    assert "the screenshot of home at desktop is 100000×100000, over the 40000000-pixel limit" in body["error"]
