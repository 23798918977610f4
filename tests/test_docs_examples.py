"""The examples in README.md and docs/*.md run, and print what they say they print.

How to write an example that this test checks:

* A ```console block is a list of ``$ COMMAND`` lines, each followed by the output it
  prints (standard output and standard error together, as a terminal shows them). A
  command line ending in ``\\`` continues on the next line. A line holding only ``...``
  (or ``…``) matches any run of lines, none included; a ``…`` inside a line matches any
  text within that line. UUIDs, dates and timestamps match any value of the same shape.
* A ```python block runs as a script and must not fail; a ```pycon block (a ``>>>``
  session) runs as a doctest (with ELLIPSIS), so the values it shows are checked.
* Every block runs on its own: in a scratch directory holding a copy of ``examples/``,
  in one shell (``cd`` and ``export`` carry over from command to command), with the
  project's console scripts first on PATH, no terminal, no network (proxies point at a
  closed port) and HOME a scratch directory that the output shows as ``/home/me``.
* ``<!-- setup: SHELL LINES -->`` right before a block runs those lines first, in the
  same shell; their output is not compared.
* ``<!-- not-run: REASON -->`` right before a block skips it on purpose (a model, an
  editor, a terminal, the network): pytest lists each one with its reason.

A ```sh block is a listing of commands, never run.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = ("console", "python", "pycon")
_PROXIES = ("http_proxy", "https_proxy", "all_proxy")
COPIED = ["examples"]
"""What each scratch directory holds, copied from the checkout."""

_DIRECTIVE = re.compile(r"<!--\s*(not-run|setup):(.*?)-->", re.S)
_SHAPES = {
    "uuid": r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    "time": r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?",
    "date": r"\d{4}-\d{2}-\d{2}",
    "any": "…",
}
_TOKEN = re.compile("|".join(f"(?P<{name}>{rx})" for name, rx in _SHAPES.items()))


@dataclass(frozen=True)
class Block:
    """One fenced example and the directives written right before it."""

    doc: Path
    line: int
    """1-based line of the opening fence."""
    lang: str
    text: str
    setup: str = ""
    not_run: str | None = None

    @property
    def name(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def collect(path: Path) -> list[Block]:
    """The blocks of one Markdown file that this test runs (or skips on purpose)."""
    tokens = MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))
    blocks = []
    for i, token in enumerate(tokens):
        lang = token.info.strip().split(" ")[0] if token.type == "fence" else ""
        if lang not in RUN:
            continue
        setup, not_run = [], None
        j = i - 1
        while j >= 0 and tokens[j].type == "html_block":
            for kind, body in _DIRECTIVE.findall(tokens[j].content):
                if kind == "setup":
                    setup.insert(0, body.strip())
                else:
                    not_run = body.strip()
            j -= 1
        assert token.map is not None
        line = token.map[0] + 1
        blocks.append(Block(path, line, lang, token.content, "\n".join(setup), not_run))
    return blocks


def directives_without_a_block(path: Path) -> list[int]:
    """Lines of setup/not-run comments not followed by a block that runs."""
    tokens = MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))
    lines = []
    for i, token in enumerate(tokens):
        if token.type != "html_block" or not _DIRECTIVE.search(token.content):
            continue
        j = i + 1
        while j < len(tokens) and tokens[j].type == "html_block":
            j += 1
        nxt = tokens[j] if j < len(tokens) else None
        if nxt is None or nxt.type != "fence" or nxt.info.strip().split(" ")[0] not in RUN:
            assert token.map is not None
            lines.append(token.map[0] + 1)
    return lines


BLOCKS = [block for doc in DOCS for block in collect(doc)]


# ---------------------------------------------------------------- console blocks


@dataclass(frozen=True)
class Step:
    command: str
    expected: list[str]


def steps(block: Block) -> list[Step]:
    """The ``$ COMMAND`` lines of a console block and the output written under each."""
    result: list[Step] = []
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            command = [line[2:]]
            while command[-1].endswith("\\") and i + 1 < len(lines):
                i += 1
                command.append(lines[i])
            result.append(Step("\n".join(command), []))
        elif result:
            result[-1].expected.append(line)
        elif line.strip():
            raise ValueError(f"{block.name}: output before the first `$ ` command: {line!r}")
        i += 1
    if not result:
        raise ValueError(f"{block.name}: a console block with no `$ ` command")
    return result


def line_pattern(expected: str) -> re.Pattern[str]:
    """An expected line as a pattern: ``…`` any text, UUIDs/dates/timestamps any value."""
    parts, pos = [], 0
    for match in _TOKEN.finditer(expected):
        kind = match.lastgroup
        assert kind is not None
        parts.append(re.escape(expected[pos : match.start()]))
        parts.append(".*" if kind == "any" else _SHAPES[kind])
        pos = match.end()
    parts.append(re.escape(expected[pos:]))
    return re.compile("".join(parts))


def _trimmed(lines: list[str]) -> list[str]:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def output_matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` lines are what ``expected`` shows, ``...`` lines eliding runs."""
    patterns = [
        None if line.strip() in ("...", "…") else line_pattern(line) for line in _trimmed(expected)
    ]
    lines = _trimmed(actual)

    @functools.cache
    def match(i: int, j: int) -> bool:
        if i == len(patterns):
            return j == len(lines)
        pattern = patterns[i]
        if pattern is None:
            return any(match(i + 1, k) for k in range(j, len(lines) + 1))
        return j < len(lines) and pattern.fullmatch(lines[j]) is not None and match(i + 1, j + 1)

    return match(0, 0)


# ---------------------------------------------------------------- running


