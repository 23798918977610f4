"""Context-aware previews: what ``(p)`` shows for an action and how a change comes back.

This is the logic behind the checklist's previews (``teddy-session-workflow.md``
section 7), kept apart from Textual so it can be tested on its own:

- CREATE ("save as"): the proposed content goes to a temporary file for the editor;
  the path the user confirms and the file's content become the action
  (:func:`draft_file`, :func:`finish_create`).
- EDIT: the temporary file holds the proposed final version (the file as the plan
  would leave it, :func:`proposed_final`); the user's final version is turned back into
  FIND/REPLACE pairs against the original, one per changed region, each unique
  (:func:`pairs_between`, :func:`finish_edit`).
- EXECUTE, RESEARCH, CHAT_WITH_USER, INVOKE, CONCLUDE: one text the user may change
  (:func:`editable_text`, :func:`with_text`).
- READ, PRUNE: shown, never changed (:func:`read_only_view`).

Every ``finish_*`` function compares with the plan's original action and returns a
:class:`Change` whose ``note`` is the Markdown the report records (empty when the
result is the original again).  The previewer is an :class:`Editor`; tests inject a
script as the preview command.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Protocol

from plankit.errors import PlankitError
from plankit.markdown.fences import fenced
from plankit.teddy.format.model import (
    Action,
    ChatWithUser,
    Conclude,
    Create,
    Edit,
    EditPair,
    Execute,
    Invoke,
    Prune,
    Read,
    Research,
)
from plankit.teddy.run.actions import file_text
from plankit.teddy.run.edits import EditFailed, apply_pairs
from plankit.textio import MAX_TEXT_BYTES, read_bytes_limited
from plankit.workspace import PathRefused, resolve

READ_ONLY_LINES = 400
"""How much of a file READ/PRUNE previews show."""


class PreviewKind(StrEnum):
    """Which preview workflow an action gets."""

    SAVE_AS = "save-as"
    EDIT = "edit"
    SIMPLE = "simple"
    READ_ONLY = "read-only"


def preview_kind(action: Action) -> PreviewKind:
    """The workflow for ``action``."""
    match action:
        case Create():
            return PreviewKind.SAVE_AS
        case Edit():
            return PreviewKind.EDIT
        case Read() | Prune():
            return PreviewKind.READ_ONLY
    return PreviewKind.SIMPLE


class PreviewError(PlankitError):
    """The user's change cannot become an action; ``str()`` says why and what to do."""


@dataclass(frozen=True, slots=True)
class Change:
    """An action after a preview."""

    action: Action
    """The action to execute (the original one when nothing changed)."""
    note: str = ""
    """Markdown describing what the user changed, for the report ('' when nothing)."""

    @property
    def modified(self) -> bool:
        """Whether the action differs from the plan's."""
        return bool(self.note)


class Editor(Protocol):
    """Opens a file for the user (the previewer of ``teddy-session-workflow.md`` §10)."""

    def open(self, path: Path) -> None:
        """Show ``path``; may return before the user is done (a non-blocking editor)."""
        ...


class CommandEditor:
    """Runs the previewer command with the file's path as its last argument."""

    def __init__(self, command: Sequence[str]) -> None:
        self.command = list(command)

    def open(self, path: Path) -> None:
        try:
            subprocess.run([*self.command, os.fspath(path)], check=False)
        except OSError as exc:
            raise PreviewError(
                f"the previewer {self.command[0]} could not start ({exc.strerror}); "
                "set preview_command in .teddy/config.yaml"
            ) from None


# --- the diff every change note shows -------------------------------------------------


def unified(before: str, after: str, old: str = "proposed", new: str = "final") -> str:
    """A unified diff of two texts (no final newline; '' when they are equal)."""

    def lines(text: str) -> list[str]:
        return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(True)]

    return "".join(difflib.unified_diff(lines(before), lines(after), old, new)).rstrip("\n")


def _note(what: str, before: str, after: str) -> str:
    return f"**Changed by the user:** {what}\n\n" + fenced(unified(before, after), "diff")


# --- CREATE ---------------------------------------------------------------------------


def draft_file(directory: Path, index: int, path: str, text: str) -> Path:
    """Write ``text`` to a temporary file named after ``path`` (so editors highlight it)."""
    name = PurePosixPath(path).name or "file"
    draft = directory / f"{index + 1:02d}-{name}"
    draft.write_text(text, encoding="utf-8", newline="")
    return draft


