"""One road from a model's answer to a plan: unwrap it, then repair its fences.

``teddy plan``, manual mode, the re-plan loop, ``teddy acp`` and ``teddy preprocess``
all turn what a model (or a person copying from a chat window) gave into a plan with
:func:`answer_to_plan`:

1. A text that parses as a plan is returned byte for byte unchanged.
2. *Unwrapping.*  When the text does not start with the plan's ``# Title``, the title
   is looked for: the first level-1 heading outside fenced blocks, or one that opens a
   fenced block whose info string is empty or names Markdown or text (a fence wrapped
   around the plan, of any length, backticks or tildes).  What comes before it is
   dropped ("Here is the plan:"), unless it holds a section or action heading of its
   own.  A wrapping fence ends at a bare fence of its exact length; since the plan
   inside may hold fences of that length too, the last few such lines are tried, and
   the end of the text (an answer cut off before its closing fence): the one whose plan
   parses with the fewest repairs wins, the latest on a tie.  What follows the wrapping
   fence is dropped.
3. *Fences* are repaired by the sanitizer (:mod:`plankit.teddy.format.preprocess`).
4. *Remarks.*  Text after the last action's block (a CREATE, EDIT, EXECUTE or RESEARCH)
   or metadata list (READ, PRUNE) cannot belong to the action ("Hope this helps!"): it
   is dropped when the plan then parses.  After CHAT_WITH_USER, INVOKE or CONCLUDE all
   text is the message and stays.

Every other byte stays as it was: line endings (CRLF included), a byte-order mark, the
plan's own text.  Each step is reported as a :class:`~plankit.teddy.format.preprocess.Change`
with its line in the input.  The result is idempotent: a plan that parses is kept by
rule 1, and one that does not starts with its title, has fences the sanitizer leaves
alone, and remarks that could not be dropped the first time.

Cost: for a text that starts with its title and whose fences need nothing, one walk of
the sanitizer and no parse; each step that proposes a change parses once to confirm it.

:func:`answer_edits` gives the same answer for a text already known not to parse, as
edits of that text rather than a repaired copy, where the fence repair alone decides it:
a caller holding a large plan (``teddy parse``, to say whether ``teddy preprocess``
would make it valid) can then let the input go before the repaired plan is built and
parsed, instead of holding both (a 10 MB plan with one emoji is 40 MB in memory).
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache

from plankit.teddy.format.changes import Change, Preprocessed
from plankit.teddy.format.envelope import from_json, last_plan, several_plans, xml_wrapper
from plankit.teddy.format.fence_events import REMARKS_RE
from plankit.teddy.format.parse import action_type_of, check_plan, section_of
from plankit.teddy.format.parse.tail import fence_with_text, is_sentence, unclosed_reading
from plankit.teddy.format.preprocess import propose
from plankit.teddy.format.sanitizer import OutOfBudget, Sanitizer
from plankit.teddy.format.shapes import reshape

WRAPPER_INFOS = frozenset({"", "markdown", "md", "mdx", "text", "txt", "plain", "plan", "teddy"})
"""Info strings of a fence that may wrap a whole plan."""

CLOSERS_TRIED = 4
"""How many candidate ends of a wrapping fence are tried (from the last one back)."""

# Fence lines and level-1 headings: where a plan can start.
_START_RE = re.compile(
    r"^ {0,3}(?:(?P<run>`{3,}|~{3,})[ \t]*(?P<info>[^\r\n]*?)[ \t]*|#[ \t]+\S[^\r\n]*)\r?$",
    re.MULTILINE,
)
# Section and action headings, FIND:/REPLACE: labels: text holding one is part of a plan.
_HEADING_RE = re.compile(
    r"^ {0,3}(?:#{2,3}[ \t]+(?P<text>[^\r\n]*?)[ \t#]*"
    r"|#{0,6}[ \t]*[`*_]*(?i:find|replace)[`*_ \t]*:[`*_ \t]*)\r?$",
    re.MULTILINE,
)


@lru_cache(maxsize=32)
def _closer_re(char: str, length: int) -> re.Pattern[str]:
    c = re.escape(char)
    return re.compile(rf"^ {{0,3}}{c}{{{length}}}(?!{c})[ \t]*\r?$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class _Found:
    """Where the plan's title is in an answer that does not start with it."""

    start: int
    """Offset of the title's line."""
    opener: re.Match[str] | None
    """The fence wrapped around the plan, if any."""


