"""URL resources of the context payload: fetch once, convert to readable text, cache.

:func:`fetch_url` does an HTTP GET with the standard library (only ``http`` and
``https``; no ``file:``, ``ftp:`` or ``data:`` URL is ever opened, not even through a
redirect), turns HTML into readable text (:func:`html_to_text`) and keeps the result in
the session's cache directory, one file per URL named from a hash of the URL, so that
rebuilding a payload never fetches the same URL again.  Failures raise
:class:`FetchError` with a one-line message; the payload builder shows that message in
place of the content.  Nothing here is imported until a URL is fetched.

Only public addresses are reached unless the project allows more
(:mod:`plankit.teddy.context.network`): each hop's host is resolved once, every address
it resolves to is checked, and the connection goes to an address that was checked
(the request still names the host, in the ``Host`` header and for TLS), so a name that
resolves differently the second time cannot lead anywhere else.  Redirects are
followed here, at most :data:`MAX_REDIRECTS`, each one checked the same way.  Proxies
from the environment are not used: a proxy would resolve names where they cannot be
checked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from plankit.errors import PlankitError

if TYPE_CHECKING:
    import http.client
    import socket

    from plankit.teddy.context.network import NetworkPolicy

MAX_DOWNLOAD_BYTES = 10 * 1024 * 1024
"""Most bytes read from one response (10 MiB); the payload cuts far below that anyway."""

MAX_REDIRECTS = 5
"""Redirects followed for one URL before giving up."""

USER_AGENT = "plankit-teddy (+https://pypi.org/project/plankit/)"
"""The ``User-Agent`` header sent."""

Resolver = Callable[[str, int], Sequence[str]]
"""``(host, port) -> IP addresses``, in the order to try them."""
Connector = Callable[[str, int, float], "socket.socket"]
"""``(ip, port, timeout) -> a connected socket``."""

_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/x-")
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_PATH_SAFE = "/?&=%:@!$'()*+,;~-._[]"


class FetchError(PlankitError):
    """A URL that could not be fetched or is not text; ``str(err)`` says why, on one line."""


def is_url_entry(entry: str) -> bool:
    """Whether a context entry is a URL (``scheme://…``) rather than a project path."""
    return _URL_RE.match(entry) is not None


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be fetched as written (one sentence), or None when it can be
    tried: only http(s), no spaces or control characters, a host that is a valid name
    or address (an IPv6 address in brackets, without a zone such as ``%lo``), a port
    from 1 to 65535.  Never raises, whatever the text."""
    from urllib.parse import urlsplit

    after = url.split("://", 1)[-1]
    authority = re.split(r"[/?#]", after, maxsplit=1)[0]
    if any(c.isspace() or not c.isprintable() for c in authority):
        return "the URL's host contains a space or a control character"
    if not url.isprintable():
        return "the URL contains a control character (percent-encode it)"
    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname or ""
    except ValueError as exc:  # a bad port, unbalanced brackets, a bad bracketed address
        return f"not a valid URL ({_one_line(str(exc))})"
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        return f"only http and https URLs are fetched, not {scheme or 'this'}:"
    if port == 0:
        return "not a valid URL (port 0)"
    if not host.rstrip("."):
        return "the URL names no host"
    if "%" in host and "[" in parts.netloc:
        return "an IPv6 address with a zone (%) is not fetched; name the host without it"
    if "%" in host:
        return "a host name cannot contain %"
    if "[" in parts.netloc:
        import ipaddress

        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return f"not a valid URL ([{_one_line(host)}] is not an IPv6 address)"
    elif not host.isascii() or any(not (c.isalnum() or c in "-._") for c in host):
        try:
            host.rstrip(".").encode("idna")
        except UnicodeError as exc:
            return f"not a valid host name ({_one_line(str(exc))})"
    return None


def cache_path(cache_dir: Path, url: str) -> Path:
    """The cache file of ``url`` in ``cache_dir`` (``<sha256 of the URL>.txt``)."""
    import hashlib

    return cache_dir / (hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest() + ".txt")


def fetch_url(
    url: str,
    cache_dir: Path | None,
    *,
    timeout: float = 20,
    root: Path | None = None,
    policy: NetworkPolicy | None = None,
    resolver: Resolver | None = None,
    connect: Connector | None = None,
) -> str:
    """The readable text of ``url``, from ``cache_dir`` when it was fetched before.

    A successful fetch is written to the cache (atomically; the directory is created);
    a failed one is not, so the next build tries again.  Raises :class:`FetchError` on
    any failure: an unsupported scheme, an address that may not be reached, a network
    error, an HTTP error status, a timeout, or content that is not text.

    What may be reached is ``policy``, else the ``network`` settings of the project at
    ``root``, else public addresses only.  ``resolver`` (default:
    :func:`resolve_host`) and ``connect`` (default: :func:`connect_to`) are for tests.
    """
    cached = cache_path(cache_dir, url) if cache_dir is not None else None
    if cached is not None:
        from plankit.textio import read_bytes_limited

        try:  # at most what a fetch can store; a FIFO or a device is never waited on
            return read_bytes_limited(cached, 4 * MAX_DOWNLOAD_BYTES).decode("utf-8", "replace")
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise FetchError(f"the cached copy cannot be read ({exc.strerror})") from None
    if policy is None:
        policy = _project_policy(root)
    text = _download(url, timeout, policy, resolver or resolve_host, connect or connect_to)
    if cached is not None:
        from plankit.textio import write_text_atomic

        try:
            os.makedirs(cached.parent, exist_ok=True)
            write_text_atomic(cached, text)
        except OSError:
            pass  # a cache that cannot be written costs a fetch next time, nothing more
    return text


def _project_policy(root: Path | None) -> NetworkPolicy:
    """The ``network`` settings of the project at ``root`` (none without a root)."""
    from plankit.teddy.context.network import NetworkPolicy

    if root is None:
        return NetworkPolicy()
    from plankit.teddy.session.config import load_config

    config = load_config(root)
    return NetworkPolicy.from_settings(config.network_allow_hosts, config.network_allow_networks)


def resolve_host(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (the system resolver), without repeats."""
    import socket

    found: list[str] = []
    for family, _, _, _, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        if family in (socket.AF_INET, socket.AF_INET6) and sockaddr[0] not in found:
            found.append(str(sockaddr[0]))
    return found


def connect_to(ip: str, port: int, timeout: float) -> socket.socket:
    """A TCP connection to ``ip`` (an address, never a name)."""
    import socket

    return socket.create_connection((ip, port), timeout)


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]


