"""What a design file loads: references found in HTML and CSS, and how they resolve inside the bundle."""

import random
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bee_design.bundle.references import css_references, html_references, resolve


def test_html_resource_references_are_found_and_navigation_is_not() -> None:
    html = """<html><head><link rel="stylesheet" href="a.css"><style>@import "b.css"; p{background:url(bg.png)}</style>
    <script src="app.js"></script></head><body><a href="other.html">next</a>
    <img src="i.png" srcset="i@2x.png 2x, i@3x.png 3x"><video poster="p.jpg"><source src="v.mp4"></video>
    <svg><use href="icons.svg#cart"></use></svg><div style="background-image:url('d.png')"></div>
    <object data="o.svg"></object></body></html>"""
    found = [(r.ref, r.via) for r in html_references(html)]
    assert found == [
        ("a.css", "href"),
        ("b.css", "@import"),
        ("bg.png", "url()"),
        ("app.js", "src"),
        ("i.png", "src"),
        ("i@2x.png", "srcset"),
        ("i@3x.png", "srcset"),
        ("p.jpg", "poster"),
        ("v.mp4", "src"),
        ("icons.svg#cart", "href"),
        ("d.png", "url()"),
        ("o.svg", "data"),
    ]


def test_css_imports_and_urls_are_found_outside_comments() -> None:
    css = """/* @import "old.css"; url(gone.png) */
    @import url("tokens.css"); @import 'print.css' print;
    @font-face { src: url(fonts/a.woff2) format("woff2"), url( "fonts/a.woff" ); }
    .x { background: url(data:image/png;base64,AAAA) }"""
    found = [(r.ref, r.via) for r in css_references(css)]
    assert found == [
        ("tokens.css", "@import"),
        ("print.css", "@import"),
        ("fonts/a.woff2", "url()"),
        ("fonts/a.woff", "url()"),
        ("data:image/png;base64,AAAA", "url()"),
    ]


def test_references_resolve_relative_to_the_file_and_the_bundle_root() -> None:
    files = {"index.html", "styles/main.css", "styles/tokens.css", "img/logo.png", "a b.png"}
    assert resolve("styles/main.css", "tokens.css", files) == ("resolved", "styles/tokens.css")
    assert resolve("styles/main.css", "../img/logo.png?v=2#x", files) == ("resolved", "img/logo.png")
    assert resolve("styles/main.css", "/img/logo.png", files) == ("resolved", "img/logo.png")
    assert resolve("index.html", "a%20b.png", files) == ("resolved", "a b.png")
    assert resolve("index.html", "img/gone.png", files) == ("missing", "img/gone.png")
    assert resolve("index.html", "../../etc/passwd", files) == ("missing", None)
    for external in ("https://cdn.example/x.css", "//cdn.example/x.css", "data:image/png;base64,AA", "#top"):
        assert resolve("index.html", external, files) == ("external", None)


def refs(text: str) -> list[tuple[str, str]]:
    return [(r.ref, r.via) for r in html_references(text)]


def test_html_is_tokenized_as_a_browser_does_for_what_it_loads() -> None:
    html = (
        '<script>var s = "<img src=in-script.png>";</script>'  # a script's text holds no tags
        "<!-- <img src=commented.png> --><!--><img src=after-abrupt-comment.png>"
        "<![CDATA[<img src=in-cdata.png>]]><?php <img src=in-pi.png> ?>"
        '<IMG SRC="upper.png" src="second-src-ignored.png" alt=">">'  # names lowercased, the first one wins
        "<img src=a&amp;b.png><img/src=slash.png><img src = spaced.png>"
        "<textarea><img src=in-textarea.png></TEXTAREA ><title><img src=in-title.png></title>"
        '<svg><style/><image href="after-empty-style.png"/></svg>'
        "<style>p { background: url(styled.png) }</STYLE><img src=after-style.png>"
        '<img src="the-document-ends-inside-this-tag.png"'  # dropped, as a browser drops it
    )
    assert refs(html) == [
        ("after-abrupt-comment.png", "src"),
        ("upper.png", "src"),
        ("a&b.png", "src"),
        ("slash.png", "src"),
        ("spaced.png", "src"),
        ("after-empty-style.png", "href"),
        ("styled.png", "url()"),
        ("after-style.png", "src"),
    ]


