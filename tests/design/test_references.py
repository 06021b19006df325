"""What a design file loads: references found in HTML and CSS, and how they resolve inside the bundle."""

from bee_design.bundle.references import css_references, html_references, resolve


def test_html_resource_references_are_found_and_navigation_is_not():
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


def test_css_imports_and_urls_are_found_outside_comments():
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


def test_references_resolve_relative_to_the_file_and_the_bundle_root():
    files = {"index.html", "styles/main.css", "styles/tokens.css", "img/logo.png", "a b.png"}
    assert resolve("styles/main.css", "tokens.css", files) == ("resolved", "styles/tokens.css")
    assert resolve("styles/main.css", "../img/logo.png?v=2#x", files) == ("resolved", "img/logo.png")
    assert resolve("styles/main.css", "/img/logo.png", files) == ("resolved", "img/logo.png")
    assert resolve("index.html", "a%20b.png", files) == ("resolved", "a b.png")
    assert resolve("index.html", "img/gone.png", files) == ("missing", "img/gone.png")
    assert resolve("index.html", "../../etc/passwd", files) == ("missing", None)
    for external in ("https://cdn.example/x.css", "//cdn.example/x.css", "data:image/png;base64,AA", "#top"):
        assert resolve("index.html", external, files) == ("external", None)
