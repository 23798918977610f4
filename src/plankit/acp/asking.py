"""Asking the user at the terminal for a permission, in a way Ctrl-C can interrupt.

:func:`read_choice` numbers the options (by their names; the letters ``a``/``A``/
``r``/``R`` pick by kind) and reads the answer.  Reading waits on the terminal with
``select`` and a *stop* event, so the client can give up the question (Ctrl-C: the
request is answered ``cancelled``) without a thread left blocked on the terminal, and
without the run waiting for an answer nobody will type.
"""

from __future__ import annotations

import re
import threading
from typing import Any, TextIO

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def literal(text: object) -> str:
    """``text`` as a string safe to show on a terminal: every control character but
    newline and tab (and every bidirectional override) as a visible escape."""
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], str(text))


LETTERS = {"allow_once": "a", "allow_always": "A", "reject_once": "r", "reject_always": "R"}


def option_name(options: list[dict[str, Any]], option_id: str) -> str:
    """The name of option ``option_id`` (its id when the agent gave no name)."""
    for option in options:
        if option.get("optionId") == option_id and option.get("name"):
            return literal(option["name"])
    return literal(option_id)


def _readline(prompt_in: TextIO, stop: threading.Event | None) -> str | None:
    """The next line, or None when ``stop`` is set first (end of input: ``""``)."""
    if stop is None:
        return prompt_in.readline()
    import select

    try:
        fd = prompt_in.fileno()
    except (OSError, ValueError):  # not a real file (tests): nothing to wait on
        return prompt_in.readline()
    while not stop.is_set():
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            return prompt_in.readline()
    return None


def read_choice(
    options: list[dict[str, Any]],
    prompt_out: TextIO,
    prompt_in: TextIO,
    stop: threading.Event | None = None,
) -> str | None:
    """Number the options, read a number (or a letter a/A/r/R); the option id, or None
    at the end of input or when ``stop`` is set."""
    for number, option in enumerate(options, 1):
        letter = LETTERS.get(str(option.get("kind")), "")
        hint = f" [{letter}]" if letter else ""
        prompt_out.write(f"  {number}) {literal(option.get('name'))}{hint}\n")
    while True:
        prompt_out.write("  choice: ")
        prompt_out.flush()
        line = _readline(prompt_in, stop)
        if not line:
            if line is None:
                prompt_out.write("\n")
            return None
        answer = line.strip()
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            return str(options[int(answer) - 1]["optionId"])
        for option in options:
            if answer and LETTERS.get(str(option.get("kind"))) == answer:
                return str(option["optionId"])
        prompt_out.write(f"  please answer 1-{len(options)}\n")


def open_tty() -> tuple[TextIO, TextIO] | None:
    """The controlling terminal, for reading and writing (None without one)."""
    try:
        tty_in = open("/dev/tty", encoding="utf-8")  # noqa: SIM115 - closed by the caller
        tty_out = open("/dev/tty", "w", encoding="utf-8")  # noqa: SIM115
    except OSError:
        return None
    return tty_in, tty_out


def tool_summary(tool_call: dict[str, Any]) -> list[str]:
    """Lines describing a tool call a permission is asked for."""
    lines = [f"{tool_call.get('title') or tool_call.get('toolCallId')} ({tool_call.get('kind')})"]
    for item in tool_call.get("content") or ():
        if item.get("type") == "diff":
            old = item.get("oldText")
            new = str(item.get("newText", ""))
            if old is None:
                lines.append(f"  new file {item.get('path')}:")
                lines += [f"  + {line}" for line in new.splitlines()[:20]]
            else:
                import difflib

                diff = difflib.unified_diff(
                    str(old).splitlines(), new.splitlines(), lineterm="", n=1
                )
                lines.append(f"  edit {item.get('path')}:")
                lines += [f"  {line}" for line in list(diff)[2:40]]
        elif item.get("type") == "content":
            text = item.get("content", {}).get("text")
            if text:
                lines += [f"  {line}" for line in str(text).splitlines()[:10]]
    return [literal(line) for line in lines]


def ask_at_tty(
    header: str, tool_call: dict[str, Any], options: list[dict[str, Any]], stop: threading.Event
) -> str | None:
    """Show ``header`` and the tool call on the terminal and read the choice."""
    tty = open_tty()
    if tty is None:
        return None
    tty_in, tty_out = tty
    with tty_in, tty_out:
        tty_out.write(header)
        lines = tool_summary(tool_call)
        tty_out.write("\n".join(f"  {line}" for line in lines) + "\n")
        return read_choice(options, tty_out, tty_in, stop)
