"""What making a model's answer a plan changed: :class:`Change` and :class:`Preprocessed`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Change:
    """One repair, reported on stderr by ``teddy preprocess``."""

    line: int
    """1-based line in the input: the fence that was lengthened, the opening fence of a
    block that never closed, or the first line dropped."""
    message: str
    """What was done there."""
    kind: str = "fence"
    """``fence`` (a fence lengthened or inserted), or what unwrapping a model's answer
    dropped (:mod:`plankit.teddy.format.answer`): ``preamble`` (text before the plan's
    title), ``wrapper`` (a fence around the whole plan, and what followed it) or
    ``remarks`` (text after the last action's block)."""


@dataclass(frozen=True, slots=True)
class Preprocessed:
    """The sanitizer's result."""

    text: str
    """The repaired text (the input itself when nothing needed repair)."""
    changes: tuple[Change, ...]
    """What was changed, in line order."""

    @property
    def changed(self) -> bool:
        """Whether the text differs from the input."""
        return bool(self.changes)
