"""The user docs link only files in this repository, and only anchors those files have.

Every Markdown link and image in README.md, the packages' READMEs and docs/**/*.md is parsed with a CommonMark
parser (so code spans and code blocks, where URLs are examples, are not links) and must:

- not leave the repository: no scheme (``http:``, ``https:``, ``mailto:`` …) and no path outside the checkout;
- name a file or folder that exists (the path without its ``#anchor``);
- when it has an ``#anchor`` into a Markdown file, name a heading of that file, spelled as GitHub spells anchors.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    [ROOT / "README.md", *ROOT.glob("packages/*/README.md"), *(ROOT / "docs").rglob("*.md")],
    key=lambda page: page.relative_to(ROOT).as_posix(),
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")
_HTML_TARGET = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
#: What GitHub drops from a heading's text to make its anchor (it keeps letters, digits, _, - and spaces).
_NOT_IN_ANCHOR = re.compile(r"[^\w\- ]")


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


def links(page: Path) -> Iterator[tuple[int, str]]:
    """(line number, target) of every link, image and raw-HTML href/src in ``page``."""
    text = page.read_text(encoding="utf-8")
    lines = text.splitlines()

    def located(block: Token, target: str) -> tuple[int, str]:
        start, end = block.map or (0, len(lines))  # the block's lines; the target is on one of them
        return next((n + 1 for n in range(start, end) if target in lines[n]), start + 1), target

    for block in _parser().parse(text):
        targets: list[str] = []
        if block.type == "html_block":
            targets += _HTML_TARGET.findall(block.content)
        for token in block.children or ():
            if token.type == "link_open":
                targets.append(str(token.attrs["href"]))
            elif token.type == "image":
                targets.append(str(token.attrs["src"]))
            elif token.type == "html_inline":
                targets += _HTML_TARGET.findall(token.content)
        yield from (located(block, target) for target in targets)


def _text(inline: Token) -> str:
    return "".join(child.content for child in inline.children or () if child.type in ("text", "code_inline"))


@cache
def anchors(page: Path) -> frozenset[str]:
    """The anchors GitHub gives the headings of ``page``: lower case, punctuation dropped, spaces to hyphens, and
    ``-1``, ``-2`` … after repeats."""
    tokens = _parser().parse(page.read_text(encoding="utf-8"))
    found: set[str] = set()
    seen: dict[str, int] = {}
    for opening, inline in itertools.pairwise(tokens):
        if opening.type != "heading_open":
            continue
        slug = _NOT_IN_ANCHOR.sub("", _text(inline).strip().lower()).replace(" ", "-")
        repeats = seen.get(slug, 0)
        seen[slug] = repeats + 1
        found.add(f"{slug}-{repeats}" if repeats else slug)
    return frozenset(found)


def broken(page: Path, target: str) -> str | None:
    """What is wrong with a link from ``page`` to ``target``, or None."""
    if _SCHEME.match(target):
        return "links outside the repository (the docs link only files in it)"
    path, _, anchor = target.partition("#")
    path = unquote(path.partition("?")[0])
    if not path:
        resolved = page
    else:
        resolved = (ROOT / path.lstrip("/")) if path.startswith("/") else (page.parent / path)
        resolved = resolved.resolve()
        if not resolved.is_relative_to(ROOT):
            return "points outside the repository"
        if not resolved.exists():
            return f"names {resolved.relative_to(ROOT).as_posix()}, which does not exist"
    if anchor and resolved.suffix == ".md" and unquote(anchor) not in anchors(resolved):
        return f"names #{anchor}, which is no heading of {resolved.relative_to(ROOT).as_posix()}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=[page.relative_to(ROOT).as_posix() for page in PAGES])
def test_every_link_names_a_file_and_heading_in_the_repository(page: Path) -> None:
    problems = [
        f"{page.relative_to(ROOT).as_posix()}:{line}: ({target}) {problem}"
        for line, target in links(page)
        if (problem := broken(page, target)) is not None
    ]
    assert problems == []


def test_the_checker_catches_what_it_should(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker itself: each kind of bad link is caught, code spans are not links, good links pass."""
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## `bee_x` — A tool (lossy)\n\n## Twice\n\n## Twice\n")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Title\n\n"
        "[web](https://example.com) [mail](mailto:a@b.c) [proto](//host/x)\n"
        "[gone](missing.md) [escape](../../etc/passwd) [bad anchor](other.md#nope)\n"
        "![img](missing.png) <a href='http://example.org'>x</a>\n\n"
        "`[not a link](https://example.com)` and https://example.com in text\n\n"
        "```\n[also not](https://example.com)\n```\n\n"
        "[ok](other.md) [ok](other.md#bee_x--a-tool-lossy) [ok](other.md#twice-1) [ok](#title) [ok](/docs)\n"
    )
    found = {target: broken(page, target) for _, target in links(page)}
    assert {target: line for line, target in links(page)}["missing.md"] == 4
    assert set(found) == {
        "https://example.com",
        "mailto:a@b.c",
        "//host/x",
        "missing.md",
        "../../etc/passwd",
        "other.md#nope",
        "missing.png",
        "http://example.org",
        "other.md",
        "other.md#bee_x--a-tool-lossy",
        "other.md#twice-1",
        "#title",
        "/docs",
    }
    assert {target for target, problem in found.items() if problem is None} == {
        "other.md",
        "other.md#bee_x--a-tool-lossy",
        "other.md#twice-1",
        "#title",
        "/docs",
    }
    assert "outside the repository" in str(found["https://example.com"])
    assert "outside the repository" in str(found["../../etc/passwd"])
    assert found["missing.md"] == "names docs/missing.md, which does not exist"
    assert found["other.md#nope"] == "names #nope, which is no heading of docs/other.md"
