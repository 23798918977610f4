"""``teddy undo``: the latest executed turn taken back.

The turn undone is the session's latest turn with a ``report.md``.  Its checkpoint
(:mod:`plankit.teddy.run.checkpoint`) gives back every file the turn changed, byte for
byte with its permission bits: edited files as they were, created files removed (with
the directories made for them, when empty), memos.yaml as it was.  Then the session
returns to the turn's plan, unexecuted: the turn's ``report.md``, ``journal.jsonl`` and
checkpoint, and every later turn (the one it prepared, with whatever was planned there),
are moved to ``<session>/.undone/<turn>-<time>/``; ``plan.md`` stays, so ``teddy
execute`` or ``teddy resume`` runs it again.

Everything is checked before anything changes, and a refusal is one line:

- a file the turn changed differs from what the turn left (a person edited it since):
  refused, naming the file, unless ``force``;
- a turn cut short (teddy was killed while it ran) never recorded what it left: any file
  that differs from the checkpoint needs ``force``;
- a turn without a checkpoint (``execute.checkpoint: false``, or run by an older
  plankit): its files cannot be restored; ``force`` still returns the session to the plan;
- the checkpoint's bytes are gone or damaged (the ref deleted and its objects collected,
  ``checkpoint/preimages.bin`` removed or changed): checked by SHA-256.

What EXECUTE commands did is not undone; the result counts the commands that ran.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import os
from dataclasses import dataclass
from pathlib import Path

from plankit.errors import InputError, PlanError
from plankit.teddy.format.model import Execute
from plankit.teddy.run.checkpoint import (
    MANIFEST_FILE,
    PACK_FILE,
    PREIMAGE_DIR,
    CheckpointError,
    Entry,
    Manifest,
    load_manifest,
    read_state,
)
from plankit.teddy.run.gitcmd import GitFailed, git_blobs
from plankit.teddy.run.journal import JOURNAL_FILE, replay
from plankit.teddy.session.layout import Session, Turn
from plankit.workspace import PathRefused, read_inside, resolve, shorten, write_inside

UNDONE_DIR = ".undone"
"""Where undone turns' reports and later turns are moved, in the session directory."""


class UndoRefused(InputError):
    """``teddy undo`` changed nothing, for the reason given."""


@dataclass(frozen=True, slots=True)
class Undone:
    """What ``teddy undo`` did."""

    session: str
    """The session's directory name."""
    turn: str
    """The turn taken back; its plan is ready to execute again."""
    restored: tuple[str, ...]
    """Files written back as they were before the turn."""
    removed: tuple[str, ...]
    """Files the turn created, removed."""
    moved_to: Path
    """Where the turn's report, journal and checkpoint and the later turns went."""
    checkpoint: str | None
    """The checkpoint used (a git ref with its commit, or the turn's checkpoint/)."""
    commands: int
    """EXECUTE commands that ran in the turn: what they did is not undone."""
    forced: bool
    """Whether ``--force`` let later changes be overwritten."""
    later_turns: tuple[str, ...]
    """The turns after it that were moved aside."""


def _refuse(message: str, code: str) -> UndoRefused:
    return UndoRefused(message, code=code)


def _latest_executed(session: Session) -> tuple[Turn, list[Turn]]:
    turns = session.turns()
    executed = [t for t in turns if t.report_path.exists()]
    if not executed:
        raise _refuse(
            f"nothing to undo: no turn of session {session.name} has been executed",
            "nothing-to-undo",
        )
    turn = executed[-1]
    return turn, [t for t in turns if t.number > turn.number]


def _commands_run(turn: Turn) -> tuple[bool, int]:
    """(whether the turn's actions began to run, EXECUTE commands that started)."""
    path = turn.file(JOURNAL_FILE)
    if not path.is_file():
        return True, 0  # no journal: assume it ran
    state = replay(path)
    if not state.begun or state.skipped:
        return False, 0
    from plankit.teddy.format.parse import parse_plan

    try:
        plan = parse_plan(state.plan_text)
    except PlanError:
        return True, 0
    actions = plan.actions
    return True, sum(
        1 for i in state.started if i < len(actions) and isinstance(actions[i], Execute)
    )


def _plan_work(root: Path, turn: Turn, manifest: Manifest, force: bool) -> list[Entry]:
    """The entries to put back; refuses when a person changed one since (see the module
    documentation)."""
    work: list[Entry] = []
    unknown: list[str] = []
    for entry in manifest.entries:
        if not entry.changed:
            continue  # the turn left it as it was: whatever happened since stays
        current, _ = read_state(root, entry.path)
        if current == entry.before:
            continue  # as it was before the turn (unchanged, or already put back)
        if entry.after is None:
            unknown.append(entry.path)
        elif current != entry.after and not force:
            gone = " (it is gone)" if not current.exists else ""
            raise _refuse(
                f"{shorten(entry.path)} was changed after turn {turn.name} ran{gone}; undo "
                "would lose that change: keep a copy, then `teddy undo --force`",
                "changed-since",
            )
        work.append(entry)
    if unknown and not force:
        more = f" and {len(unknown) - 1} more" if len(unknown) > 1 else ""
        raise _refuse(
            f"turn {turn.name} was cut short, so what it left in its files is not known; "
            f"check {shorten(unknown[0])}{more}, then `teddy undo --force`",
            "not-sealed",
        )
    return work


