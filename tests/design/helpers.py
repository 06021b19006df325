"""Helpers the design tests share: a checkout with source, the fixture bundle, a static server, images, evidence."""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from bee_design.bundle.manifest import Manifest
from bee_design.bundle.reading import read_bundle
from bee_design.bundle.store import BundleStore
from bee_design.capture import seal
from bee_design.capture.evidence import EVIDENCE_FILE, PRODUCER, file_name
from bee_design.digests import of_bytes
from bee_design.layout import DesignFiles

SHOP = Path(__file__).resolve().parents[1] / "fixtures" / "design" / "shop"

SOURCES = {
    "src/ShopPage.tsx": "export function ShopPage() {\n  return <main id='app'>Shop</main>;\n}\n",
    "src/BuyButton.tsx": "export const BuyButton = () => <button className='buy'>Buy now</button>;\n",
}


def make_root(target: Path) -> Path:
    """A checkout with a little source to map design elements to."""
    for relative, text in SOURCES.items():
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        (target / relative).write_text(text)
    return target


def import_shop(root: Path, source: Path = SHOP, bundle: str = "shop", *, replace: bool = False) -> Manifest:
    return BundleStore(DesignFiles(root)).add(read_bundle(source), bundle, replace=replace).manifest


def zip_with_raw_name(path: Path, raw: bytes, *, utf8_flag: bool) -> Path:
    """A zip holding index.html and one entry whose name, in both headers, is exactly the bytes ``raw``.

    zipfile cuts a name at a NUL and encodes what it writes, so the entry is written under a placeholder as long as
    ``raw`` and its bytes replaced; no checksum covers a name.
    """
    placeholder = "\x7f" * len(raw)  # DEL: in no other name of the zip
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("index.html", b"<p>ok</p>")
        info = zipfile.ZipInfo(placeholder)
        if utf8_flag:
            info.flag_bits |= 0x800
        archive.writestr(info, b"evil")
    data = path.read_bytes()
    assert data.count(placeholder.encode()) == 2  # the local header and the central directory
    path.write_bytes(data.replace(placeholder.encode(), raw))
    return path


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def static_server(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port); yields the base URL ending in ``/``."""
    handler = functools.partial(_Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def page_image(
    width: int = 120, height: int = 80, *, shift: int = 0, color: tuple[int, int, int] = (47, 111, 219)
) -> np.ndarray:
    """A white page with a dark bar, a coloured box and a thin diagonal line (anti-aliasing to judge)."""
    from PIL import ImageDraw

    image = Image.new("RGBA", (width, height), (255, 255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0 + shift, width - 1, 11 + shift), fill=(29, 36, 51, 255))
    draw.rectangle((20, 30 + shift, 60, 50 + shift), fill=(*color, 255))
    draw.line((70, 20 + shift, 110, 70 + shift), fill=(0, 0, 0, 255), width=2)
    return np.asarray(image).copy()


def save_png(path: Path, pixels: np.ndarray) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels, "RGBA").save(path)
    return path.read_bytes()


def write_evidence(
    folder: Path,
    shots: dict[tuple[str, str], np.ndarray],
    *,
    producer: str = PRODUCER,
    browser: str = "156.0.8078.114",
    fonts: tuple[str, ...] = ("DejaVu Sans",),
    root: Path | None = None,
    sealed: bool = True,
) -> Path:
    """An evidence folder as `bee design capture` writes it, from images made in the test (no browser).

    Sealed (unless ``sealed`` is false) with the evidence key of ``root`` — by default ``folder``'s grandparent,
    since the tests keep evidence at ``ROOT/evidence/NAME`` — created there by Bee's own code when missing.
    """
    captures = []
    for (name, viewport), pixels in shots.items():
        data = save_png(folder / file_name(name, viewport), pixels)
        height, width = pixels.shape[:2]
        captures.append(
            {
                "name": name,
                "url": f"http://127.0.0.1/{name}",
                "viewport": viewport,
                "width": width,
                "height": height,
                "file": file_name(name, viewport),
                "sha256": of_bytes(data),
                "bytes": len(data),
                "imageWidth": width,
                "imageHeight": height,
                "fonts": [{"family": f, "postScriptName": "", "custom": False, "glyphs": 10} for f in fonts],
            }
        )
    record = {
        "schemaVersion": 1,
        "producer": producer,
        "version": "0.1.0",
        "capturedAt": "2026-01-01T00:00:00+00:00",
        "browser": {
            "name": "chromium",
            "version": browser,
            "executable": "/usr/bin/chromium",
            "flags": [],
            "commandLine": "",
        },
        "settings": {},
        "captures": captures,
    }
    if sealed:
        record[seal.MAC_FIELD] = seal.sign(record, seal.ensure_key(DesignFiles(root or folder.parents[1])))
    (folder / EVIDENCE_FILE).write_text(json.dumps(record))
    return folder


@contextlib.asynccontextmanager
async def design_client(root: Path, era: str, *, cwd: Path | None = None, env: dict[str, str] | None = None) -> Any:
    """The design host for ``root`` in this process, spoken to by the official MCP client in ``era``: the host
    `bee design mcp` builds, over the SDK's in-memory streams (see :func:`tests.conftest.core_client`). ``cwd`` is
    ignored: an in-process host has no working directory of its own, and the root is absolute."""
    from mcp import Client

    from bee_design.context import DesignContext
    from bee_design.host import build_host
    from tests.conftest import environment

    with environment(env):
        host = build_host(DesignContext.open(root))
        async with Client(host.build_server(), mode=era, read_timeout_seconds=60) as client:
            yield client


@contextlib.asynccontextmanager
async def design_process(root: Path, era: str, *, cwd: Path | None = None, env: dict[str, str] | None = None) -> Any:
    """A real `bee design mcp --stdio --root ROOT` subprocess (cold, or warm under host_mode), spoken to by the
    official MCP client in ``era``."""
    from tests.conftest import stdio_host

    async with stdio_host(["design", "mcp", "--stdio", "--root", str(root)], cwd or root, era, env) as client:
        yield client
