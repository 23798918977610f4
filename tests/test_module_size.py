"""No module of src/plankit is longer than 500 lines.

A module that grows past that holds more than one concept; it is split by concept
(the part others can use on its own becomes a module of its own), never by cutting
at a line count.  ``KNOWN_OVER`` names the modules being split while this is written:
each must still be over the limit (an entry that is no longer over is stale and
fails, so the list only shrinks).
"""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "plankit"
LIMIT = 500

KNOWN_OVER: frozenset[str] = frozenset(
    {
        "board/views.py",
        # grew past the limit in parallel work this round, to be split by their owners
        "acp/agent.py",
        "acp/client.py",
        "acp/turn.py",
        "checklist/stores/xlsx_package.py",
    }
)
"""Modules over the limit whose split is under way elsewhere."""


def line_counts(root: Path = SRC) -> dict[str, int]:
    """Module path (relative to ``root``) → its number of lines."""
    return {
        str(path.relative_to(root)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(root.rglob("*.py"))
    }


def over_limit(counts: dict[str, int], limit: int = LIMIT) -> dict[str, int]:
    return {name: lines for name, lines in counts.items() if lines > limit}


def test_no_module_is_over_500_lines() -> None:
    over = over_limit(line_counts())
    unexpected = {name: lines for name, lines in over.items() if name not in KNOWN_OVER}
    assert not unexpected, "modules over 500 lines (split them by concept): " + ", ".join(
        f"{name} ({lines})" for name, lines in sorted(unexpected.items())
    )


def test_the_known_over_list_names_only_modules_still_over() -> None:
    stale = sorted(name for name in KNOWN_OVER if name not in over_limit(line_counts()))
    assert not stale, f"no longer over 500 lines, remove from KNOWN_OVER: {', '.join(stale)}"


def test_the_count_is_of_lines(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (LIMIT + 1), encoding="utf-8")
    (tmp_path / "short.py").write_text("x = 1\n" * LIMIT, encoding="utf-8")
    counts = line_counts(tmp_path)
    assert counts == {"pkg/long.py": LIMIT + 1, "short.py": LIMIT}
    assert over_limit(counts) == {"pkg/long.py": LIMIT + 1}
