"""Checkpoints: the files a turn will change, kept before its first action runs.

``teddy execute`` takes a checkpoint after approval, before anything has an effect
(memo changes included), and seals it once the actions have run; ``teddy undo``
(:mod:`plankit.teddy.run.undo`) restores from it.  What is kept: every file a CREATE or
EDIT of the approved plan names, and ``.teddy/memos.yaml`` when the plan changes memos,
as they are before the turn (a file the turn will create is recorded as absent).
EXECUTE commands can change anything: what they do is not checkpointed.

Where the bytes are kept:

- **In a git repository**, as a commit on TeDDy's own ref ``refs/teddy/<session>/<turn>``
  (``refs/teddy/<dir>/<session>/<turn>`` for a project in directory ``<dir>`` below the
  repository's top, its paths in the commit from that top): written by
  :mod:`plankit.teddy.run.checkpoint_git`,
  HEAD's tree with those files as they were (absent ones left out), HEAD as its parent.
  It is built by one ``git fast-import`` (after one ``rev-parse``): the commit on HEAD
  with each file's bytes as read (no filter applied, so a file changed meanwhile is kept
  as it was read), the ref set, the commit's id read back with ``get-mark``; seven git
  processes before made the checkpoint a fifth of a 200-EDIT turn.  The user's branch,
  HEAD, index and working tree are never touched; hooks are off and nothing reaches the
  network.  ``git show refs/teddy/<session>/<turn>:<path>`` shows a
  file as it was.
- **Elsewhere** (no repository, no git, or a git command that failed): the files' bytes
  end to end in one file, ``<turn>/checkpoint/preimages.bin``, written atomically (one
  fsync for the whole turn, not one per file: copies file by file made a turn of 200
  EDITs half as slow again); the manifest gives each file's offset and length.

The manifest, ``<turn>/checkpoint.json``, lists each file: its path, its state before
(present or not, permission bits, SHA-256, where its bytes are), the directories a
created file's path needed, and, once sealed, its state after the turn.  ``teddy
undo`` compares that last state with the disk to tell a person's later change from
the turn's own.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plankit.errors import InputError
from plankit.teddy.format.model import Action, Create, Edit
from plankit.teddy.run.checkpoint_git import commit_files
from plankit.teddy.run.gitcmd import GitFailed, find_git_dir
from plankit.teddy.session.layout import Turn
from plankit.textio import write_bytes_atomic, write_text_atomic
from plankit.workspace import TEDDY_DIR, PathRefused, check_path, components, read_inside

MANIFEST_FILE = "checkpoint.json"
"""The manifest's name in a turn directory."""
PREIMAGE_DIR = "checkpoint"
"""Where the bytes are kept in a turn directory when git is not used."""
PACK_FILE = "preimages.bin"
"""The files' bytes, end to end, in :data:`PREIMAGE_DIR`."""
MEMOS_PATH = f"{TEDDY_DIR}/memos.yaml"
"""The memo file, checkpointed when the plan changes memos."""


class CheckpointError(InputError):
    """A checkpoint that cannot be taken or read."""


@dataclass(frozen=True, slots=True)
class FileState:
    """A file as found on disk."""

    exists: bool
    """Whether anything is at the path."""
    mode: int = 0
    """Permission bits (``st_mode & 0o7777``)."""
    sha256: str = ""
    """SHA-256 of the bytes (regular files only)."""
    special: bool = False
    """Something other than a regular file reached without a symbolic link (a link, a
    directory, a FIFO …): never restored over, never checkpointed."""

    def to_json(self) -> dict[str, Any]:
        return {
            "exists": self.exists,
            "mode": self.mode,
            "sha256": self.sha256,
            "special": self.special,
        }

    @classmethod
    def from_json(cls, data: Any) -> FileState:
        if not isinstance(data, dict):
            raise ValueError("a file state must be an object")
        return cls(
            bool(data["exists"]), int(data["mode"]), str(data["sha256"]), bool(data["special"])
        )


def read_state(root: Path, path: str) -> tuple[FileState, bytes | None]:
    """The state of root-relative ``path`` and its bytes (None unless a regular file
    reached without following a symbolic link).  The path is walked from the root
    without following links (:func:`~plankit.workspace.read_inside`), as CREATE and
    EDIT walk it: a link on the way makes it special, as they would refuse it."""
    try:
        data = read_inside(root, path)
    except PathRefused:
        return FileState(True, special=True), None
    except (FileNotFoundError, NotADirectoryError):
        return FileState(False), None
    except OSError:  # a directory, a FIFO, a device, unreadable
        return FileState(True, special=True), None
    try:
        mode = stat.S_IMODE(os.lstat(root / path).st_mode)  # no link on the way: checked
    except OSError:
        return FileState(True, special=True), None
    return FileState(True, mode, hashlib.sha256(data).hexdigest()), data


