"""The context budget: what leaves ``input.md`` when it would be too large.

``context.max_bytes`` and ``context.max_tokens`` in ``.teddy/config.yaml`` cap the size
of ``input.md``.  When the assembled payload is over either, resources leave it in this
order until it fits: the turn's execution reports (``.teddy/…/report.md`` entries),
oldest first; then the other resources the AI added to the turn's context (READ),
oldest first.  The user's own resources (``global.context``, ``session.context``) never
leave, nor does anything that is also listed there.  ``input.md`` lists what was left
out, so the model can READ it again when it needs it.

Tokens are counted with the tokenizer of the model's provider when one is installed
(``tiktoken`` for OpenAI models), else estimated as one token per four bytes of UTF-8.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_REPORT_RE = re.compile(r"^\.teddy/.+/report\.md$")


@dataclass(frozen=True, slots=True)
class Budget:
    """The limits (None: no limit of that kind) and how tokens are counted."""

    max_bytes: int | None = None
    """The most bytes ``input.md`` may have."""
    max_tokens: int | None = None
    """The most tokens ``input.md`` may have."""
    model: str | None = None
    """The model whose tokenizer counts tokens (None: the estimate)."""

    @property
    def limited(self) -> bool:
        """Whether there is any limit."""
        return self.max_bytes is not None or self.max_tokens is not None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A resource of the turn's context that may leave."""

    key: str
    """The context entry."""
    position: int
    """Its position in turn.context (0: the oldest)."""
    size: int
    """Bytes its section takes in ``input.md``."""
    tokens: int
    """Tokens its section takes."""


def is_report(key: str) -> bool:
    """Whether a context entry is an execution report TeDDy added."""
    return _REPORT_RE.match(key) is not None


@lru_cache(maxsize=8)
def _encoder(model: str) -> Any:
    """The model's tokenizer (tiktoken's, when installed and it knows the model)."""
    try:
        import tiktoken  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    try:
        return tiktoken.encoding_for_model(model)
    except (KeyError, ValueError):
        return None


def count_tokens(text: str, model: str | None = None) -> int:
    """Tokens in ``text``: the model's tokenizer when installed, else bytes / 4."""
    if model:
        encoder = _encoder(model.rsplit("/", 1)[-1])
        if encoder is not None:
            return len(encoder.encode(text, disallowed_special=()))
    return -(-len(text.encode("utf-8")) // 4)


def choose_left_out(
    total_bytes: int, total_tokens: int, candidates: Sequence[Candidate], budget: Budget
) -> list[str]:
    """The keys to leave out so that the payload fits ``budget``, in leaving order:
    reports oldest first, then the other candidates oldest first."""

    def over(size: int, tokens: int) -> bool:
        return (budget.max_bytes is not None and size > budget.max_bytes) or (
            budget.max_tokens is not None and tokens > budget.max_tokens
        )

    order = sorted(candidates, key=lambda c: (not is_report(c.key), c.position))
    left: list[str] = []
    size, tokens = total_bytes, total_tokens
    for candidate in order:
        if not over(size, tokens):
            break
        left.append(candidate.key)
        size -= candidate.size
        tokens -= candidate.tokens
    return left
