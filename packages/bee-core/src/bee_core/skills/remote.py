"""An MCP server that serves the Skills extension (SEP-2640, ``io.modelcontextprotocol/skills``) as a provider.

It is reached with the official MCP client over Streamable HTTP, with ``Authorization: Bearer <token>`` when the
provider names a token source; the token is read from its environment variable or file on every call and never
stored. ``skills/list`` (every page) gives the skills — uri, the frontmatter verbatim, and the manifest of every
file with its sha256 digest — without reading a body. Loading a skill asks ``skills/get`` for its current entry,
reads the SKILL.md with ``resources/read``, and serves it only when its bytes match the manifest digest and its
frontmatter matches the entry's field for field (``hash_mismatch`` otherwise; nothing is served). Only
``skill://<skill-path>/SKILL.md`` skills with a manifest are served: a skill without digests cannot be verified.

Every exchange with the server is bounded by the timeout :meth:`McpProvider.open` is given; an unreachable or
silent server is ``unavailable`` (retryable), naming the provider. The mapping from transport and protocol failures
to Bee's codes is :meth:`McpProvider._mapped`, the one place it happens.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
import mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bee_contracts import BeeError, ErrorCode
from bee_contracts.limits import SKILL_BODY_MAX_BYTES
from bee_core.skills import frontmatter
from bee_core.skills.config import McpConfig
from bee_core.skills.model import Listing, Loaded, Skill, SkillSource, text_of, too_large

EXTENSION_ID = "io.modelcontextprotocol/skills"

#: Pages of skills/list read, and skills kept, before the listing stops (and says so).
MAX_PAGES = 50
MAX_SKILLS = 1000
#: A token file larger than this is not a token.
MAX_TOKEN_FILE_BYTES = 64 * 1024

_SKILL_URI = re.compile(r"skill://(?P<path>[^?#]+)/SKILL\.md")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_TOKEN = re.compile(r"[!-~]+")


class _Page(BaseModel):
    """A skills/list result; entries stay raw so that one bad entry is reported, not fatal."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    skills: list[Any]
    next_cursor: str | None = Field(default=None, alias="nextCursor")


AnswerT = TypeVar("AnswerT", bound=BaseModel)


class _Got(BaseModel):
    """A skills/get result."""

    model_config = ConfigDict(extra="allow")
    skill: Any


