"""What making a model's answer a plan changed: :class:`Change` and :class:`Preprocessed`."""

from __future__ import annotations

from dataclasses import dataclass

ACTION_KINDS = frozenset({"fence", "tail"})
"""Kinds of change that alter what an action does, against the text read as it stands
(a file's content, a command, an edit): they are listed wherever a plan's repairs are
(``teddy preprocess``, ``teddy plan``, the re-plan feedback, report.md)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One repair, reported on stderr by ``teddy preprocess``."""

    line: int
    """1-based line in the input: the fence that was lengthened, the opening fence of a
    block that never closed, or the first line dropped."""
    message: str
    """What was done there."""
    kind: str = "fence"
    """``fence`` (a fence lengthened or inserted), ``tail`` (a closing fence with a
    remark after it on its line: the remark dropped), what unwrapping a model's answer
    dropped (:mod:`plankit.teddy.format.answer`): ``preamble`` (text before the plan's
    title), ``wrapper`` (a fence around the whole plan, and what followed it),
    ``remarks`` (text after the last action's block), ``plan`` (an earlier plan the
    answer corrects), ``json`` (the JSON the plan came in), or a structural repair
    (:mod:`plankit.teddy.format.shapes`): ``heading`` (a section or action heading
    written another way), ``metadata`` (a metadata line written another way),
    ``separator`` (a rule or an HTML comment between actions).  ``unsure`` is not a
    change but a problem (:attr:`Preprocessed.problems`)."""

    @property
    def touches_action(self) -> bool:
        """Whether this change alters what an action does (see :data:`ACTION_KINDS`)."""
        return self.kind in ACTION_KINDS


@dataclass(frozen=True, slots=True)
class Preprocessed:
    """The sanitizer's result."""

    text: str
    """The repaired text (the input itself when nothing needed repair)."""
    changes: tuple[Change, ...]
    """What was changed, in line order."""
    problems: tuple[Change, ...] = ()
    """What could not be repaired without a guess (kind ``unsure``): the line and the
    two readings.  The text is then left as it is where they are."""

    @property
    def changed(self) -> bool:
        """Whether the text differs from the input."""
        return bool(self.changes)
