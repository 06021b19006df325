"""An MCP server that serves the Skills extension (SEP-2640, ``io.modelcontextprotocol/skills``) as a provider.

It is reached with the official MCP client over Streamable HTTP, with ``Authorization: Bearer <token>`` when the
provider names a token source; the token is read from its environment variable or file on every call and never
stored. ``skills/list`` (every page) gives the skills — uri, the frontmatter verbatim, and the manifest of every
file with its sha256 digest and size — without reading a body. Loading a skill asks ``skills/get`` for its current
entry, reads the SKILL.md with ``resources/read``, and serves it only when its bytes have the manifest's size and
digest and its frontmatter matches the entry's field for field (``hash_mismatch`` otherwise; nothing is served).
Only ``skill://<skill-path>/SKILL.md`` skills with a manifest are served: a skill without digests cannot be
verified.

What a provider sends is bounded before it is used: every answer is read under the byte cap of
:mod:`bee_core.remote` as it arrives; a manifest holds at most :data:`MAX_MANIFEST_FILES` files (the Skills
extension's own per-skill limit); a SKILL.md whose manifest size is over the body limit is never read, and a base64
body is measured before it is decoded; a listing stops after :data:`MAX_PAGES` pages or :data:`MAX_SKILLS` entries.

The session is :func:`bee_core.remote.session`: every exchange with the server is bounded by what
:meth:`McpProvider.open` is given, and transport and HTTP failures are mapped there (an unreachable or silent server
is ``unavailable``, retryable, naming the provider; an answer over the cap ``result_too_large``). What is the Skills
extension's own is read here: a server that does not declare the extension, or does not serve its methods, or
answers something that is not MCP, is ``unsupported``.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import mcp_types
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bee_contracts import BeeError, ErrorCode
from bee_contracts.limits import SKILL_BODY_MAX_BYTES
from bee_core import remote
from bee_core.skills import frontmatter
from bee_core.skills.config import McpConfig
from bee_core.skills.model import Listing, Loaded, Skill, SkillSource, text_of, too_large
from bee_hostkit import Deadline

EXTENSION_ID = "io.modelcontextprotocol/skills"

#: Pages of skills/list read, and entries taken (skills and those Bee cannot serve), before the listing stops (and
#: says so).
MAX_PAGES = 50
MAX_SKILLS = 1000
#: Files one skill's manifest may list: the Skills extension's limit of resources per skill (SEP-2640), which
#: every host must support and servers should not pass.
MAX_MANIFEST_FILES = 512

_SKILL_URI = re.compile(r"skill://(?P<path>[^?#]+)/SKILL\.md")
#: The most of a provider's own text (a URI, a digest) echoed in a message.
_ECHO = 200
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


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
            shown = uri[:_ECHO] if isinstance(uri, str) else uri
            raise self._unusable(f"the skill {shown!r}", "whose URI is not skill://<skill-path>/SKILL.md")
        assert isinstance(raw, dict)
        skill_path = found["path"]
        path = f"{self.name}/{skill_path}"
        frontmatter.check_skill_path(path, skill_path)
        about = frontmatter.read(path, raw.get("frontmatter"), skill_path)
        resources = raw.get("resources")
        if not isinstance(resources, list):
            raise self._unusable(path, "without a manifest of digests; Bee serves only skills it can verify")
        if len(resources) > MAX_MANIFEST_FILES:
            raise self._unusable(
                path,
                f"with a manifest of {len(resources)} files, over the Skills extension's limit of "
                f"{MAX_MANIFEST_FILES} per skill",
            )
        manifest: dict[str, str] = {}
        size: int | None = None
        for resource in resources:
            if not isinstance(resource, dict) or not isinstance(resource.get("uri"), str):
                raise self._unusable(path, "with a manifest entry that has no uri")
            digest = resource.get("digest")
            if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
                raise self._unusable(path, f"with the digest {str(digest)[:80]!r}, not sha256:<64 hex digits>")
            stated = resource.get("size")
            # The extension requires a size; a server that leaves it out is still verified by its digest.
            if stated is not None and (not isinstance(stated, int) or isinstance(stated, bool) or stated < 0):
                raise self._unusable(path, f"with the size {str(stated)[:40]!r}, not a number of bytes")
            manifest[resource["uri"]] = digest
            if resource["uri"] == uri:
                size = stated
        if uri not in manifest:
            raise self._unusable(path, "with a manifest that does not list its SKILL.md")
        if size is not None and size > SKILL_BODY_MAX_BYTES:
            raise too_large(path, size)  # known from the manifest: the body is never read
        return Skill(self.name, skill_path, about, uri, manifest, size)

    async def list(self) -> Listing:
        listing = Listing()
        cursor: str | None = None
        taken = 0
        for _ in range(MAX_PAGES):
            page = await self._request("skills/list", {"cursor": cursor} if cursor else {}, _Page)
            # Entries Bee cannot serve count too: each becomes a message, and pages of junk must not become
            # millions of them.
            room = MAX_SKILLS - taken
            for raw in page.skills[:room]:
                try:
                    listing.skills.append(self._entry(raw))
                except BeeError as exc:
                    where = raw.get("uri") if isinstance(raw, dict) else None
                    listing.unreadable.append((str((exc.details or {}).get("path") or where)[:_ECHO], exc.message))
            taken += min(room, len(page.skills))
            cursor = page.next_cursor
            if len(page.skills) > room or (cursor and taken >= MAX_SKILLS):
                break
            if not cursor:
                return listing
        listing.unreadable.append(
            (f"{self.name}/", f"the listing stopped after {MAX_PAGES} pages or {MAX_SKILLS} entries")
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
        if skill.size is not None and len(data) != skill.size:
            raise BeeError(
                ErrorCode.HASH_MISMATCH,
                f"skill {path}: the SKILL.md provider {self.name!r} served is {len(data)} bytes, not the "
                f"{skill.size} its manifest gives; nothing was served. If the skill changed meanwhile, calling "
                "again reads the new version",
                details={"path": path, "expectedBytes": skill.size, "actualBytes": len(data)},
            )
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
                # Measured before decoding: base64 carries 3 bytes in every 4 characters.
                decoded = len(content.blob) // 4 * 3 - content.blob[-2:].count("=")
                if decoded > SKILL_BODY_MAX_BYTES:
                    raise too_large(skill.path, decoded)
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
        name = f"skill provider {self.name!r} ({self.url})"
        details = {"provider": self.name}
        mint = "for a Bee tracker, `bee tracker token --actor YOU` mints one"
        self.token_source: remote.TokenSource | None = None
        if config.token_env:
            remedy = f"set it in the environment the editor starts `bee mcp serve` with ({mint})"
            self.token_source = remote.TokenSource(
                env=config.token_env, owner=name, whose="its", remedy=remedy, details=details
            )
        elif config.token_file:
            remedy = f"write the token there ({mint})"
            self.token_source = remote.TokenSource(
                file=Path(config.token_file), owner=name, whose="its", remedy=remedy, details=details
            )
        self.server = remote.Server(
            self.url,
            name,
            details=details,
            token_from=self.token_source.where if self.token_source else None,
            refusal_remedy=mint,
        )

    def where(self) -> str:
        return self.url

    @asynccontextmanager
    async def open(self, within: Deadline | float) -> AsyncIterator[SkillSource]:
        """The provider's skills, over a session bounded by ``within`` (see :class:`bee_core.remote.Exchange`).

        Raises:
            BeeError: ``unauthorized`` when its token source holds no usable token (read now, never stored);
                ``unsupported`` when the server does not declare the Skills extension; every failure of the
                session, mapped by :func:`bee_core.remote.session` and :meth:`_answer`.
        """
        token = self.token_source.read() if self.token_source else None
        async with remote.session(self.server, token, within=within, mode="auto", answers=self._answer) as client:
            if EXTENSION_ID not in (client.server_capabilities.extensions or {}):
                raise self.server.error(
                    ErrorCode.UNSUPPORTED,
                    f"does not declare the Skills extension ({EXTENSION_ID}); it serves no skills",
                )
            yield McpSource(self.name, client)

    def _answer(self, leaf: Exception) -> BeeError | None:
        """An answer that is not MCP, or a method of the Skills extension the server does not serve: ``unsupported``
        (retrying cannot help)."""
        if isinstance(leaf, ValidationError):
            return self.server.error(ErrorCode.UNSUPPORTED, "answered with something that is not MCP")
        if isinstance(leaf, MCPError) and leaf.error.code == mcp_types.METHOD_NOT_FOUND:
            return self.server.error(ErrorCode.UNSUPPORTED, "does not serve the Skills extension's methods")
        return None