class McpSource:
    """One open session with a skills server."""

    def __init__(self, name: str, client: Client) -> None:
        self.name = name
        self.client = client

    async def _request(self, method: str, params: dict[str, Any], answer: type[AnswerT]) -> AnswerT:
        request = mcp_types.Request[dict[str, Any], str](method=method, params=params)
        return await self.client.session.send_request(request, answer)

    def _unusable(self, what: str, problem: str) -> BeeError:
        """``what`` (a skill path, or a description of something else) is served in a form Bee cannot use."""
        details = {"provider": self.name, **({"path": what} if what.startswith(f"{self.name}/") else {})}
        return BeeError(ErrorCode.UNSUPPORTED, f"skill provider {self.name!r} serves {what} {problem}", details=details)

    def _entry(self, raw: Any) -> Skill:
        """A skill from a listing entry (uri, frontmatter, resources), or the error saying why Bee cannot serve it."""
        uri = raw.get("uri") if isinstance(raw, dict) else None
        found = _SKILL_URI.fullmatch(uri) if isinstance(uri, str) else None
        if found is None:
            raise self._unusable(f"the skill {uri!r}", "whose URI is not skill://<skill-path>/SKILL.md")
        assert isinstance(raw, dict)
        skill_path = found["path"]
        path = f"{self.name}/{skill_path}"
        frontmatter.check_skill_path(path, skill_path)
        about = frontmatter.read(path, raw.get("frontmatter"), skill_path)
        resources = raw.get("resources")
        if not isinstance(resources, list):
            raise self._unusable(path, "without a manifest of digests; Bee serves only skills it can verify")
        manifest: dict[str, str] = {}
        for resource in resources:
            if not isinstance(resource, dict) or not isinstance(resource.get("uri"), str):
                raise self._unusable(path, "with a manifest entry that has no uri")
            digest = resource.get("digest")
            if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
                raise self._unusable(path, f"with the digest {digest!r}, not sha256:<64 hex digits>")
            manifest[resource["uri"]] = digest
        if uri not in manifest:
            raise self._unusable(path, "with a manifest that does not list its SKILL.md")
        return Skill(self.name, skill_path, about, uri, manifest)

    async def list(self) -> Listing:
        listing = Listing()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self._request("skills/list", {"cursor": cursor} if cursor else {}, _Page)
            for raw in page.skills:
                try:
                    listing.skills.append(self._entry(raw))
                except BeeError as exc:
                    where = raw.get("uri") if isinstance(raw, dict) else None
                    listing.unreadable.append((str((exc.details or {}).get("path") or where), exc.message))
            cursor = page.next_cursor
            if not cursor:
                return listing
            if len(listing.skills) >= MAX_SKILLS:
                break
        listing.unreadable.append(
            (f"{self.name}/", f"the listing stopped after {MAX_PAGES} pages or {MAX_SKILLS} skills")
        )
        return listing

    async def load(self, skill_path: str) -> Loaded:
        path = f"{self.name}/{skill_path}"
        frontmatter.check_skill_path(path, skill_path)
        uri = f"skill://{skill_path}/SKILL.md"
        try:
            answer = await self._request("skills/get", {"uri": uri}, _Got)
        except MCPError as exc:
            if exc.error.code != mcp_types.INVALID_PARAMS:
                raise
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"no skill {path}: provider {self.name!r} does not serve {uri}; bee_skill_search lists the skills "
                "there are",
                details={"path": path},
            ) from None
        skill = self._entry(answer.skill)
        if skill.skill_path != skill_path:
            raise self._unusable(path, f"under another URI ({skill.uri}) when asked for {uri}")
        data = await self._read(skill)
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if digest != skill.manifest[uri]:
            raise BeeError(
                ErrorCode.HASH_MISMATCH,
                f"skill {path}: the SKILL.md provider {self.name!r} served does not match its manifest digest "
                f"({digest}, manifest {skill.manifest[uri]}); nothing was served. If the skill changed meanwhile, "
                "calling again reads the new version",
                details={"path": path, "expected": skill.manifest[uri], "actual": digest},
            )
        served = frontmatter.parse(path, text_of(path, data), skill_path)
        if served.fields != skill.about.fields:
            raise BeeError(
                ErrorCode.HASH_MISMATCH,
                f"skill {path}: the frontmatter of the SKILL.md provider {self.name!r} served differs from the "
                "frontmatter its listing gives; nothing was served",
                details={"path": path},
            )
        return Loaded(skill, data)

    async def _read(self, skill: Skill) -> bytes:
        result = await self.client.read_resource(skill.uri)
        for content in result.contents:
            if content.uri != skill.uri:
                continue
            if isinstance(content, mcp_types.TextResourceContents):
                data = content.text.encode("utf-8")
            else:
                data = base64.b64decode(content.blob, validate=True)
            if len(data) > SKILL_BODY_MAX_BYTES:
                raise too_large(skill.path, len(data))
            return data
        raise self._unusable(skill.path, f"whose resources/read answer holds no {skill.uri}")


