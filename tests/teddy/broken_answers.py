"""A corpus of model answers broken the way chat models break plans, made from valid plans.

:func:`corpus` builds, from a seed, valid plans written in the styles the format allows
(fences of backticks or tildes, exactly as long as needed or longer, ``FIND:`` labels in
backticks, bold or as headings, action headings with or without backticks), then breaks
each one in one to three of the ways models do:

``short-fences``
    the fences of blocks whose content has fences of its own written with three
    characters (the opening one, the closing one, or both);
``unclosed``
    a block's closing fence left out, before later actions that have fenced blocks
    of their own (or at the end of the plan);
``preamble``
    chat text before the title ("Here is the plan:"), sometimes with a code block;
``wrapper``
    the whole plan in a fence (``markdown``, ``md``, bare; backticks or tildes; three to
    five long), closed or cut off, and sometimes followed by remarks;
``remarks``
    text after the last action's block ("Let me know if…");

and, on top, line endings made CRLF and a byte-order mark added.  Each case keeps the
valid plan it came from, written with the same line endings and mark: the plan the
broken answer is meant to be.  Nothing random is drawn outside ``random.Random(seed)``,
so a seed always gives the same corpus.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

# --- what plans hold --------------------------------------------------------------------

PYTHON = [
    'VERSION = "1.2.0"',
    'def greet(name: str) -> str:\n    """Say hello."""\n    return f"Hello, {name}!"',
    "import json\n\n\ndef load(path):\n    with open(path) as handle:\n        return json.load(handle)",
    'class Config:\n    """Settings.\n\n    Example::\n\n        cfg = Config()\n    """\n\n    debug = False',
    'SQL = """\nSELECT id, name\nFROM users\n"""',
    "# A comment that looks like a heading\nx = 1\n## another\ny = 2",
    'HELP = """Usage:\n\n```\ntool run\n```\n"""',
    "def test_add():\n    assert 1 + 1 == 2",
]
SHELL = [
    "pytest -q",
    "ls -l docs/",
    "python -m pip install -e .\npytest tests/test_version.py -q",
    "cat > notes.txt <<'EOF'\nfirst line\n```\nnot a fence for the shell\n```\nEOF",
    "git status --short",
    "mkdir -p build && cd build && cmake .. && make",
]
MARKDOWN = [
    "# Guide\n\nInstall it:\n\n```bash\npip install app\n```\n\nThen run:\n\n```python\nimport app\napp.run()\n```",
    "# Notes\n\nNothing fenced here, just text.\n\n- one\n- two",
    "# API\n\n## load\n\n~~~python\nload('x')\n~~~\n\n## save\n\n```python\nsave('x')\n```",
    "# Writing plans\n\nAn action looks like this:\n\n```markdown\n### `EXECUTE`\n- **Description:** Run the tests.\n````shell\npytest\n````\n```\n\nKeep fences long.",
    "# Changelog\n\n## 1.2.0\n\n- Added `load`.\n\n```diff\n- old\n+ new\n```",
    "# Example\n\n````markdown\n```python\nprint('nested')\n```\n````",
]
MESSAGES = [
    "Is 1.2.0 the right version?",
    "I created the module. Should I also update the changelog?\n\n- yes\n- no",
    "Here is what I found:\n\n```text\nerror: file not found\n```\n\nShall I go on?",
    "Done. The tests pass.",
]
QUERIES = ["python toml parser", "pytest fixtures tmp_path", "markdown nested code fences"]
PREAMBLES = [
    "Here is the plan:",
    "Sure! Here's the plan you asked for.",
    "Okay, I'll start by adding the version module.\n\nHere's my plan:",
    "First, a note: install the tools with\n\n```bash\n# not a title\npip install x\n```\n\nNow the plan:",
    "**Plan**",
]
REMARKS = [
    "Let me know if you want any changes!",
    "Hope this helps!",
    "---\n\nAfter this, run `teddy execute`.",
    "I can also add tests for this if you like.",
    "Note: the version is read from `VERSION`.",
]

# --- writing valid plans -----------------------------------------------------------------


@dataclass
class _Block:
    """A fenced block, written as its fence lines and content."""

    info: str
    content: str
    char: str = "`"
    extra: int = 0  # fence characters beyond what the dynamic fencing rule needs

    def fence(self) -> str:
        runs = [len(r) for r in re.findall(re.escape(self.char) + "+", self.content)]
        need = max([3, *(r + 1 for r in runs)])
        return self.char * (need + self.extra)

    def nested(self) -> bool:
        """Whether the content has a fence run of the block's character (the blocks
        that models fence too short)."""
        return self.char * 3 in self.content


@dataclass
class _Style:
    """How a plan is written: every choice the format allows."""

    tildes: float  # chance of a tilde fence
    longer: float  # chance of a fence longer than needed
    label: str  # FIND:/REPLACE: label format
    backticks: bool  # action names in backticks


_LABELS = ["`{}:`", "**{}:**", "#### {}:", "{}:"]


@dataclass
class _Plan:
    """A plan as parts, so that one block can be broken: lines with block markers."""

    parts: list[str | _Block]
    last_free: bool  # whether the last action is CHAT_WITH_USER, INVOKE or CONCLUDE

    def blocks(self) -> list[_Block]:
        return [p for p in self.parts if isinstance(p, _Block)]


def _block(rng: random.Random, style: _Style, info: str, content: str) -> _Block:
    char = "~" if rng.random() < style.tildes else "`"
    return _Block(info, content, char, 1 if rng.random() < style.longer else 0)


def _heading(style: _Style, name: str) -> str:
    return f"### `{name}`" if style.backticks else f"### {name}"


def _plan(rng: random.Random, style: _Style) -> _Plan:
    parts: list[str | _Block] = [
        f"# {rng.choice(['Add the version module', 'Fix the loader', 'Write the guide'])}\n"
        "- **Status:** Green 🟢\n- **Plan Type:** Implementation\n- **Agent:** Developer\n\n"
        "## Rationale\n"
    ]
    rationale = (
        "### 1. Synthesis\nThe version is hard-coded.\n\n### 2. Justification\n"
        "One source of truth.\n\n### 3. Expected Outcome\nThe module exists.\n\n"
        "### 4. State Dashboard\n- **Version:** In Progress"
    )
    parts.append(_block(rng, style, "text", rationale))
    if rng.random() < 0.3:
        parts.append("\n\n## Memos\n")
        parts.append(_block(rng, style, "", "[+] The version lives in one module."))
    parts.append("\n\n## Action Plan\n")
    kinds = ["CREATE", "CREATE", "EDIT", "EXECUTE", "EXECUTE", "RESEARCH", "READ", "CHAT"]
    chosen = [rng.choice(kinds) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.4:
        chosen.append(rng.choice(["CHAT", "INVOKE", "CONCLUDE"]))
    for number, kind in enumerate(chosen):
        parts.append("\n" if number == 0 else "\n\n")
        _action(rng, style, kind, number, parts)
    return _Plan(parts, chosen[-1] in ("CHAT", "INVOKE", "CONCLUDE"))


def _action(
    rng: random.Random, style: _Style, kind: str, number: int, parts: list[str | _Block]
) -> None:
    if kind == "CREATE":
        if rng.random() < 0.5:
            path, info, content = f"src/app/mod{number}.py", "python", rng.choice(PYTHON)
        else:
            path, info, content = f"docs/page{number}.md", "markdown", rng.choice(MARKDOWN)
        parts.append(
            f"{_heading(style, 'CREATE')}\n- **File Path:** [{path}](/{path})\n"
            "- **Description:** Create the file.\n"
        )
        parts.append(_block(rng, style, info, content))
    elif kind == "EDIT":
        markdown = rng.random() < 0.5
        path = f"docs/guide{number}.md" if markdown else f"src/app/edit{number}.py"
        parts.append(
            f"{_heading(style, 'EDIT')}\n- **File Path:** [{path}](/{path})\n"
            "- **Description:** Update it.\n"
        )
        for pair in range(rng.randint(1, 2)):
            if markdown:
                find = f"```python\nold_call({pair})\n```"
                replace = f"```python\nnew_call({pair})\n```"
            else:
                find, replace = f"value = {pair}", f"value = {pair + 10}"
            info = "markdown" if markdown else "python"
            parts.append(f"\n{style.label.format('FIND')}\n")
            parts.append(_block(rng, style, info, find))
            parts.append(f"\n{style.label.format('REPLACE')}\n")
            parts.append(_block(rng, style, info, replace))
    elif kind == "EXECUTE":
        parts.append(
            f"{_heading(style, 'EXECUTE')}\n- **Description:** Run it.\n"
            "- **Expected Outcome:** It succeeds.\n"
        )
        parts.append(_block(rng, style, "shell", rng.choice(SHELL)))
    elif kind == "RESEARCH":
        parts.append(f"{_heading(style, 'RESEARCH')}\n- **Description:** Look it up.\n")
        for i, query in enumerate(rng.sample(QUERIES, rng.randint(1, 2))):
            if i:
                parts.append("\n")
            parts.append(_block(rng, style, "text", query))
    elif kind == "READ":
        parts.append(
            f"{_heading(style, 'READ')}\n- **Resource:** [src/app/cli.py](/src/app/cli.py)\n"
            "- **Description:** See how it is used."
        )
    elif kind == "CHAT":
        parts.append(f"{_heading(style, 'CHAT_WITH_USER')}\n{rng.choice(MESSAGES)}")
    elif kind == "INVOKE":
        parts.append(f"{_heading(style, 'INVOKE')}\n- **Agent:** Architect\n\nOver to you.")
    else:
        parts.append(f"{_heading(style, 'CONCLUDE')}\nThe work is done.")


def _write(plan: _Plan, fences: Callable[[int, _Block], tuple[str | None, str | None]]) -> str:
    """The plan's text; ``fences(i, block)`` gives block i's opening and closing fence
    runs (a closing run of None leaves the block unclosed)."""
    out: list[str] = []
    index = 0
    for part in plan.parts:
        if isinstance(part, str):
            out.append(part)
            continue
        opening, closing = fences(index, part)
        index += 1
        out.append(f"{opening}{part.info}\n{part.content}\n")
        if closing is not None:
            out.append(closing)
        elif out[-1].endswith("\n"):
            out[-1] = out[-1][:-1]
    return "".join(out) + "\n"


def _valid(plan: _Plan) -> str:
    return _write(plan, lambda i, b: (b.fence(), b.fence()))


# --- breaking them -----------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One broken answer and the plan it is meant to be."""

    name: str
    """``seed-N:`` and the breakages, joined by ``+``."""
    kinds: tuple[str, ...]
    """The breakages applied."""
    broken: str
    """The answer."""
    valid: str
    """The valid plan it came from, with the same line endings and byte-order mark."""


