"""Manual mode: a person carries the prompt to a chat and brings the plan back.

The whole prompt (the system prompt, ``input.md`` and the message) is written to
``prompt.md`` in the turn and, when a clipboard is available, copied to it.  The
answer is then read from one source:

``clipboard``
    copy the model's whole answer, then press Enter: the clipboard is read.  Needs a
    terminal to wait on; a clipboard that still holds the prompt is refused.
``stdin``
    standard input to its end (on a terminal: paste, then Ctrl-D on an empty line).
``editor``
    ``$VISUAL`` or ``$EDITOR`` opens ``answer.md`` in the turn; paste, save, close.

``auto`` (the default) picks: standard input when it is not a terminal (a pipe or a
file), else the clipboard when the prompt could be copied, else the editor when one
is set, else standard input.  No key and no model are needed.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from plankit.errors import InputError
from plankit.teddy.planning.models import MANUAL, Answer, PlanningCancelled, PlanRequest
from plankit.textio import write_text_atomic

SOURCES = ("auto", "clipboard", "stdin", "editor")
"""Where the answer may come from."""

PROMPT_FILE = "prompt.md"
"""The file in the turn that holds the whole prompt."""
ANSWER_FILE = "answer.md"
"""The file in the turn the editor opens (and that keeps a raw answer that was changed)."""

_EDITOR_NOTE = (
    "<!-- Paste the model's whole answer below, save this file and close the editor.\n"
    "     The prompt is in prompt.md next to this file. Leave the file empty to cancel. -->\n"
)


def manual_prompt(request: PlanRequest) -> str:
    """The text a person pastes into a chat: the system prompt, then the user prompt."""
    return f"{request.system.rstrip()}\n\n{request.prompt.rstrip()}\n"


@dataclass(frozen=True, slots=True)
class ManualOptions:
    """How manual mode reads the answer."""

    source: str = "auto"
    """One of :data:`SOURCES`."""
    copy: bool = True
    """Copy the prompt to the clipboard when there is one."""


def _is_tty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class ManualPlanner:
    """A planner that is a person with a chat window (see the module documentation)."""

    def __init__(
        self,
        options: ManualOptions | None = None,
        *,
        stdin: TextIO | None = None,
        err: TextIO | None = None,
    ) -> None:
        self.options = options if options is not None else ManualOptions()
        if self.options.source not in SOURCES:
            raise InputError(
                f"unknown answer source '{self.options.source}'; use one of {', '.join(SOURCES)}",
                code="bad-source",
            )
        self.stdin = stdin if stdin is not None else sys.stdin
        self.err = err if err is not None else sys.stderr

    @property
    def name(self) -> str:
        """Always :data:`MANUAL`."""
        return MANUAL

    def _say(self, message: str) -> None:
        self.err.write(message + "\n")
        self.err.flush()

    def answer(self, request: PlanRequest) -> Answer:
        """Write and copy the prompt, then read the answer from the chosen source."""
        from plankit import clipboard

        text = manual_prompt(request)
        prompt_path = request.turn_dir / PROMPT_FILE
        write_text_atomic(prompt_path, text)
        copied = False
        if self.options.copy:
            try:
                clipboard.copy(text)
                copied = True
            except clipboard.ClipboardUnavailable:
                copied = False
        where = "on the clipboard and in" if copied else "in"
        self._say(
            f"teddy: manual mode: the prompt ({len(text):,} characters) is {where} {prompt_path}"
        )
        source = self._choose(copied)
        if source == "clipboard":
            answer = self._from_clipboard(text)
        elif source == "editor":
            answer = self._from_editor(request.turn_dir)
        else:
            answer = self._from_stdin()
        if not answer.strip():
            raise PlanningCancelled("no plan was given")
        return Answer(answer, MANUAL)

    def _choose(self, copied: bool) -> str:
        source = self.options.source
        if source != "auto":
            return source
        if not _is_tty(self.stdin):
            return "stdin"
        if copied:
            return "clipboard"
        if _editor() is not None:
            return "editor"
        return "stdin"

    def _from_stdin(self) -> str:
        if _is_tty(self.stdin):
            self._say(
                "Paste it into your chat, then paste the model's whole answer here and press "
                "Ctrl-D on an empty line (Ctrl-C cancels)."
            )
        return self.stdin.read()

    def _from_clipboard(self, prompt: str) -> str:
        from plankit import clipboard

        interactive = _is_tty(self.stdin)
        while True:
            if interactive:
                self.err.write(
                    "Paste the prompt into your chat, copy the model's whole answer, then press "
                    "Enter here (q to cancel) › "
                )
                self.err.flush()
                line = self.stdin.readline()
                if not line:
                    raise PlanningCancelled("end of input")
                if line.strip().lower() in ("q", "quit"):
                    raise PlanningCancelled("you quit")
            try:
                pasted = clipboard.paste()
            except clipboard.ClipboardUnavailable as exc:
                raise InputError(
                    f"no clipboard is available ({exc}); use --answer-from stdin or editor",
                    code="no-clipboard",
                ) from None
            if pasted.strip() and pasted != prompt:
                return pasted
            problem = "is empty" if not pasted.strip() else "still holds the prompt"
            if not interactive:
                raise InputError(
                    f"the clipboard {problem}; copy the model's answer first",
                    code="no-answer",
                )
            self._say(f"The clipboard {problem}: copy the model's answer first.")

    def _from_editor(self, turn_dir: Path) -> str:
        command = _editor()
        if command is None:
            raise InputError(
                "no editor is set: set $EDITOR (or $VISUAL), or use --answer-from stdin",
                code="no-editor",
            )
        path = turn_dir / ANSWER_FILE
        write_text_atomic(path, _EDITOR_NOTE)
        self._say(f"teddy: opening {path} in {command[0]}; paste the answer, save and close it")
        try:
            done = subprocess.run([*command, str(path)], check=False)
        except OSError as exc:
            raise InputError(
                f"cannot start the editor {command[0]}: {exc}", code="no-editor"
            ) from None
        if done.returncode != 0:
            raise InputError(
                f"the editor {command[0]} exited with status {done.returncode}; nothing was read",
                code="editor-failed",
            )
        text = path.read_text(encoding="utf-8")
        path.unlink()  # planning keeps the raw answer here again when it had to change it
        if text.startswith(_EDITOR_NOTE):
            text = text[len(_EDITOR_NOTE) :]
        return text


def _editor() -> list[str] | None:
    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            try:
                words = shlex.split(value)
            except ValueError:
                words = value.split()
            if words:
                return words
    return None
