"""The ``.teddy/`` workspace: sessions, turns and their files.

Layout (``teddy-session-workflow.md``, section 3)::

    <root>/.teddy/
      memos.yaml  global.context  config.yaml  prompts/<agent>.xml (optional overrides)
      20260124-add-user-auth/            a session: YYYYMMDD-<kebab-name>
        session.context
        01/  02/  …  100/                turns, numbered, zero-padded to two digits
          input.md  system_prompt.xml  plan.md  report.md  turn.context  meta.yaml

Which session is current: the one named by ``--session`` or ``TEDDY_SESSION``, else the
one the working directory is in, else the one whose latest turn was touched last.
The current turn is a session's highest-numbered turn.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from plankit.errors import InputError
from plankit.textio import write_text_atomic
from plankit.workspace import TEDDY_DIR

_NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_SESSION_RE = re.compile(r"(\d{8})-([a-z0-9]+(?:-[a-z0-9]+)*)")
_TURN_RE = re.compile(r"\d{2,}")


class SessionError(InputError):
    """A session or turn that cannot be found or created."""


@dataclass(frozen=True, slots=True)
class TurnMeta:
    """A turn's ``meta.yaml``."""

    turn_id: str
    """This turn's directory name, e.g. ``03``."""
    parent_turn_id: str | None = None
    """The turn this one continues from (None for the first)."""
    caller_turn_id: str | None = None
    """The turn whose INVOKE started the agent running now (None at top level)."""
    agent: str | None = None
    """The agent whose system prompt this turn uses."""
    model: str | None = None
    """The model that wrote ``plan.md`` (``manual`` when pasted by a person)."""
    input_tokens: int | None = None
    """Tokens the model read for ``plan.md``, as the provider reported them."""
    output_tokens: int | None = None
    """Tokens the model wrote for ``plan.md``, as the provider reported them."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn directory."""

    session: Session
    """The session it belongs to."""
    name: str
    """The directory name (``01``)."""

    @property
    def path(self) -> Path:
        """The turn directory."""
        return self.session.path / self.name

    @property
    def number(self) -> int:
        """The turn number."""
        return int(self.name)

    def file(self, name: str) -> Path:
        """A file of the turn (``plan.md``, ``report.md`` …)."""
        return self.path / name

    @property
    def plan_path(self) -> Path:
        """``plan.md``."""
        return self.path / "plan.md"

    @property
    def report_path(self) -> Path:
        """``report.md``."""
        return self.path / "report.md"

    @property
    def context_path(self) -> Path:
        """``turn.context``."""
        return self.path / "turn.context"

    @property
    def prompt_path(self) -> Path:
        """``system_prompt.xml``."""
        return self.path / "system_prompt.xml"

    def meta(self) -> TurnMeta:
        """Read ``meta.yaml``."""
        return read_meta(self.path / "meta.yaml", self.name)

    def rel(self, name: str) -> str:
        """A file of the turn as a root-relative path (``.teddy/<session>/01/report.md``)."""
        return f"{TEDDY_DIR}/{self.session.name}/{self.name}/{name}"


@dataclass(frozen=True, slots=True)
class Session:
    """One session directory."""

    root: Path
    """The project root."""
    name: str
    """The directory name (``20260124-add-user-auth``)."""

    @property
    def path(self) -> Path:
        """The session directory."""
        return self.root / TEDDY_DIR / self.name

    @property
    def context_path(self) -> Path:
        """``session.context``."""
        return self.path / "session.context"

    def turns(self) -> list[Turn]:
        """The turns, in numeric order."""
        names = [e.name for e in os.scandir(self.path) if e.is_dir() and _TURN_RE.fullmatch(e.name)]
        return [Turn(self, n) for n in sorted(names, key=int)]

    def latest(self) -> Turn:
        """The current (highest-numbered) turn."""
        turns = self.turns()
        if not turns:
            raise SessionError(f"session {self.name} has no turn directory", code="no-turn")
        return turns[-1]

    def turn(self, name: str) -> Turn:
        """The turn called ``name`` (``3`` and ``03`` both work)."""
        if not name.isdigit():
            raise SessionError(f"'{name}' is not a turn number", code="no-turn")
        turn = Turn(self, turn_name(int(name)))
        if not turn.path.is_dir():
            raise SessionError(f"session {self.name} has no turn {name}", code="no-turn")
        return turn


