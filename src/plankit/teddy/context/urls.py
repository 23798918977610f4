"""URL resources of the context payload: fetch once, convert to readable text, cache.

:func:`fetch_url` does an HTTP GET with the standard library (only ``http`` and
``https``; no ``file:``, ``ftp:`` or ``data:`` URL is ever opened, not even through a
redirect), turns HTML into readable text (:func:`html_to_text`) and keeps the result in
the session's cache directory, one file per URL named from a hash of the URL, so that
rebuilding a payload never fetches the same URL again.  Failures raise
:class:`FetchError` with a one-line message; the payload builder shows that message in
place of the content.  Nothing here is imported until a URL is fetched.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from plankit.errors import PlankitError

MAX_DOWNLOAD_BYTES = 10 * 1024 * 1024
"""Most bytes read from one response (10 MiB); the payload cuts far below that anyway."""

USER_AGENT = "plankit-teddy (+https://pypi.org/project/plankit/)"
"""The ``User-Agent`` header sent."""

_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/x-")


class FetchError(PlankitError):
    """A URL that could not be fetched or is not text; ``str(err)`` says why, on one line."""


def is_url_entry(entry: str) -> bool:
    """Whether a context entry is a URL (``scheme://…``) rather than a project path."""
    return _URL_RE.match(entry) is not None


def cache_path(cache_dir: Path, url: str) -> Path:
    """The cache file of ``url`` in ``cache_dir`` (``<sha256 of the URL>.txt``)."""
    import hashlib

    return cache_dir / (hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest() + ".txt")


def fetch_url(url: str, cache_dir: Path | None, *, timeout: float = 20) -> str:
    """The readable text of ``url``, from ``cache_dir`` when it was fetched before.

    A successful fetch is written to the cache (atomically; the directory is created);
    a failed one is not, so the next build tries again.  Raises :class:`FetchError` on
    any failure: an unsupported scheme, a network error, an HTTP error status, a
    timeout, or content that is not text.
    """
    cached = cache_path(cache_dir, url) if cache_dir is not None else None
    if cached is not None:
        try:
            return cached.read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise FetchError(f"the cached copy cannot be read ({exc.strerror})") from None
    text = _download(url, timeout)
    if cached is not None:
        from plankit.textio import write_text_atomic

        try:
            os.makedirs(cached.parent, exist_ok=True)
            write_text_atomic(cached, text)
        except OSError:
            pass  # a cache that cannot be written costs a fetch next time, nothing more
    return text


def _download(url: str, timeout: float) -> str:
    import http.client
    import urllib.error
    import urllib.request
    from urllib.parse import urlsplit

    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        raise FetchError(f"only http and https URLs are fetched, not {scheme or 'this'}:")
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        urllib.request.HTTPHandler(),
        urllib.request.HTTPSHandler(),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPRedirectHandler(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": "*/*"})
    try:
        with opener.open(request, timeout=timeout) as response:
            data = response.read(MAX_DOWNLOAD_BYTES)
            content_type = response.headers.get_content_type()
            has_type = response.headers.get("Content-Type") is not None
            charset = response.headers.get_content_charset() or "utf-8"
    except urllib.error.HTTPError as exc:
        raise FetchError(f"HTTP {exc.code} {_one_line(str(exc.reason))}".rstrip()) from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise FetchError(f"no answer within {timeout:g} s (timed out)") from None
        raise FetchError(_one_line(str(exc.reason))) from None
    except TimeoutError:
        raise FetchError(f"no answer within {timeout:g} s (timed out)") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise FetchError(_one_line(str(exc) or type(exc).__name__)) from None
    return _to_text(data, content_type if has_type else "", charset)


def _to_text(data: bytes, content_type: str, charset: str) -> str:
    try:
        text = data.decode(charset, "replace")
    except LookupError:  # an unknown charset name
        text = data.decode("utf-8", "replace")
    if content_type in ("text/html", "application/xhtml+xml"):
        return html_to_text(text)
    if content_type.startswith("text/") or content_type.endswith(("+json", "+xml")):
        return text
    if content_type.startswith(_TEXT_TYPES):
        return text
    if not content_type and b"\0" not in data[:8192]:
        head = text[:1024].lstrip().lower()
        return html_to_text(text) if head.startswith(("<!doctype html", "<html")) else text
    raise FetchError(f"not text ({content_type or 'binary'}, {len(data):,} bytes); not shown")


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]


_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe", "object"})
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "br", "dd", "details", "dialog",
        "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header",
        "hr", "html", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table",
        "tbody", "thead", "tfoot", "tr", "ul", "h1", "h2", "h3", "h4", "h5", "h6",
    }
)  # fmt: skip
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "wbr"})


def html_to_text(html: str) -> str:
    """Readable text from HTML: blocks on their own lines, ``#`` headings, ``-`` items.

    Scripts, styles and the ``<head>`` are dropped (the ``<title>`` comes first),
    whitespace is collapsed except inside ``<pre>``, character references are decoded.
    """
    from html.parser import HTMLParser

    class Extractor(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.blocks: list[str] = []
            self.line: list[str] = []
            self.skip: list[str] = []
            self.pre = 0
            self.title: list[str] = []
            self.in_title = False

        def flush(self) -> None:
            text = "".join(self.line)
            self.line = []
            if self.pre:
                if text.strip("\n"):
                    self.blocks.append(text.strip("\n"))
                return
            text = " ".join(text.split())
            if text and text not in ("-", "#"):
                if text.startswith("- ") and self.blocks and self.blocks[-1].startswith("- "):
                    self.blocks[-1] += "\n" + text  # list items stay together
                else:
                    self.blocks.append(text)

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "title":
                self.in_title = True
            if tag in _SKIP:
                if tag not in _VOID:
                    self.skip.append(tag)
                return
            if self.skip or tag not in _BLOCKS:
                return
            self.flush()
            if tag == "pre":
                self.pre += 1
            elif tag == "li":
                self.line.append("- ")
            elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
                self.line.append("#" * int(tag[1]) + " ")

        def handle_endtag(self, tag: str) -> None:
            if tag == "title":
                self.in_title = False
            if self.skip:
                if tag == self.skip[-1]:
                    self.skip.pop()
                return
            if tag in _BLOCKS:
                self.flush()
                if tag == "pre" and self.pre:
                    self.pre -= 1

        def handle_data(self, data: str) -> None:
            if self.in_title:
                self.title.append(data)
            elif not self.skip:
                self.line.append(data)

    parser = Extractor()
    parser.feed(html)
    parser.close()
    parser.flush()
    title = " ".join("".join(parser.title).split())
    blocks = parser.blocks
    if title and (not blocks or title not in blocks[0]):
        blocks = [title, *blocks]
    return "\n\n".join(blocks)