def check_new_path(path: str, root: Path | None) -> str:
    """The root-relative path the user typed, cleaned; :class:`PreviewError` if refused."""
    cleaned = path.strip()
    if cleaned.startswith("/") and not cleaned.startswith("//"):
        cleaned = cleaned[1:]  # the plan's root-relative link form, /src/a.py
    if not cleaned:
        raise PreviewError("the file path is empty; type a path relative to the project root")
    if root is not None:
        try:
            target = resolve(root, cleaned)
        except PathRefused as exc:
            raise PreviewError(f"{cleaned}: {exc.detail}") from None
        if target.exists() or target.is_symlink():
            raise PreviewError(f"{cleaned} already exists; CREATE only makes new files")
    return cleaned


def finish_create(original: Create, path: str, content: str, root: Path | None = None) -> Change:
    """The CREATE with the user's ``path`` and ``content`` (as the editor saved it)."""
    new_path = check_new_path(path, root)
    before = file_text(original.content)
    after = file_text(content)
    if new_path == original.path and after == before:
        return Change(original)
    parts: list[str] = []
    if new_path != original.path:
        parts.append(f"**Changed by the user:** file path `{original.path}` → `{new_path}`")
    if after != before:
        parts.append(_note("the content (proposed → final)", before, after))
    return Change(replace(original, path=new_path, content=content), "\n\n".join(parts))


# --- EDIT -----------------------------------------------------------------------------


def file_before(actions: Sequence[Action], index: int, root: Path) -> str:
    """The text the EDIT at ``index`` will find: the file on disk, with the CREATE and
    EDIT actions before it in the plan that touch the same path applied (``\\n`` endings).

    Raises :class:`PreviewError` when there is no such file or it is not UTF-8 text.
    """
    target = actions[index]
    assert isinstance(target, Edit)
    text: str | None = None
    try:
        raw = read_bytes_limited(resolve(root, target.path), MAX_TEXT_BYTES).decode("utf-8")
        text = raw.replace("\r\n", "\n") if "\r\n" in raw else raw
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError, PathRefused) as exc:
        raise PreviewError(f"{target.path} cannot be read as UTF-8 text ({exc})") from None
    for earlier in actions[:index]:
        if isinstance(earlier, Create) and earlier.path == target.path:
            text = file_text(earlier.content)
        elif isinstance(earlier, Edit) and earlier.path == target.path and text is not None:
            with contextlib.suppress(EditFailed):  # validation reports it
                text = apply_pairs(text, earlier.edits)[0]
    if text is None:
        raise PreviewError(f"{target.path} does not exist, so there is nothing to preview")
    return text


def proposed_final(action: Edit, original: str) -> str:
    """The file as ``action`` would leave it; :class:`PreviewError` when a pair fails."""
    try:
        return apply_pairs(original, action.edits)[0]
    except EditFailed as exc:
        raise PreviewError(f"the EDIT cannot be applied to {action.path}: {exc.message}") from None


def _is_unique(text: str, find: str) -> bool:
    """Not blank and found once, overlapping occurrences included."""
    first = text.find(find)
    return bool(find.strip()) and first >= 0 and text.find(find, first + 1) < 0


def _region_pairs(before: str, after: str) -> list[EditPair]:
    a = before.splitlines(keepends=True)
    b = after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    hunks = [op[1:] for op in matcher.get_opcodes() if op[0] != "equal"]
    pairs: list[EditPair] = []
    current = before
    floor = 0  # lines of `a` before this belong to earlier pairs
    k = 0
    while k < len(hunks):
        i1, i2, j1, j2 = hunks[k]
        lo, hi, extra = i1, i2, 0
        find = "".join(a[lo:hi])
        while not _is_unique(current, find):
            if lo <= floor and hi >= len(a):
                raise EditFailed("no unique context")
            extra += 1
            lo, hi = max(floor, i1 - extra), min(len(a), i2 + extra)
            while k + 1 < len(hunks) and hi >= hunks[k + 1][0]:
                k += 1
                i2, j2 = hunks[k][1], hunks[k][3]
                hi = min(len(a), i2 + extra)
            find = "".join(a[lo:hi])
        replacement = "".join(b[j1 - (i1 - lo) : j2 + (hi - i2)])
        if find.endswith("\n") and replacement.endswith("\n") and _is_unique(current, find[:-1]):
            find, replacement = find[:-1], replacement[:-1]  # as a plan writes them
        pairs.append(EditPair(find, replacement))
        current = current.replace(find, replacement, 1)
        floor = hi
        k += 1
    return pairs