def turn_name(number: int) -> str:
    """``1`` → ``01``; ``100`` → ``100``."""
    return f"{number:02d}"


def teddy_dir(root: Path) -> Path:
    """``<root>/.teddy``."""
    return root / TEDDY_DIR


def sessions(root: Path) -> list[Session]:
    """Every session of the project, oldest name first."""
    base = teddy_dir(root)
    if not base.is_dir():
        return []
    names = [e.name for e in os.scandir(base) if e.is_dir() and _SESSION_RE.fullmatch(e.name)]
    return [Session(root, n) for n in sorted(names)]


def find_session(root: Path, name: str | None = None, cwd: Path | None = None) -> Session:
    """The current session (see the module documentation)."""
    name = name or os.environ.get("TEDDY_SESSION") or None
    all_sessions = sessions(root)
    if name:
        for session in all_sessions:
            if name in (session.name, session.name[9:]):
                return session
        known = ", ".join(s.name for s in all_sessions) or "none yet"
        raise SessionError(
            f"no session '{name}' (sessions: {known}); create one with `teddy new NAME`",
            code="no-session",
        )
    if not all_sessions:
        raise SessionError(
            "this project has no TeDDy session yet; create one with `teddy new NAME`",
            code="no-session",
        )
    here = (cwd or Path.cwd()).resolve()
    for session in all_sessions:
        spath = session.path.resolve()
        if here == spath or spath in here.parents:
            return session

    def touched(session: Session) -> float:
        turns = session.turns()
        return (turns[-1].path if turns else session.path).stat().st_mtime

    return max(all_sessions, key=lambda s: (touched(s), s.name))


def create_session(
    root: Path, name: str, prompt: str, agent: str, *, today: _dt.date | None = None
) -> Session:
    """Create ``.teddy/YYYYMMDD-name/`` with ``session.context`` and turn ``01``."""
    if not _NAME_RE.fullmatch(name):
        suggestion = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        hint = f"; try '{suggestion}'" if suggestion and _NAME_RE.fullmatch(suggestion) else ""
        raise SessionError(
            f"'{name}' is not a kebab-case name (lower-case words joined by '-'){hint}",
            code="bad-name",
        )
    for session in sessions(root):
        if session.name[9:] == name:
            raise SessionError(
                f"a session named '{name}' already exists ({session.name}); pick another name",
                code="session-exists",
            )
    date = (today or _dt.date.today()).strftime("%Y%m%d")
    session = Session(root, f"{date}-{name}")
    teddy_dir(root).mkdir(exist_ok=True)
    staging = teddy_dir(root) / f".new-{session.name}"
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "01").mkdir(parents=True)
    write_text_atomic(staging / "session.context", "")
    write_text_atomic(staging / "01" / "turn.context", "")
    write_text_atomic(staging / "01" / "system_prompt.xml", prompt)
    write_meta(staging / "01" / "meta.yaml", TurnMeta("01", None, None, agent))
    os.rename(staging, session.path)
    return session


def read_meta(path: Path, default_id: str) -> TurnMeta:
    """Read a ``meta.yaml`` (a missing file is a turn with no parent)."""
    from plankit.teddy.session.yamlio import MAX_YAML_BYTES
    from plankit.textio import read_text

    if not path.exists():
        return meta_from_data({}, str(path), default_id)
    text = read_text(path, max_bytes=MAX_YAML_BYTES, allow_empty=True).text
    return meta_from_text(text, str(path), default_id)


