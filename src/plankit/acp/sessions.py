"""The TeDDy side of ``teddy acp``'s sessions: picking, creating, finding them on disk,
the slash commands' work, and the message that closes a turn (worker-thread helpers
of :mod:`.agent`)."""

from __future__ import annotations

import datetime as _dt
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plankit.acp.contract import Planner
from plankit.acp.turn import SessionState, TurnRun
from plankit.errors import InputError

if TYPE_CHECKING:
    from plankit.teddy.run.outcome import Outcome


def project_root(cwd: str) -> Path:
    """The project of a session: ``cwd``, which must be an existing absolute directory."""
    from acp import RequestError

    root = Path(cwd)
    if "\0" in cwd or not root.is_absolute() or not root.is_dir():
        raise RequestError.invalid_params({"cwd": f"'{cwd}' is not an existing absolute directory"})
    return root


def session_folder(root: Path, session_id: str) -> Path | None:
    """The folder of TeDDy session ``session_id`` in ``root`` (None when there is none,
    or the id is not a plain session name)."""
    import re

    if not re.fullmatch(r"[0-9]{8}-[A-Za-z0-9][A-Za-z0-9._-]{0,99}", session_id):
        return None
    folder = root / ".teddy" / session_id
    return folder if folder.is_dir() and not folder.is_symlink() else None


def never_prompted(root: Path, session_id: str) -> bool:
    """Whether ``session_id`` is an id ``session/new`` gives (``YYYYMMDD-acp-`` and six
    hex digits) with nothing on disk: a session opened and never prompted."""
    import re

    if not re.fullmatch(r"[0-9]{8}-acp-[0-9a-f]{6}", session_id):
        return False
    try:
        _dt.datetime.strptime(session_id[:8], "%Y%m%d")
    except ValueError:
        return False
    return not os.path.lexists(root / ".teddy" / session_id)


def known_roots(states: Any) -> list[Path]:
    roots: list[Path] = []
    for root in [*(state.root for state in states), Path.cwd()]:
        if root not in roots:
            roots.append(root)
    return roots


def load_project_config(root: Path) -> None:
    from plankit.teddy.session.config import load_config

    load_config(root)


class Silent:
    """CHAT_WITH_USER responder for a plan that failed to parse (nothing runs)."""

    def reply(self, message: str) -> str | None:
        return None


def pick_session(root: Path) -> str:
    """A new session's id (``YYYYMMDD-acp-xxxxxx``), not yet on disk.

    The configuration is read now so that a broken ``.teddy/config.yaml`` is reported
    by ``session/new``; nothing is written until the session's first prompt.
    """
    from plankit.teddy.session.config import load_config
    from plankit.teddy.session.layout import sessions

    load_config(root)
    taken = {session.name[9:] for session in sessions(root)}
    for _ in range(5):
        name = f"acp-{secrets.token_hex(3)}"
        if name not in taken:
            return f"{_dt.date.today():%Y%m%d}-{name}"
    raise InputError("could not pick a new session name; try again", code="session-exists")


def create_session_of(state: SessionState) -> None:
    """Create the TeDDy session of ``state`` (its first prompt arrived)."""
    from plankit.teddy.session.config import load_config
    from plankit.teddy.session.layout import create_session
    from plankit.teddy.session.prompts import agent_name, get_prompt

    config = load_config(state.root)
    prompt = get_prompt(config.default_agent, state.root)
    agent = agent_name(prompt, config.default_agent)
    day = _dt.datetime.strptime(state.session_id[:8], "%Y%m%d").date()
    create_session(state.root, state.session_id[9:], prompt, agent, today=day)


def plan_with(planner: Planner, text: str, state: SessionState) -> str:
    from plankit.teddy.session.layout import find_session

    return planner(text, find_session(state.root, state.session_id).latest())


def write_context(state: SessionState) -> str:
    from plankit.teddy.context.payload import build_payload
    from plankit.teddy.session.config import load_config
    from plankit.teddy.session.layout import find_session
    from plankit.textio import write_text_atomic

    try:
        config = load_config(state.root)
        session = find_session(state.root, state.session_id)
        turn = session.latest()
        text = build_payload(
            state.root,
            session.path,
            turn.path,
            max_file_bytes=config.context_max_file_bytes,
            protected_read=config.protected_read,
        )
    except InputError as exc:
        return f"The context could not be built: {exc}"
    write_text_atomic(turn.file("input.md"), text)
    lines = text.count("\n")
    return f"Wrote `{turn.rel('input.md')}` ({lines} lines)."


def last_report(state: SessionState) -> str:
    from plankit.teddy.session.layout import find_session

    for turn in reversed(find_session(state.root, state.session_id).turns()):
        if turn.report_path.is_file():
            return turn.report_path.read_text(encoding="utf-8")
    return "No turn of this session has been executed yet."


def summary(outcome: Outcome, run: TurnRun | None, report: str) -> str:
    """The agent message that closes a turn: the status, the counts, the report."""
    from plankit.teddy.run.report import Status

    if outcome.status is None:
        return outcome.message or "Nothing was executed."
    if outcome.status is Status.VALIDATION_FAILED:
        from plankit.teddy.run.report import error_item
        from plankit.teddy.run.validate import describe

        problems = "\n".join(error_item(e) for e in describe(outcome.validation))
        return f"{outcome.status}: the plan was not run.\n{problems}\n\nReport: `{report}`"
    counts = run.counts() if run is not None else {}
    total = len(run.statuses) if run is not None else 0
    parts = [f"{counts.get('completed', 0)} of {total} actions completed"]
    for status in ("failed", "rejected", "cancelled", "skipped"):
        if counts.get(status):
            parts.append(f"{counts[status]} {status}")
    return f"{outcome.status}: {', '.join(parts)}. Report: `{report}`"
