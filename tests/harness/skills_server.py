"""A third-party MCP skills server (SEP-2640) that misbehaves on request, for what the Bee tracker never does.

The tracker serves its skill correctly, so the bridge's refusals — a body that does not match its manifest
digest, frontmatter that differs from the listing, a skill without a manifest, a server that does not declare the
extension — are provoked against this server instead. It is a real HTTP server (uvicorn through the hostkit edge,
the SDK's Streamable HTTP), run as a subprocess by :class:`SkillsServer`; nothing in it is Bee's own host.

usage: python -m tests.harness.skills_server PORT SPEC_JSON_FILE

The spec: ``{"declare": true, "pageSize": 0, "skills": [{"path": "git-workflow", "body": "---\\nname: …",
"frontmatter": {...}?, "digest": "sha256:…"?, "manifest": false?, "extra": {"uri": "body"}?}]}``. ``frontmatter``
overrides what the listing says (default: parsed from the body); ``digest`` overrides the SKILL.md digest;
``manifest: false`` omits ``resources``; ``pageSize`` > 0 paginates skills/list.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.harness.postgres import free_port

EXTENSION_ID = "io.modelcontextprotocol/skills"


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _entries(spec: dict[str, Any]) -> list[dict[str, Any]]:
    from bee_core.skills.frontmatter import block, load

    entries = []
    for skill in spec["skills"]:
        uri = f"skill://{skill['path']}/SKILL.md"
        files = {uri: skill["body"], **skill.get("extra", {})}
        entry: dict[str, Any] = {"uri": uri, "frontmatter": skill.get("frontmatter") or load(block(skill["body"]))}
        if skill.get("manifest", True):
            entry["resources"] = [{"uri": name, "digest": _digest(text)} for name, text in files.items()]
            if "digest" in skill:
                entry["resources"][0]["digest"] = skill["digest"]
        entries.append({"entry": entry, "files": files})
    return entries


def main() -> None:
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    from bee_hostkit import Host
    from bee_hostkit.http.app import mcp_http_app
    from bee_hostkit.http.limits import EdgeLimits
    from bee_hostkit.http.serve import serve_http

    port, spec = int(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
    entries = _entries(spec)
    page_size = spec.get("pageSize") or len(entries) or 1
    server = Host("skills-server", [], {}).build_server()

    class GetParams(types.RequestParams):
        uri: str

    async def list_skills(ctx: Any, params: types.PaginatedRequestParams) -> dict[str, Any]:
        start = int(params.cursor or 0)
        page: dict[str, Any] = {"skills": [e["entry"] for e in entries[start : start + page_size]]}
        if start + page_size < len(entries):
            page["nextCursor"] = str(start + page_size)
        return page

    async def get_skill(ctx: Any, params: GetParams) -> dict[str, Any]:
        for e in entries:
            if e["entry"]["uri"] == params.uri:
                return {"skill": e["entry"]}
        raise MCPError(code=types.INVALID_PARAMS, message=f"no skill {params.uri}")

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        for e in entries:
            if str(params.uri) in e["files"]:
                text = e["files"][str(params.uri)]
                return types.ReadResourceResult(contents=[types.TextResourceContents(uri=str(params.uri), text=text)])
        raise MCPError(code=types.INVALID_PARAMS, message=f"no resource {params.uri}")

    if spec.get("declare", True):
        server.extensions[EXTENSION_ID] = {}
    server.add_request_handler("skills/list", types.PaginatedRequestParams, list_skills)
    server.add_request_handler("skills/get", GetParams, get_skill)
    server.add_request_handler("resources/read", types.ReadResourceRequestParams, read_resource)
    app = mcp_http_app(lambda: server)
    serve_http(app, host="127.0.0.1", port=port, limits=EdgeLimits(max_in_flight=10), log_level="warning")


class SkillsServer:
    """The server above as a subprocess on 127.0.0.1 with ``spec``; use as a context manager."""

    def __init__(self, spec: dict[str, Any], workdir: Path) -> None:
        self.port = free_port()
        self.spec_file = workdir / f"skills-server-{self.port}.json"
        self.spec_file.write_text(json.dumps(spec))
        self.log = workdir / f"skills-server-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def __enter__(self) -> SkillsServer:
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.harness.skills_server", str(self.port), str(self.spec_file)],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=Path(__file__).resolve().parents[2],
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"skills server exited:\n{self.log.read_text()}")
            try:
                httpx.post(self.url, content=b"{}", timeout=1)
                return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"skills server did not start:\n{self.log.read_text()}")

    def __exit__(self, *_: object) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)


if __name__ == "__main__":
    main()
