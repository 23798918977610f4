"""A project file read for ``input.md``: checked where it leads and on the file actually
opened, read without blocking or following a link out, and cut to a size limit.

:func:`file_body` resolves a root-relative path (symbolic links inside the project are
followed, one leading out is refused), refuses a path the ``protected_paths.read``
rules protect, opens the file without blocking (a FIFO or a device is never read), then
checks the opened file again: where it really is (a link swapped in after the check)
and whether it is a protected file under another name (a hard link).  Only then is its
content read, at most the size limit plus one byte.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BINARY_SNIFF_BYTES = 8192
"""A NUL byte among the first this many bytes makes a file binary."""


def plain(message: str) -> str:
    """A message as one plain line of text (no line breaks, bounded length)."""
    line = " ".join(message.split())
    return line if len(line) <= 300 else line[:299] + "…"


def _utf8_boundary(chunk: bytes) -> int:
    """The largest length ≤ len(chunk) that does not split a UTF-8 character."""
    end = len(chunk)
    for back in range(1, min(4, end) + 1):
        byte = chunk[end - back]
        if byte & 0xC0 != 0x80:  # ASCII or a lead byte
            need = 1 if byte < 0x80 else 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return end if back >= need else end - back
    return end


def _cut_point(chunk: bytes) -> int:
    """Where to cut an over-long file: after the last newline in the second half of
    ``chunk`` when there is one, else on a UTF-8 character boundary."""
    newline = chunk.rfind(b"\n")
    if newline >= 0 and newline + 1 >= len(chunk) // 2:
        return newline + 1
    return _utf8_boundary(chunk)


@dataclass(frozen=True, slots=True)
class Body:
    """What is shown under one resource header."""

    text: str | None
    """The content to fence, or None when the resource is not shown."""
    note: str = ""
    """A plain line: why nothing is shown, or the cut marker after the fence."""


def cut_text(data: bytes, size: int, max_bytes: int) -> tuple[bytes, str]:
    """``data`` cut to at most ``max_bytes`` with its marker ('' when nothing is cut)."""
    if len(data) <= max_bytes:
        return data, ""
    kept = data[: _cut_point(data[:max_bytes])]
    left = size - len(kept)
    return kept, (
        f"[… cut: {left:,} more bytes left out; the resource has {size:,} bytes "
        f"and at most {max_bytes:,} are shown]"
    )


def as_content(text: str) -> str:
    if text.endswith("\n"):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
    return text


class Resolver:
    """Real paths of root-relative paths, each directory resolved once per payload, and
    the protected-path rules (``protected_paths.read``) each file is checked against."""

    def __init__(self, root: Path, rules: Sequence[str]) -> None:
        self.root = os.path.realpath(root)
        self._prefix = self.root if self.root.endswith(os.sep) else self.root + os.sep
        self._dirs: dict[str, str] = {"": self.root}
        self.rules = tuple(rules)
        self._links: set[tuple[int, int]] | None = None

    def protected_rule(self, real: str) -> str | None:
        """The rule that protects the real path ``real`` (inside the root), or None."""
        from plankit.protected_paths import protected_by

        rel = os.path.relpath(real, self.root).replace(os.sep, "/")
        return protected_by(rel, self.rules) if rel != "." else None

    def links_to_protected(self, st: os.stat_result) -> bool:
        """Whether ``st`` is a protected file under another name (a hard link)."""
        if st.st_nlink < 2 or not self.rules:
            return False
        if self._links is None:
            from plankit.protected_paths import protected_links

            self._links = protected_links(Path(self.root), self.rules)
        return (st.st_dev, st.st_ino) in self._links

    def real(self, rel: str) -> str:
        """``os.path.realpath(root/rel)``, with a cache for the directory part."""
        head, _, name = rel.rpartition("/")
        parent = self._dirs.get(head)
        if parent is None:
            parent = self._dirs[head] = os.path.realpath(os.path.join(self.root, head))
        path = os.path.join(parent, name)
        return os.path.realpath(path) if os.path.islink(path) else path

    def inside(self, real: str) -> bool:
        """Whether a real path is the root or below it."""
        return real == self.root or real.startswith(self._prefix)


def _opened_where(fd: int) -> str | None:
    """Where an open file really is (Linux: /proc/self/fd), or None when unknown."""
    try:
        return os.path.realpath(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None


def _protected(rule: str, where: str) -> Body:
    return Body(
        None,
        plain(
            f"Refused: {where}, a protected path: plans may not read paths matching '{rule}' "
            "(protected_paths.read in .teddy/config.yaml)."
        ),
    )


def _opened_refusal(
    resolver: Resolver, fd: int, stats: tuple[os.stat_result, os.stat_result], *, checked: bool
) -> Body | None:
    where = _opened_where(fd)
    if where is not None and where.endswith(" (deleted)"):
        # the name opened was removed or replaced while the file was read
        return Body(None, "Changed while it was read (replaced or removed); not shown.")
    if where is not None and not resolver.inside(where):
        return Body(None, "Refused: a symbolic link on this path leads outside the project root.")
    if not checked:
        return None
    if where is not None:
        rule = resolver.protected_rule(where)
        if rule is not None:
            return _protected(rule, f"it leads to `{os.path.relpath(where, resolver.root)}`")
    if any(resolver.links_to_protected(st) for st in stats):
        return Body(
            None,
            "Refused: a hard link to a protected file (protected_paths.read in "
            ".teddy/config.yaml); not read.",
        )
    return None


def file_body(resolver: Resolver, rel: str, max_bytes: int, *, checked: bool = True) -> Body:
    """The content of root-relative ``rel``.  Protected paths (``checked``) are refused
    where the path leads before it is opened, and again on the file actually opened: where
    it is (a link swapped in meanwhile) and whether it is a protected file under another
    name (a hard link)."""
    try:
        real = resolver.real(rel)
    except OSError as exc:  # the path changed while it was resolved
        return Body(None, plain(f"Cannot be read: {exc.strerror or exc}."))
    if not resolver.inside(real):
        return Body(None, "Refused: a symbolic link on this path leads outside the project root.")
    rule = resolver.protected_rule(real) if checked else None
    if rule is not None:
        return _protected(rule, f"it leads to `{os.path.relpath(real, resolver.root)}`")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags)
    except (FileNotFoundError, NotADirectoryError):
        return Body(None, "Not found: no such file in the project.")
    except IsADirectoryError:
        return Body(None, "A directory, not a file: name the files to read instead.")
    except OSError as exc:
        return Body(None, plain(f"Cannot be read: {exc.strerror or exc}."))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return Body(None, "A directory, not a file: name the files to read instead.")
        if not stat.S_ISREG(st.st_mode):
            return Body(None, "Not a regular file (a device, socket or pipe); not read.")
        # read what the file holds (one more byte shows growth), never the whole limit
        data = os.read(fd, min(st.st_size, max_bytes) + 1)
        while st.st_size < len(data) <= max_bytes:  # it grew since the stat
            more = os.read(fd, max_bytes + 1 - len(data))
            if not more:
                break
            data += more
        after = os.fstat(fd)
        size = max(after.st_size, len(data))
        # what was read is what is checked, after the read: where the file opened really
        # is (a link swapped in after the check above), and whether it is a protected file
        # under another name (a hard link, even one removed meanwhile)
        refusal = _opened_refusal(resolver, fd, (st, after), checked=checked)
        if refusal is not None:
            return refusal
    except OSError as exc:
        return Body(None, plain(f"Cannot be read: {exc.strerror or exc}."))
    finally:
        os.close(fd)
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return Body(None, f"Binary file, {size:,} bytes; not shown.")
    kept, marker = cut_text(data, size, max_bytes)
    try:
        text = kept.decode("utf-8")
    except UnicodeDecodeError:
        return Body(None, f"Binary file (not UTF-8 text), {size:,} bytes; not shown.")
    if "\0" in text:  # past the first 8 KiB: shown, as Markdown readers do, as U+FFFD
        text = text.replace("\0", "\ufffd")
    return Body(as_content(text.removeprefix("\ufeff")), marker)