@dataclass(frozen=True, slots=True)
class _Attempt:
    """A plan text after the sanitizer and the remarks step."""

    text: str
    changes: tuple[Change, ...]
    parses: bool | None  # None: not known (no step needed a parse)
    open_end: bool = False  # a block that ran to the end of the text was closed
    problems: tuple[Change, ...] = ()  # what could not be repaired without a guess


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _excerpt(text: str, width: int = 40) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= width else first[: width - 1] + "…"


def _lines(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def _find_plan(body: str) -> _Found | None:
    """Where the plan starts, when the text does not start with its title (rule 2)."""
    inside: re.Match[str] | None = None  # the fence the scan is in
    wrapper = False  # whether that fence may still wrap the plan
    for m in _START_RE.finditer(body):
        run = m.group("run")
        if inside is None:
            if run is None:
                preamble = body[: m.start()]
                if not preamble.strip() or _has_plan_headings(preamble):
                    return None  # the text starts with its title, or the title is not here
                return _Found(m.start(), None)
            if run[0] == "`" and "`" in m.group("info"):
                continue  # not a fence line
            inside, wrapper = m, m.group("info").lower() in WRAPPER_INFOS
            continue
        opened = inside.group("run")
        if run is not None:
            if not m.group("info") and run[0] == opened[0] and len(run) >= len(opened):
                inside = None  # the fence closes
            continue
        if wrapper:
            wrapper = False  # only a title right after the opening fence makes it a wrapper
            if not body[inside.end() : m.start()].strip():
                preamble = body[: inside.start()]
                return None if _has_plan_headings(preamble) else _Found(m.start(), inside)
    return None


def _has_plan_headings(text: str) -> bool:
    """Whether ``text`` holds a section or action heading, or an EDIT label."""
    for m in _HEADING_RE.finditer(text):
        heading = m.group("text")
        if heading is None or section_of(heading) or action_type_of(heading):
            return True
    return False


def _repair(plan: str) -> _Attempt:
    """Steps 3 to 5 on ``plan``, whose lines are the input's (the lines dropped before it
    kept as blank ones)."""
    shaped, shapes = reshape(plan)
    if shapes and check_plan(plan)[0] is not None:
        return _Attempt(plan, (), True)  # rule 1
    if shapes:
        again = _repair_fences(shaped)
        changes = tuple(sorted((*shapes, *again.changes), key=lambda c: c.line))
        return _Attempt(again.text, changes, again.parses, again.open_end, again.problems)
    return _repair_fences(plan)


def _repair_fences(plan: str) -> _Attempt:
    """Steps 4 and 5 on ``plan``, whose lines are the input's."""
    proposal = propose(plan)
    if not proposal.changes and proposal.remarks is None:
        return _Attempt(plan, (), None)
    if check_plan(plan)[0] is not None:
        return _Attempt(plan, (), True)  # rule 1
    if proposal.open_end:
        tail = _open_tail(plan, proposal.text)
        if isinstance(tail, Change):
            return _Attempt(plan, (), False, problems=(tail,))
        if tail is not None:
            cut, note = tail
            again = _repair_fences(cut)
            changes = tuple(sorted((note, *again.changes), key=lambda c: c.line))
            return _Attempt(again.text, changes, again.parses, again.open_end, again.problems)
    changes = proposal.changes
    if proposal.remarks is not None:
        end, start = proposal.remarks
        trimmed = proposal.text[:end]
        if check_plan(trimmed)[0] is not None:
            first = _line(plan, start)
            last = _line(plan, len(plan.rstrip()))
            note = Change(
                first,
                f"dropped the text after the last action ({_lines(first, last)}): "
                f"'{_excerpt(plan[start:])}'",
                "remarks",
            )
            return _Attempt(trimmed, (*changes, note), True, proposal.open_end)
    return _Attempt(proposal.text, changes, None, proposal.open_end)


def _open_tail(plan: str, repaired: str) -> Change | tuple[str, Change] | None:
    """The end of the block the sanitizer closed at the end of ``plan`` (giving
    ``repaired``), when it is not the end the sanitizer gave it (:mod:`.parse.tail`):
    a problem naming both readings, or, for a closing fence with a sentence after it on
    its line, ``plan`` cut after that fence and the change that says so."""
    from plankit.markdown.tree import Fence, parse_document

    doc = parse_document(repaired)
    last = doc.blocks[-1] if doc.blocks else None
    if not isinstance(last, Fence) or not last.closed or not last.content.strip():
        return None
    # the block runs to the end of ``plan``: its lines are the last ones there, as
    # written (an indented opening fence takes that indentation off its content)
    end = at = len(plan.removesuffix("\n").removesuffix("\r"))
    for _ in range(last.end - last.start - 1):
        at = plan.rfind("\n", 0, max(at, 0))
    at += 1
    raw = plan[at:end]
    opener = plan[: max(at - 1, 0)].rstrip("\r").rsplit("\n", 1)[-1].lstrip(" ")
    length = len(opener) - len(opener.lstrip(last.char))
    if at <= 0 or length < 3:  # not the line of an opening fence
        return None
    first = _line(plan, at)
    fence = fence_with_text(raw, last.char, length)
    if fence is not None and is_sentence(fence.group("rest")):
        line = _line(plan, at + fence.start())
        end = at + fence.start("rest")
        newline = "\r\n" if "\r\n" in plan else "\n"
        cut = plan[:end].rstrip(" \t") + newline
        last_line = _line(plan, len(plan.rstrip()))
        note = Change(
            line,
            "the closing fence here has text after it: read as the end of the block opened "
            f"at line {first - 1} and a remark after the plan, dropped "
            f"({_lines(line, last_line)}): '{_excerpt(plan[end:])}'",
            "tail",
        )
        return cut, note
    reading = unclosed_reading(raw, first, last.char, length)
    if reading is None:
        return None
    return Change(
        first - 1,
        f"the block opened here is never closed, and its end cannot be told: {reading}",
        "unsure",
    )


def _unwrapped(body: str, found: _Found) -> tuple[_Attempt, list[Change]]:
    """The plan inside the answer ``body`` (rule 2), repaired, and what was dropped."""
    start = found.start
    # the lines before the title are kept as blank ones while the plan is repaired, so
    # that every change, and every line its message names, is a line of the input
    blank = ("\r\n" if "\r\n" in body[:start] else "\n") * (_line(body, start) - 1)
    dropped: list[Change] = []
    opener = found.opener
    lead = body[: opener.start() if opener is not None else start]
    if lead.strip():
        first = _line(body, len(lead) - len(lead.lstrip()))
        last = _line(body, len(lead.rstrip()))
        dropped.append(
            Change(
                first,
                f"dropped the text before the plan's title ({_lines(first, last)}): "
                f"'{_excerpt(lead)}'",
                "preamble",
            )
        )
    if opener is None:
        return _blanked(blank, body[start:]), dropped
    run = opener.group("run")
    closers = _closer_re(run[0], len(run)).finditer(body, start)
    ends: list[int | None] = [m.start() for m in closers]
    del ends[:-CLOSERS_TRIED]
    ends.reverse()
    if not ends or body[ends[0] or 0 :].partition("\n")[2].strip():
        ends.append(None)  # the answer may be cut off before the wrapping fence's end
    best: tuple[tuple[bool, bool, bool, int, bool, int], _Attempt, int | None] | None = None
    unsure: tuple[_Attempt, int] | None = None  # the last end, when it reads two ways
    for rank, end in enumerate(ends):
        # an end that leaves sections or actions after it cuts the plan short
        short = end is not None and _has_plan_headings(body[end:])
        attempt = _blanked(blank, _inner(body, start, end))
        parses = attempt.parses
        if parses is None:
            parses = check_plan(attempt.text)[0] is not None
        # what follows a wrapping fence's end is nothing, a blank line, or a remark
        rest = "" if end is None else body[end:].partition("\n")[2]
        odd = bool(rest.strip()) and rest[:1] not in "\r\n" and not _remark_after(rest)
        chat = REMARKS_RE.match(rest) and is_sentence(rest.strip().partition("\n")[0])
        if rank == 0 and end is not None and attempt.problems and not short and chat:
            unsure = attempt, end  # the wrapper's end, then a remark of the chat
        score = (
            short,
            not parses,
            attempt.open_end,  # its last block had to be closed: probably cut inside it
            len(attempt.changes),
            odd,
            rank,
        )
        if best is None or score < best[0]:
            best = (score, attempt, end)
        if not short and parses and not attempt.changes and not odd:
            break
    assert best is not None
    _, attempt, end = best
    if end is None and unsure is not None:  # not the last block's end: reported, not guessed
        attempt, end = unsure
    fence = run + opener.group("info")
    where = f"closed at line {_line(body, end)}" if end is not None else "never closed"
    dropped.append(
        Change(
            _line(body, opener.start()),
            f"dropped the {fence} fence wrapped around the plan ({where})",
            "wrapper",
        )
    )
    if end is not None:
        after_closer = body.find("\n", end)
        rest = body[after_closer + 1 :] if after_closer >= 0 else ""
        if rest.strip():
            offset = len(body) - len(rest)
            first = _line(body, offset + len(rest) - len(rest.lstrip()))
            last = _line(body, offset + len(rest.rstrip()))
            dropped.append(
                Change(
                    first,
                    f"dropped the text after the plan's fence ({_lines(first, last)}): "
                    f"'{_excerpt(rest)}'",
                    "remarks",
                )
            )
    return attempt, dropped


def _remark_after(rest: str) -> bool:
    """Whether ``rest`` (after a wrapping fence's end) starts as a remark: set apart by a
    blank line, or a sentence right under it with no fence after (not `EOF`, a block's)."""
    said = is_sentence(rest.partition("\n")[0]) and not _START_RE.search(rest)
    return REMARKS_RE.match(rest) is not None or said


def _blanked(blank: str, plan: str) -> _Attempt:
    """``plan`` repaired after the blank lines ``blank``, which the result leaves out."""
    attempt = _repair(blank + plan)
    return replace(attempt, text=attempt.text.removeprefix(blank))


def _inner(body: str, start: int, end: int | None) -> str:
    """The plan from ``start`` to the wrapping fence's closing line at ``end`` (or to the
    end of the text), without the blank lines before that fence."""
    inner = body[start:end]
    size = len(inner.rstrip())
    if end is None and size == len(inner):
        return inner
    newline = "\r\n" if inner.startswith("\r\n", size) else "\n"
    return inner[:size] + newline


def answer_to_plan(text: str) -> Preprocessed:
    """The plan in a model's answer ``text``, unwrapped and repaired (see the module
    documentation); ``changes`` says what was done, with lines in ``text``."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom) :]
    dropped: list[Change] = []
    held = from_json(body)
    if held is not None and check_plan(body)[0] is None:
        body = held[0]
        dropped.append(held[1])
    tagged = xml_wrapper(body)
    if tagged is not None and check_plan(body)[0] is None:
        body = tagged[0]
        dropped.append(tagged[1])
    envelope = len(dropped)  # the JSON and tag changes, which a corrected plan keeps
    found = _find_plan(body)
    if found is None:
        attempt = _repair(body)
    else:
        if not dropped and check_plan(body)[0] is not None:
            return Preprocessed(text, ())  # rule 1
        attempt, unwrapped = _unwrapped(body, found)
        dropped += unwrapped
    several = last_plan(body)
    if several is not None and not _parses(attempt):
        start, note = several
        if note is None:
            attempt = replace(attempt, problems=(*attempt.problems, several_plans(body, start)))
        else:
            attempt, dropped = _corrected(body, start, note, dropped[:envelope])
    if not attempt.changes and not dropped:
        return Preprocessed(text, (), attempt.problems)
    changes = tuple(sorted((*dropped, *attempt.changes), key=lambda c: c.line))
    return Preprocessed(bom + attempt.text, changes, attempt.problems)


def _parses(attempt: _Attempt) -> bool:
    if attempt.parses is None:
        return check_plan(attempt.text)[0] is not None
    return attempt.parses


def _corrected(
    body: str, start: int, note: Change, dropped: list[Change]
) -> tuple[_Attempt, list[Change]]:
    """The plan that starts at ``start`` in an answer that corrects an earlier one."""
    # the dropped lines are kept as blank ones while the plan is repaired, so that
    # every change keeps its line in the input
    newline = "\r\n" if "\r\n" in body[:start] else "\n"
    lead = newline * (_line(body, start) - 1)
    body = lead + body[start:]
    dropped = [*dropped, note]
    found = _find_plan(body)
    if found is None:
        attempt = _repair(body)
    else:
        attempt, unwrapped = _unwrapped(body, found)
        dropped += unwrapped
    if attempt.text.startswith(lead):
        attempt = replace(attempt, text=attempt.text[len(lead) :])
    return attempt, dropped


def repairs_note(what: str, changes: tuple[Change, ...]) -> str:
    """``what``, then one Markdown list item per change or problem, with its line: how
    ``teddy acp``, the re-plan feedback and report.md say what was repaired."""
    items = [f"- line {c.line}: {c.message}" for c in changes]
    return f"{what}:\n" + "\n".join(items)


Edit = tuple[int, int, str]
"""``(start, end, replacement)``: the text's characters from ``start`` to ``end`` replaced."""


def answer_edits(text: str) -> tuple[tuple[Edit, ...], tuple[Change, ...]] | None:
    """What :func:`answer_to_plan` does to ``text``, a text that does not parse, as
    ``(edits, changes)``: the edits of ``text`` in order (:func:`apply_edits` applies
    them) and the changes it reports; ``((), ())`` when it changes nothing.

    None where only :func:`answer_to_plan` can say: a text that does not start with its
    title or starts with a byte-order mark, remarks after the last action, a fence
    repair that needs a second reading.  Otherwise :func:`answer_to_plan` takes the
    sanitizer's single reading as it is (rule 1 keeps only a text that parses), which is
    what this gives, without building the repaired text.
    """
    if text.startswith("\ufeff") or _find_plan(text) is not None:
        return None
    if from_json(text) or xml_wrapper(text) or last_plan(text) or reshape(text)[1]:
        return None  # steps that only answer_to_plan takes
    sanitizer = Sanitizer(text)
    try:
        sanitizer.run()
    except OutOfBudget:
        return (), ()  # the sanitizer leaves such a text as it is
    if sanitizer.remarks() is not None:
        return None
    if not sanitizer.edits:
        return (), ()
    if sanitizer.unsure or sanitizer.open_end:
        return None  # a block closed at the end of the text: its end may be a remark
    changes = sanitizer.changes()
    return (tuple(sorted(sanitizer.edits)), changes) if changes else ((), ())


ENCODE_CHUNK = 1 << 16
"""Characters encoded at a time by :func:`apply_edits`."""


def apply_edits(texts: list[str], edits: tuple[Edit, ...]) -> str:
    """The text ``texts`` holds, taken out of it, with ``edits`` (in order, not
    overlapping) applied.

    The caller gives the text up: it is encoded into a memory map the size of the
    result's UTF-8, a chunk at a time, and let go before the result is decoded from it,
    so that the text and the result are never in memory together (a 10 MB plan with one
    emoji is 40 MB as text, 10 as UTF-8).  The map goes back to the system when it is
    closed, as a buffer grown in the heap need not.
    """
    text = texts.pop()
    size = sum(
        len(chunk) if chunk.isascii() else len(chunk.encode("utf-8", "surrogatepass"))
        for chunk in _edited_chunks(text, edits)
    )
    if not size:
        return ""
    with mmap.mmap(-1, size) as data:
        for chunk in _edited_chunks(text, edits):
            data.write(chunk.encode("utf-8", "surrogatepass"))
        del text
        return str(data, "utf-8", "surrogatepass")


def _edited_chunks(text: str, edits: tuple[Edit, ...]) -> Iterator[str]:
    """``text`` with ``edits`` applied, in pieces of at most :data:`ENCODE_CHUNK`
    characters (and the replacements)."""
    pos = 0
    for start, end, replacement in (*edits, (len(text), len(text), "")):
        for at in range(pos, start, ENCODE_CHUNK):
            yield text[at : min(at + ENCODE_CHUNK, start)]
        yield replacement
        pos = end
