"""Pre-flight validation (``teddy-session-workflow.md`` section 8.2), every error at once.

Checks, against the plan and the workspace as it is:

- memos: a ``[+]`` memo must not be in memos.yaml yet; a ``[-]`` memo must be there;
- every path stays inside the project root (no ``..``, absolute path, ``~``, NUL byte,
  over-long path or name, or symbolic link leading out);
- no CREATE or EDIT of a ``protected_paths.write`` path, no READ, EDIT or handoff of a
  ``protected_paths.read`` one (:mod:`plankit.teddy.run.protect`: ``.git`` and
  ``.teddy`` by default);
- CREATE: the file does not exist yet, and no name on its way is a file (the project's,
  or one an earlier CREATE makes);
- EDIT: the file exists, is in the assembled context (the turn's ``turn.context``, the
  session's ``session.context`` or ``.teddy/global.context``: input.md shows all three)
  or was created earlier in the same plan, and its FIND blocks apply in order, each
  matching once (see :mod:`plankit.teddy.run.edits`), with a REPLACE different from its
  FIND;
- PRUNE: the resource is in the turn's context;
- EXECUTE: ``cwd`` is a directory inside the root that exists (or that a CREATE earlier
  in the plan makes);
- INVOKE: the agent has a prompt.  (A CONCLUDE in a turn nobody invoked is valid: it
  says the work is done, and ``teddy run`` stops there.)

Context checks are skipped in stateless mode (a plan run outside a session).
Files created or edited earlier in the plan are seen by later actions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from plankit.errors import Diagnostic
from plankit.teddy.format.model import (
    Action,
    Conclude,
    Create,
    Edit,
    Execute,
    Invoke,
    Plan,
    Prune,
    Read,
)
from plankit.teddy.run.actions import file_text
from plankit.teddy.run.edits import EditFailed, edit_file_text
from plankit.teddy.run.protect import check_protected
from plankit.teddy.session.config import Config, load_config
from plankit.teddy.session.memos import check_memos
from plankit.workspace import PathRefused, components, real_root, relative_posix, resolve, shorten

if TYPE_CHECKING:
    from plankit.teddy.session.layout import Turn


@dataclass(frozen=True, slots=True)
class Workspace:
    """What validation needs to know about the place the plan runs in."""

    root: Path
    """The project root."""
    turn_context: tuple[str, ...] | None = None
    """The turn's context entries; None in stateless mode (context checks skipped)."""
    shared_context: tuple[str, ...] = ()
    """The entries of ``session.context`` and ``.teddy/global.context``: input.md shows
    them too, so an EDIT may target them (a PRUNE may not: it only removes from
    ``turn.context``)."""
    memos: tuple[str, ...] = ()
    """The memos now in memos.yaml."""
    known_agents: tuple[str, ...] | None = None
    """Agents INVOKE may name; None to skip the check."""
    config: Config | None = None
    """The settings (``protected_paths``); None to read the root's config.yaml."""


