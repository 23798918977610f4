"""The context payload, ``input.md``: the model's whole view of the project for one turn.

:func:`build_payload` assembles, per ``teddy-context-payload.md``::

    # Agent Invocation Payload
    ## 1. System Information     CWD, OS, shell, session and turn names
    ## 2. Project Structure      the tree (see :mod:`plankit.teddy.context.tree_listing`)
    ## 3. Memos                  .teddy/memos.yaml verbatim (left out when there is none)
    ## 4. Context Summary        ### Turn / ### Session / ### Global: what each names
    ## 5. Resource Contents      each resource once, turn → session → global

The three context files (``<turn>/turn.context``, ``<session>/session.context``,
``.teddy/global.context``) name one root-relative path or http(s) URL a line (see
:mod:`plankit.teddy.context.files`, whose functions this module re-exports).  Every
resource gets a header; its body is the content in a fence chosen by the dynamic
fencing rule, or one plain sentence saying why it is not shown (missing, unreadable,
binary, refused because it leads out of the project root, a URL that failed).

The result is deterministic: the same files give the same bytes.  Nothing is written
except the URL cache (``<session>/.cache/urls/``).  File contents are handled as whole
strings (one read, one decode, one fence scan per file): the time is linear in the
bytes included.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from plankit.markdown.fences import fence_for, fenced, longest_run
from plankit.markdown.links import root_link
from plankit.teddy.context.budget import Budget, Candidate, choose_left_out, count_tokens
from plankit.teddy.context.files import (
    ContextEntry,
    normalize_entry,
    parse_entry,
    read_context_file,
    write_context_file,
)
from plankit.teddy.context.languages import language_for
from plankit.teddy.context.reading import (
    Body,
    Resolver,
    as_content,
    cut_text,
    file_body,
    plain,
)
from plankit.teddy.context.tree_listing import display_name, project_tree
from plankit.teddy.context.urls import FetchError, fetch_url

if TYPE_CHECKING:
    from plankit.teddy.session.config import Config
    from plankit.teddy.session.layout import Session, Turn

__all__ = [
    "ContextEntry",
    "FetchError",
    "build_payload",
    "fetch_url",
    "normalize_entry",
    "parse_entry",
    "project_tree",
    "read_context_file",
    "write_context_file",
]

URL_CACHE = Path(".cache") / "urls"
"""Where fetched URLs are kept, relative to the session directory."""


# --- rendering ------------------------------------------------------------------------


def _code_span(text: str) -> str:
    """``text`` as an inline code span that no backtick inside it can end early."""
    ticks = "`" * (longest_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fenced_lines(content: str, info: str) -> list[str]:
    """:func:`~plankit.markdown.fences.fenced` as its lines: opening fence, content, closing.

    The fence is one backtick longer than the longest run in ``content`` (at least 3):
    the smallest length with no such run in ``content``.  A few substring scans (C
    speed) find it where a regular expression would hand every run of backticks to
    Python; past 16 the library's :func:`fence_for` takes over (a pathological file).
    Returned in pieces so the content is copied once, into the payload.
    """
    length = 3
    while "`" * length in content:
        length += 1
        if length > 16:
            fence = fence_for(content)
            break
    else:
        fence = "`" * length
    return [fence + info, content, fence] if content else [fence + info, fence]


def _url_link(url: str) -> str:
    text = url.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    if any(c in url for c in " ()<>") or not url.isprintable():
        dest = "<" + url.replace("\\", "\\\\").replace("<", "\\<").replace(">", "\\>") + ">"
        return f"[{text}]({dest})"
    return f"[{text}]({url})"


def _label(entry: ContextEntry) -> str:
    """A path or URL as a link; a refused entry as plain text (it is no link)."""
    if entry.kind == "path":
        return root_link(entry.key)
    if entry.kind == "url":
        return _url_link(entry.key)
    return display_name(entry.key)


def _summary_item(entry: ContextEntry) -> str:
    if entry.kind == "refused":
        return _code_span(_label(entry)) + " (refused)"
    return _label(entry)


def _url_body(url: str, fetch: Callable[[str], str], max_bytes: int) -> Body:
    try:
        text = fetch(url)
    except Exception as exc:  # any failure is reported in the payload, never raised
        return Body(None, plain(f"Could not fetch this URL: {exc or type(exc).__name__}."))
    text = text.replace("\0", "\ufffd")
    if len(text) * 4 > max_bytes:  # it may be over the limit in UTF-8 bytes
        data = text.encode("utf-8", "replace")
        kept, marker = cut_text(data, len(data), max_bytes)
        return Body(as_content(kept.decode("utf-8", "replace")), marker)
    return Body(as_content(text))


def _render_resource(out: list[str], entry: ContextEntry, body: Body) -> None:
    out.append("**Resource:** " + _code_span(_label(entry)))
    if body.text is not None:
        language = language_for(entry.key)
        if entry.kind == "url" and language in ("html", "xml"):
            language = "text"  # HTML was converted to text
        out += _fenced_lines(body.text, language)
    if body.note:
        out.append(body.note)


def _memos(root: Path) -> str | None:
    from plankit.textio import read_bytes_limited
    from plankit.yamllimits import MAX_YAML_BYTES

    path = root / ".teddy" / "memos.yaml"
    try:
        data = read_bytes_limited(path, MAX_YAML_BYTES)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return plain(f"`.teddy/memos.yaml` cannot be read: {exc.strerror or exc}.")
    text = data.decode("utf-8", "replace").removeprefix("\ufeff").replace("\0", "\ufffd")
    return fenced(as_content(text), "yaml")


def _system_lines(root: Path, session_dir: Path | None, turn_dir: Path | None) -> list[str]:
    import platform

    lines = [
        f"- **CWD:** {os.path.abspath(root)}",
        f"- **OS:** {platform.system()} {platform.release()}".rstrip(),
        f"- **Shell:** {os.environ.get('SHELL') or '/bin/sh'}",
    ]
    if session_dir is not None:
        lines.append(f"- **Session:** {session_dir.name}")
    if turn_dir is not None:
        lines.append(f"- **Turn:** {turn_dir.name}")
    return lines


def build_payload(
    root: Path,
    session_dir: Path | None,
    turn_dir: Path | None,
    *,
    max_file_bytes: int = 200_000,
    fetch: Callable[[str], str] | None = None,
    budget: Budget | None = None,
    protected_read: Sequence[str] | None = None,
) -> str:
    """The ``input.md`` text for one turn (``session_dir``/``turn_dir`` None: stateless).

    ``root`` is the project root (the directory holding ``.teddy/``).  Files over
    ``max_file_bytes`` are cut with a marker.  ``fetch`` turns a URL into text; by
    default :func:`fetch_url` with the session's cache (no cache without a session).
    ``budget`` caps the whole text (:mod:`plankit.teddy.context.budget`).
    ``protected_read`` are the rules of ``protected_paths.read`` (None: the default
    rules): a file they protect is refused when it is opened, whatever path led there
    (a symbolic link, a hard link), except a path the user's own context files name as
    it is.  Never raises
    for a resource; raises :class:`~plankit.errors.InputError` only for a context file
    that cannot be read.
    """
    return assemble_payload(
        root,
        session_dir,
        turn_dir,
        max_file_bytes=max_file_bytes,
        fetch=fetch,
        budget=budget,
        protected_read=protected_read,
    ).text


@dataclass(frozen=True, slots=True)
class ResourceSize:
    """One resource of ``input.md`` (``teddy context --stats``)."""

    key: str
    """The context entry."""
    scope: str
    """Turn, Session or Global: the first context file that lists it."""
    size: int
    """Bytes its section takes."""
    tokens: int
    """Tokens its section takes (see :func:`~plankit.teddy.context.budget.count_tokens`)."""
    left_out: bool
    """Whether the context budget left it out."""


@dataclass(frozen=True, slots=True)
class Payload:
    """``input.md`` and what it is made of."""

    text: str
    """The Markdown."""
    resources: tuple[ResourceSize, ...]
    """Each resource, in order."""


def assemble_payload(
    root: Path,
    session_dir: Path | None,
    turn_dir: Path | None,
    *,
    max_file_bytes: int = 200_000,
    fetch: Callable[[str], str] | None = None,
    budget: Budget | None = None,
    protected_read: Sequence[str] | None = None,
) -> Payload:
    """:func:`build_payload` with the size of every resource."""
    teddy = root / ".teddy"
    scopes: list[tuple[str, list[str]]] = []
    if turn_dir is not None:
        scopes.append(("Turn", read_context_file(turn_dir / "turn.context")))
    if session_dir is not None:
        scopes.append(("Session", read_context_file(session_dir / "session.context")))
    scopes.append(("Global", read_context_file(teddy / "global.context")))
    if fetch is None:
        cache = session_dir / URL_CACHE if session_dir is not None else None
        fetch = partial(fetch_url, cache_dir=cache, root=root)  # its network settings

    head = ["# Agent Invocation Payload", "", "## 1. System Information"]
    head += _system_lines(root, session_dir, turn_dir)
    head += ["", "## 2. Project Structure", fenced(project_tree(root), "text")]
    memos = _memos(root)
    if memos is not None:
        head += ["", "## 3. Memos", memos]
    head += ["", "## 4. Context Summary"]
    resources: dict[str, tuple[str, ContextEntry]] = {}
    positions: dict[str, int] = {}
    users: set[str] = set()  # the user's own resources never leave
    for name, entries in scopes:
        head.append(f"### {name}")
        parsed = [parse_entry(entry) for entry in entries]
        head += [f"- {_summary_item(entry)}" for entry in parsed] or ["(none)"]
        for position, entry in enumerate(parsed):
            resources.setdefault(entry.key, (name, entry))
            if name == "Turn":
                positions.setdefault(entry.key, position)
            else:
                users.add(entry.key)
    if protected_read is None:
        from plankit.teddy.session.config import PROTECTED_READ

        protected_read = PROTECTED_READ
    resolver = Resolver(root, protected_read)
    sections: dict[str, list[str]] = {}
    for _scope, entry in resources.values():
        lines: list[str] = ["---"]
        if entry.kind == "refused":
            body = Body(None, plain(f"Refused: {entry.reason}"))
        elif entry.kind == "url":
            body = _url_body(entry.key, fetch, max_file_bytes)
        else:
            # the user's own entry naming a protected path is read as the user asked
            named = entry.key in users and resolver.protected_rule(
                os.path.join(resolver.root, entry.key)
            )
            body = file_body(resolver, entry.key, max_file_bytes, checked=not named)
        _render_resource(lines, entry, body)
        sections[entry.key] = lines
    model = budget.model if budget is not None else None

    def render(left_out: Sequence[str]) -> str:
        out = list(head)
        if left_out:
            out.append("### Left out to fit the context budget")
            out += [f"- `{key}` (READ it again to see it)" for key in left_out]
        out += ["", "## 5. Resource Contents"]
        kept = [lines for key, lines in sections.items() if key not in left_out]
        if not kept:
            out.append("(none)")
        for i, lines in enumerate(kept):
            out += ["", *lines] if i else lines
        out.append("")  # the final newline
        return "\n".join(out)

    def measure(lines: list[str]) -> tuple[int, int]:
        text = "\n".join(lines) + "\n\n"
        return len(text.encode("utf-8")), count_tokens(text, model)

    sizes = {key: measure(lines) for key, lines in sections.items()}
    left_out: list[str] = []
    text = render(left_out)
    if budget is not None and budget.limited:
        candidates = [
            Candidate(key, positions[key], *sizes[key])
            for key, (scope, _) in resources.items()
            if scope == "Turn" and key not in users
        ]
        while True:
            total = len(text.encode("utf-8")), count_tokens(text, model)
            remaining = [c for c in candidates if c.key not in left_out]
            more = choose_left_out(*total, remaining, budget)
            if not more:
                break
            left_out.append(more[0])
            text = render(left_out)
    stats = tuple(
        ResourceSize(key, scope, *sizes[key], key in left_out)
        for key, (scope, _) in resources.items()
    )
    return Payload(text, stats)


@dataclass(frozen=True, slots=True)
class WrittenPayload:
    """``input.md`` as :func:`write_turn_payload` wrote it."""

    turn: Turn
    """The turn it belongs to."""
    path: Path
    """The file."""
    size: int
    """Its size in bytes."""
    resources: tuple[ResourceSize, ...] = ()
    """Each resource's size, and whether the budget left it out."""


def config_budget(config: Config) -> Budget | None:
    """The context budget the settings ask for (None when they set none)."""
    if config.context_max_bytes is None and config.context_max_tokens is None:
        return None
    return Budget(config.context_max_bytes, config.context_max_tokens, config.model)


def write_turn_payload(session: Session) -> WrittenPayload:
    """``teddy context``: build the latest turn's ``input.md`` of ``session`` with the
    project's settings (the context budget included), and write it atomically."""
    from plankit.teddy.session.config import load_config
    from plankit.textio import write_text_atomic

    root = session.root
    config = load_config(root)
    turn = session.latest()
    payload = assemble_payload(
        root,
        session.path,
        turn.path,
        max_file_bytes=config.context_max_file_bytes,
        budget=config_budget(config),
        protected_read=config.protected_read,
    )
    path = turn.file("input.md")
    write_text_atomic(path, payload.text)
    return WrittenPayload(turn, path, len(payload.text.encode("utf-8")), payload.resources)
