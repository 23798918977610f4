"""``plankit board``: every plan under a directory, live in the browser."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from plankit.board.sources import Source


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
@click.option(
    "--agentflow-home",
    type=click.Path(file_okay=False),
    help="Show the agentflow sessions of this state directory (default: $AGENTFLOW_HOME, "
    "else ~/.agentflow; none when it holds no database).",
)
@click.option(
    "--agentflow-database",
    metavar="URL",
    help="Show the agentflow sessions of this PostgreSQL database instead "
    "(default: $AGENTFLOW_DATABASE_URL).",
)
@click.option(
    "--sheet",
    "sheets",
    multiple=True,
    metavar="gsheets:ID",
    help="Also show the checklist of this Google spreadsheet (repeatable; default: "
    "$PLANKIT_STORE when it names one).",
)
@click.option(
    "--credentials",
    type=click.Path(dir_okay=False),
    help="Google credentials for --sheet (default: $PLANKIT_GOOGLE_CREDENTIALS).",
)
@click.option(
    "--cell",
    help="The plan cell of the spreadsheets (default: $PLANKIT_CELL, else AGENT_BASE!C2).",
)
def board(
    path: str,
    host: str,
    port: int,
    no_open: bool,
    token: str | None,
    agentflow_home: str | None,
    agentflow_database: str | None,
    sheets: tuple[str, ...],
    credentials: str | None,
    cell: str | None,
) -> None:
    """Show every plan under PATH (TeDDy sessions, PLAN.md checklists, agentflow plan
    directories, ACP runs), the sessions of agentflow's control plane and Google
    Sheets checklists in a local web page that follows changes live.

    The first line on standard output is the page's URL.  Read-only: nothing is
    written.  Listening on an address other than 127.0.0.1 needs a token, which is
    part of the printed URL.
    """
    import secrets
    import socket

    import uvicorn

    from plankit.board.app import create_app

    root = Path(path).resolve()
    sources = _sources(agentflow_home, agentflow_database, sheets, credentials, cell)
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
    app = create_app(root, token=token, sources=sources)

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            app.state.hub.close()  # open event streams end, so the server can stop
            await super().shutdown(sockets=sockets)

    # the grace only bounds a response that would not end
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
    Server(config).run(sockets=[sock])


def _sources(
    home: str | None,
    database: str | None,
    sheets: tuple[str, ...],
    credentials: str | None,
    cell: str | None,
) -> list[Source]:
    """The control plane's sessions (always: a home without a database shows none) and
    the spreadsheets asked for."""
    import os

    from plankit.agentflow.paths import ENV_DATABASE, home_dir
    from plankit.board.control import ControlSource
    from plankit.errors import PlankitError

    found: list[Source] = []
    try:
        found.append(
            ControlSource(home_dir(home), database or os.environ.get(ENV_DATABASE) or None)
        )
        spreadsheets = list(sheets)
        default = os.environ.get("PLANKIT_STORE", "").strip()
        if not spreadsheets and default.lower().startswith("gsheets:"):
            spreadsheets = [default]
        if spreadsheets:
            from plankit.board.sheets import SheetsSource

            found.append(
                SheetsSource(
                    spreadsheets,
                    credentials=credentials or os.environ.get("PLANKIT_GOOGLE_CREDENTIALS"),
                    cell=cell or os.environ.get("PLANKIT_CELL") or None,
                )
            )
    except PlankitError as exc:
        raise click.ClickException(str(exc)) from None
    return found
