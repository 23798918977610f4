"""Links: finding them in inline Markdown, and the root-relative link convention.

Plans name project files with root-relative links, ``[docs/a.md](/docs/a.md)``: the
text is the path without the leading slash, the destination the same path with it.
The destination is the truth: link text is often mangled by Markdown emphasis
(``[src/__init__.py](/src/__init__.py)`` renders as *src/init.py*).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SIMPLE_LINK_RE = re.compile(r"\[([^\[\]\n]*)\]\(([^()\s]*)\)")
_NEEDS_ESCAPE_RE = re.compile(r"[\[\]\\`*_<>]")
_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True, slots=True)
class Link:
    """An inline link."""

    text: str
    """The link text, plain (emphasis markers may be gone; never trust it for a path)."""
    destination: str
    """The destination as written: a path with its percent-encoding undone
    (``/docs/my file.md``), a URL untouched (``https://x.example/a%2Fb``)."""


def find_links(inline: str) -> tuple[Link, ...]:
    """Every inline link in a piece of inline Markdown source, in order.

    Plain ``[text](destination)`` links are found with a regular expression; anything
    that could change their meaning (escapes, code spans, angle brackets, entities)
    sends the text through markdown-it-py's inline parser instead, without its link
    normalisation (which rewrites URLs: ``http://[::1]/`` would lose its brackets).
    """
    if "[" not in inline:
        return ()
    if not any(c in inline for c in "\\`<&"):
        found = _SIMPLE_LINK_RE.findall(inline)
        if len(found) == inline.count("["):
            return tuple(Link(text, unquote(dest)) for text, dest in found)
    return _parsed_links(inline)


def _parsed_links(inline: str) -> tuple[Link, ...]:
    from plankit.markdown.tree import _markdown_it

    links: list[Link] = []
    md = _markdown_it()
    setattr(md, "normalizeLink", _as_written)  # noqa: B010  # the destination as written
    tokens = md.parseInline(inline)
    children = tokens[0].children or [] if tokens else []
    depth = 0
    href = ""
    text: list[str] = []
    for child in children:
        if child.type == "link_open":
            depth += 1
            if depth == 1:
                href = str(child.attrGet("href") or "")
                text = []
        elif child.type == "link_close":
            depth -= 1
            if depth == 0:
                links.append(Link("".join(text), unquote(href)))
        elif depth and child.type in ("text", "code_inline"):
            text.append(child.content)
    return tuple(links)


def _as_written(destination: str) -> str:
    return destination


def unquote(destination: str) -> str:
    """Undo percent-encoding in a path destination (``my%20file.md`` → ``my file.md``);
    a URL is kept as written (decoding would change where it leads: ``%2F``, ``%25``)."""
    if "%" not in destination or is_url(destination):
        return destination
    from urllib.parse import unquote as _unquote

    return _unquote(destination)


def is_url(destination: str) -> bool:
    """Whether a destination has a URL scheme (``https:``, ``mailto:`` …)."""
    return _URL_RE.match(destination) is not None


def root_path(destination: str) -> str:
    """``/docs/a.md`` → ``docs/a.md`` (a destination without the slash is kept as it is)."""
    return destination[1:] if destination.startswith("/") else destination


def root_link(path: str) -> str:
    """The root-relative link for a project path: ``docs/a.md`` → ``[docs/a.md](/docs/a.md)``."""
    path = root_path(path)
    text = _NEEDS_ESCAPE_RE.sub(lambda m: "\\" + m.group(0), path)
    dest = "/" + path
    if any(c in dest for c in " ()<>\\") or not dest.isprintable():
        dest = "<" + dest.replace("\\", "\\\\").replace("<", "\\<").replace(">", "\\>") + ">"
    return f"[{text}]({dest})"