def test_a_raw_text_element_left_open_runs_to_the_end() -> None:
    assert refs('<img src=a.png><script>"<img src=b.png>"') == [("a.png", "src")]
    assert refs("<style>p { background: url(s.png) }") == [("s.png", "url()")]


def test_css_references_skip_strings_and_comments_and_keep_document_order() -> None:
    css = """a { background: url(first.png) }
    b::before { content: "url(in-a-string.png) /* not a comment"; }
    @import url(late.css); c { background: url( 'quoted.png' ) } /* url(in-a-comment.png) */
    d { background: url() } @import url( ); @import "x.css" screen; /* a comment left open url(no.png)"""
    assert [(r.ref, r.via) for r in css_references(css)] == [
        ("first.png", "url()"),
        ("late.css", "@import"),
        ("quoted.png", "url()"),
        ("x.css", "@import"),
    ]


# One MiB of each of these took minutes to hours before (html.parser rescans an unfinished tag at every '<'; the
# url() pattern rescanned to the end at every url( ). Linear now: each is a fraction of a second here, so the
# guard below, far above that and far below the old cost, fails only if the work is no longer linear in the size.
MIB = 1024 * 1024
ADVERSARIAL = {
    "url(": ("css", "url("),
    'url("': ("css", 'url("'),
    "url( and spaces": ("css", "url(" + " " * 1000),
    "/*": ("css", "/*"),
    "@import url(": ("css", "@import url("),
    "quotes": ("css", "'\""),
    "<a ": ("html", "<a "),
    "<img src=": ("html", "<img src="),
    "<!--": ("html", "<!--"),
    "<a b='": ("html", "<a b='"),
    "<": ("html", "<"),
    "<style>": ("html", "<style>"),
    "<p style='url(": ("html", "<p style='url("),
}


@pytest.mark.timeout(10)  # the give-up guard: one of these takes ~0.1-0.6 s on a loaded 2-core machine
@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_a_mebibyte_of_hostile_text_is_scanned_in_linear_time(name: str) -> None:
    kind, unit = ADVERSARIAL[name]
    hostile = unit * (MIB // len(unit))
    if kind == "css":
        found = css_references("a { background: url(real.png) }" + hostile)
    else:
        found = html_references('<img src="real.png">' + hostile)
    assert found[0].ref == "real.png"  # scanned, and still right before the hostile part


@pytest.mark.timeout(10)
def test_a_mebibyte_of_random_bytes_is_scanned_in_linear_time() -> None:
    text = random.Random(16).randbytes(MIB).decode("utf-8", errors="replace")
    assert isinstance(html_references(text), list) and isinstance(css_references(text), list)


class _Oracle(HTMLParser):
    """Python's own HTML parser, as an oracle for well-formed markup (where it agrees with browsers)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values: dict[str, str | None] = {}
        for name, value in attrs:
            values.setdefault(name, value)
        if tag == "img" and (src := values.get("src")):
            self.found.append((src, "src"))
        if tag == "link" and (href := values.get("href")):
            self.found.append((href, "href"))


_VALUE = st.text(st.characters(codec="utf-8", exclude_characters="\"'<>&\x00\r", exclude_categories=["Cs"]))
_TAG = st.tuples(
    st.sampled_from(["img", "link", "div", "a", "p"]),
    st.lists(st.tuples(st.sampled_from(["src", "href", "alt", "class", "SRC"]), _VALUE, st.sampled_from("\"'"))),
    st.text(st.characters(codec="utf-8", exclude_characters="<&\x00\r", exclude_categories=["Cs"])),
)


@settings(deadline=None)
@given(st.lists(_TAG, max_size=8))
def test_well_formed_markup_is_read_as_python_s_html_parser_reads_it(
    tags: list[tuple[str, list[tuple[str, str, str]], str]],
) -> None:
    html = "".join(
        f"<{name}" + "".join(f" {attr}={quote}{value}{quote}" for attr, value, quote in attrs) + f">{text}"
        for name, attrs, text in tags
    )
    oracle = _Oracle()
    oracle.feed(html)
    oracle.close()
    assert [(ref, via) for ref, via in refs(html) if via in ("src", "href")] == oracle.found


@settings(deadline=None)
@given(st.text())
def test_any_text_is_scanned_without_an_error(text: str) -> None:
    assert isinstance(html_references(text), list) and isinstance(css_references(text), list)
