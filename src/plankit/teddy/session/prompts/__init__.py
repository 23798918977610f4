"""Agent system prompts: bundled ones, and project overrides in ``.teddy/prompts/``.

A prompt is an XML document whose root element names its agent:
``<agent name="Developer"> … </agent>``.  ``.teddy/prompts/<agent>.xml`` in a project
wins over the bundled prompt of the same agent (names match in any letter case).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from plankit.errors import InputError

_NAME_RE = re.compile(r"<agent\b[^>]*\bname\s*=\s*[\"']([^\"']+)[\"']")


def _bundled() -> dict[str, str]:
    """The bundled prompts by agent (lower case), read from the package's folder when it
    is one: importlib.resources, and its zip reader, only for a package in an archive."""
    folder = os.path.dirname(__file__)
    try:
        names = os.listdir(folder)
    except OSError:
        names = None
    out: dict[str, str] = {}
    if names is not None:
        for name in names:
            if name.endswith(".xml"):
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    out[name[:-4].lower()] = handle.read()
        return out
    from importlib import resources  # pragma: no cover - a package inside an archive

    for entry in resources.files(__package__).iterdir():  # pragma: no cover
        if entry.name.endswith(".xml"):
            out[entry.name[:-4].lower()] = entry.read_text(encoding="utf-8")
    return out  # pragma: no cover


def _overrides(root: Path | None) -> dict[str, Path]:
    if root is None:
        return {}
    folder = root / ".teddy" / "prompts"
    if not folder.is_dir():
        return {}
    return {p.stem.lower(): p for p in folder.glob("*.xml") if p.is_file()}


MAX_PROMPT_BYTES = 1024 * 1024
"""Largest prompt override read (1 MiB)."""


def _read_override(path: Path) -> str:
    """A project's prompt file: UTF-8, at most 1 MiB, a regular file (never a FIFO)."""
    from plankit.textio import read_text

    return read_text(path, max_bytes=MAX_PROMPT_BYTES).text


def agent_name(prompt: str, fallback: str) -> str:
    """The agent a prompt declares (``<agent name="…">``), or ``fallback``."""
    match = _NAME_RE.search(prompt)
    return match.group(1) if match else fallback


def known_agents(root: Path | None) -> list[str]:
    """Every agent with a prompt (bundled or in the project), by declared name."""
    names = {key: agent_name(text, key.title()) for key, text in _bundled().items()}
    for key, path in _overrides(root).items():
        names[key] = agent_name(_read_override(path), path.stem)
    return sorted(names.values(), key=str.lower)


def get_prompt(agent: str, root: Path | None = None) -> str:
    """The system prompt of ``agent`` (project override first, then bundled)."""
    key = agent.strip().lower()
    override = _overrides(root).get(key)
    if override is not None:
        return _read_override(override)
    bundled = _bundled().get(key)
    if bundled is not None:
        return bundled
    raise InputError(
        f"no prompt for agent '{agent}'; known agents: {', '.join(known_agents(root))} "
        "(add .teddy/prompts/<agent>.xml for a new one)",
        code="unknown-agent",
    )
