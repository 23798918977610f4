"""``plankit board``: every plan under a directory, live in the browser."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command(name="board")
@click.argument("path", required=False, default=".", type=click.Path(exists=True, file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="0: any free port.",
)
@click.option("--no-open", is_flag=True, help="Do not open a browser.")
@click.option(
    "--token",
    help="Require this token in every request (default: none on 127.0.0.1, a random one "
    "on any other address).",
)
def board(path: str, host: str, port: int, no_open: bool, token: str | None) -> None:
    """Show every plan under PATH (TeDDy sessions, PLAN.md checklists, agentflow plan
    directories, ACP runs) in a local web page that follows changes live.

    The first line on standard output is the page's URL.  Read-only: nothing is
    written.  Listening on an address other than 127.0.0.1 needs a token, which is
    part of the printed URL.
    """
    import secrets
    import socket

    import uvicorn

    from plankit.board.app import create_app

    root = Path(path).resolve()
    loopback = host in ("127.0.0.1", "localhost", "::1")
    if token is None and not loopback:
        token = secrets.token_urlsafe(18)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY on accepted sockets only then, and
    # without it every response waits on delayed acknowledgements (about 40 ms)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise click.ClickException(
            f"cannot listen on {host}:{port} ({exc.strerror}); pick another --port, or 0"
        ) from None
    sock.listen(128)  # connections wait from now on, even before the server starts
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/" + (f"?token={token}" if token else "")
    click.echo(url)
    sys.stdout.flush()
    if not no_open:
        import webbrowser

        webbrowser.open(url)
    app = create_app(root, token=token)

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            app.state.hub.close()  # open event streams end, so the server can stop
            await super().shutdown(sockets=sockets)

    # the grace only bounds a response that would not end
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
    Server(config).run(sockets=[sock])