def _short(rng: random.Random, plan: _Plan) -> Callable[[int, _Block], tuple[str, str]] | None:
    nested = [i for i, b in enumerate(plan.blocks()) if b.nested() and b.extra == 0]
    if not nested:
        return None
    chosen = set(rng.sample(nested, rng.randint(1, len(nested))))
    how = rng.choice(["both", "both", "opening", "closing"])

    def fences(i: int, b: _Block) -> tuple[str, str]:
        if i not in chosen:
            return b.fence(), b.fence()
        short = b.char * 3
        if how == "both":
            return short, short
        return (short, b.fence()) if how == "opening" else (b.fence(), short)

    return fences


def _unclosed(
    rng: random.Random, plan: _Plan
) -> tuple[Callable[[int, _Block], tuple[str, str | None]], bool]:
    """Fences that leave one block unclosed, and whether it is the plan's last part
    (remarks after it would be its content: nothing tells them apart)."""
    blocks = plan.blocks()
    index = rng.choice(range(len(blocks)))

    def fences(i: int, b: _Block) -> tuple[str, str | None]:
        return b.fence(), (None if i == index else b.fence())

    return fences, plan.parts[-1] is blocks[index]


def _wrap(rng: random.Random, text: str) -> tuple[str, bool]:
    """``text`` in a wrapping fence, and whether the fence was closed."""
    char = rng.choice("``~")
    runs = [len(r) for r in re.findall(re.escape(char) + "+", text)]
    length = rng.choice([3, 3, 3, 4, 5]) if rng.random() < 0.8 else max([3, *runs]) + 1
    info = rng.choice(["markdown", "markdown", "md", "", "text"])
    fence = char * length
    closed = rng.random() < 0.85
    return f"{fence}{info}\n{text}" + (f"{fence}\n" if closed else ""), closed


