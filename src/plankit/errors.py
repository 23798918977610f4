"""Errors and diagnostics shared by every plan system.

The exception tree::

    PlankitError                  anything plankit raises on purpose
    ├── InputError                input the user can fix: a missing file, bytes that are not
    │                             UTF-8, a file too large; names the place and the fix
    │                             (most packages' own errors derive from it)
    ├── PlanError                 a plan that does not fit its format; carries every
    │                             Diagnostic found in one pass
    ├── ControlError              the agentflow control plane refuses (a rule and a message)
    ├── PlanDirError              invalid agentflow plan directories (every problem)
    ├── FrontMatterError          front matter that cannot be read (agentflow, with its line)
    ├── EditFailed                a FIND that cannot be applied (teddy.run.edits; its code
    │                             and the diff against the closest region)
    ├── GitFailed                 a git command of a checkpoint failed (teddy.run.gitcmd)
    ├── PreviewError              a change made in a preview that cannot become an action
    └── StoreError, FetchError    a checklist store / a context URL that failed

Every exception plankit raises on purpose is in this tree (``tests/test_errors.py``
holds it): a command catches :class:`PlankitError` and prints one line, never a
traceback.

A :class:`Diagnostic` is one problem in a document, the only shape problems take in
plankit (a TeDDy plan's parse and pre-flight problems, a checklist's, an agentflow
plan directory's): a stable ``code`` a program can match on, a ``message`` that says
what was expected and what was found, the 1-based ``line`` it is on (0: the whole
document) and, when known, the ``file``; a ``detail`` may add lines (a diff).
Command-line tools print it as ``FILE:LINE: CODE message``; every ``--json`` output
(``teddy``, ``plankit checklist``, ``agentctl``) and every MCP tool that returns
errors as JSON prints it through :func:`diagnostic_json` as::

    {"code": "...", "message": "...", "line": 12, "file": "plan.md"}

where ``line`` is 1-based or ``null`` (the problem concerns the whole document, or there
is no document) and ``file`` a path or ``null``.  A line 0 is never printed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


def diagnostic_json(
    code: str, message: str, line: int | None = None, file: str | None = None
) -> dict[str, object]:
    """The one JSON form of a diagnostic: ``{"code", "message", "line", "file"}``.

    ``line`` is printed when it is a 1-based line and as ``null`` otherwise (0 and
    ``None`` both mean "no line"); ``file`` is a path or ``null`` (an empty path is
    ``null`` too).
    """
    return {
        "code": code,
        "message": message,
        "line": line if line is not None and line > 0 else None,
        "file": file or None,
    }


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in a document.

    Diagnostics sort by line, then code and message (then file), the order reports use.
    """

    line: int
    """1-based line the problem is on (0 when it concerns the whole document)."""
    code: str
    """Stable identifier, kebab-case, e.g. ``edit-unpaired``."""
    message: str
    """What was expected and what was found, with a fix when one is likely."""
    file: str | None = None
    """The document the problem is in, when the diagnostic carries it."""
    detail: str = ""
    """What more than one line says, shown after it: for a FIND that matches nowhere,
    the unified diff of the file's closest region against it.  Not in the JSON form."""

    def _key(self) -> tuple[int, str, str, str]:
        return (self.line, self.code, self.message, self.file or "")

    def __lt__(self, other: Diagnostic) -> bool:
        return self._key() < other._key()

    def __le__(self, other: Diagnostic) -> bool:
        return self._key() <= other._key()

    def __gt__(self, other: Diagnostic) -> bool:
        return self._key() > other._key()

    def __ge__(self, other: Diagnostic) -> bool:
        return self._key() >= other._key()

    def format(self, path: str | None = None) -> str:
        """One line: ``PATH:LINE: CODE message`` (``PATH: CODE message`` without a line,
        ``CODE message`` without a path); ``path`` defaults to :attr:`file`."""
        where = path if path is not None else self.file
        if not where:
            return f"{self.code} {self.message}"
        if self.line > 0:
            return f"{where}:{self.line}: {self.code} {self.message}"
        return f"{where}: {self.code} {self.message}"

    def by_file(self) -> tuple[str, int, str, str]:
        """A sort key by file, then line (whole-file problems first), code and message:
        the order of reports that span several files."""
        return (self.file or "", self.line, self.code, self.message)

    def describe(self) -> str:
        """``line N: CODE message`` (without ``line N:`` for the whole document), then
        :attr:`detail` on the lines after it: how a report and a re-plan message show it."""
        where = f"line {self.line}: " if self.line > 0 else ""
        head = f"{where}{self.code} {self.message}"
        return f"{head}\n{self.detail}" if self.detail else head

    def to_json(self, file: str | None = None) -> dict[str, object]:
        """The JSON form (:func:`diagnostic_json`); ``file`` is used when the diagnostic
        carries none."""
        return diagnostic_json(self.code, self.message, self.line, self.file or file)


def diagnostics_json(
    diagnostics: Iterable[Diagnostic], file: str | None = None
) -> list[dict[str, object]]:
    """Every diagnostic in its JSON form; ``file`` names the document for those that do
    not carry one (``{"errors": diagnostics_json(...)}`` is what ``--json`` prints)."""
    return [d.to_json(file) for d in diagnostics]


def diagnostics_of(error: PlankitError) -> list[Diagnostic]:
    """A plankit error as the diagnostics a ``--json`` output lists: a
    :class:`PlanError`'s, an :class:`InputError`'s one (with its file and line), or one
    with the error's ``code`` (``error`` when it has none) and its text."""
    if isinstance(error, PlanError):
        return list(error.diagnostics)
    if isinstance(error, InputError):
        return [error.diagnostic()]
    return [Diagnostic(0, str(getattr(error, "code", "") or "error"), str(error))]


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
        """The error as a :class:`Diagnostic` with its file (line 0 when it concerns the
        whole file); the message is :attr:`detail`, without the place."""
        return Diagnostic(self.line or 0, self.code, self.detail, self.path)


class PlanError(PlankitError):
    """A plan that does not fit its format, with every problem found."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics: tuple[Diagnostic, ...] = tuple(sorted(diagnostics))
        count = len(self.diagnostics)
        first = self.diagnostics[0] if count else None
        summary = f"line {first.line}: {first.code} {first.message}" if first else "invalid plan"
        more = f" (and {count - 1} more)" if count > 1 else ""
        super().__init__(summary + more)
