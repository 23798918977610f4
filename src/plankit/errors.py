"""Errors and diagnostics shared by every plan system.

The exception tree::

    PlankitError                  anything plankit raises on purpose
    ├── InputError                input the user can fix: a missing file, bytes that are not
    │                             UTF-8, a file too large; names the place and the fix
    └── PlanError                 a plan that does not fit its format; carries every
                                  Diagnostic found in one pass

A :class:`Diagnostic` is one problem in a document: a stable ``code`` a program can
match on, a ``message`` that says what was expected and what was found, and the
1-based ``line`` it is on.  Command-line tools print it as ``FILE:LINE: CODE message``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class Diagnostic:
    """One problem found in a document."""

    line: int
    """1-based line the problem is on (0 when it concerns the whole document)."""
    code: str
    """Stable identifier, kebab-case, e.g. ``edit-unpaired``."""
    message: str
    """What was expected and what was found, with a fix when one is likely."""

    def format(self, path: str) -> str:
        """Render as ``PATH:LINE: CODE message`` (one line)."""
        return f"{path}:{self.line}: {self.code} {self.message}"

    def to_dict(self) -> dict[str, object]:
        """The JSON form used by every ``--json`` output."""
        return {"line": self.line, "code": self.code, "message": self.message}


class PlankitError(Exception):
    """Base class of every error plankit raises on purpose."""


class InputError(PlankitError):
    """Input the user can fix; ``str(err)`` is a complete one-line explanation."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "input-invalid",
        path: str | None = None,
        line: int | None = None,
    ):
        self.code = code
        self.path = path
        self.line = line
        self.detail = message
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{message}")

    def diagnostic(self) -> Diagnostic:
        """The error as a :class:`Diagnostic` (line 0 when it concerns the whole file)."""
        return Diagnostic(self.line or 0, self.code, self.detail)


class PlanError(PlankitError):
    """A plan that does not fit its format, with every problem found."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics: tuple[Diagnostic, ...] = tuple(sorted(diagnostics))
        count = len(self.diagnostics)
        first = self.diagnostics[0] if count else None
        summary = f"line {first.line}: {first.code} {first.message}" if first else "invalid plan"
        more = f" (and {count - 1} more)" if count > 1 else ""
        super().__init__(summary + more)
