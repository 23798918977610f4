"""What an answer holds its plan in, besides Markdown: JSON, or a plan it corrects.

Two steps of :func:`plankit.teddy.format.answer.answer_to_plan`, on a text that does not
parse:

``json``
    The answer is JSON, alone or after a short sentence ("Here is the plan:"), bare or
    in a ```` ```json ```` fence: an object holding the plan as a string, the way a
    model calling a function answers (``{"name": "submit_plan", "arguments":
    "{\\"plan\\": \\"# …\\"}"}``, the arguments themselves JSON), or one JSON string
    literal.  A string is a plan when it starts with a ``# `` title and holds an
    Action Plan heading.  Exactly one plan found: the answer becomes that plan (then goes
    the rest of the road); none, or two different ones: the answer is left alone.  A
    Markdown answer that holds a JSON example is never read as JSON: it does not start
    with one.
``wrapper``
    The plan is wrapped in a tag (``<plan>`` on the line before the title, ``</plan>``
    after the plan): the closing tag and what follows are dropped (the opening one goes
    with the text before the title).
``plan``
    The answer holds two or more complete plans (a title, then an Action Plan with a
    heading after it) and the text right before the last one corrects what came
    before ("Actually, here's the corrected plan:", "Sorry, I made a mistake…"): the
    last one is the plan, what comes before it is dropped.  Without such words the
    answer does not say which plan it means: that is reported, and nothing is dropped.
"""

from __future__ import annotations

import json
import re
from typing import Any

from plankit.teddy.format.changes import Change
from plankit.teddy.format.shapes import action_named, section_named

# a JSON fence's opening line and the blanks JSON allows before its value (nothing else),
# or a line that starts with the value
_JSON_START_RE = re.compile(
    r'^[ \t]*(?:```+|~~~+)[ \t]*(?:json)?[ \t]*\r?\n[ \t\r\n]*|^[ \t]*(?=[{"])', re.M
)
_TITLE_RE = re.compile(
    r"^ {0,3}(?:(?P<run>`{3,}|~{3,})(?P<rest>[^\r\n]*)|#[ \t]+(?P<title>[^\r\n]*?)[ \t]*"
    r"|#{2,6}[ \t]+(?P<heading>[^\r\n]*?)[ \t#]*|\*\*(?P<bold>[^\r\n*]+)\*\*[ \t]*:?)\r?$",
    re.M,
)
_CORRECTION_RE = re.compile(
    r"\b(?:actually|correct(?:ed|ion)?|revised|updated|fixed|mistake|sorry|apolog\w*|oops|"
    r"instead|scratch that|my bad|wrong|amended|ignore (?:the|that|my) (?:previous|above|first))\b",
    re.I,
)
_ACTION_PLAN_RE = re.compile(r"^ {0,3}#{1,3}[ \t]+[*_`]*action[ _-]?plan\b", re.I | re.M)
_ACTION_PLAN_HEADING_RE = re.compile(
    r"^ {0,3}(?:#{1,6}[ \t]+|\*\*)[*_`]*action[ _-]?plan\b", re.I | re.M
)
_XML_OPEN_RE = re.compile(r"^[ \t]*<([A-Za-z][\w.-]*)>[ \t]*\r?\n(?:[ \t]*\r?\n)*# ", re.M)
_TITLE_AFTER_RE = re.compile(r"\r?\n[ \t]*\r?\n?# ")
WRAPPERS = frozenset({"", "markdown", "md", "text", "plan"})
MAX_PREAMBLE_LINES = 3
"""How many non-blank lines may come before an answer's JSON (or a corrected plan)."""
LEAD_CHARS = 2000
"""How far into an answer its JSON may start."""


def _plans_in(value: Any, depth: int = 0) -> list[str]:
    """The plan texts among the strings of a decoded JSON ``value``."""
    if depth > 8:
        return []
    if isinstance(value, dict):
        return [p for v in value.values() for p in _plans_in(v, depth + 1)]
    if isinstance(value, list):
        return [p for v in value for p in _plans_in(v, depth + 1)]
    if not isinstance(value, str):
        return []
    text = value.strip()
    if text[:1] in ("{", "["):
        try:
            return _plans_in(json.loads(text), depth + 1)
        except ValueError:
            return []
    if text.startswith("# ") and _ACTION_PLAN_RE.search(value):
        return [value]
    return []


