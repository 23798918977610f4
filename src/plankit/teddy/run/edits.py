"""Applying EDIT's FIND/REPLACE pairs to a file's text.

Each pair is applied to the result of the previous one.  A FIND must match exactly
once.  When it matches nowhere exactly, a match of whole lines that differs only in
trailing whitespace, or in a consistent indentation shift, is accepted if it is
unique (the REPLACE text is shifted the same way), and the edit says so.  Otherwise the
error names the closest region of the file and shows a diff against it; a FIND that
matches several places names the line of every one.

Texts here use ``\\n`` line endings; :func:`edit_file_text` converts a CRLF file in
and out, so the file keeps its line endings and its final newline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plankit.errors import PlankitError
from plankit.teddy.format.model import EditPair


class EditFailed(PlankitError):
    """A FIND that cannot be applied; ``str()`` is the full explanation."""

    def __init__(self, message: str, detail: str = "", *, code: str = "find-no-match") -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        """A diff against the closest region, when there is one."""
        self.code = code
        """``find-empty``, ``find-no-match``, ``find-ambiguous`` or ``replace-unchanged``."""


@dataclass(frozen=True, slots=True)
class Match:
    """Where a FIND matched and what replaces it."""

    start: int
    """Offset of the first character replaced."""
    end: int
    """Offset after the last character replaced."""
    replacement: str
    """The REPLACE text, adjusted to the match (re-indented when the match is shifted)."""
    how: str
    """``exact``, ``trailing whitespace`` or ``indentation``."""


def _line_number(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _line_numbers(text: str, offsets: list[int]) -> list[int]:
    """The 1-based line of each of the ascending ``offsets``, counted in one pass."""
    lines: list[int] = []
    line, pos = 1, 0
    for offset in offsets:
        line += text.count("\n", pos, offset)
        pos = offset
        lines.append(line)
    return lines


def _occurrences(text: str, find: str) -> list[int]:
    """Every offset where ``find`` starts, overlapping ones included: ``}\\n}`` is
    twice in ``}\\n}\\n}``, and applying it at the first would be a guess."""
    starts: list[int] = []
    pos = text.find(find)
    while pos >= 0:
        starts.append(pos)
        pos = text.find(find, pos + 1)
    return starts


def _lines_with_offsets(text: str) -> tuple[list[str], list[int]]:
    lines = text.split("\n")
    offsets = [0]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    return lines, offsets


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _shift(find_lines: list[str], window: list[str]) -> tuple[str, str] | None:
    """``(old, new)`` when ``window`` is ``find_lines`` with indentation ``old`` made ``new``.

    ``old`` is the first non-blank FIND line's indentation; every non-blank FIND line
    must start with it, and the window must hold the same lines with ``new`` in its place.
    """
    first = next((f for f in find_lines if f.strip()), None)
    first_window = next((w for f, w in zip(find_lines, window, strict=True) if f.strip()), "")
    if first is None:
        return None
    old, new = _indent(first), _indent(first_window)
    if old == new:
        return None
    for f, w in zip(find_lines, window, strict=True):
        if not f.strip():
            if w.strip():
                return None
            continue
        if not f.startswith(old) or w.rstrip() != (new + f[len(old) :]).rstrip():
            return None
    return old, new


def _reindent(text: str, old: str, new: str) -> str:
    return "\n".join(
        new + line[len(old) :] if line.strip() and line.startswith(old) else line
        for line in text.split("\n")
    )


def find_match(text: str, find: str, replace: str) -> Match:
    """Where ``find`` applies in ``text``; raises :class:`EditFailed` when it does not."""
    if not find.strip():
        raise EditFailed("the FIND block is empty", code="find-empty")
    starts = _occurrences(text, find)
    if len(starts) == 1:
        return Match(starts[0], starts[0] + len(find), replace, "exact")
    if starts:
        where = ", ".join(str(line) for line in _line_numbers(text, starts))
        raise EditFailed(
            f"the FIND block matches {len(starts)} times (at lines {where}); "
            "include more surrounding lines so that it matches once",
            code="find-ambiguous",
        )
    file_lines, offsets = _lines_with_offsets(text)
    find_lines = find.split("\n")
    size = len(find_lines)
    stripped_find = [line.rstrip() for line in find_lines]
    candidates: list[tuple[int, str, str, str]] = []  # (first line, how, old, new indent)
    for i in range(len(file_lines) - size + 1):
        window = file_lines[i : i + size]
        if [w.rstrip() for w in window] == stripped_find:
            candidates.append((i, "trailing whitespace", "", ""))
            continue
        shift = _shift(find_lines, window)
        if shift is not None:
            candidates.append((i, "indentation", *shift))
    if len(candidates) == 1:
        i, how, old, new = candidates[0]
        start = offsets[i]
        last = i + size - 1
        end = offsets[last] + len(file_lines[last])
        replacement = _reindent(replace, old, new) if how == "indentation" else replace
        return Match(start, end, replacement, how)
    if len(candidates) > 1:
        where = ", ".join(str(c[0] + 1) for c in candidates)
        raise EditFailed(
            f"the FIND block matches nowhere exactly and loosely {len(candidates)} times "
            f"(at lines {where}); copy the text exactly from the file",
            code="find-ambiguous",
        )
    raise _closest(file_lines, find_lines)


def _closest(file_lines: list[str], find_lines: list[str]) -> EditFailed:
    import difflib

    size = max(1, len(find_lines))
    best_ratio, best = 0.0, 0
    target = "\n".join(find_lines)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    for i in range(max(1, len(file_lines) - size + 1)):
        window = "\n".join(file_lines[i : i + size])
        matcher.set_seq1(window)
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best_ratio, best = ratio, i
    region = file_lines[best : best + size]
    if best_ratio < 0.3:
        return EditFailed("the FIND block matches nowhere in the file (nothing is close)")
    diff = "\n".join(
        difflib.unified_diff(
            region,
            find_lines,
            fromfile=f"file, lines {best + 1}-{best + len(region)}",
            tofile="FIND",
            lineterm="",
        )
    )
    return EditFailed(
        f"the FIND block matches nowhere; the closest region is lines {best + 1}-"
        f"{best + len(region)} ({best_ratio:.0%} similar)",
        diff,
    )


def apply_pairs(text: str, pairs: Sequence[EditPair]) -> tuple[str, list[str]]:
    """Apply every pair in order; return the new text and notes on loose matches."""
    notes: list[str] = []
    for number, pair in enumerate(pairs, 1):
        if pair.find == pair.replace:
            raise EditFailed(
                f"pair {number}: the REPLACE block is the same as the FIND block",
                code="replace-unchanged",
            )
        try:
            match = find_match(text, pair.find, pair.replace)
        except EditFailed as exc:
            raise EditFailed(f"pair {number}: {exc.message}", exc.detail, code=exc.code) from None
        if match.how != "exact":
            notes.append(
                f"pair {number} matched at line {_line_number(text, match.start)} "
                f"ignoring differences in {match.how}"
            )
        text = text[: match.start] + match.replacement + text[match.end :]
    return text, notes


@dataclass(frozen=True, slots=True)
class FileEdit:
    """The result of editing one file's text."""

    before: str
    """The text before, line endings normalised to ``\\n``."""
    after: str
    """The text after, line endings normalised to ``\\n``."""
    output: str
    """The text to write, with the file's own line endings."""
    notes: tuple[str, ...]
    """Notes on loose matches and line endings."""


def edit_file_text(original: str, pairs: Sequence[EditPair]) -> FileEdit:
    """Apply ``pairs`` to a file's text, keeping its line endings and final newline."""
    crlf = "\r\n" in original and original.count("\r\n") == original.count("\n")
    before = original.replace("\r\n", "\n") if crlf else original
    after, notes = apply_pairs(before, pairs)
    output = after.replace("\n", "\r\n") if crlf else after
    if crlf:
        notes.insert(0, "the file's CRLF line endings were kept")
    return FileEdit(before, after, output, tuple(notes))


def unified_diff(path: str, before: str, after: str) -> str:
    """The unified diff of an edit, for the report."""
    import difflib

    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
        )
    )
