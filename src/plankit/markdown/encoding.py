"""Repair of text damaged by double encoding.

Text that was UTF-8, decoded as Windows-1252 and encoded again reads ``âœ…`` for ✅,
``â€”`` for — and ``ðŸŸ¢`` for 🟢.  Plans and checklists seen in the wild carry this
damage; :func:`repair_double_encoding` reads such sequences back as the characters
they were, and leaves every other character alone.
"""

from __future__ import annotations

import re

# Windows-1252 maps bytes 0x80-0x9F to these characters; the five bytes it leaves
# undefined come through as the C1 control characters of the same number.
_CP1252_HIGH = "€\x81‚ƒ„…†‡ˆ‰Š‹Œ\x8dŽ\x8f\x90‘’“”•–—˜™š›œ\x9džŸ"
_CONT = "[" + re.escape(_CP1252_HIGH) + "\u00a0-\u00bf]"
_DAMAGED_RE = re.compile(
    f"[\u00c2-\u00df]{_CONT}|[\u00e0-\u00ef]{_CONT}{{2}}|[\u00f0-\u00f4]{_CONT}{{3}}"
)
_TO_BYTE = {ch: 0x80 + i for i, ch in enumerate(_CP1252_HIGH)}


def _byte(ch: str) -> int:
    return _TO_BYTE.get(ch, ord(ch))


def _fix(match: re.Match[str]) -> str:
    damaged = match.group(0)
    try:
        return bytes(_byte(c) for c in damaged).decode("utf-8")
    except UnicodeDecodeError:
        return damaged


def repair_double_encoding(text: str) -> str:
    """Undo UTF-8 → Windows-1252 → UTF-8 double encoding where it is found."""
    if text.isascii():
        return text
    return _DAMAGED_RE.sub(_fix, text)