def _preimages(root: Path, turn: Turn, manifest: Manifest, work: list[Entry]) -> dict[str, bytes]:
    """The bytes each entry had before the turn, checked against their SHA-256."""
    import hashlib

    wanted = [e for e in work if e.before.exists]
    data: dict[str, bytes] = {}
    if manifest.kind == "git":
        try:
            blobs = git_blobs(root, [e.stored or "" for e in wanted])
        except GitFailed as exc:
            raise _refuse(
                f"the checkpoint {manifest.where(turn)} cannot be read ({exc})", "checkpoint-gone"
            ) from None
        for entry in wanted:
            blob = blobs.get(entry.stored or "")
            if blob is not None:
                data[entry.path] = blob
    elif wanted:
        pack = b""
        with contextlib.suppress(OSError, PathRefused):
            pack = read_inside(turn.path, f"{PREIMAGE_DIR}/{PACK_FILE}")
        for entry in wanted:
            offset, _, length = (entry.stored or "").partition(":")
            if offset.isdigit() and length.isdigit():
                start = int(offset)
                data[entry.path] = pack[start : start + int(length)]
    for entry in wanted:
        blob = data.get(entry.path)
        if blob is None or hashlib.sha256(blob).hexdigest() != entry.before.sha256:
            raise _refuse(
                f"the checkpoint {manifest.where(turn)} no longer holds "
                f"{shorten(entry.path)} as it was; nothing was restored",
                "checkpoint-gone",
            )
    return data


def _check_writable(root: Path, work: list[Entry]) -> None:
    for entry in work:
        try:
            resolve(root, entry.path)
        except PathRefused as exc:
            raise _refuse(f"{shorten(entry.path)}: {exc.detail}", exc.code) from None


def _set_mode(root: Path, path: str, mode: int) -> None:
    real = resolve(root, path)
    fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if os.fstat(fd).st_mode & 0o7777 != mode:
            os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _put_back(root: Path, work: list[Entry], data: dict[str, bytes]) -> tuple[list[str], list[str]]:
    restored: list[str] = []
    removed: list[str] = []
    for entry in work:
        if entry.before.exists:
            write_inside(root, entry.path, data[entry.path])
            _set_mode(root, entry.path, entry.before.mode)
            restored.append(entry.path)
            continue
        real = resolve(root, entry.path)
        if os.path.lexists(real):
            os.unlink(real)
            removed.append(entry.path)
        for folder in reversed(entry.dirs):
            try:
                os.rmdir(resolve(root, folder))
            except OSError as exc:  # not empty, or gone: leave it
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT):
                    raise
    return restored, removed


def _aside(session: Session, turn: Turn) -> Path:
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    base = session.path / UNDONE_DIR
    base.mkdir(exist_ok=True)
    target = base / f"{turn.name}-{stamp}"
    target.mkdir()
    return target


def _move_aside(session: Session, turn: Turn, later: list[Turn]) -> Path:
    """The turn's execution records and the later turns into ``.undone/`` (later turns
    first and the report before the checkpoint, so that an undo cut short leaves either
    an executed turn that ``teddy undo`` finishes, or an unexecuted one)."""
    target = _aside(session, turn)
    if later:
        (target / "turns").mkdir()
        for other in later:
            os.rename(other.path, target / "turns" / other.name)
    for name in (JOURNAL_FILE, "report.md", MANIFEST_FILE, PREIMAGE_DIR):
        source = turn.file(name)
        if os.path.lexists(source):
            os.rename(source, target / name)
    return target


def undo_turn(session: Session, *, force: bool = False) -> Undone:
    """Take back the session's latest executed turn (see the module documentation).
    The caller holds the session lock."""
    root = session.root
    turn, later = _latest_executed(session)
    ran, commands = _commands_run(turn)
    try:
        manifest = load_manifest(turn)
    except CheckpointError as exc:
        raise _refuse(str(exc), exc.code) from None
    if manifest is not None and (manifest.session, manifest.turn) != (session.name, turn.name):
        manifest = None  # copied from another turn by hand: not this turn's
    work: list[Entry] = []
    data: dict[str, bytes] = {}
    if manifest is None:
        if ran and not force:
            raise _refuse(
                f"turn {turn.name} has no checkpoint (it ran with execute.checkpoint: false "
                "or before checkpoints existed), so its files cannot be restored; "
                "`teddy undo --force` returns the session to its plan and leaves the "
                "files as they are",
                "no-checkpoint",
            )
    else:
        work = _plan_work(root, turn, manifest, force)
        _check_writable(root, work)
        data = _preimages(root, turn, manifest, work)
    restored, removed = _put_back(root, work, data)
    where = manifest.where(turn) if manifest is not None and manifest.entries else None
    moved = _move_aside(session, turn, later)
    return Undone(
        session.name,
        turn.name,
        tuple(restored),
        tuple(removed),
        moved,
        where,
        commands,
        force,
        tuple(t.name for t in later),
    )


def undo(root: Path, session_name: str | None = None, *, force: bool = False) -> Undone:
    """``teddy undo``: under the session lock, after finishing a turn teddy stopped in."""
    from plankit.locking import try_lock
    from plankit.teddy.run.recovery import open_session

    session, _ = open_session(root, session_name)
    with try_lock(session.path / ".lock") as held:
        if not held:
            raise _refuse(
                f"another teddy command is running on session {session.name}; wait for it to end",
                "locked",
            )
        return undo_turn(session, force=force)
