"""Network failures and retries for the Google Sheets store.

:func:`network_reason` says what a failed request ran into (a name that does not
resolve, a timeout, a refused or dropped connection) from the chain of exceptions
``requests``, urllib3 and google-auth raise.  :class:`Backoff` decides how long to
wait before trying a request again: the server's ``Retry-After`` when it gives one,
otherwise an exponential delay with jitter.
"""

from __future__ import annotations

import email.utils
import random
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
"""HTTP statuses worth trying again: rate limits and server-side failures."""

_DNS_WORDS = (
    "name or service not known",
    "temporary failure in name resolution",
    "failed to resolve",
    "nodename nor servname",
    "getaddrinfo failed",
    "no address associated",
)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        for nxt in (item.__cause__, item.__context__, getattr(item, "reason", None)):
            if isinstance(nxt, BaseException):
                todo.append(nxt)
        todo += [a for a in getattr(item, "args", ()) if isinstance(a, BaseException)]


def is_dns_failure(exc: BaseException) -> bool:
    """Whether the request failed because a host name did not resolve."""
    for item in _chain(exc):
        if isinstance(item, socket.gaierror) or type(item).__name__ == "NameResolutionError":
            return True
        if any(word in str(item).lower() for word in _DNS_WORDS):
            return True
    return False


def network_reason(exc: BaseException) -> str:
    """What went wrong on the network, in a few words."""
    if is_dns_failure(exc):
        return "the host name could not be resolved (DNS)"
    for item in _chain(exc):
        name = type(item).__name__.lower()
        if "timeout" in name or "timed out" in str(item).lower():
            return "the connection timed out"
        if "ssl" in name or "certificate" in str(item).lower():
            return f"the secure connection failed ({type(item).__name__})"
        if "proxy" in name:
            return "the proxy refused the connection"
    return f"the connection failed ({type(exc).__name__})"


def retry_after(response: Any) -> float | None:
    """Seconds a response's ``Retry-After`` header asks to wait (a number of seconds or
    an HTTP date), or None."""
    headers = getattr(response, "headers", None)
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return None
    text = str(value).strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass
class Backoff:
    """Delays between attempts: ``base`` doubled each time up to ``cap``, each with
    jitter (a random half to full delay), unless the server says how long."""

    retries: int = 5
    """Attempts after the first."""
    base: float = 1.0
    """The first delay, in seconds."""
    cap: float = 32.0
    """The longest delay."""
    longest_wait: float = 120.0
    """A ``Retry-After`` longer than this is not waited for: the call fails at once."""

    def delay(self, attempt: int, server: float | None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 0)."""
        if server is not None:
            return server
        full: float = min(self.cap, self.base * 2.0**attempt)
        return full * (0.5 + random.random() / 2)
