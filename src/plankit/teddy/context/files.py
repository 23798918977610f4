"""Context files: ``turn.context``, ``session.context``, ``.teddy/global.context``.

One root-relative path (``src/app.py``) or http(s) URL a line; blank lines and lines
starting with ``#`` are skipped.  Entries are normalised (``./src//app.py`` →
``src/app.py``) and kept once, at their first position.  :func:`parse_entry` also says
which entries are never read: those that could lead out of the project root.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from plankit.teddy.context.urls import is_url_entry

MAX_CONTEXT_FILE_BYTES = 1024 * 1024
"""Largest context file read (1 MiB: tens of thousands of entries)."""


@dataclass(frozen=True, slots=True)
class ContextEntry:
    """One line of a context file, classified."""

    key: str
    """The entry normalised (``./src//app.py`` → ``src/app.py``; a URL as written); two
    entries with the same key are the same resource."""
    kind: Literal["path", "url", "refused"]
    """A project path, an http(s) URL, or an entry that is never read."""
    reason: str = ""
    """Why a refused entry is refused (one sentence)."""


def parse_entry(entry: str) -> ContextEntry:
    """Classify one context entry; paths that could leave the project root are refused.

    Refused: absolute paths, ``~`` paths, any ``..`` component, NUL bytes, URLs whose
    scheme is not http or https.  (A symbolic link leading out is refused when read.)
    """
    text = entry.strip()
    if is_url_entry(text):
        scheme = text.split(":", 1)[0].lower()
        if scheme in ("http", "https"):
            return ContextEntry(text, "url")
        return ContextEntry(text, "refused", f"only http and https URLs are read, not {scheme}:")
    if "\0" in text:
        return ContextEntry(text, "refused", "the path contains a NUL byte.")
    if text.startswith("~"):
        return ContextEntry(
            text, "refused", "a home-directory path (~); entries are relative to the project root."
        )
    if os.path.isabs(text) or text.startswith(("/", "\\")):
        return ContextEntry(
            text,
            "refused",
            "an absolute path; entries are relative to the project root (src/app.py).",
        )
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        return ContextEntry(text, "refused", "the path goes up out of the project root (..).")
    return ContextEntry("/".join(parts) or ".", "path")


def normalize_entry(entry: str) -> str:
    """The normalised form of a context entry (``./docs//a.md`` → ``docs/a.md``)."""
    return parse_entry(entry).key


def _unique(entries: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for entry in entries:
        if not entry.strip():
            continue
        key = normalize_entry(entry)
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out


def read_context_file(path: Path) -> list[str]:
    """The entries of a context file, normalised, first occurrence kept.

    One path or URL a line; blank lines and lines starting with ``#`` are skipped.  A
    missing file has no entries.  An unreadable file raises
    :class:`~plankit.errors.InputError`.
    """
    from plankit.errors import InputError
    from plankit.textio import read_bytes_limited

    try:
        data = read_bytes_limited(path, MAX_CONTEXT_FILE_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise InputError(
            f"cannot be read ({exc.strerror})", code="unreadable", path=str(path)
        ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text (byte offset {exc.start}); save the file as UTF-8",
            code="not-utf8",
            path=str(path),
        ) from None
    lines = (line.strip() for line in text.splitlines())
    return _unique([line for line in lines if line and not line.startswith("#")])


def write_context_file(path: Path, entries: Sequence[str]) -> None:
    """Write ``entries`` (normalised, first occurrence kept) one a line, atomically.

    Raises :class:`ValueError` for an entry that cannot be written as one line that
    reads back as itself: one with a line break, or one starting with ``#``.
    """
    from plankit.textio import write_text_atomic

    for entry in entries:
        if "\n" in entry or "\r" in entry:
            raise ValueError(f"a context entry cannot contain a line break: {entry!r}")
        if entry.strip().startswith("#"):
            raise ValueError(f"a context entry cannot start with '#' (a comment): {entry!r}")
    unique = _unique(entries)
    write_text_atomic(path, "".join(entry + "\n" for entry in unique))