def pairs_between(before: str, after: str) -> tuple[EditPair, ...]:
    """FIND/REPLACE pairs that turn ``before`` into ``after``, applied in order.

    One pair per changed region: a region grows by whole lines of context until its
    FIND is not blank and matches exactly once in the text it is applied to, and merges
    with the next region when its context reaches it.  When no such context exists the
    result is one pair for the whole file.  Raises :class:`PreviewError` when ``before``
    is blank (a FIND cannot be).
    """
    try:
        pairs = _region_pairs(before, after)
        if apply_pairs(before, pairs)[0] == after:
            return tuple(pairs)
    except EditFailed:
        pass
    if not before.strip():
        raise PreviewError("the file is blank, so no FIND block can locate a change in it")
    return (EditPair(before, after),)


def finish_edit(original: Edit, current_file: str, final: str) -> Change:
    """The EDIT that turns ``current_file`` into the user's ``final`` version."""
    proposed = proposed_final(original, current_file)
    if final == proposed:
        return Change(original)
    if final == current_file:
        raise PreviewError(
            "the final version is the same as the file now, so the EDIT would change "
            "nothing; untick the action instead"
        )
    pairs = pairs_between(current_file, final)
    return Change(
        replace(original, edits=pairs),
        _note(f"the final version of `{original.path}` (proposed → final)", proposed, final),
    )


# --- simple actions -------------------------------------------------------------------


def editable_text(action: Action) -> str:
    """The one text of a simple action the user may change."""
    match action:
        case Execute(command=command):
            return command
        case Research(queries=queries):
            return "\n".join(queries)
        case ChatWithUser(message=message) | Invoke(message=message) | Conclude(message=message):
            return message
    raise ValueError(f"{action.type} has no editable text")


def _what(action: Action) -> str:
    match action:
        case Execute():
            return "the command"
        case Research():
            return "the queries (one a line)"
    return "the message"


def with_text(original: Action, text: str) -> Change:
    """``original`` with its editable text replaced by ``text``."""
    text = text.strip("\n")
    new: Action
    match original:
        case Execute():
            if not text.strip():
                raise PreviewError("the command is empty; untick the action to skip it")
            new = replace(original, command=text)
        case Research():
            queries = tuple(q.strip() for q in text.splitlines() if q.strip())
            if not queries:
                raise PreviewError("no query is left; untick the action to skip it")
            new = replace(original, queries=queries)
        case ChatWithUser():
            if not text.strip():
                raise PreviewError("the message is empty; untick the action to skip it")
            new = replace(original, message=text)
        case Invoke() | Conclude():
            new = replace(original, message=text)
        case _:
            raise ValueError(f"{original.type} has no editable text")
    before, after = editable_text(original), editable_text(new)
    if before == after:
        return Change(original)
    return Change(new, _note(f"{_what(original)} (proposed → final)", before, after))


# --- READ / PRUNE ---------------------------------------------------------------------


def read_only_view(action: Read | Prune, root: Path) -> tuple[str, str]:
    """What a READ or PRUNE preview shows: a heading, and the file's start (or a note)."""
    res = action.resource
    verb = "Read into" if isinstance(action, Read) else "Removed from"
    head = f"{verb} the next turn's context: {res.target}"
    if res.kind == "url":
        return head, "The URL is fetched when the next turn's input.md is built."
    try:
        raw = read_bytes_limited(resolve(root, res.target), MAX_TEXT_BYTES)  # never a FIFO
    except FileNotFoundError:
        return head, "(the file does not exist)"
    except (OSError, PathRefused) as exc:
        return head, f"(the file cannot be read: {exc})"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return head, f"(a binary file of {len(raw)} bytes)"
    lines = text.splitlines()
    more = len(lines) - READ_ONLY_LINES
    tail = f"\n… {more} more lines" if more > 0 else ""
    return head, "\n".join(lines[:READ_ONLY_LINES]) + tail
