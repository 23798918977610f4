"""The board's web app: a read-only ASGI app (Starlette) over a :class:`Catalog`.

Routes::

    GET /                               the page (static, no build step)
    GET /static/{board.js,board.css}    its script and style
    GET /api/plans                      every plan's summary, and the sources' status
    GET /api/plans/{id}                 one plan in full (404 when the board did not find it;
                                        ?commit=N: an agentflow session's commit N)
    GET /api/plans/{id}/diff?from=A&to=B  a unified diff between two kept versions
    GET /api/events                     server-sent events: plans added, changed, removed

Nothing is ever written.  Plans are served by the id the board gave them, never by a
path from the request, so nothing outside the root can be reached.  Requests must name
the board's own host (``Host: 127.0.0.1:PORT`` or ``localhost``) unless a token is set,
which closes DNS rebinding; with a token (required when listening beyond loopback) every
request carries it as ``?token=`` or the ``X-Plankit-Token`` header.  Changes on disk
come from :mod:`watchfiles` and reach open pages within a fraction of a second; the
sources (agentflow's control plane, Google Sheets) are polled.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from plankit.board.catalog import FIRST_READS, Catalog
from plankit.board.sources import Source

STATIC = {"board.js": "text/javascript", "board.css": "text/css", "index.html": "text/html"}
"""The only files the board serves."""
KEEPALIVE = 15.0
"""Seconds between keep-alive comments on the event stream."""
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        b"img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
"""On every response: the page runs its own script only (plan text that slipped into
markup could not run), is never framed, and never sends its URL (and token) elsewhere."""


def loopback_host(value: str) -> bool:
    """Whether a ``Host`` header names the board's own host exactly: ``127.0.0.1``,
    ``localhost`` or ``[::1]``, with no port or a port number (``127.0.0.1:evil.com``
    and ``localhost:80:evil.com`` are not)."""
    if value.startswith("["):
        end = value.find("]") + 1
        host, rest = value[:end], value[end:]
    else:
        host, sep, port = value.partition(":")
        rest = sep + port
    if rest:
        port = rest[1:]
        if rest[0] != ":" or not (port.isascii() and port.isdigit()) or len(port) > 5:
            return False
        if int(port) > 65535:
            return False
    return host.lower() in LOOPBACK_HOSTS


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class Hub:
    """Fans events out to every open event stream."""

    def __init__(self) -> None:
        self.queues: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self.closed = False

    def publish(self, event: dict[str, Any]) -> None:
        """Send ``event`` to every listener."""
        for queue in list(self.queues):
            queue.put_nowait(event)

    def close(self) -> None:
        """End every event stream, now and from now on (the server is stopping: a
        stream that never ends would hold it up)."""
        self.closed = True
        for queue in list(self.queues):
            queue.put_nowait(None)

    @contextlib.contextmanager
    def listen(self) -> Iterator[asyncio.Queue[dict[str, Any] | None]]:
        """A queue receiving every event while the ``with`` block runs, then None when
        the hub closes."""
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        if self.closed:
            queue.put_nowait(None)
        self.queues.add(queue)
        try:
            yield queue
        finally:
            self.queues.discard(queue)


def _static(name: str) -> bytes:
    return resources.files("plankit.board").joinpath("static", name).read_bytes()


def create_app(
    root: Path,
    *,
    token: str | None = None,
    watch: bool = True,
    sources: Sequence[Source] = (),
) -> Starlette:
    """The board for the plans under ``root`` and those of ``sources`` (see the module
    documentation); ``watch=False``: no file watching and no polling of the sources."""
    catalog = Catalog(root, sources)
    hub = Hub()
    filling: set[asyncio.Task[None]] = set()

    def allowed(request: Request) -> bool:
        if token is not None:
            given = request.query_params.get("token") or request.headers.get("x-plankit-token")
            return given is not None and hmac.compare_digest(given, token)
        return loopback_host(request.headers.get("host", ""))

    def refused() -> Response:
        return JSONResponse(
            {"error": "forbidden: give the board's token (?token=…), as printed at start"},
            status_code=403,
        )

    async def page(request: Request) -> Response:
        if not allowed(request):
            return refused()
        return Response(_static("index.html"), media_type="text/html; charset=utf-8")

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC or name == "index.html":
            return PlainTextResponse("not found", status_code=404)
        return Response(_static(name), media_type=f"{STATIC[name]}; charset=utf-8")

    async def plans(request: Request) -> Response:
        if not allowed(request):
            return refused()
        found = await asyncio.to_thread(catalog.plans, FIRST_READS)
        if len(filling) == 0 and any(p.get("status") == "reading…" for p in found):
            # the rest are read in the background and reach the page as events
            filling.add(asyncio.create_task(_fill(catalog, hub, filling)))
        status = [source.status() for source in catalog.sources]
        return JSONResponse({"root": str(catalog.root), "plans": found, "sources": status})

    async def plan(request: Request) -> Response:
        if not allowed(request):
            return refused()
        query = {k: v for k, v in request.query_params.items() if k != "token"}
        data = await asyncio.to_thread(catalog.page, request.path_params["plan_id"], query)
        if data is None:
            return JSONResponse({"error": "no such plan on this board"}, status_code=404)
        return JSONResponse(data)

    async def diff(request: Request) -> Response:
        if not allowed(request):
            return refused()
        plan_id = request.path_params["plan_id"]
        try:
            old, new = int(request.query_params["from"]), int(request.query_params["to"])
        except (KeyError, ValueError):
            return JSONResponse({"error": "give ?from=N&to=M (version numbers)"}, 400)
        text = await asyncio.to_thread(catalog.diff_of, plan_id, old, new)
        if text is None:
            return JSONResponse({"error": "no such plan or version"}, status_code=404)
        return JSONResponse({"from": old, "to": new, "diff": text})

    async def events(request: Request) -> Response:
        if not allowed(request):
            return refused()

        async def stream() -> AsyncIterator[bytes]:
            with hub.listen() as queue:
                # from here on no event is missed: a page that (re)loads the list now
                # is up to date, and stays so
                yield b'data: {"type": "hello"}\n\n'
                while True:
                    try:
                        event = await asyncio.wait_for(queue.get(), KEEPALIVE)
                    except TimeoutError:
                        yield b": keep-alive\n\n"
                        continue
                    if event is None:  # the board is stopping
                        return
                    yield f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode()

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        tasks = []
        if watch:
            tasks.append(asyncio.create_task(_watch(catalog, hub)))
            tasks += [
                asyncio.create_task(_poll(source, hub, catalog)) for source in catalog.sources
            ]
            # one turn of the loop runs the task's first step, which sets up the file
            # watches (synchronously) before the server accepts its first request
            await asyncio.sleep(0)
        try:
            yield
        finally:
            for task in [*tasks, *filling]:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            for source in catalog.sources:
                await asyncio.to_thread(source.close)

    app = Starlette(
        routes=[
            Route("/", page),
            Route("/static/{name}", static),
            Route("/api/plans", plans),
            Route("/api/plans/{plan_id:path}/diff", diff),
            Route("/api/plans/{plan_id:path}", plan),
            Route("/api/events", events),
        ],
        lifespan=lifespan,
    )
    app.add_middleware(SecurityHeaders)
    app.state.catalog = catalog
    app.state.hub = hub
    return app


async def _fill(catalog: Catalog, hub: Hub, filling: set[asyncio.Task[None]]) -> None:
    """Read the plans a list left unread; tell the pages as each batch is read."""
    try:
        while events := await asyncio.to_thread(catalog.fill):
            for event in events:
                hub.publish(event)
    finally:
        filling.clear()


async def _poll(source: Source, hub: Hub, catalog: Catalog) -> None:
    """Turn what changed in ``source`` into board events, looking every
    ``source.interval`` seconds."""
    while True:
        try:
            events = await asyncio.to_thread(source.poll)
        except Exception as exc:  # a poll that fails is said on the page, and tried again
            source.error = f"{type(exc).__name__}: {exc}"
            events = []
        if events:  # plan directories the changed sessions own change with them
            events += await asyncio.to_thread(catalog.recheck)
        for event in events:
            hub.publish(event)
        await asyncio.sleep(source.interval)


async def _watch(catalog: Catalog, hub: Hub) -> None:
    """Turn file changes under the root into board events."""
    from watchfiles import awatch

    async for changes in awatch(catalog.root, debounce=100, step=25, recursive=True):
        paths = {Path(p) for _, p in changes}
        for event in await asyncio.to_thread(catalog.changed, paths):
            hub.publish(event)