@dataclass
class Scratch:
    root: Path
    cwd: Path
    env: dict[str, str]

    def shown(self, text: str) -> str:
        """Output as the docs show it: the scratch prefix dropped, HOME is /home/me."""
        for prefix in {str(self.root.resolve()), str(self.root)}:
            text = text.replace(prefix, "")
        return text

    def shell(self, script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", f"exec 2>&1 </dev/null\n{script}"],
            cwd=self.cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            text=True,
            timeout=600,  # a guard against a hang, not a measure of speed
        )


def scratch(tmp_path: Path) -> Scratch:
    home = tmp_path / "home" / "me"
    cwd = home / "plankit"
    cwd.mkdir(parents=True)
    for name in COPIED:
        shutil.copytree(ROOT / name, cwd / name, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tmp").mkdir()
    closed = "http://127.0.0.1:9"
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin:/usr/bin:/bin"]),
        "HOME": str(home),
        "TMPDIR": str(tmp_path / "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "TERM": "dumb",
        "COLUMNS": "100",
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        **dict.fromkeys(_PROXIES + tuple(name.upper() for name in _PROXIES), closed),
    }
    return Scratch(tmp_path, cwd, env)


def _setup(block: Block) -> str:
    return f"set -e\n{block.setup}\nset +e\n" if block.setup else ""


def run_console(block: Block, where: Scratch) -> None:
    plan = steps(block)
    mark = f"@@example-{uuid.uuid4().hex}@@"
    fence = f"printf '\\n%s\\n' '{mark}'\n"
    script = _setup(block) + fence + "".join(f"{step.command}\n{fence}" for step in plan)
    out = where.shown(where.shell(script).stdout)
    chunks = out.split(f"\n{mark}\n")
    if len(chunks) != len(plan) + 2:
        pytest.fail(f"{block.name}: the set-up or a command stopped the shell:\n{out}")
    for step, chunk in zip(plan, chunks[1:], strict=False):
        if not output_matches(step.expected, chunk.splitlines()):
            pytest.fail(
                f"{block.name}: `$ {step.command}` printed something else.\n"
                f"--- the docs show:\n{chr(10).join(step.expected)}\n"
                f"--- it printed:\n{chunk}"
            )


def run_python(block: Block, where: Scratch) -> None:
    name = "example.py" if block.lang == "python" else "example.txt"
    path = where.root / name
    path.write_text(block.text, encoding="utf-8")
    command = "python" if block.lang == "python" else "python -m doctest -o ELLIPSIS -o FAIL_FAST"
    result = where.shell(f"{_setup(block)}exec {command} {path}")
    if result.returncode != 0:
        pytest.fail(f"{block.name}: the {block.lang} example fails:\n{where.shown(result.stdout)}")


@pytest.mark.parametrize("block", BLOCKS, ids=[block.name for block in BLOCKS])
def test_example(block: Block, tmp_path: Path) -> None:
    if block.not_run is not None:
        pytest.skip(f"{block.name} not run on purpose: {block.not_run}")
    where = scratch(tmp_path)
    if block.lang == "console":
        run_console(block, where)
    else:
        run_python(block, where)


# ---------------------------------------------------------------- the checker itself


def test_the_docs_have_examples_to_run() -> None:
    langs = {block.lang for block in BLOCKS if block.doc.name == "README.md"}
    assert {"console", "python"} <= langs
    assert sum(block.not_run is None for block in BLOCKS) >= 10


@pytest.mark.parametrize("doc", DOCS, ids=[doc.name for doc in DOCS])
def test_every_directive_precedes_a_block_that_runs(doc: Path) -> None:
    assert directives_without_a_block(doc) == [], "a setup/not-run comment must precede a block"


@pytest.mark.parametrize("block", BLOCKS, ids=[block.name for block in BLOCKS])
def test_every_skip_gives_its_reason(block: Block) -> None:
    assert block.not_run is None or block.not_run, "write why: <!-- not-run: REASON -->"


def test_elision_matches_any_run_of_lines() -> None:
    expected = ["Actions (3):", "  ...", "  line 9  EDIT a.py"]
    assert output_matches(expected, ["Actions (3):", "  line 9  EDIT a.py"])
    assert output_matches(expected, ["Actions (3):", "x", "y", "  line 9  EDIT a.py", ""])
    assert not output_matches(expected, ["Actions (3):", "  line 8  EDIT a.py"])
    assert not output_matches(expected, ["Actions (3):", "  line 9  EDIT a.py", "extra"])
    assert not output_matches(["only"], [])


def test_variable_values_match_by_shape_only() -> None:
    expected = ["session 01a20067-97e4-760c-aa5e-eedfef568d53 at 2026-11-21T23:18:39.774Z", "…ok"]
    actual = ["session 0b9c1d2e-0000-7000-8000-123456789abc at 2027-01-02T03:04:05Z", "all ok"]
    assert output_matches(expected, actual)
    assert not output_matches(expected, ["session 0b9c1d2e at 2027-01-02T03:04:05Z", "all ok"])
    assert output_matches(["[x] 1.1 Read ✅ 2026-01-15"], ["[x] 1.1 Read ✅ 2031-12-31"])
    assert not output_matches(["[x] 1.1 Read ✅ 2026-01-15"], ["[x] 1.1 Read ✅ 31/12/2031"])


def test_a_console_block_needs_a_command_first() -> None:
    block = Block(ROOT / "README.md", 1, "console", "output\n$ teddy --help\n")
    with pytest.raises(ValueError, match="output before the first"):
        steps(block)
    continued = Block(ROOT / "README.md", 1, "console", "$ a \\\n    --b\nout\n$ c\n")
    assert steps(continued) == [Step("a \\\n    --b", ["out"]), Step("c", [])]
