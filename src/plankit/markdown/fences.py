"""The dynamic code fencing rule.

A fenced block's fence must be strictly longer than the longest run of the fence
character anywhere in its content, and at least three long.  Then no line of the
content can close the block early, whatever the content is (a Markdown file with
code blocks, a snippet that itself contains fences, …).
"""

from __future__ import annotations

import re
from functools import lru_cache

FENCE_LINE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
"""A line that opens or closes a fenced block: indentation, the fence run, the rest."""


@lru_cache(maxsize=8)
def _run_re(char: str) -> re.Pattern[str]:
    return re.compile(re.escape(char) + "+")


def longest_run(content: str, char: str = "`") -> int:
    """Length of the longest run of ``char`` in ``content`` (0 when there is none)."""
    if char not in content:
        return 0
    return max(len(m) for m in _run_re(char).findall(content))


def fence_for(content: str, char: str = "`") -> str:
    """The fence to wrap ``content`` in: ``char`` repeated max(3, longest run + 1) times."""
    if char not in ("`", "~"):
        raise ValueError(f"a fence is made of '`' or '~', not {char!r}")
    return char * max(3, longest_run(content, char) + 1)


def fenced(content: str, info: str = "", char: str = "`") -> str:
    """``content`` as a fenced block (no final newline), following the dynamic rule."""
    fence = fence_for(content, char)
    if content:
        return f"{fence}{info}\n{content}\n{fence}"
    return f"{fence}{info}\n{fence}"
