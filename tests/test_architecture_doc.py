"""docs/architecture.md names every module of src/plankit, and no module that is gone.

The page lists the code in ```text trees: a line ``name/`` opens a package, ``name.py``
is a module, indented two spaces per level under its package; a tree's first line is
a path from ``src/plankit/`` (``src/plankit/``, ``teddy/``, ``agentflow/`` …).  Prose
after a name is its description.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "plankit"
DOC = ROOT / "docs" / "architecture.md"

_ENTRY = re.compile(r"^(?P<indent> *)(?P<name>[A-Za-z_][\w]*(?:\.py|/))(?:\s|$)")


def documented_modules(text: str) -> set[str]:
    """Paths (relative to src/plankit) of the modules the page's trees list."""
    found: set[str] = set()
    for block in re.findall(r"```text\n(.*?)```", text, re.DOTALL):
        stack: list[tuple[int, str]] = []  # (indent, package path)
        for line in block.splitlines():
            m = _ENTRY.match(line)
            if m is None:
                continue
            indent, name = len(m["indent"]), m["name"]
            while stack and stack[-1][0] >= indent:
                stack.pop()
            base = stack[-1][1] if stack else ""
            if not stack and name == "src/":
                continue
            path = base + name
            if not stack and name == "plankit/":
                path = ""
            if name.endswith("/"):
                stack.append((indent, path))
            else:
                found.add(path)
    return found


def actual_modules() -> set[str]:
    return {
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if p.name != "__init__.py" or p.parent == SRC
    }


def test_every_module_is_documented_and_every_documented_module_exists() -> None:
    documented = documented_modules(DOC.read_text(encoding="utf-8"))
    actual = actual_modules()
    assert sorted(actual - documented) == [], "modules missing from docs/architecture.md"
    assert sorted(documented - actual) == [], "docs/architecture.md names modules that are gone"


def test_the_reader_follows_indentation() -> None:
    text = "```text\nsrc/plankit/\n  a.py  x\n  pkg/\n    b.py\n  c.py\n```\n"
    assert documented_modules(text) == {"a.py", "pkg/b.py", "c.py"}
    assert documented_modules("```text\nteddy/\n  run/\n    x.py  y\n```") == {"teddy/run/x.py"}