def _case(rng: random.Random, number: int, seed: int) -> Case | None:
    style = _Style(
        tildes=rng.choice([0.0, 0.0, 0.3]),
        longer=rng.choice([0.0, 0.0, 0.5]),
        label=rng.choice(_LABELS),
        backticks=rng.random() < 0.85,
    )
    plan = _plan(rng, style)
    valid = _valid(plan)
    kinds: list[str] = []
    picks = rng.sample(
        ["short-fences", "unclosed", "preamble", "wrapper", "remarks"], rng.randint(1, 3)
    )
    fences: Callable[[int, _Block], tuple[str | None, str | None]] | None = None
    if "short-fences" in picks:
        fences = _short(rng, plan)
        if fences is not None:
            kinds.append("short-fences")
    open_end = False
    if "unclosed" in picks and fences is None:
        fences, open_end = _unclosed(rng, plan)
        kinds.append("unclosed")
    broken = _write(plan, fences) if fences is not None else valid
    wrapped = "wrapper" in picks
    remarks = "remarks" in picks
    # after CHAT_WITH_USER, INVOKE or CONCLUDE, text is the message: remarks go after
    # the wrapping fence, or nowhere
    inside = remarks and not plan.last_free and not open_end and (not wrapped or rng.random() < 0.5)
    if inside:
        kinds.append("remarks")
        broken += "\n" + rng.choice(REMARKS) + "\n"
    if wrapped:
        kinds.append("wrapper")
        broken, closed = _wrap(rng, broken)
        if remarks and not inside and closed:
            kinds.append("remarks")
            broken += "\n" + rng.choice(REMARKS) + "\n"
    if "preamble" in picks:
        kinds.append("preamble")
        broken = rng.choice(PREAMBLES) + "\n\n" + broken
    if not kinds:
        return None
    if rng.random() < 0.25:
        kinds.append("crlf")
        broken, valid = broken.replace("\n", "\r\n"), valid.replace("\n", "\r\n")
    if rng.random() < 0.1:
        kinds.append("bom")
        broken, valid = "\ufeff" + broken, "\ufeff" + valid
    return Case(f"seed-{seed}-{number}:{'+'.join(kinds)}", tuple(kinds), broken, valid)


def corpus(seed: int, count: int) -> list[Case]:
    """``count`` broken answers made from ``seed`` (see the module documentation)."""
    rng = random.Random(seed)
    cases: list[Case] = []
    number = 0
    while len(cases) < count:
        case = _case(rng, number, seed)
        number += 1
        if case is not None:
            cases.append(case)
    return cases


def valid_plans(seed: int, count: int) -> list[str]:
    """``count`` valid plans in the corpus's styles, a quarter with CRLF line endings."""
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(count):
        style = _Style(rng.choice([0.0, 0.3]), rng.choice([0.0, 0.5]), rng.choice(_LABELS), True)
        text = _valid(_plan(rng, style))
        out.append(text.replace("\n", "\r\n") if rng.random() < 0.25 else text)
    return out
