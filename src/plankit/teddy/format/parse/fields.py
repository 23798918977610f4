"""An action's metadata list: its fields, and the paths, resources and env they hold.

A metadata list is the bullet list right under an action's heading, one
``- **Key:** value`` item per field.  Keys are accepted in any letter case, with or
without bold or backticks; link text mangled by emphasis does not matter (the
destination is used).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from plankit.markdown.encoding import repair_double_encoding as _fix
from plankit.markdown.links import find_links, is_url, root_path
from plankit.markdown.tree import Block, ListBlock, ListItem, Paragraph
from plankit.teddy.format.model import ActionType, Resource
from plankit.teddy.format.parse.checker import Checker, clip, norm_key, suggest

FIELDS: dict[ActionType, dict[str, str]] = {
    ActionType.CREATE: {"file path": "path", "description": "description"},
    ActionType.READ: {"resource": "resource", "description": "description"},
    ActionType.EDIT: {"file path": "path", "description": "description"},
    ActionType.EXECUTE: {
        "description": "description",
        "expected outcome": "expected_outcome",
        "cwd": "cwd",
        "env": "env",
    },
    ActionType.RESEARCH: {"description": "description"},
    ActionType.CHAT_WITH_USER: {},
    ActionType.INVOKE: {
        "agent": "agent",
        "handoff resources": "handoff_resources",
        "description": "description",
    },
    ActionType.CONCLUDE: {"handoff resources": "handoff_resources", "description": "description"},
    ActionType.PRUNE: {"resource": "resource", "description": "description"},
}
"""Which metadata fields each action takes (lower-case key → attribute)."""

REQUIRED: dict[ActionType, tuple[str, ...]] = {
    ActionType.CREATE: ("file path",),
    ActionType.READ: ("resource",),
    ActionType.EDIT: ("file path",),
    ActionType.INVOKE: ("agent",),
    ActionType.PRUNE: ("resource",),
}
"""The fields an action cannot do without."""

CANONICAL_KEY = {
    "file path": "File Path",
    "description": "Description",
    "resource": "Resource",
    "expected outcome": "Expected Outcome",
    "cwd": "cwd",
    "env": "env",
    "agent": "Agent",
    "handoff resources": "Handoff Resources",
}
"""How messages spell each key."""

_KEY_RE = re.compile(
    r"""(?P<open>\*\*|__)?`?(?P<key>[A-Za-z][A-Za-z0-9 _-]*?)`?\s*
        (?:(?P<c1>:)\s*(?P=open)|(?P=open)\s*(?P<c2>:))\s*""",
    re.VERBOSE,
)
_PLAIN_KEY_RE = re.compile(r"`?(?P<key>[A-Za-z][A-Za-z0-9 _-]*?)`?\s*:\s*")
_OPTIONAL_RE = re.compile(r"^\(optional\)\s*", re.IGNORECASE)
_ENV_RE = re.compile(r"`?(?P<name>[^`:=\s]+)`?\s*(?::|=)\s*(?P<value>.*)")
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(slots=True)
class Field:
    """One ``- **Key:** value`` item of a metadata list."""

    key: str
    """The key, normalised (:func:`~plankit.teddy.format.parse.checker.norm_key`)."""
    label: str
    """The key as written."""
    value: str
    """The inline Markdown source after the key, trimmed."""
    item: ListItem
    """The list item (nested lists of ``env`` and ``Handoff Resources`` are in it)."""
    line: int
    """The item's first line."""


def field(c: Checker, item: ListItem, where: str) -> Field | None:
    """The field an item holds, or None (reported) when it is not ``**Key:** value``."""
    first = item.children[0] if item.children else None
    if not isinstance(first, Paragraph):
        c.error(item.start, "metadata-invalid", f"expected '**Key:** value' in {where}")
        return None
    text = first.text
    m = _KEY_RE.match(text) or _PLAIN_KEY_RE.match(text)
    if m is None:
        c.error(
            item.start,
            "metadata-invalid",
            f"expected '**Key:** value' in {where}; found '{clip(text)}'",
        )
        return None
    label = m.group("key").strip()
    return Field(norm_key(label), label, text[m.end() :].strip(), item, item.start)


def is_metadata_list(block: Block) -> bool:
    """Whether ``block`` is a bullet list whose first item starts with a key: any key in
    bold (``**Key:**``), or a plain one (``Key:``, ```` `Key`: ````) that names a field
    some action takes, so that a message's list (``- Note: …``) stays a message.  Bold
    and plain keys may then come in any order."""
    if not isinstance(block, ListBlock) or block.ordered or not block.items:
        return False
    first = block.items[0].children[:1]
    if not first or not isinstance(first[0], Paragraph):
        return False
    text = first[0].text
    if _KEY_RE.match(text):
        return True
    m = _PLAIN_KEY_RE.match(text)
    return m is not None and norm_key(m.group("key")) in CANONICAL_KEY


