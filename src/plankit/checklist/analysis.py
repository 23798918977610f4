"""The Analysis section as the spec's ``PlanAnalysis``: read from its text, written
back from its fields.

The section is free text, so the fields are read from the lines that name them
(``Spreadsheet:``, ``Key sheets:``, ``Target ranges:`` with ``Read:``/``Write:`` lines
under it, ``Current state:``), in any case; every other line is kept in ``other``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class PlanAnalysis:
    """The Analysis section read as the spec's ``PlanAnalysis`` fields.

    A value that is only a template placeholder (``[sheet names]``) reads as unset.
    """

    spreadsheet: str = ""
    """``Spreadsheet: …`` ('' when absent or a placeholder)."""
    key_sheets: tuple[str, ...] = ()
    """``Key sheets: A, B`` split at commas."""
    read: tuple[str, ...] = ()
    """Each ``Read: Sheet!A1:B2 (what)`` line, under ``Target ranges:`` or not."""
    write: tuple[str, ...] = ()
    """Each ``Write: …`` line."""
    current_state: str | None = None
    """``Current state: …``, if any."""
    other: tuple[str, ...] = ()
    """Every other line of the section (``Dependencies: …``), as written."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the spec's fields in snake case, plus ``other``."""
        return {
            "spreadsheet": self.spreadsheet,
            "key_sheets": list(self.key_sheets),
            "target_ranges": {"read": list(self.read), "write": list(self.write)},
            "current_state": self.current_state,
            "other": list(self.other),
        }


_FIELD_RE = re.compile(r"[ \t]*(?:[-*+][ \t]+)?([A-Za-z][A-Za-z ]*?)[ \t]*:[ \t]*(.*)")
_PLACEHOLDER_RE = re.compile(r"\[[^\]]*\]")


def _value(text: str) -> str:
    """``text`` trimmed; '' when it is only a template placeholder (``[sheet names]``)."""
    text = text.strip()
    return "" if _PLACEHOLDER_RE.fullmatch(text) else text


def parse_analysis(text: str | None) -> PlanAnalysis | None:
    """The fields of an Analysis section's text (:attr:`Plan.analysis`); None for None."""
    if text is None:
        return None
    spreadsheet = ""
    key_sheets: list[str] = []
    read: list[str] = []
    write: list[str] = []
    state: str | None = None
    other: list[str] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        m = _FIELD_RE.fullmatch(line)
        key = m.group(1).strip().lower() if m is not None else ""
        value = _value(m.group(2)) if m is not None else ""
        if key == "spreadsheet":
            spreadsheet = value
        elif key in ("key sheets", "sheets"):
            key_sheets = [s.strip() for s in value.split(",") if _value(s)]
        elif key in ("target ranges", "target range"):
            if value:  # "Target ranges: Orders!A2:F500" on one line
                other.append(line.strip())
        elif key == "read":
            if value:
                read.append(value)
        elif key == "write":
            if value:
                write.append(value)
        elif key == "current state":
            state = value or None
        else:
            other.append(line.strip())
    return PlanAnalysis(
        spreadsheet=spreadsheet,
        key_sheets=tuple(key_sheets),
        read=tuple(read),
        write=tuple(write),
        current_state=state,
        other=tuple(other),
    )


def render_analysis(analysis: PlanAnalysis) -> list[str]:
    """The section's lines (without the heading) for ``analysis``, in the spec's shape;
    unset fields are left out, ``other`` lines follow as bullets."""
    out: list[str] = []
    if analysis.spreadsheet:
        out.append(f"- Spreadsheet: {analysis.spreadsheet}")
    if analysis.key_sheets:
        out.append(f"- Key sheets: {', '.join(analysis.key_sheets)}")
    if analysis.read or analysis.write:
        out.append("- Target ranges:")
        out += [f"  - Read: {r}" for r in analysis.read]
        out += [f"  - Write: {w}" for w in analysis.write]
    if analysis.current_state:
        out.append(f"- Current state: {analysis.current_state}")
    for line in analysis.other:
        out.append(line if line.startswith(("- ", "* ", "+ ")) else f"- {line}")
    return out
