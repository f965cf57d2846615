"""Headless Chromium for tests, and a tiny DOM reader for the HTML it (or the renderer) returns.

The Chromium driver lives in scripts/status_screenshot.py (`make screenshot` uses it too).
The DOM reader is stdlib `html.parser` building a plain tree, enough to ask "which text is in
which element" without a browser or a third-party parser.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest

from scripts.status_screenshot import BrowserError, dump_dom, find_chromium, is_png, screenshot

__all__ = ["BrowserError", "Element", "dump_dom", "is_png", "needs_chromium", "parse", "screenshot"]

VOID_ELEMENTS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
HIDDEN_TEXT = {"head", "style", "script", "template"}
# Elements that start on their own line when rendered; inline ones need real spaces in the markup.
BLOCK_ELEMENTS = {
    *("address", "article", "aside", "blockquote", "details", "dd", "div", "dl", "dt", "fieldset", "figure"),
    *("footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p"),
    *("section", "summary", "table", "td", "th", "tr", "ul", "br", "html", "body"),
}


# Outside CI a machine without Chromium skips the browser tests; in CI (CI set) they run and a
# missing binary fails them, the same policy as the Alertmanager test. `make test` installs it.
needs_chromium = pytest.mark.skipif(
    find_chromium() is None and not os.environ.get("CI"),
    reason="chromium is not installed (apt-get install chromium; `make test` installs it); required in CI",
)


@dataclass
class Element:
    tag: str
    attrs: dict[str, str | None] = field(default_factory=dict)
    children: list[Element | str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        """Roughly the browser's innerText, whitespace-normalized: block elements are separated,
        inline ones run together as written; <head>, <style> and aria-hidden subtrees are skipped."""
        parts: list[str] = []

        def walk(node: Element) -> None:
            if node.tag in HIDDEN_TEXT or node.attrs.get("aria-hidden") == "true":
                return
            block = " " if node.tag in BLOCK_ELEMENTS else ""
            parts.append(block)
            for child in node.children:
                if isinstance(child, str):
                    parts.append(child)
                else:
                    walk(child)
            parts.append(block)

        walk(self)
        return " ".join("".join(parts).split())

    def iter(self) -> list[Element]:
        found: list[Element] = []
        for child in self.children:
            if isinstance(child, Element):
                found.append(child)
                found.extend(child.iter())
        return found

    def find_all(self, tag: str | None = None, *, cls: str | None = None, **attrs: str) -> list[Element]:
        return [
            element
            for element in self.iter()
            if (tag is None or element.tag == tag)
            and (cls is None or cls in element.classes)
            and all(element.attrs.get(name.replace("_", "-")) == value for name, value in attrs.items())
        ]

    def find(self, tag: str | None = None, *, cls: str | None = None, **attrs: str) -> Element:
        found = self.find_all(tag, cls=cls, **attrs)
        if not found:
            raise AssertionError(f"no <{tag or '*'}> with class={cls!r} {attrs} in:\n{self.text()[:2000]}")
        return found[0]


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document")
        self.open: list[Element] = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attrs))
        self.open[-1].children.append(element)
        if tag not in VOID_ELEMENTS:
            self.open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.open[-1].children.append(Element(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        # Close up to the matching open element; a stray end tag is ignored, as browsers do.
        for depth in range(len(self.open) - 1, 0, -1):
            if self.open[depth].tag == tag:
                del self.open[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.open[-1].children.append(data)


def parse(markup: str) -> Element:
    builder = _TreeBuilder()
    builder.feed(markup)
    builder.close()
    return builder.root