def fields(c: Checker, kind: ActionType, block: ListBlock) -> dict[str, Field]:
    """The fields of a ``kind`` action's metadata list, by key; the wrong ones reported."""
    allowed = FIELDS[kind]
    out: dict[str, Field] = {}
    for item in block.items:
        fld = field(c, item, f"the {kind} metadata list")
        if fld is None:
            continue
        if fld.key not in allowed:
            names = [CANONICAL_KEY[k] for k in allowed]
            c.error(
                fld.line,
                "unknown-field",
                f"{kind} has no field '{fld.label}'; it takes "
                + ", ".join(names)
                + suggest(fld.label, names),
            )
            continue
        if fld.key in out:
            c.error(
                fld.line,
                "field-duplicate",
                f"'{fld.label}' appears twice in this {kind} (first at line {out[fld.key].line})",
            )
            continue
        nested_ok = fld.key in ("env", "handoff resources")
        for child in item.children[1:]:
            if not (nested_ok and isinstance(child, ListBlock)):
                c.stray(child, f"inside the '{fld.label}' field")
        out[fld.key] = fld
    return out


def value(fld: Field) -> str:
    """A field's value, ``(optional)`` dropped and double encoding repaired."""
    return _fix(_OPTIONAL_RE.sub("", fld.value))


def path(c: Checker, fld: Field, kind: ActionType) -> str | None:
    """The project path a field names (a link's destination, or the bare value)."""
    text = value(fld)
    links = find_links(text)
    target = links[0].destination if links else text.strip().strip("`").strip()
    if not target:
        c.error(fld.line, "path-missing", f"{kind}: '{fld.label}' names no path")
        return None
    if is_url(target):
        c.error(
            fld.line,
            "path-invalid",
            f"{kind}: '{fld.label}' must be a project path like [docs/a.md](/docs/a.md),"
            f" not the URL {target}",
        )
        return None
    found = root_path(target)
    if not found:
        c.error(fld.line, "path-missing", f"{kind}: '{fld.label}' names no path")
        return None
    return found


def resource(c: Checker, fld: Field, kind: ActionType) -> Resource | None:
    """The project file or http(s) URL a ``Resource`` field names."""
    text = value(fld)
    links = find_links(text)
    target = links[0].destination if links else text.strip().strip("`").strip()
    if not target:
        c.error(fld.line, "resource-missing", f"{kind}: 'Resource' names nothing")
        return None
    if target.startswith("/"):
        found = root_path(target)
        if not found:
            c.error(fld.line, "resource-missing", f"{kind}: 'Resource' names no path")
            return None
        return Resource("file", found)
    if target.lower().startswith(("http://", "https://")):
        return Resource("url", target)
    if is_url(target):
        c.error(
            fld.line,
            "resource-invalid",
            f"{kind}: a Resource is a project path [a/b](/a/b) or an http(s) URL; found {target}",
        )
        return None
    return Resource("file", target)


def resources(c: Checker, fld: Field, kind: ActionType) -> tuple[str, ...]:
    """The paths and URLs of a ``Handoff Resources`` field: on its line or nested below."""
    out: list[str] = []
    texts = [(fld.line, value(fld))]
    for child in fld.item.children[1:]:
        if isinstance(child, ListBlock):
            for sub in child.items:
                para = sub.children[0] if sub.children else None
                if isinstance(para, Paragraph) and len(sub.children) == 1:
                    texts.append((sub.start, para.text))
                else:
                    c.error(sub.start, "resource-invalid", f"{kind}: expected a link")
    for line, text in texts:
        text = _fix(text)
        links = find_links(text)
        targets = [lk.destination for lk in links]
        if not links and text.strip():
            targets = [t.strip().strip("`") for t in text.split(",") if t.strip()]
        for target in targets:
            if target.lower().startswith(("http://", "https://")):
                out.append(target)
            elif is_url(target) or not root_path(target):
                c.error(line, "resource-invalid", f"{kind}: not a project path: {target}")
            else:
                out.append(root_path(target))
    return tuple(out)


def env(c: Checker, fld: Field) -> tuple[tuple[str, str], ...]:
    """The ``NAME: "value"`` pairs of an ``env`` field's nested list, in order."""
    pairs: list[tuple[str, str]] = []
    if value(fld).strip():
        c.error(
            fld.line,
            "env-invalid",
            'env takes a nested list of `NAME`: "value" items, not a value on its line',
        )
    seen: set[str] = set()
    for child in fld.item.children[1:]:
        if not isinstance(child, ListBlock):
            continue
        for sub in child.items:
            para = sub.children[0] if sub.children else None
            m = _ENV_RE.fullmatch(para.text.strip()) if isinstance(para, Paragraph) else None
            if m is None or len(sub.children) != 1:
                c.error(sub.start, "env-invalid", 'expected an env item like `NAME`: "value"')
                continue
            name = m.group("name").strip("*")
            if not _ENV_NAME_RE.fullmatch(name):
                c.error(sub.start, "env-invalid", f"'{name}' is not a variable name")
                continue
            if name in seen:
                c.error(sub.start, "env-invalid", f"env sets '{name}' twice")
                continue
            seen.add(name)
            pairs.append((name, _unquote(m.group("value").strip())))
    return tuple(pairs)


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        return text[1:-1]
    return text