@dataclass(slots=True)
class Entry:
    """One checkpointed file."""

    path: str
    """Root-relative, normalised (``src/app.py``)."""
    before: FileState
    """Its state before the turn."""
    stored: str | None = None
    """Where its bytes are: a git blob id, or ``OFFSET:LENGTH`` in the turn's
    ``checkpoint/preimages.bin`` (None for a file that was absent)."""
    dirs: tuple[str, ...] = ()
    """Directories missing before the turn on the way to an absent file, outermost
    first (removed again by undo when empty)."""
    after: FileState | None = None
    """Its state after the turn (None until sealed)."""

    @property
    def changed(self) -> bool:
        """Whether the turn changed it (True while unknown: not sealed)."""
        return self.after is None or self.after != self.before

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "before": self.before.to_json(),
            "stored": self.stored,
            "dirs": list(self.dirs),
            "after": self.after.to_json() if self.after is not None else None,
        }

    @classmethod
    def from_json(cls, data: Any) -> Entry:
        after = data.get("after")
        return cls(
            str(data["path"]),
            FileState.from_json(data["before"]),
            None if data.get("stored") is None else str(data["stored"]),
            tuple(str(d) for d in data.get("dirs") or ()),
            FileState.from_json(after) if after is not None else None,
        )


@dataclass(slots=True)
class Manifest:
    """``<turn>/checkpoint.json``."""

    kind: str
    """``git`` (a commit on :attr:`ref`), ``files`` (bytes kept in the turn) or ``none``
    (nothing to keep: the plan changes no file)."""
    session: str
    """The session's directory name."""
    turn: str
    """The turn's directory name."""
    created: str
    """When it was taken (UTC, ISO 8601)."""
    entries: list[Entry] = field(default_factory=list)
    """The files, in plan order."""
    ref: str | None = None
    """The git ref (``git`` only)."""
    commit: str | None = None
    """The commit the ref was set to (``git`` only)."""
    sealed: bool = False
    """Whether the state after the turn was recorded."""
    fallback: str = ""
    """Why git was not used although the project is in a repository ('' otherwise)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "kind": self.kind,
            "session": self.session,
            "turn": self.turn,
            "created": self.created,
            "ref": self.ref,
            "commit": self.commit,
            "sealed": self.sealed,
            "fallback": self.fallback,
            "entries": [e.to_json() for e in self.entries],
        }

    @classmethod
    def from_json(cls, data: Any) -> Manifest:
        if not isinstance(data, dict) or data.get("version") != 1:
            raise ValueError("not a version 1 checkpoint manifest")
        kind = str(data["kind"])
        if kind not in ("git", "files", "none"):
            raise ValueError(f"unknown checkpoint kind {kind!r}")
        return cls(
            kind,
            str(data["session"]),
            str(data["turn"]),
            str(data["created"]),
            [Entry.from_json(e) for e in data.get("entries") or ()],
            data.get("ref"),
            data.get("commit"),
            bool(data.get("sealed")),
            str(data.get("fallback") or ""),
        )

    def where(self, turn: Turn) -> str:
        """Where the bytes are, for people: the ref, or the turn's directory for them."""
        if self.kind == "git":
            return f"{self.ref} (commit {(self.commit or '')[:12]})"
        return turn.rel(PREIMAGE_DIR) + "/"


def load_manifest(turn: Turn) -> Manifest | None:
    """The turn's manifest (None when it has none)."""
    from plankit.textio import MAX_TEXT_BYTES, read_bytes_limited

    path = turn.file(MANIFEST_FILE)
    try:
        raw = read_bytes_limited(path, MAX_TEXT_BYTES)  # a FIFO or a device is never waited on
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CheckpointError(
            f"the checkpoint manifest cannot be read ({exc.strerror}); nothing can be "
            "restored from it",
            code="bad-checkpoint",
            path=str(path),
        ) from None
    try:
        return Manifest.from_json(json.loads(raw))
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(
            f"the checkpoint manifest is damaged ({exc}); nothing can be restored from it",
            code="bad-checkpoint",
            path=str(path),
        ) from None


def _save(turn: Turn, manifest: Manifest) -> None:
    # One line for the turn, then one per file: readable, and written by json's C
    # encoder (an indented dump goes through its Python one, ten times slower).
    data = manifest.to_json()
    entries = data.pop("entries")
    lines = ",\n".join(json.dumps(entry, ensure_ascii=False) for entry in entries)
    head = json.dumps(data, ensure_ascii=False)[:-1]
    text = f'{head}, "entries": [\n{lines}\n]}}\n'
    write_text_atomic(turn.file(MANIFEST_FILE), text)