class _Hop:
    """One request of a fetch: the URL split into what the connection needs."""

    def __init__(self, url: str) -> None:
        from urllib.parse import quote, urlsplit

        problem = url_problem(url)
        if problem is not None:
            raise FetchError(problem)
        parts = urlsplit(url)
        self.url = url
        self.scheme = parts.scheme.lower()
        try:
            port = parts.port
            host = (parts.hostname or "").rstrip(".")
            self.host = host.encode("idna").decode("ascii") if not host.isascii() else host
        except (ValueError, UnicodeError) as exc:
            raise FetchError(f"not a valid URL ({_one_line(str(exc))})") from None
        if not self.host:
            raise FetchError("the URL names no host")
        self.port = port or (443 if self.scheme == "https" else 80)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.target = quote(target, safe=_PATH_SAFE)


def _allowed_addresses(
    hop: _Hop, policy: NetworkPolicy, resolver: Resolver, refused: Callable[[str], str]
) -> list[str]:
    """The addresses of ``hop``'s host, each checked; FetchError when one is refused."""
    import ipaddress

    try:
        literal = ipaddress.ip_address(hop.host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            addresses = list(resolver(hop.host, hop.port))
        except (OSError, UnicodeError) as exc:  # socket.gaierror is an OSError
            reason = getattr(exc, "strerror", None) or str(exc)
            raise FetchError(f"{hop.host} does not resolve ({_one_line(reason)})") from None
        if not addresses:
            raise FetchError(f"{hop.host} does not resolve to any address")
    if policy.host_allowed(hop.host):
        return addresses
    for address in addresses:
        kind = policy.refusal(address)
        if kind is None:
            continue
        if literal is not None:
            raise FetchError(refused(f"{address} is {kind}; allow it with network.allow_networks"))
        raise FetchError(
            refused(f"{hop.host} resolves to {address}, {kind}; allow it with network.allow_hosts")
        )
    return addresses


def _request(
    hop: _Hop, addresses: Sequence[str], timeout: float, connect: Connector
) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """Send the GET to the first of ``addresses`` that answers; the connection and the
    response (headers read, body not)."""
    import http.client

    error: OSError | None = None
    for address in addresses:
        try:
            sock = connect(address, hop.port, timeout)
        except OSError as exc:
            error = exc
            continue
        conn: http.client.HTTPConnection
        try:
            if hop.scheme == "https":
                import ssl

                context = ssl.create_default_context()
                conn = http.client.HTTPSConnection(
                    hop.host, hop.port, timeout=timeout, context=context
                )
                conn.sock = context.wrap_socket(sock, server_hostname=hop.host)
            else:
                conn = http.client.HTTPConnection(hop.host, hop.port, timeout=timeout)
                conn.sock = sock
        except BaseException:
            sock.close()
            raise
        try:
            conn.request(
                "GET",
                hop.target,
                headers={"User-Agent": USER_AGENT, "Accept": "*/*", "Connection": "close"},
            )
            return conn, conn.getresponse()
        except BaseException:
            conn.close()
            raise
    assert error is not None
    raise error


def _download(
    url: str, timeout: float, policy: NetworkPolicy, resolver: Resolver, connect: Connector
) -> str:
    import http.client

    current = url
    for redirects in range(MAX_REDIRECTS + 1):
        try:
            hop = _Hop(current)
        except FetchError as exc:
            raise FetchError(f"redirected to {current}: {exc}" if redirects else str(exc)) from None

        def refused(why: str, hop: _Hop = hop, redirects: int = redirects) -> str:
            where = f"{url} (redirected to {hop.url})" if redirects else url
            return f"{where} refused: {why} in .teddy/config.yaml"

        addresses = _allowed_addresses(hop, policy, resolver, refused)
        try:
            conn, response = _request(hop, addresses, timeout, connect)
            try:
                status, reason = response.status, response.reason
                location = response.headers.get("Location")
                if status in _REDIRECTS and location:
                    from urllib.parse import urljoin

                    current = urljoin(current, location.strip())
                    continue
                if status >= 400:
                    raise FetchError(f"HTTP {status} {_one_line(reason)}".rstrip())
                if status >= 300:
                    raise FetchError(f"HTTP {status} {_one_line(reason)} (no place to go)")
                data = response.read(MAX_DOWNLOAD_BYTES)
                content_type = response.headers.get_content_type()
                has_type = response.headers.get("Content-Type") is not None
                charset = response.headers.get_content_charset() or "utf-8"
            finally:
                conn.close()
        except TimeoutError:
            raise FetchError(f"no answer within {timeout:g} s (timed out)") from None
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise FetchError(_one_line(str(exc) or type(exc).__name__)) from None
        return _to_text(data, content_type if has_type else "", charset)
    raise FetchError(f"more than {MAX_REDIRECTS} redirects; not followed")


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