def from_json(body: str) -> tuple[str, Change] | None:
    """The plan an answer that is JSON holds, and the change that says so; None when
    the answer is not JSON holding exactly one plan."""
    m = _JSON_START_RE.search(body, 0, LEAD_CHARS)
    if m is None:
        return None
    lead = body[: m.start()]
    if len([line for line in lead.splitlines() if line.strip()]) > MAX_PREAMBLE_LINES:
        return None
    if "#" in lead or "```" in lead:
        return None
    start = m.end()
    if start >= len(body) or body[start] not in '{"':
        return None
    try:
        value, end = json.JSONDecoder().raw_decode(body, start)
    except ValueError:
        return None
    rest = body[end:].strip()
    if rest.startswith(("```", "~~~")):
        rest = rest.lstrip(rest[0]).strip()  # the closing fence's run
    if rest and (rest[0] in '{["#' or "\n#" in rest):
        return None  # more JSON or Markdown after it: not one JSON answer
    plans = list(dict.fromkeys(_plans_in(value)))
    if len(plans) != 1:
        return None
    line = body.count("\n", 0, start) + 1
    what = "a JSON string" if isinstance(value, str) else "a JSON object"
    return plans[0], Change(
        line,
        f"took the plan out of {what} (the lines of the changes after this one are the plan's own)",
        "json",
    )


def xml_wrapper(body: str) -> tuple[str, Change] | None:
    """An answer that wraps its plan in a tag (``<plan>`` … ``</plan>``, as a model
    asked to answer in tags does): the answer cut before the closing tag's line, and the
    change that says so; None when there is no such tag.  The opening tag, before the
    title, goes with the text before the plan."""
    opening = _XML_OPEN_RE.search(body, 0, LEAD_CHARS)
    if opening is None:
        return None
    tail = body[opening.end() :]
    ends = list(re.finditer(rf"(?m)^[ \t]*</{re.escape(opening[1])}>[ \t]*\r?$", tail))
    if not ends:
        return None
    closing = ends[-1]
    start = opening.end() + closing.start()
    line = body.count("\n", 0, start) + 1
    return body[:start], Change(
        line,
        f"dropped the closing tag </{opening[1]}> of the tag wrapped around the plan, and "
        "what follows it",
        "wrapper",
    )


def last_plan(body: str) -> tuple[int, Change | None] | None:
    """Where the plan an answer means starts when it holds several: ``(offset, change)``
    (the change None: a problem, the answer does not say which plan it means); None
    when it holds one plan or fewer."""
    if len(_ACTION_PLAN_HEADING_RE.findall(body)) < 2:
        return None  # two complete plans have two Action Plan headings
    titles: list[int] = []
    complete: list[bool] = []
    fence: tuple[str, int] | None = None
    in_plan = False  # whether the current plan has reached its Action Plan
    wrapper = -1  # the fence line right before a title, when one wraps the plan
    wrapped: tuple[str, int] | None = None  # that fence, until a bare one of its length
    for m in _TITLE_RE.finditer(body):
        run = m.group("run")
        if fence is not None:
            if run and run[0] == fence[0] and len(run) >= fence[1] and not m["rest"].strip():
                fence = None
            continue
        if run is not None:
            if run[0] == "`" and "`" in m["rest"]:
                continue
            if m["rest"].strip().lower() in WRAPPERS and _TITLE_AFTER_RE.match(body, m.end()):
                wrapper = m.start()  # a fence wrapped around a plan: its title is seen
                wrapped = (run[0], len(run))
                continue
            if wrapped == (run[0], len(run)) and not m["rest"].strip():
                wrapped = None  # the end of the wrapping fence
                continue
            fence = (run[0], len(run))
            continue
        title = m.group("title")
        if title is not None and section_named(title) is None and action_named(title) is None:
            titles.append(wrapper if wrapper >= 0 else m.start())
            wrapper = -1
            complete.append(False)
            in_plan = False
            continue
        text = title if title is not None else m.group("heading") or m.group("bold") or ""
        if not titles:
            continue
        if section_named(text) == "Action Plan":
            in_plan = True
        elif in_plan and action_named(text) is not None:
            complete[-1] = True
    if len(titles) < 2 or sum(complete) < 2 or not complete[-1]:
        return None
    start = titles[-1]
    before = body[:start].rstrip().split("\n")[-MAX_PREAMBLE_LINES:]
    line = body.count("\n", 0, start) + 1
    if not _CORRECTION_RE.search("\n".join(before)):
        return start, None
    cue = next((b.strip() for b in reversed(before) if b.strip()), "")
    return start, Change(
        1,
        f"dropped lines 1-{line - 1}: the answer corrects that plan with the one at line "
        f"{line} ('{cue[:60]}')",
        "plan",
    )


def several_plans(body: str, start: int) -> Change:
    """The problem of an answer holding several plans without saying which it means."""
    line = body.count("\n", 0, start) + 1
    return Change(
        line,
        "the answer holds more than one plan and does not say which one it means (this "
        f"one starts at line {line}): keep one plan and delete the others",
        "unsure",
    )