def _targets(root: Path, actions: Sequence[Action], memos: bool) -> list[str]:
    """The files the plan may write, normalised, each once, in plan order."""
    seen: dict[str, None] = {}
    for action in actions:
        if isinstance(action, Create | Edit):
            if check_path(action.path) is not None:
                continue  # the action is refused when it runs: it writes nothing
            key = "/".join(components(action.path))
            if key:
                seen.setdefault(key, None)
    if memos:
        seen.setdefault(MEMOS_PATH, None)
    return list(seen)


def _missing_dirs(root: Path, path: str) -> tuple[str, ...]:
    parts = components(path)[:-1]
    out: list[str] = []
    for depth in range(1, len(parts) + 1):
        prefix = "/".join(parts[:depth])
        if out or not os.path.lexists(root / prefix):
            out.append(prefix)
    return tuple(out)


# --- taking and sealing ------------------------------------------------------------------


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class TurnCheckpoint:
    """The checkpoint of one turn: :meth:`take` before the first action has an effect,
    :meth:`seal` after the last; :attr:`notes` names it for the report."""

    def __init__(self, turn: Turn, *, enabled: bool = True) -> None:
        self.turn = turn
        self.enabled = enabled
        """False (``execute.checkpoint: false``): nothing is taken."""
        self.manifest: Manifest | None = None

    @property
    def root(self) -> Path:
        return self.turn.session.root

    def take(self, actions: Sequence[Action], *, memos: bool) -> Manifest | None:
        """Keep the files ``actions`` may write (and memos.yaml when ``memos``) as they
        are now.  Raises :class:`CheckpointError` when they cannot be kept at all:
        then nothing must run."""
        if not self.enabled:
            return None
        root, turn = self.root, self.turn
        entries: list[Entry] = []
        datas: list[bytes | None] = []
        for path in _targets(root, actions, memos):
            state, data = read_state(root, path)
            if state.special:
                continue  # CREATE and EDIT refuse it: the turn cannot change it
            dirs = () if state.exists else _missing_dirs(root, path)
            entries.append(Entry(path, state, None, dirs))
            datas.append(data)
        manifest = Manifest("none", turn.session.name, turn.name, _now(), entries)
        shutil.rmtree(turn.file(PREIMAGE_DIR), ignore_errors=True)  # a run cut short
        if entries:
            self._store(manifest, datas)
        try:
            _save(turn, manifest)
        except OSError as exc:
            raise CheckpointError(
                f"the checkpoint cannot be saved ({exc.strerror or exc}); nothing was run",
                code="checkpoint-failed",
                path=str(turn.file(MANIFEST_FILE)),
            ) from None
        self.manifest = manifest
        return manifest

    def _store(self, manifest: Manifest, datas: Sequence[bytes | None]) -> None:
        root, turn = self.root, self.turn
        if find_git_dir(root) is not None and shutil.which("git") is not None:
            try:
                entries = manifest.entries
                files = [(e.path, e.before.mode, d) for e, d in zip(entries, datas, strict=True)]
                manifest.ref, manifest.commit, blobs = commit_files(
                    root, turn.session.name, turn.name, files
                )
                for entry, blob in zip(manifest.entries, blobs, strict=True):
                    entry.stored = blob
                manifest.kind = "git"
                return
            except GitFailed as exc:
                manifest.fallback = str(exc)
                for entry in manifest.entries:
                    entry.stored = None
        base = turn.file(PREIMAGE_DIR)
        chunks: list[bytes] = []
        offset = 0
        for entry, data in zip(manifest.entries, datas, strict=True):
            if data is not None:
                entry.stored = f"{offset}:{len(data)}"
                chunks.append(data)
                offset += len(data)
        try:
            base.mkdir(exist_ok=True)
            write_bytes_atomic(base / PACK_FILE, b"".join(chunks))
        except OSError as exc:
            raise CheckpointError(
                f"the checkpoint cannot be written ({exc.strerror or exc}); nothing was run",
                code="checkpoint-failed",
                path=str(base),
            ) from None
        manifest.kind = "files"

    def seal(self) -> None:
        """Record what the turn left in each file (undo's test for later changes)."""
        manifest = self.manifest
        if manifest is None or manifest.sealed:
            return
        for entry in manifest.entries:
            entry.after = read_state(self.root, entry.path)[0]
        manifest.sealed = True
        _save(self.turn, manifest)

    @property
    def notes(self) -> tuple[str, ...]:
        """The report's note naming the checkpoint (none when nothing was kept)."""
        manifest = self.manifest
        if manifest is None or not manifest.entries:
            return ()
        count = len(manifest.entries)
        files = "file" if count == 1 else "files"
        note = (
            f"checkpoint: {manifest.where(self.turn)} keeps the {count} {files} this turn "
            "may change as they were before it; `teddy undo` restores them"
        )
        if manifest.fallback:
            note += f" (git was not used: {manifest.fallback})"
        return (note,)
