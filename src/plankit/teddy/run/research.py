"""RESEARCH backends: where web searches go.

A backend is any object with ``search(query, max_results) -> list[SearchResult]``.
``config.yaml``'s ``research.backend`` picks one:

- ``ddgs`` (the default): the ddgs metasearch package (a dependency; it needs the
  network);
- ``fixture:PATH``: canned results from a JSON file, for tests and offline use
  (``{"query": [{"title", "url", "snippet"}], "*": [...]}``, ``*`` answering any query
  not listed) — shipped so that users can test their own plans offline;
- ``module:callable``: your own, imported and called with no arguments.

Only the queries go out, to the backend's own search service; the pages of the results
are listed in the report, never fetched.  A later READ of one goes through
:mod:`plankit.teddy.context.urls`, which refuses loopback and private addresses.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from plankit.errors import InputError


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One search hit."""

    title: str
    """The page title."""
    url: str
    """The page address."""
    snippet: str = ""
    """A short extract."""


class SearchBackend(Protocol):
    """Anything that answers a query with results."""

    def search(self, query: str, max_results: int) -> list[SearchResult]:
        """Up to ``max_results`` hits for ``query``."""
        ...


class FixtureBackend:
    """Canned results from a JSON file (see the module documentation)."""

    def __init__(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(
                f"cannot read research fixture: {exc}", code="bad-config", path=str(path)
            ) from None
        if not isinstance(data, dict):
            raise InputError("a research fixture is a JSON object", path=str(path))
        self.data: dict[str, Any] = data

    def search(self, query: str, max_results: int) -> list[SearchResult]:
        hits = self.data.get(query, self.data.get("*", []))
        return [
            SearchResult(str(h.get("title", "")), str(h.get("url", "")), str(h.get("snippet", "")))
            for h in hits[:max_results]
        ]


class DdgsBackend:
    """Web search through the ``ddgs`` package."""

    def __init__(self) -> None:
        try:
            self.module = importlib.import_module("ddgs")
        except ImportError:
            raise InputError(
                "RESEARCH's web search needs the research extra: pip install "
                "'plankit[research]' (or set research.backend in .teddy/config.yaml)",
                code="no-backend",
            ) from None

    def search(self, query: str, max_results: int) -> list[SearchResult]:
        hits = self.module.DDGS().text(query, max_results=max_results)
        return [
            SearchResult(str(h.get("title", "")), str(h.get("href", "")), str(h.get("body", "")))
            for h in hits
        ]


def load_backend(spec: str, root: Path) -> SearchBackend:
    """The backend named by ``spec`` (relative fixture paths are from the project root)."""
    if spec == "ddgs":
        return DdgsBackend()
    if spec.startswith("fixture:"):
        path = Path(spec.removeprefix("fixture:"))
        return FixtureBackend(path if path.is_absolute() else root / path)
    module, _, name = spec.partition(":")
    if not module or not name:
        raise InputError(
            f"research.backend '{spec}' is not ddgs, fixture:PATH or module:callable",
            code="bad-config",
        )
    try:
        factory = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise InputError(
            f"cannot load research backend '{spec}': {exc}", code="bad-config"
        ) from None
    backend: SearchBackend = factory()
    return backend
