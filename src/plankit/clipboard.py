"""The system clipboard, through pyperclip, with one error type for "there is none".

pyperclip needs a clipboard program (xclip, xsel or wl-clipboard on Linux, pbcopy on
macOS, nothing extra on Windows); on a machine without one, :class:`ClipboardUnavailable`
says so.
"""

from __future__ import annotations


class ClipboardUnavailable(Exception):
    """No clipboard can be used on this machine."""


def paste() -> str:
    """The clipboard's text."""
    import pyperclip

    try:
        return str(pyperclip.paste())
    except pyperclip.PyperclipException as exc:
        raise ClipboardUnavailable(_reason(exc)) from None


def copy(text: str) -> None:
    """Put ``text`` on the clipboard."""
    import pyperclip

    try:
        pyperclip.copy(text)
    except pyperclip.PyperclipException as exc:
        raise ClipboardUnavailable(_reason(exc)) from None


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    first = text.split(". ")[0].rstrip(".")
    return first or "pyperclip found no clipboard program"
