"""What single lines of a PLAN.md look like: a task, a phase heading, a note, a line
ending.  Only regular expressions, so that the fast paths that find one line
(:mod:`plankit.checklist.scan`, :mod:`plankit.checklist.edit`) load no Markdown parser;
:mod:`plankit.checklist.structure` reads the whole plan with them."""

from __future__ import annotations

import re

TASK_LINE_RE = re.compile(r"([ \t]*)([-*+]) \[(.)\] (\d+\.\d+(?:\.\d+)?)([ \t]+)(.+)")
"""A task line: indentation, bullet, checkbox character, step, separator, content
(use with ``fullmatch``).  Like the spec's ``TASK_REGEX``, with indentation and the
``*``/``+`` bullets allowed."""

PHASE_LINE_RE = re.compile(r"### (?:Phase|phase|PHASE) (\d+): (.+)")
"""A phase heading line, ``### Phase N: Name`` (use with ``fullmatch``)."""

PHASE_TEXT_RE = re.compile(r"(?:Phase|phase|PHASE) (\d+): (.+)")
"""A phase heading's text, without the ``###`` (use with ``fullmatch``)."""

NOTE_SEP_RE = re.compile(r"(?:^|[ \t])—[ \t]+")
"""Where a blocked reason or review note starts: an em dash with space after it."""

NEWLINE_RE = re.compile(r"\r\n|\r|\n")
"""A line ending: ``\\r\\n``, ``\\r`` or ``\\n`` (what the Markdown parser counts)."""

SECTIONS = ("analysis", "questions", "notes")
"""How the headings of the sections that are not phases start (lower case)."""