def _label(action: Action, target: str | None) -> str:
    return f"`{action.type}` on `{shorten(target)}`" if target else f"`{action.type}`"


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def validate_plan(plan: Plan, ws: Workspace) -> list[Diagnostic]:
    """Every pre-flight problem of ``plan`` in ``ws`` (empty when it may run): each on
    the line of its action's heading in plan.md (0 for memos), its message naming the
    action and the file (``EDIT on `a.py`: …``), a FIND that matches nowhere with the
    diff of the file's closest region as its detail."""
    issues: list[Diagnostic] = []
    for problem in check_memos(plan.memos, ws.memos):
        issues.append(Diagnostic(0, "memo-conflict", f"Memos: {problem}"))
    overlay: dict[Path, str] = {}  # files as earlier actions of the plan leave them
    context = (
        {entry.strip("/") for entry in ws.turn_context} if ws.turn_context is not None else None
    )
    shown = None if context is None else context | {e.strip("/") for e in ws.shared_context}
    created: set[str] = set()
    made: set[str] = set()  # the files CREATEs of the plan make, as real paths
    agents = {a.lower() for a in ws.known_agents} if ws.known_agents is not None else None
    config = ws.config or load_config(ws.root)
    top = real_root(ws.root)  # where resolved paths are relative to

    for action in plan.actions:

        def fail(message: str, target: str | None = None, *, code: str, detail: str = "") -> None:
            label = _label(action, target)  # noqa: B023
            issues.append(Diagnostic(action.line, code, f"{label}: {message}", detail=detail))  # noqa: B023

        def inside(path: str, *, write: bool = False, read: bool = False) -> Path | None:
            try:
                real = resolve(ws.root, path)
                check_protected(ws.root, path, config, write=write, read=read, real=real)
                return real
            except PathRefused as exc:
                fail(exc.detail, path, code=exc.code)
                return None

        match action:
            case Create(path=path, content=content):
                target = inside(path, write=True)
                if target is not None:
                    found = _existing(target)
                    blocker = made_blocker = None
                    if found is None:
                        blocker = _file_on_the_way(top, target)
                    elif not found and made:
                        blocker = made_blocker = _made_on_the_way(top, target, made)
                    if blocker is not None:
                        what = "a file an earlier CREATE makes" if made_blocker else "a file"
                        fail(
                            f"'{shorten(blocker)}' is {what}, not a directory: nothing can be "
                            "created under it",
                            path,
                            code="not-a-directory",
                        )
                    elif target in overlay or found:  # a dangling link exists too
                        fail(
                            "the file already exists; use EDIT to change it",
                            path,
                            code="file-exists",
                        )
                    else:
                        overlay[target] = file_text(content)
                        created.add(path)
                        made.add(os.fspath(target))
            case Edit(path=path, edits=edits):
                target = inside(path, write=True, read=True)
                if target is None:
                    continue
                text = overlay.get(target)
                if text is None:
                    if not target.is_file():
                        fail("the file does not exist", path, code="file-missing")
                        continue
                    text = _read(target)
                    if text is None:
                        fail("the file cannot be read as UTF-8 text", path, code="file-not-text")
                        continue
                if (
                    shown is not None
                    and "/".join(components(path)) not in shown
                    and path not in created
                ):
                    fail(
                        "the file is not in the turn's context; READ it first so that the "
                        "FIND blocks are written against its real content",
                        path,
                        code="not-in-context",
                    )
                try:  # as execution will edit it: CRLF kept, mixed line endings left alone
                    overlay[target] = edit_file_text(text, edits).output
                except EditFailed as exc:
                    fail(exc.message, path, code=exc.code, detail=exc.detail)
            case Prune(resource=res):
                if res.kind == "file":
                    inside(res.target)
                if context is not None and res.target.strip("/") not in context:
                    fail(
                        "the resource is not in the turn's context",
                        res.target,
                        code="not-in-context",
                    )
            case Read(resource=res):
                if res.kind == "file":
                    inside(res.target, read=True)
                else:
                    _check_url(res.target, fail)
            case Execute(cwd=cwd):
                if cwd is not None:
                    target = inside(cwd)
                    if (
                        target is not None
                        and not target.is_dir()
                        and not any(target in written.parents for written in overlay)
                    ):
                        fail(
                            f"cwd '{cwd}' is not an existing directory of the project",
                            code="cwd-missing",
                        )
            case Invoke(agent=agent, handoff_resources=handoff):
                if agents is not None and agent.lower() not in agents:
                    known = ", ".join(ws.known_agents or ())
                    fail(f"unknown agent '{agent}'; known agents: {known}", code="unknown-agent")
                _check_handoff(handoff, inside, fail)
            case Conclude(handoff_resources=handoff):
                _check_handoff(handoff, inside, fail)
    return issues


def _existing(target: Path) -> bool | None:
    """Whether ``target`` exists (a dangling link too), or None when a name on its way
    is a file, not a directory."""
    try:
        os.lstat(target)
    except NotADirectoryError:
        return None
    except OSError:
        return False
    return True


def _file_on_the_way(root: Path, target: Path) -> str | None:
    """The path, relative to the resolved ``root``, of the file that stands where
    ``target`` (resolved, under it) needs a directory; None when there is none (any
    more: the workspace is judged as it is)."""
    for folder in reversed(target.parents):
        if root in folder.parents and os.path.lexists(folder) and not folder.is_dir():
            return relative_posix(folder, root)
    return None


def _made_on_the_way(root: Path, target: Path, made: set[str]) -> str | None:
    """The path, relative to the resolved ``root``, of a file an earlier CREATE makes
    where ``target`` (resolved, under it) needs a directory; None when there is none."""
    text = os.fspath(target)
    at = text.find(os.sep, len(os.fspath(root)) + 1)
    while at != -1:
        if text[:at] in made:
            return relative_posix(Path(text[:at]), root)
        at = text.find(os.sep, at + 1)
    return None


def _check_url(url: str, fail: Callable[..., None]) -> None:
    from plankit.teddy.context.urls import url_problem

    problem = url_problem(url)
    if problem is not None:
        fail(f"{problem}; write a valid http(s) URL", url, code="url-invalid")


def _check_handoff(
    handoff: Sequence[str], inside: Callable[..., Path | None], fail: Callable[..., None]
) -> None:
    for target in handoff:
        if target.lower().startswith(("http://", "https://")):
            _check_url(target, fail)
        else:
            inside(target, read=True)  # handed-off files enter the next turn's context


def turn_workspace(turn: Turn, config: Config) -> Workspace:
    """What a session turn's plan is validated against: its context (turn, session and
    global), the memos, the agents, the settings.  ``teddy execute`` and ``teddy execute
    --check`` both use it, so they judge a plan alike."""
    from plankit.teddy.context.files import read_context_file
    from plankit.teddy.session.memos import load_memos
    from plankit.teddy.session.prompts import known_agents

    root = turn.session.root
    shared = read_context_file(turn.session.context_path)
    shared += read_context_file(root / ".teddy" / "global.context")
    return Workspace(
        root=root,
        turn_context=tuple(read_context_file(turn.context_path)),
        shared_context=tuple(shared),
        memos=tuple(load_memos(root)),
        known_agents=tuple(known_agents(root)),
        config=config,
    )


def describe(issues: Sequence[Diagnostic]) -> list[str]:
    """Each issue as the report and the re-plan message show it
    (:meth:`~plankit.errors.Diagnostic.describe`: its line and code first, a diff on the lines
    after it)."""
    return [issue.describe() for issue in issues]