class McpProvider:
    """A configured skills server."""

    def __init__(self, config: McpConfig) -> None:
        self.name = config.name
        self.url = config.url
        self.token_env = config.token_env
        self.token_file = config.token_file

    def where(self) -> str:
        return self.url

    def _failed(self, code: ErrorCode, message: str, *, retryable: bool | None = None) -> BeeError:
        return BeeError(
            code,
            f"skill provider {self.name!r} ({self.url}) {message}",
            details={"provider": self.name},
            retryable=retryable,
        )

    def token(self) -> str | None:
        """The token from the provider's variable or file, read now (None when it names no token source).

        Raises:
            BeeError: ``unauthorized`` when the source is unset, unreadable or holds no token.
        """
        if self.token_env:
            value = os.environ.get(self.token_env, "").strip()
            source = f"${self.token_env}"
            if not value:
                raise self._failed(
                    ErrorCode.UNAUTHORIZED,
                    f"takes its token from {source}, which is not set where the host runs; set it in the "
                    "environment the editor starts `bee mcp serve` with",
                )
        elif self.token_file:
            source = self.token_file
            try:
                with Path(self.token_file).open("rb") as stream:
                    value = stream.read(MAX_TOKEN_FILE_BYTES + 1).decode("utf-8", "replace").strip()
            except OSError as exc:
                raise self._failed(
                    ErrorCode.UNAUTHORIZED, f"cannot read its token file {source} ({exc.strerror})"
                ) from None
            if not value or len(value) > MAX_TOKEN_FILE_BYTES:
                raise self._failed(ErrorCode.UNAUTHORIZED, f"finds no token in {source}")
        else:
            return None
        if not _TOKEN.fullmatch(value):
            raise self._failed(ErrorCode.UNAUTHORIZED, f"finds a token in {source} that is not one line of ASCII")
        return value

    @asynccontextmanager
    async def open(self, timeout: float) -> AsyncIterator[SkillSource]:
        token = self.token()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        statuses: list[int] = []

        async def note_status(response: httpx2.Response) -> None:
            if response.status_code >= 400:
                statuses.append(response.status_code)

        try:
            with anyio.fail_after(timeout):
                async with (
                    httpx2.AsyncClient(
                        headers=headers,
                        timeout=httpx2.Timeout(timeout, connect=min(timeout, 5.0)),
                        event_hooks={"response": [note_status]},
                    ) as http,
                    Client(
                        streamable_http_client(self.url, http_client=http),
                        mode="auto",
                        cache=None,
                        read_timeout_seconds=timeout,
                    ) as client,
                ):
                    if EXTENSION_ID not in (client.server_capabilities.extensions or {}):
                        raise self._failed(
                            ErrorCode.UNSUPPORTED,
                            f"does not declare the Skills extension ({EXTENSION_ID}); it serves no skills",
                        )
                    yield McpSource(self.name, client)
        except TimeoutError:
            raise self._failed(
                ErrorCode.UNAVAILABLE, f"did not answer within {timeout:g} seconds; retry later"
            ) from None
        except Exception as exc:
            raise self._mapped(exc, statuses) from None

    def _mapped(self, exc: Exception, statuses: list[int]) -> BeeError:
        """The one mapping of what the client raised (often inside exception groups) to a Bee error."""
        leaves = _leaves(exc)
        for leaf in leaves:
            if isinstance(leaf, BeeError):
                return leaf
        if 401 in statuses:
            source = f"${self.token_env}" if self.token_env else self.token_file or "no token"
            return self._failed(
                ErrorCode.UNAUTHORIZED,
                f"refused the token from {source} (HTTP 401); for a Bee tracker mint one with `bee tracker token`",
            )
        if 403 in statuses:
            return self._failed(ErrorCode.FORBIDDEN, "refused access to its skills (HTTP 403)")
        for leaf in leaves:
            if isinstance(leaf, httpx2.TimeoutException | TimeoutError):
                return self._failed(ErrorCode.UNAVAILABLE, "did not answer in time; retry later")
            if isinstance(leaf, httpx2.TransportError | OSError):
                return self._failed(
                    ErrorCode.UNAVAILABLE, f"cannot be reached ({type(leaf).__name__}: {leaf}); retry later"
                )
            if isinstance(leaf, ValidationError):
                return self._failed(ErrorCode.UNSUPPORTED, "answered with something that is not MCP")
        if statuses:
            status = statuses[-1]
            if status == 404:
                return self._failed(ErrorCode.UNAVAILABLE, "has no MCP endpoint there (HTTP 404); check the URL")
            return self._failed(ErrorCode.UNAVAILABLE, f"failed with HTTP {status}; retry later")
        for leaf in leaves:
            if isinstance(leaf, MCPError):
                if leaf.error.code == mcp_types.METHOD_NOT_FOUND:
                    return self._failed(ErrorCode.UNSUPPORTED, "does not serve the Skills extension's methods")
                return self._failed(ErrorCode.UNAVAILABLE, f"answered with an error: {leaf.error.message}")
        raise exc


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside ``exc``, exception groups (which the client's task groups raise) flattened."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]