def meta_from_text(text: str, path: str, default_id: str) -> TurnMeta:
    """A ``meta.yaml`` read by the caller (``path`` names it in errors), read as
    :func:`read_meta` reads the file."""
    data = written_meta(text)
    if data is None:
        from plankit.teddy.session.yamlio import yaml_from_text

        data = yaml_from_text(text, path, default={})
    return meta_from_data(data, path, default_id)


_META_LINE = re.compile(
    r'([a-z_]+): (null|"[^"\\\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]*"'
    r"|0|[1-9][0-9]{0,17})"
)


def written_meta(text: str) -> dict[str, str | int | None] | None:
    """The fields of a ``meta.yaml`` of the lines :func:`write_meta` writes (``key:
    "text"``, ``key: null``, ``key: 12``), read without a YAML parser; ``None`` for any
    other text, which YAML reads (a file edited by hand, a model name with escapes).

    A quoted text without a backslash or a control character, ``null`` and a number
    without a leading zero have one YAML reading each, the one given here;
    ``tests/teddy`` checks it is the YAML parser's.
    """
    if not text.endswith("\n"):
        return None
    data: dict[str, str | int | None] = {}
    for line in text[:-1].split("\n"):
        match = _META_LINE.fullmatch(line)
        if match is None or match.group(1) in data:
            return None
        key, value = match.groups()
        data[key] = None if value == "null" else value[1:-1] if value[0] == '"' else int(value)
    return data


def meta_from_data(data: object, path: str, default_id: str) -> TurnMeta:
    """The turn's metadata from a loaded ``meta.yaml``."""
    if not isinstance(data, dict):
        raise SessionError("meta.yaml must be a mapping", code="bad-meta", path=path)

    def field(key: str) -> str | None:
        value = data.get(key)
        return None if value is None or value == "" else str(value)

    def count(key: str) -> int | None:
        value = data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise SessionError(
                f"'{key}' must be a whole number of tokens, not {value!r}",
                code="bad-meta",
                path=path,
            )
        return int(value)

    return TurnMeta(
        field("turn_id") or default_id,
        field("parent_turn_id"),
        field("caller_turn_id"),
        field("agent"),
        field("model"),
        count("input_tokens"),
        count("output_tokens"),
    )


def write_meta(path: Path, meta: TurnMeta) -> None:
    """Write a ``meta.yaml``."""

    def value(v: str | None) -> str:
        return "null" if v is None else f'"{v}"'

    lines = [
        f"turn_id: {value(meta.turn_id)}",
        f"parent_turn_id: {value(meta.parent_turn_id)}",
        f"caller_turn_id: {value(meta.caller_turn_id)}",
    ]
    if meta.agent is not None:
        lines.append(f"agent: {value(meta.agent)}")
    if meta.model is not None:
        import json  # a double-quoted JSON string is a valid YAML scalar, escapes included

        lines.append(f"model: {json.dumps(meta.model, ensure_ascii=False)}")
    lines += [
        f"{key}: {number}"
        for key, number in (
            ("input_tokens", meta.input_tokens),
            ("output_tokens", meta.output_tokens),
        )
        if number is not None
    ]
    write_text_atomic(path, "\n".join(lines) + "\n")


def start_session(root: Path, name: str) -> Session:
    """``teddy new NAME``: a session whose turn 01 has the configured default agent's
    prompt (the project's ``.teddy/prompts/`` override, else the bundled one)."""
    from plankit.teddy.session.config import load_config
    from plankit.teddy.session.prompts import agent_name, get_prompt

    config = load_config(root)
    prompt = get_prompt(config.default_agent, root)
    return create_session(root, name, prompt, agent_name(prompt, config.default_agent))


def turn_of_plan(root: Path, plan: Path) -> Turn | None:
    """The turn a ``plan.md`` path belongs to, or None for a plan outside any session."""
    real = plan.resolve()
    base = teddy_dir(root).resolve()
    if real.name != "plan.md" or real.parent.parent.parent != base:
        return None
    session, turn = real.parent.parent.name, real.parent.name
    if not _SESSION_RE.fullmatch(session) or not _TURN_RE.fullmatch(turn):
        return None
    return Turn(Session(root, session), turn)
