"""A deterministic generator of realistic TeDDy plans, for the benchmarks.

``generate_plan(size=…, actions=…, seed=…)`` writes a plan of at least ``size``
characters and at least ``actions`` actions: a title with its metadata list, a
Rationale with the four sections, Memos, then an Action Plan mixing CREATE (multi-line
code, Markdown files with code blocks of their own), EDIT (1-3 FIND/REPLACE pairs),
EXECUTE (with ``cwd`` and ``env``), READ, PRUNE, RESEARCH and CHAT_WITH_USER
(paragraphs and a list), and at most one INVOKE, at the very end.  As in plans models
write, most of the bytes are inside fenced blocks.

Every fence of a valid plan follows the dynamic fencing rule with four backticks at
least, as models are told to write them.  With ``broken=True`` the same plan is
written the way models get it wrong: the outer fence of a block whose content holds
fences of its own is three backticks long, no longer than the fences inside it, so
CommonMark closes it early.  ``teddy preprocess`` repairs such a plan back into the
valid one of the same seed (the benchmarks check this before timing anything).

Run it to print a plan: ``python benchmarks/plans.py [SIZE] [--broken] [--seed N]``.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections.abc import Callable

WORDS = (
    "account",
    "adapter",
    "audit",
    "batch",
    "buffer",
    "cache",
    "client",
    "config",
    "cursor",
    "deploy",
    "digest",
    "event",
    "export",
    "filter",
    "handler",
    "index",
    "invoice",
    "ledger",
    "loader",
    "metric",
    "order",
    "parser",
    "payload",
    "profile",
    "queue",
    "record",
    "report",
    "retry",
    "router",
    "schema",
    "session",
    "signal",
    "snapshot",
    "stream",
    "token",
    "tracker",
    "upload",
    "user",
    "window",
    "worker",
)
VERBS = (
    "add",
    "check",
    "clean",
    "compute",
    "decode",
    "fetch",
    "flush",
    "load",
    "merge",
    "parse",
    "read",
    "refresh",
    "render",
    "resolve",
    "save",
    "send",
    "sort",
    "split",
    "update",
    "validate",
)
PROSE = (
    "the handler",
    "this change",
    "the previous turn",
    "the failing test",
    "the new route",
    "the cache layer",
    "the migration",
    "the parser",
    "the user",
    "the release notes",
    "our retry policy",
    "the nightly job",
    "the config loader",
    "the API client",
)
PROSE_VERBS = (
    "keeps",
    "needs",
    "breaks",
    "replaces",
    "reads",
    "documents",
    "covers",
    "simplifies",
    "validates",
    "moves",
    "depends on",
    "explains",
)
AGENTS = ("Architect", "Developer", "Debugger", "Pathfinder", "Reviewer")
PLAN_TYPES = ("Implementation", "Exploration", "Refactoring", "Verification", "Debug")
STATUSES = ("Green 🟢", "Yellow 🟡", "Red 🔴")
FENCE = "````"
"""The fence of a block with no fence inside: four backticks, as models are told."""

SHORT_RATIONALE = "\n".join(
    ["## Rationale", "```text"]
    + [
        f"### {i}. {name}\nx"
        for i, name in enumerate(
            ["Synthesis", "Justification", "Expected Outcome", "State Dashboard"], 1
        )
    ]
    + ["```"]
)
"""The shortest valid Rationale, for benchmarks whose plans are all actions."""


def plan_of_actions(title: str, body: str) -> str:
    """A valid plan titled ``title`` whose Action Plan is ``body``: a green status and
    :data:`SHORT_RATIONALE`, nothing else."""
    return f"# {title}\n- **Status:** Green\n\n{SHORT_RATIONALE}\n\n## Action Plan\n\n{body}\n"


_FENCE_LINE_RE = re.compile(r"^ {0,3}```", re.MULTILINE)


def _fence_for(content: str) -> str:
    """Four backticks, or one more than the longest backtick run in ``content``."""
    longest = run = 0
    for ch in content:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(len(FENCE), longest + 1)


class _Writer:
    def __init__(self, rng: random.Random, broken: bool) -> None:
        self.rng = rng
        self.broken = broken
        self.lines: list[str] = []
        self.size = 0
        self.fenced = 0  # characters inside fenced blocks

    # --- output -------------------------------------------------------------------------

    def emit(self, *lines: str) -> None:
        for line in lines:
            self.lines.append(line)
            self.size += len(line) + 1

    def block(self, content: str, info: str = "") -> None:
        """A fenced block; in a broken plan, too short when ``content`` holds fences."""
        fence = valid = _fence_for(content)
        if self.broken and len(fence) == 4 and _FENCE_LINE_RE.search(content):
            fence = "```"
        self.emit(fence + info, *content.split("\n"), fence)
        self.size += 2 * (len(valid) - len(fence))  # the size of the valid plan: same actions
        self.fenced += len(content) + 1

    # --- vocabulary ---------------------------------------------------------------------

    def word(self) -> str:
        return self.rng.choice(WORDS)

    def ident(self) -> str:
        return f"{self.rng.choice(VERBS)}_{self.word()}"

    def sentence(self) -> str:
        rng = self.rng
        parts = [rng.choice(PROSE), rng.choice(PROSE_VERBS), rng.choice(PROSE)]
        if rng.random() < 0.5:
            parts += ["so that", rng.choice(PROSE), rng.choice(PROSE_VERBS), "the", self.word()]
        if rng.random() < 0.3:
            parts.append(f"(see `{self.ident()}`)")
        text = " ".join(parts)
        return text[0].upper() + text[1:] + "."

    def paragraph(self, sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(sentences))

    def path(self, ext: str) -> str:
        rng = self.rng
        top = rng.choice(("src/app", "src/lib", "tests", "docs", "scripts", "config"))
        depth = rng.randint(0, 2)
        dirs = [self.word() for _ in range(depth)]
        name = rng.choice(("__init__", self.word(), self.ident()))
        return "/".join([top, *dirs, f"{name}.{ext}"])

    # --- file contents ------------------------------------------------------------------

    def python(self, functions: int) -> str:
        rng = self.rng
        out = [f'"""{self.sentence()}"""', "", "from __future__ import annotations", ""]
        out += [f"import {rng.choice(('json', 'os', 're', 'time', 'logging'))}", ""]
        for _ in range(functions):
            name = self.ident()
            arg = self.word()
            out += ["", f"def {name}({arg}: dict[str, object], limit: int = 10) -> list[str]:"]
            out.append(f'    """{self.sentence()}"""')
            out.append("    result: list[str] = []")
            out.append(f"    for key, value in sorted({arg}.items()):")
            for _ in range(rng.randint(1, 4)):
                out.append(f"        if key.startswith({self.word()!r}) and value is not None:")
                out.append(f"            result.append(f'{{key}}={{value!r}}')  # {self.word()}")
            out.append("        if len(result) >= limit:")
            out.append("            break")
            out.append("    return result")
        return "\n".join(out)

    def javascript(self, functions: int) -> str:
        rng = self.rng
        out = [f"// {self.sentence()}", "'use strict';", ""]
        for _ in range(functions):
            name = f"{rng.choice(VERBS)}{self.word().title()}"
            out.append(f"export async function {name}(client, options = {{}}) {{")
            out.append(f"  const {self.word()} = await client.get(`/api/{self.word()}`);")
            for _ in range(rng.randint(1, 4)):
                out.append(f"  if (options.{self.word()}) {{")
                out.append(f"    console.debug('{self.sentence()}');")
                out.append("  }")
            out.append(f"  return {{ ok: true, count: {rng.randint(0, 99)} }};")
            out += ["}", ""]
        return "\n".join(out).rstrip()

    def yaml(self) -> str:
        out = [f"# {self.sentence()}", f"{self.word()}:"]
        for _ in range(self.rng.randint(3, 10)):
            out.append(f"  {self.word()}_{self.word()}: {self.rng.randint(1, 500)}")
        out.append("  enabled: true")
        return "\n".join(out)

    def markdown_doc(self) -> str:
        """A Markdown file with code blocks of its own (the content that breaks fences)."""
        rng = self.rng
        out = [f"# {self.word().title()} {self.word()}", "", self.paragraph(3), ""]
        for _ in range(rng.randint(1, 3)):
            out += [f"## {self.ident().replace('_', ' ').title()}", "", self.paragraph(2), ""]
            out.append(rng.choice(("```shell", "```python", "```yaml", "```text")))
            for _ in range(rng.randint(1, 5)):
                out.append(f"tool {rng.choice(VERBS)} --{self.word()} {self.word()}")
            out += ["```", ""]
            out.append(f"- `{self.ident()}`: {self.sentence()}")
            out.append(f"- `{self.ident()}`: {self.sentence()}")
            out.append("")
        out.append(self.paragraph(1))
        return "\n".join(out)

    def snippet(self) -> tuple[str, str]:
        """Some lines of code to FIND, and the same lines changed."""
        rng = self.rng
        indent = " " * rng.choice((0, 4, 8))
        name = self.ident()
        lines = [f"{indent}def {name}(self, {self.word()}):"]
        for _ in range(rng.randint(2, 10)):
            lines.append(f"{indent}    self.{self.word()} = {self.ident()}({self.word()})")
        find = "\n".join(lines)
        if rng.random() < 0.15:  # code that builds Markdown: a fence inside the FIND
            find += f'\n{indent}    out.append("```")'
        changed = [*lines[:-1], f"{indent}    # {self.sentence()}", lines[-1]]
        replace = "\n".join(changed) + f"\n{indent}    return self.{self.word()}"
        return find, replace

    # --- plan parts ---------------------------------------------------------------------

    def header(self) -> None:
        rng = self.rng
        title = f"{rng.choice(VERBS).title()} the {self.word()} {self.word()} and its tests"
        self.emit(
            f"# {title}",
            f"- **Status:** {rng.choice(STATUSES)}",
            f"- **Plan Type:** {rng.choice(PLAN_TYPES)}",
            f"- **Agent:** {rng.choice(AGENTS)}",
            "",
        )

    def rationale(self) -> None:
        rng = self.rng
        dashboard = [f"- **Overall Goal:** {self.sentence()}"]
        for step in range(1, rng.randint(3, 6)):
            state = rng.choice(("Done", "In Progress", "Not Started"))
            dashboard.append(f"- **Step {step}: {self.word().title()}:** {state}")
        text = "\n".join(
            [
                "### 1. Synthesis",
                self.paragraph(3),
                "",
                "### 2. Justification",
                self.paragraph(4),
                "",
                "### 3. Expected Outcome",
                self.paragraph(2),
                "",
                "### 4. State Dashboard",
                *dashboard,
            ]
        )
        self.emit("## Rationale")
        self.block(text, "text")
        self.emit("")

    def memos(self) -> None:
        lines = []
        for _ in range(self.rng.randint(1, 4)):
            op = self.rng.choice("+-")
            comment = f" # {self.sentence()}" if self.rng.random() < 0.5 else ""
            lines.append(f"[{op}] {self.sentence()}{comment}")
        self.emit("## Memos")
        self.block("\n".join(lines))
        self.emit("")

    def link(self, path: str) -> str:
        return f"[{path}](/{path})"

    def create(self) -> None:
        rng = self.rng
        kind = rng.choices(("py", "js", "yaml", "md"), weights=(5, 2, 1, 2))[0]
        content: str
        info = {"py": "python", "js": "javascript", "yaml": "yaml", "md": "markdown"}[kind]
        if kind == "py":
            content = self.python(rng.randint(1, 3))
        elif kind == "js":
            content = self.javascript(rng.randint(1, 3))
        elif kind == "yaml":
            content = self.yaml()
        else:
            content = self.markdown_doc()
        self.emit(
            "### `CREATE`",
            f"- **File Path:** {self.link(self.path(kind))}",
            f"- **Description:** {self.sentence()}",
        )
        self.block(content, info)

    def doc_snippet(self) -> tuple[str, str]:
        """A section of a Markdown file with its code block, and the section changed."""
        title = f"## {self.ident().replace('_', ' ').title()}"
        command = f"tool {self.rng.choice(VERBS)} --{self.word()}"
        find = "\n".join([title, "", self.paragraph(1), "", "```shell", command, "```"])
        extra = f"tool {self.rng.choice(VERBS)} --{self.word()} --{self.word()}"
        replace = "\n".join([title, "", self.paragraph(2), "", "```shell", command, extra, "```"])
        return find, replace

    def edit(self) -> None:
        rng = self.rng
        doc = rng.random() < 0.1
        self.emit(
            "### `EDIT`",
            f"- **File Path:** {self.link(self.path('md' if doc else 'py'))}",
            f"- **Description:** {self.sentence()}",
        )
        for _ in range(rng.choice((1, 1, 2, 3))):
            find, replace = self.doc_snippet() if doc else self.snippet()
            info = "markdown" if doc else "python"
            self.emit("", "`FIND:`")
            self.block(find, info)
            self.emit("`REPLACE:`")
            self.block(replace, info)

    def execute(self) -> None:
        rng = self.rng
        self.emit(
            "### `EXECUTE`",
            f"- **Description:** {self.sentence()}",
            f"- **Expected Outcome:** `{rng.randint(1, 40)} passed`; {self.sentence()}",
        )
        if rng.random() < 0.6:
            self.emit(f"- **cwd:** {self.link(rng.choice(('tests', 'src/app', 'scripts')))}")
        if rng.random() < 0.6:
            self.emit("- **env:**")
            names = {f"{self.word().upper()}_{self.word().upper()}" for _ in range(3)}
            for name in sorted(names)[: rng.randint(1, 3)]:
                self.emit(f'    - `{name}`: "{self.word()}-{rng.randint(1, 9)}"')
        commands = [f"python -m pytest -q tests/test_{self.word()}.py -k {self.word()}"]
        for _ in range(rng.randint(0, 3)):
            commands.append(f"grep -rn '{self.ident()}' src/ | head -n {rng.randint(5, 50)}")
        self.block("\n".join(commands), "shell")

    def read(self) -> None:
        if self.rng.random() < 0.3:
            target = f"[{self.word()} docs](https://example.com/{self.word()}/{self.word()})"
        else:
            target = self.link(self.path(self.rng.choice(("py", "md", "toml"))))
        self.emit(
            "### `READ`", f"- **Resource:** {target}", f"- **Description:** {self.sentence()}"
        )

    def prune(self) -> None:
        self.emit(
            "### `PRUNE`",
            f"- **Resource:** {self.link(self.path('md'))}",
            f"- **Description:** {self.sentence()}",
        )

    def research(self) -> None:
        self.emit("### `RESEARCH`", f"- **Description:** {self.sentence()}")
        for _ in range(self.rng.randint(1, 3)):
            self.block(f"python {self.word()} {self.word()} {self.word()} best practice", "text")

    def chat(self) -> None:
        self.emit("### `CHAT_WITH_USER`", self.paragraph(3), "", self.paragraph(2), "")
        for _ in range(self.rng.randint(2, 4)):
            self.emit(f"- {self.sentence()}")
        self.emit("", f"Shall I go on with `{self.ident()}`?")

    def invoke(self) -> None:
        self.emit(
            "### `INVOKE`",
            f"- **Agent:** {self.rng.choice(AGENTS)}",
            "- **Handoff Resources:**",
            f"  - {self.link(self.path('md'))}",
            f"  - {self.link(self.path('py'))}",
            "",
            self.paragraph(2),
        )


def generate_plan(
    size: int = 0, *, actions: int = 0, seed: int = 0, broken: bool = False, invoke: bool = True
) -> str:
    """A plan of at least ``size`` characters and ``actions`` actions (same seed, same plan).

    With ``broken=True``, outer fences around content that holds fences are too short;
    :func:`plankit.teddy.format.preprocess.preprocess` turns it into the valid plan of the same
    seed.  With ``invoke=True`` the plan ends with an INVOKE (before it, never).
    """
    w = _Writer(random.Random(seed), broken)
    w.header()
    w.rationale()
    w.memos()
    w.emit("## Action Plan")
    kinds: list[Callable[[], None]] = [
        w.create,
        w.edit,
        w.execute,
        w.read,
        w.prune,
        w.research,
        w.chat,
    ]
    weights = (5, 5, 3, 2, 1, 1, 1)
    count = 0
    while w.size < size or count < actions:
        w.emit("")
        w.rng.choices(kinds, weights)[0]()
        count += 1
    if invoke:
        w.emit("")
        w.invoke()
    return "\n".join(w.lines) + "\n"


def fenced_share(text: str) -> float:
    """The share of a plan's characters that are inside fenced blocks (as written)."""
    inside = 0
    fence = ""
    for line in text.split("\n"):
        if fence:
            if line.rstrip() == fence:
                fence = ""
            else:
                inside += len(line) + 1
        elif line.startswith(("```", "~~~")):
            fence = line[0] * (len(line) - len(line.lstrip(line[0])))
    return inside / len(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print a generated TeDDy plan.")
    parser.add_argument("size", nargs="?", type=int, default=20_000, help="characters (at least)")
    parser.add_argument("--actions", type=int, default=0, help="actions (at least)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--broken", action="store_true", help="fences too short, as models err")
    args = parser.parse_args(argv)
    sys.stdout.write(
        generate_plan(args.size, actions=args.actions, seed=args.seed, broken=args.broken)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
