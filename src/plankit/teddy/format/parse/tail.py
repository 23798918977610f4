"""The end of a block that is never closed: content, or a remark after the plan?

A model that leaves its last block open and then adds a remark ("Let me know if the
tests fail…") writes a text with two readings: the remark is the block's last lines,
or it is a note after the plan.  Nothing in the text says which, so neither the parser
nor ``teddy preprocess`` picks one: the problem names the lines and both readings.

A closing fence with text after it on the same line (```` ``` Let me know… ````) is
not a closing fence in CommonMark, so the block runs on to the end of the text.  When
that line is the block's last fence line, nothing but prose follows it, and the text
after the fence is a sentence (three words or more, or ending like one), the fence
closes the block and the text is a remark: no file ends with a fence line followed by a
sentence that opens no block.  Any other text after such a fence (``` python``, one or
two words) could open an inner block as well: both readings are named.

Prose, here, is what a remark is written as: lines that start at the margin with a
letter, an emphasis mark or an emoji, hold no character that only code uses
(``= { } [ ] ; < > $ | & \\ @ ^ ~ #``) and do not end with ``:`` (a block opener in
Python, an announcement of a code block in Markdown) or ``,``; the paragraph ends as a
sentence does (``.``, ``!``, ``?``, ``…`` or an emoji).  A command (``pytest -q``) or a
line of code does not; the last sentence of a Markdown file does, and is then named as
one of the two readings.
"""

from __future__ import annotations

import re

_PROSE_LINE_RE = re.compile(r"[*_]*[^\W\d_][^=\{\}\[\];<>$|&\\@^~#\n]*")
_CODE_END = (":", ",", "(", "+")
_SENTENCE_END_RE = re.compile(r"[.!?…]\W*$|[\U0001F300-\U0001FAFF\u2600-\u27BF]\W*$")
_FENCE_TEXT_RE = re.compile(r"^ {0,3}(?P<run>`{3,}|~{3,})[ \t]*(?P<rest>\S[^\n]*)$", re.MULTILINE)
_FENCE_RE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})", re.MULTILINE)


def _prose_lines(paragraph: str) -> bool:
    """Whether every line of ``paragraph`` is written as prose is (see above)."""
    lines = [line.rstrip() for line in paragraph.split("\n")]
    if not lines or not lines[0]:
        return False
    for line in lines:
        if not _PROSE_LINE_RE.fullmatch(line) and not _starts_with_emoji(line):
            return False
        if line.endswith(_CODE_END):
            return False
    return True


def is_prose(paragraph: str) -> bool:
    """Whether ``paragraph`` (lines without a blank one) reads as a remark: prose lines
    ending as a sentence does."""
    return _prose_lines(paragraph) and _SENTENCE_END_RE.search(paragraph) is not None


def _starts_with_emoji(line: str) -> bool:
    first = line[:1]
    return bool(first) and ("\U0001f300" <= first <= "\U0001faff" or "\u2600" <= first <= "\u27bf")


def is_sentence(text: str) -> bool:
    """Whether ``text`` after a fence on its line is a sentence, not an info string:
    prose of three words or more, or ending as a sentence does."""
    text = text.strip()
    return _prose_lines(text) and (len(text.split()) >= 3 or is_prose(text))


def _paragraphs(text: str) -> list[tuple[int, str]]:
    """The paragraphs of ``text`` (split at blank lines), with their offsets."""
    # a line with something on it, then each next one that has something too
    return [
        (m.start(), m.group()) for m in re.finditer(r"[^\n]*\S[^\n]*(?:\n[^\n]*\S[^\n]*)*", text)
    ]


def prose_tail(content: str) -> int | None:
    """Where the remark that ends ``content`` starts (an offset in it): its last
    paragraphs when they are prose, or else its last lines when each is a sentence
    (a remark written right under the last command); None when the content does not end
    so, or is nothing but that."""
    plain = content.replace("\r", "")
    paragraphs = _paragraphs(plain)
    start: int | None = None
    for offset, paragraph in reversed(paragraphs):
        if not is_prose(paragraph):
            break
        start = offset
    if start is None or not plain[:start].strip():
        start = None
        lines = plain.split("\n")
        while lines and not lines[-1].strip():
            lines.pop()
        at = len(lines)
        while at > 0 and is_prose(lines[at - 1]):
            at -= 1
        if at < len(lines):
            start = sum(len(line) + 1 for line in lines[:at])
    if start is None or not plain[:start].strip():
        return None
    return _offset_with_cr(content, start)


def _offset_with_cr(content: str, offset: int) -> int:
    """``offset`` in ``content`` without its CRs, as an offset in ``content``."""
    if "\r" not in content:
        return offset
    seen = 0
    for i, ch in enumerate(content):
        if seen == offset:
            return i
        if ch != "\r":
            seen += 1
    return len(content)


def fence_with_text(content: str, char: str, length: int) -> re.Match[str] | None:
    """The last fence line of ``content`` when it is a run of ``char`` at least
    ``length`` long with text after it, and only prose or blank lines follow it."""
    last: re.Match[str] | None = None
    for m in _FENCE_RE.finditer(content):
        last = m
    if last is None:
        return None
    line_end = content.find("\n", last.start())
    # a CRLF line's CR is read as part of the text after the run, as by the search below
    found = _FENCE_TEXT_RE.fullmatch(
        content, last.start(), len(content) if line_end < 0 else line_end
    )
    if found is None or found.group("run")[0] != char or len(found.group("run")) < length:
        return None
    after = "" if line_end < 0 else content[line_end + 1 :].replace("\r", "")
    if any(not is_prose(p) for _, p in _paragraphs(after)):
        return None
    return _FENCE_TEXT_RE.search(content, last.start())


TAIL_CHARS = 4096
"""How much of a block's end is read for a remark: a remark is short, a block may not be."""


def unclosed_reading(content: str, first: int, char: str, length: int) -> str | None:
    """What a never-closed block whose content (starting at line ``first``) ends
    ambiguously could mean, as a sentence naming the lines and both readings; None when
    its end is not ambiguous.  Only the content's last :data:`TAIL_CHARS` characters are
    read."""
    if len(content) > TAIL_CHARS:
        cut = content.find("\n", len(content) - TAIL_CHARS)
        if cut < 0:
            return None
        first += content.count("\n", 0, cut + 1)
        content = "\u2026\n" + content[cut + 1 :]  # a line of content stands for the rest
        first -= 1
    fence = fence_with_text(content, char, length)
    if fence is not None and not is_sentence(fence.group("rest")):
        line = first + content.count("\n", 0, fence.start())
        text = fence.group().strip()
        return (
            f"line {line} ('{_clip(text)}') either closes it, with text after the fence, or "
            f"opens a block inside it: put the closing {char * length} alone on its line, "
            "or close the inner block"
        )
    if fence is not None:
        return None
    start = prose_tail(content)
    if start is None:
        return None
    line = first + content.count("\n", 0, start)
    last = first + content.rstrip().count("\n")
    before = first + content[:start].rstrip().count("\n")
    what = (
        f"line {line} is either its last line"
        if line == last
        else f"lines {line}-{last} are either its last lines"
    )
    them = "it" if line == last else "them"
    return (
        f"{what} or a remark after the plan ('{_clip(content[start:].strip())}'): close it "
        f"after line {last} to keep {them}, or after line {before} and delete {them}"
    )


def _clip(text: str, width: int = 40) -> str:
    text = text.split("\n", 1)[0].strip()
    return text if len(text) <= width else text[: width - 1] + "…"
