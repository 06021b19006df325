"""Apps built after start-up: other routes answer meanwhile, early requests wait, a failed build is answered."""

import logging
import subprocess
import sys
import threading
from typing import NoReturn

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from bee_hostkit.http.deferred import Deferred, started

pytestmark = pytest.mark.anyio


async def health(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ok")


def app_with(part: Deferred) -> Starlette:
    return Starlette(routes=[Route("/health", health), Route("/part", part)], lifespan=lambda app: started([part]))


def client(app: Starlette) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


async def test_a_request_waits_for_the_build_while_the_other_routes_answer() -> None:
    release = threading.Event()

    def build() -> tuple[PlainTextResponse, None]:
        assert release.wait(timeout=60), "the test never let the build finish"
        return PlainTextResponse("built"), None

    part = Deferred("the slow part", build)
    app = app_with(part)
    answers = {}
    with anyio.fail_after(60):
        async with app.router.lifespan_context(app), client(app) as http, anyio.create_task_group() as group:

            async def early() -> None:
                answers["part"] = await http.get("/part")

            group.start_soon(early)
            assert (await http.get("/health")).text == "ok"
            await anyio.wait_all_tasks_blocked()
            assert "part" not in answers and not part.ready  # still waiting for its build
            release.set()
    assert answers["part"].status_code == 200 and answers["part"].text == "built"
    assert part.ready and part.failure is None


async def test_a_build_that_fails_is_logged_and_answered_503_with_its_reason(caplog: pytest.LogCaptureFixture) -> None:
    def build() -> NoReturn:
        raise ImportError("no module named 'kernel'")

    part = Deferred("the broken part", build)
    app = app_with(part)
    with anyio.fail_after(60), caplog.at_level(logging.ERROR, logger="bee.hostkit"):
        async with app.router.lifespan_context(app), client(app) as http:
            answer = await http.get("/part")
            assert (await http.get("/health")).text == "ok"  # the rest of the app keeps serving
    assert answer.status_code == 503
    assert answer.json() == {
        "error": "unavailable",
        "error_description": "the broken part could not be started (ImportError: no module named 'kernel')",
    }
    assert part.failure is not None and "the broken part could not be started" in caplog.text


async def test_the_app_stops_without_waiting_for_a_build_still_running() -> None:
    release = threading.Event()

    def build() -> tuple[PlainTextResponse, None]:
        release.wait(timeout=60)

        return PlainTextResponse("too late"), None

    part = Deferred("the endless part", build)
    app = app_with(part)
    try:
        with anyio.fail_after(30):
            async with app.router.lifespan_context(app), client(app) as http:
                assert (await http.get("/health")).text == "ok"
        assert not part.ready
    finally:
        release.set()


async def test_served_without_the_lifespan_that_builds_it_is_an_error_not_a_hang() -> None:
    part = Deferred("the unstarted part", lambda: (PlainTextResponse("never"), None))
    app = app_with(part)
    with anyio.fail_after(30), pytest.raises(RuntimeError, match="outside the lifespan"):
        async with client(app) as http:
            await http.get("/part")


def test_an_mcp_app_imports_the_sdk_only_when_it_builds_the_server() -> None:
    code = (
        "import sys; from bee_hostkit.http.app import mcp_http_app; "
        "app = mcp_http_app(lambda: None, hosts=('tracker.example',)); "
        "print(sorted(m for m in ('mcp', 'mcp_types', 'pydantic') if m in sys.modules))"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert completed.stdout.strip() == "[]", completed.stderr
