"""TeDDy plan text → :class:`~plankit.teddy.format.model.Plan`, with every problem reported.

:func:`check_plan` walks the Markdown tree once and returns the plan (when there is
no problem) and the list of :class:`~plankit.errors.Diagnostic`; :func:`parse_plan`
raises :class:`~plankit.errors.PlanError` instead.  Nothing that does not fit the
format is dropped silently: it is a diagnostic.

What real plans vary in, and is accepted without losing meaning: action headings
with or without backticks and in any letter case; metadata keys in any letter case,
with or without bold; backtick or tilde fences of any legal length; ``FIND:`` and
``REPLACE:`` labels as paragraphs or headings; link text mangled by emphasis (the
destination is used); characters damaged by double encoding (outside file contents
and commands, which are kept byte for byte).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from plankit.errors import Diagnostic, PlanError
from plankit.markdown.encoding import repair_double_encoding as _fix
from plankit.markdown.links import find_links, is_url, root_path
from plankit.markdown.tree import (
    Block,
    Document,
    Fence,
    Heading,
    ListBlock,
    ListItem,
    Paragraph,
    parse_document,
)
from plankit.teddy.format.model import (
    Action,
    ActionType,
    ChatWithUser,
    Conclude,
    Create,
    Edit,
    EditPair,
    Execute,
    Invoke,
    Memo,
    MemoOp,
    Plan,
    Prune,
    Read,
    Research,
    Resource,
)

RATIONALE_SECTIONS = ("Synthesis", "Justification", "Expected Outcome", "State Dashboard")
"""The four sections the Rationale must contain, in this order."""

_SECTIONS = {"rationale": "Rationale", "memos": "Memos", "action plan": "Action Plan"}

# Which metadata fields each action takes (lower-case key → attribute), and which
# of them it cannot do without.
_FIELDS: dict[ActionType, dict[str, str]] = {
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
_REQUIRED: dict[ActionType, tuple[str, ...]] = {
    ActionType.CREATE: ("file path",),
    ActionType.READ: ("resource",),
    ActionType.EDIT: ("file path",),
    ActionType.INVOKE: ("agent",),
    ActionType.PRUNE: ("resource",),
}
_CANONICAL_KEY = {
    "file path": "File Path",
    "description": "Description",
    "resource": "Resource",
    "expected outcome": "Expected Outcome",
    "cwd": "cwd",
    "env": "env",
    "agent": "Agent",
    "handoff resources": "Handoff Resources",
}

_KEY_RE = re.compile(
    r"""(?P<open>\*\*|__)?`?(?P<key>[A-Za-z][A-Za-z0-9 _-]*?)`?\s*
        (?:(?P<c1>:)\s*(?P=open)|(?P=open)\s*(?P<c2>:))\s*""",
    re.VERBOSE,
)
_PLAIN_KEY_RE = re.compile(r"`?(?P<key>[A-Za-z][A-Za-z0-9 _-]*?)`?\s*:\s*")
_OPTIONAL_RE = re.compile(r"^\(optional\)\s*", re.IGNORECASE)
_ENV_RE = re.compile(r"`?(?P<name>[^`:=\s]+)`?\s*(?::|=)\s*(?P<value>.*)")
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LABEL_RE = re.compile(r"[`*_\s]*(FIND|REPLACE)[`*_\s]*:?[`*_\s]*", re.IGNORECASE)
_RATIONALE_HEAD_RE = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*)?[ \t]*(?:\d+\.?[ \t]*)?(?P<name>[A-Za-z][A-Za-z ]*?)"
    r"[ \t]*(?:\*\*)?[ \t]*:?[ \t]*(?:\*\*)?[ \t]*$",
    re.MULTILINE,
)
_MEMO_RE = re.compile(r"(?:[-*+][ \t]+)?\[(?P<op>[+-])\][ \t]*(?P<rest>.*)")
_COMMENT_RE = re.compile(r"\s#")


def _norm_key(text: str) -> str:
    return " ".join(text.replace("_", " ").split()).casefold()


def _action_name(heading: str) -> str:
    name = heading.replace("`", "").replace("*", "").strip().rstrip(":").strip()
    return re.sub(r"[\s-]+", "_", name).upper()


def action_type_of(heading: str) -> ActionType | None:
    r"""The action a ``###`` heading's text names (``\`create\``` → CREATE), or None."""
    try:
        return ActionType(_action_name(heading))
    except ValueError:
        return None


def section_of(heading: str) -> str | None:
    """The top-level section a ``##`` heading's text names (``Rationale`` …), or None."""
    return _SECTIONS.get(_norm_key(heading.replace("`", "").replace("*", "")))


def is_edit_label(text: str) -> bool:
    """Whether a paragraph's or heading's text is a ``FIND:`` or ``REPLACE:`` label."""
    return _LABEL_RE.fullmatch(text) is not None


def _suggest(word: str, options: Sequence[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, options, n=1, cutoff=0.75)
    return f"; did you mean {close[0]}?" if close else ""


@dataclass(slots=True)
class _Field:
    key: str  # normalised
    label: str  # as written
    value: str  # inline Markdown source after the key, trimmed
    item: ListItem
    line: int


class _Parser:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.diags: list[Diagnostic] = []

    def error(self, line: int, code: str, message: str) -> None:
        self.diags.append(Diagnostic(line, code, message))

    def stray(self, block: Block, where: str) -> None:
        what = _describe(block)
        self.error(block.start, "stray-content", f"unexpected {what} {where}")

    # --- the whole document ---------------------------------------------------------

    def plan(self) -> Plan | None:
        doc = self.doc
        if doc.too_deep_line is not None:
            self.error(
                doc.too_deep_line,
                "nesting-too-deep",
                "lists or quotes are nested too deeply (20 list levels or 40 quote levels"
                " at most); flatten them",
            )
        blocks = doc.blocks
        title: str | None = None
        metadata: tuple[tuple[str, str], ...] = ()
        sections: dict[str, tuple[Heading, list[Block]]] = {}
        current: list[Block] | None = None  # blocks of the section being read
        header: list[Block] = []
        in_actions = False
        for block in blocks:
            if isinstance(block, Heading) and block.level <= 2:
                if in_actions and _LABEL_RE.fullmatch(block.text):
                    assert current is not None
                    current.append(block)
                    continue
                if block.level == 1:
                    if title is None and not sections:
                        title = _fix(block.text)
                        if not title:
                            self.error(block.start, "title-empty", "the plan's title is empty")
                        current = header
                        continue
                    self.error(
                        block.start,
                        "title-duplicate",
                        "a second level-1 heading; a plan has exactly one `# Title`"
                        " (use ## for sections, ### for actions, #### inside a message)",
                    )
                    continue
                key = _norm_key(block.text.replace("`", "").replace("*", ""))
                name = _SECTIONS.get(key)
                if name is None:
                    self.error(
                        block.start,
                        "unknown-section",
                        f"unknown section '## {block.text}'; expected ## Rationale, "
                        "## Memos or ## Action Plan"
                        + _suggest(block.text, list(_SECTIONS.values()))
                        + " (a heading inside a message must be #### or deeper)",
                    )
                    current = []
                    in_actions = False
                    continue
                if title is None and not sections:
                    self.error(block.start, "title-missing", "the plan has no `# Title` heading")
                if name in sections:
                    self.error(
                        block.start,
                        "section-duplicate",
                        f"'## {name}' appears twice (first at line {sections[name][0].start})",
                    )
                    current = []
                    in_actions = False
                    continue
                current = []
                sections[name] = (block, current)
                in_actions = name == "Action Plan"
                continue
            if current is None:
                self.error(
                    block.start,
                    "content-before-title",
                    f"unexpected {_describe(block)} before the `# Title` heading",
                )
                continue
            current.append(block)
        if title is None:
            if not any(d.code == "title-missing" for d in self.diags):
                self.error(1, "title-missing", "the plan has no `# Title` heading")
        else:
            metadata = self.header(header)
        rationale = ""
        if "Rationale" in sections:
            rationale = self.rationale(*sections["Rationale"])
        else:
            first_section = min((h.start for h, _ in sections.values()), default=None)
            self.error(
                first_section or _end_of(self.doc),
                "rationale-missing",
                "the plan has no '## Rationale' section (a fenced block with the four "
                "sections " + ", ".join(RATIONALE_SECTIONS) + ")",
            )
        memos: tuple[Memo, ...] = ()
        if "Memos" in sections:
            memos = self.memos(*sections["Memos"])
        actions: tuple[Action, ...] = ()
        if "Action Plan" in sections:
            actions = self.actions(*sections["Action Plan"])
        else:
            self.error(
                _end_of(self.doc),
                "action-plan-missing",
                "the plan has no '## Action Plan' section; add it with at least one action",
            )
        if self.diags or title is None:
            return None
        return Plan(title, metadata, rationale, memos, actions)

    # --- header, rationale, memos ------------------------------------------------------

    def header(self, blocks: list[Block]) -> tuple[tuple[str, str], ...]:
        pairs: list[tuple[str, str]] = []
        seen: dict[str, int] = {}
        for i, block in enumerate(blocks):
            if i == 0 and isinstance(block, ListBlock) and not block.ordered:
                for item in block.items:
                    fld = self.field(item, "the plan's metadata list")
                    if fld is None:
                        continue
                    if fld.key in seen:
                        self.error(
                            fld.line,
                            "metadata-duplicate",
                            f"'{fld.label}' appears twice in the metadata (first at line "
                            f"{seen[fld.key]})",
                        )
                        continue
                    seen[fld.key] = fld.line
                    if len(item.children) > 1:
                        self.stray(item.children[1], f"inside the metadata item '{fld.label}'")
                    pairs.append((_fix(fld.label), _fix(fld.value)))
                continue
            self.stray(block, "in the plan header (only the metadata list follows the title)")
        return tuple(pairs)

    def section_text(
        self, heading: Heading, blocks: list[Block], name: str
    ) -> tuple[str | None, int]:
        """A section's text: the content of its single fenced block, or its raw source.

        The raw source is accepted only for a section written without a fence (whatever
        code blocks its prose holds).  A section that opens with a fenced block and goes
        on after it had its fence closed early (or a second block added): reading the
        raw lines would quietly fold fence lines into the text, so it is an error.
        """
        if not blocks:
            return "", heading.start
        if len(blocks) == 1 and isinstance(blocks[0], Fence):
            fence = blocks[0]
            self.closed(fence)
            return fence.content, fence.start + 1
        if isinstance(blocks[0], Fence):
            for block in blocks[1:]:
                self.stray(
                    block,
                    f"in the {name} section, which holds one fenced block (did a fence inside "
                    "it close the block early? run `teddy preprocess`)",
                )
            return None, heading.start
        return self.doc.lines(blocks[0].start, blocks[-1].end), blocks[0].start

    def rationale(self, heading: Heading, blocks: list[Block]) -> str:
        raw, first = self.section_text(heading, blocks, "Rationale")
        if raw is None:
            return ""
        text = _fix(raw)
        if not text.strip():
            self.error(heading.start, "rationale-empty", "the Rationale is empty")
            return text
        found: list[str] = []
        wanted = {_norm_key(s): s for s in RATIONALE_SECTIONS}
        for m in _RATIONALE_HEAD_RE.finditer(text):
            name = wanted.get(_norm_key(m.group("name")))
            if name is not None and name not in found:
                found.append(name)
        missing = [s for s in RATIONALE_SECTIONS if s not in found]
        if missing:
            self.error(
                first,
                "rationale-sections",
                "the Rationale lacks "
                + ", ".join(f"'{RATIONALE_SECTIONS.index(s) + 1}. {s}'" for s in missing)
                + "; it needs the four sections "
                + ", ".join(f"{i}. {s}" for i, s in enumerate(RATIONALE_SECTIONS, 1)),
            )
        elif found != list(RATIONALE_SECTIONS):
            self.error(
                first,
                "rationale-order",
                "the Rationale's sections are out of order (found "
                + ", ".join(found)
                + "); expected "
                + ", ".join(RATIONALE_SECTIONS),
            )
        return text

    def memos(self, heading: Heading, blocks: list[Block]) -> tuple[Memo, ...]:
        text, first = self.section_text(heading, blocks, "Memos")
        if text is None:
            return ()
        memos: list[Memo] = []
        for offset, raw in enumerate(text.split("\n")):
            line = raw.strip()
            if not line:
                continue
            m = _MEMO_RE.fullmatch(line)
            if m is None:
                self.error(
                    first + offset,
                    "memo-invalid",
                    f"a memo line must start with [+] or [-]; found '{_clip(line)}'",
                )
                continue
            op: MemoOp = "+" if m.group("op") == "+" else "-"
            rest = _fix(m.group("rest"))
            comment: str | None = None
            c = _COMMENT_RE.search(rest)
            if c is not None:
                comment = rest[c.end() :].strip() or None
                rest = rest[: c.start()]
            rest = rest.strip()
            if not rest:
                self.error(first + offset, "memo-empty", f"the [{op}] memo has no text")
                continue
            memos.append(Memo(op, rest, comment))
        return tuple(memos)

    # --- metadata fields ---------------------------------------------------------------

    def field(self, item: ListItem, where: str) -> _Field | None:
        first = item.children[0] if item.children else None
        if not isinstance(first, Paragraph):
            self.error(item.start, "metadata-invalid", f"expected '**Key:** value' in {where}")
            return None
        text = first.text
        m = _KEY_RE.match(text) or _PLAIN_KEY_RE.match(text)
        if m is None:
            self.error(
                item.start,
                "metadata-invalid",
                f"expected '**Key:** value' in {where}; found '{_clip(text)}'",
            )
            return None
        label = m.group("key").strip()
        return _Field(_norm_key(label), label, text[m.end() :].strip(), item, item.start)

    def is_metadata_list(self, block: Block) -> bool:
        if not isinstance(block, ListBlock) or block.ordered or not block.items:
            return False
        first = block.items[0].children[:1]
        return (
            bool(first) and isinstance(first[0], Paragraph) and bool(_KEY_RE.match(first[0].text))
        )

    def fields(self, kind: ActionType, block: ListBlock) -> dict[str, _Field]:
        allowed = _FIELDS[kind]
        out: dict[str, _Field] = {}
        for item in block.items:
            fld = self.field(item, f"the {kind} metadata list")
            if fld is None:
                continue
            if fld.key not in allowed:
                names = [_CANONICAL_KEY[k] for k in allowed]
                self.error(
                    fld.line,
                    "unknown-field",
                    f"{kind} has no field '{fld.label}'; it takes "
                    + ", ".join(names)
                    + _suggest(fld.label, names),
                )
                continue
            if fld.key in out:
                self.error(
                    fld.line,
                    "field-duplicate",
                    f"'{fld.label}' appears twice in this {kind} (first at line "
                    f"{out[fld.key].line})",
                )
                continue
            nested_ok = fld.key in ("env", "handoff resources")
            for child in item.children[1:]:
                if not (nested_ok and isinstance(child, ListBlock)):
                    self.stray(child, f"inside the '{fld.label}' field")
            out[fld.key] = fld
        return out

    def value(self, fld: _Field) -> str:
        return _fix(_OPTIONAL_RE.sub("", fld.value))

    def path(self, fld: _Field, kind: ActionType) -> str | None:
        value = self.value(fld)
        links = find_links(value)
        target = links[0].destination if links else value.strip().strip("`").strip()
        if not target:
            self.error(fld.line, "path-missing", f"{kind}: '{fld.label}' names no path")
            return None
        if is_url(target):
            self.error(
                fld.line,
                "path-invalid",
                f"{kind}: '{fld.label}' must be a project path like [docs/a.md](/docs/a.md),"
                f" not the URL {target}",
            )
            return None
        path = root_path(target)
        if not path:
            self.error(fld.line, "path-missing", f"{kind}: '{fld.label}' names no path")
            return None
        return path

    def resource(self, fld: _Field, kind: ActionType) -> Resource | None:
        value = self.value(fld)
        links = find_links(value)
        target = links[0].destination if links else value.strip().strip("`").strip()
        if not target:
            self.error(fld.line, "resource-missing", f"{kind}: 'Resource' names nothing")
            return None
        if target.startswith("/"):
            path = root_path(target)
            if not path:
                self.error(fld.line, "resource-missing", f"{kind}: 'Resource' names no path")
                return None
            return Resource("file", path)
        if target.lower().startswith(("http://", "https://")):
            return Resource("url", target)
        if is_url(target):
            self.error(
                fld.line,
                "resource-invalid",
                f"{kind}: a Resource is a project path [a/b](/a/b) or an http(s) URL;"
                f" found {target}",
            )
            return None
        return Resource("file", target)

    def resources(self, fld: _Field, kind: ActionType) -> tuple[str, ...]:
        out: list[str] = []
        texts = [(fld.line, self.value(fld))]
        for child in fld.item.children[1:]:
            if isinstance(child, ListBlock):
                for sub in child.items:
                    para = sub.children[0] if sub.children else None
                    if isinstance(para, Paragraph) and len(sub.children) == 1:
                        texts.append((sub.start, para.text))
                    else:
                        self.error(sub.start, "resource-invalid", f"{kind}: expected a link")
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
                    self.error(line, "resource-invalid", f"{kind}: not a project path: {target}")
                else:
                    out.append(root_path(target))
        return tuple(out)

    def env(self, fld: _Field) -> tuple[tuple[str, str], ...]:
        pairs: list[tuple[str, str]] = []
        if self.value(fld).strip():
            self.error(
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
                    self.error(
                        sub.start, "env-invalid", 'expected an env item like `NAME`: "value"'
                    )
                    continue
                name = m.group("name").strip("*")
                if not _ENV_NAME_RE.fullmatch(name):
                    self.error(sub.start, "env-invalid", f"'{name}' is not a variable name")
                    continue
                if name in seen:
                    self.error(sub.start, "env-invalid", f"env sets '{name}' twice")
                    continue
                seen.add(name)
                pairs.append((name, _unquote(m.group("value").strip())))
        return tuple(pairs)

    # --- actions ---------------------------------------------------------------------

    def actions(self, heading: Heading, blocks: list[Block]) -> tuple[Action, ...]:
        groups: list[tuple[Heading, list[Block]]] = []
        for block in blocks:
            if (
                isinstance(block, Heading)
                and block.level <= 3
                and not _LABEL_RE.fullmatch(block.text)
            ):
                groups.append((block, []))
            elif groups:
                groups[-1][1].append(block)
            else:
                self.stray(block, "before the first action (each action starts with ### `TYPE`)")
        if not groups:
            self.error(
                heading.start,
                "action-plan-empty",
                "the Action Plan has no actions; add at least one ### `ACTION`",
            )
            return ()
        ends = [g[0].start - 1 for g in groups[1:]] + [_section_end(self.doc, blocks)]
        out: list[Action] = []
        for (head, body), end in zip(groups, ends, strict=True):
            action = self.action(head, body, end)
            if action is not None:
                out.append(action)
        return tuple(out)

    def action(self, head: Heading, body: list[Block], end: int) -> Action | None:
        name = _action_name(head.text)
        try:
            kind = ActionType(name)
        except ValueError:
            first = name.split("_", 1)[0] if name else ""
            options = [str(a) for a in ActionType]
            hint = _suggest(name, options)
            if not hint and any(a == first or a.startswith(first + "_") for a in options):
                hint = "; the heading must hold the action name only, e.g. ### `CREATE`"
            self.error(
                head.start,
                "unknown-action",
                f"unknown action '{head.text}'; expected one of " + ", ".join(options) + hint,
            )
            return None
        before = len(self.diags)
        handler = _HANDLERS[kind]
        fields: dict[str, _Field] = {}
        rest = body
        meta_list = body[0] if body else None
        if (
            kind is not ActionType.CHAT_WITH_USER
            and isinstance(meta_list, ListBlock)
            and self.is_metadata_list(meta_list)
        ):
            fields = self.fields(kind, meta_list)
            rest = body[1:]
        for key in _REQUIRED.get(kind, ()):
            if key not in fields:
                self.error(
                    head.start,
                    "field-missing",
                    f"{kind} needs a '- **{_CANONICAL_KEY[key]}:** …' item in its metadata list",
                )
        action = handler(self, head, fields, rest, end)
        return action if len(self.diags) == before else None

    def closed(self, fence: Fence) -> bool:
        if not fence.closed:
            self.error(
                fence.start,
                "fence-unclosed",
                f"the fenced block opened here with {fence.char * fence.length} is never "
                "closed; run `teddy preprocess` or close it",
            )
        return fence.closed

    def one_fence(
        self, kind: ActionType, head: Heading, blocks: list[Block], code: str, what: str
    ) -> str | None:
        fence: Fence | None = None
        for block in blocks:
            if fence is None and isinstance(block, Fence):
                fence = block
                self.closed(block)
            else:
                self.stray(block, f"in {kind} after its {what}" if fence else f"in {kind}")
        if fence is None:
            self.error(head.start, code, f"{kind} needs a fenced code block with its {what}")
            return None
        return fence.content

    def message(self, blocks: list[Block], end: int) -> str:
        if not blocks:
            return ""
        return _fix(self.doc.lines(blocks[0].start, end).rstrip())

    def description(self, fields: dict[str, _Field]) -> str | None:
        fld = fields.get("description")
        return self.value(fld) if fld is not None else None

    def create(self, head: Heading, f: dict[str, _Field], rest: list[Block], end: int) -> Action:
        path = self.path(f["file path"], ActionType.CREATE) if "file path" in f else None
        content = self.one_fence(ActionType.CREATE, head, rest, "create-no-content", "file content")
        return Create(path or "", content or "", self.description(f), head.start)

    def read(self, head: Heading, f: dict[str, _Field], rest: list[Block], end: int) -> Action:
        return self._resource_action(Read, ActionType.READ, head, f, rest)

    def prune(self, head: Heading, f: dict[str, _Field], rest: list[Block], end: int) -> Action:
        return self._resource_action(Prune, ActionType.PRUNE, head, f, rest)

    def _resource_action(
        self,
        cls: type[Read] | type[Prune],
        kind: ActionType,
        head: Heading,
        f: dict[str, _Field],
        rest: list[Block],
    ) -> Action:
        for block in rest:
            self.stray(block, f"in {kind} (it has only a metadata list)")
        res = self.resource(f["resource"], kind) if "resource" in f else None
        return cls(res or Resource("file", ""), self.description(f), head.start)

    def edit(self, head: Heading, f: dict[str, _Field], rest: list[Block], end: int) -> Action:
        before = len(self.diags)
        path = self.path(f["file path"], ActionType.EDIT) if "file path" in f else None
        pairs: list[EditPair] = []
        pending_find: str | None = None
        pending_line = 0
        label: tuple[str, int] | None = None
        for block in rest:
            text = block.text if isinstance(block, Paragraph | Heading) else None
            m = _LABEL_RE.fullmatch(text) if text is not None else None
            if m is not None:
                if label is not None:
                    self.error(
                        label[1], "edit-label-without-block", f"{label[0]}: has no fenced block"
                    )
                label = (m.group(1).upper(), block.start)
                continue
            if isinstance(block, Fence) and label is not None:
                self.closed(block)
                which, line = label
                label = None
                if which == "FIND":
                    if pending_find is not None:
                        self.error(
                            pending_line, "edit-unpaired", "FIND: without its REPLACE: block"
                        )
                    pending_find, pending_line = block.content, line
                else:
                    if pending_find is None:
                        self.error(line, "edit-unpaired", "REPLACE: without a FIND: before it")
                    else:
                        pairs.append(EditPair(pending_find, block.content))
                        pending_find = None
                continue
            if isinstance(block, Fence):
                self.error(
                    block.start,
                    "edit-unlabelled-block",
                    "a fenced block in EDIT must follow a FIND: or REPLACE: label",
                )
                continue
            self.stray(block, "in EDIT (only FIND:/REPLACE: pairs follow the metadata)")
        if label is not None:
            self.error(label[1], "edit-label-without-block", f"{label[0]}: has no fenced block")
        if pending_find is not None:
            self.error(pending_line, "edit-unpaired", "FIND: without its REPLACE: block")
        if not pairs and not any(d.code.startswith("edit-") for d in self.diags[before:]):
            self.error(
                head.start,
                "edit-no-pairs",
                "EDIT needs at least one FIND:/REPLACE: pair (whole-file rewrites are not allowed)",
            )
        return Edit(path or "", tuple(pairs), self.description(f), head.start)

    def execute(self, head: Heading, f: dict[str, _Field], rest: list[Block], end: int) -> Action:
        command = self.one_fence(ActionType.EXECUTE, head, rest, "execute-no-command", "command")
        if command is not None and not command.strip():
            self.error(head.start, "execute-no-command", "EXECUTE's command block is empty")
        cwd = self.path(f["cwd"], ActionType.EXECUTE) if "cwd" in f else None
        env = self.env(f["env"]) if "env" in f else ()
        expected = f.get("expected outcome")
        return Execute(
            command or "",
            self.value(expected) if expected is not None else None,
            cwd,
            env,
            self.description(f),
            head.start,
        )

    def research(self, head: Heading, f: dict[str, _Field], rest: list[Block], end: int) -> Action:
        queries: list[str] = []
        for block in rest:
            if isinstance(block, Fence):
                self.closed(block)
                query = _fix(block.content.strip())
                if not query:
                    self.error(block.start, "research-empty-query", "this query block is empty")
                queries.append(query)
            else:
                self.stray(block, "in RESEARCH (each query is its own fenced block)")
        if not rest:
            self.error(
                head.start, "research-no-queries", "RESEARCH needs one fenced block per query"
            )
        return Research(tuple(queries), self.description(f), head.start)

    def chat(self, head: Heading, f: dict[str, _Field], rest: list[Block], end: int) -> Action:
        message = self.message(rest, end)
        if not message.strip():
            self.error(head.start, "chat-empty", "CHAT_WITH_USER has no message")
        for block in rest:
            if isinstance(block, Fence):
                self.closed(block)
        return ChatWithUser(message, None, head.start)

    def invoke(self, head: Heading, f: dict[str, _Field], rest: list[Block], end: int) -> Action:
        agent = _fix(self.value(f["agent"]).strip("`*_ ")) if "agent" in f else ""
        if "agent" in f and not agent:
            self.error(f["agent"].line, "agent-missing", "INVOKE: 'Agent' names no agent")
        handoff = self._handoff(f, ActionType.INVOKE)
        return Invoke(agent, handoff, self.message(rest, end), self.description(f), head.start)

    def conclude(self, head: Heading, f: dict[str, _Field], rest: list[Block], end: int) -> Action:
        handoff = self._handoff(f, ActionType.CONCLUDE)
        return Conclude(handoff, self.message(rest, end), self.description(f), head.start)

    def _handoff(self, f: dict[str, _Field], kind: ActionType) -> tuple[str, ...]:
        fld = f.get("handoff resources")
        return self.resources(fld, kind) if fld is not None else ()


_Handler = Callable[[_Parser, Heading, dict[str, _Field], list[Block], int], Action]
_HANDLERS: dict[ActionType, _Handler] = {
    ActionType.CREATE: _Parser.create,
    ActionType.READ: _Parser.read,
    ActionType.EDIT: _Parser.edit,
    ActionType.EXECUTE: _Parser.execute,
    ActionType.RESEARCH: _Parser.research,
    ActionType.CHAT_WITH_USER: _Parser.chat,
    ActionType.INVOKE: _Parser.invoke,
    ActionType.CONCLUDE: _Parser.conclude,
    ActionType.PRUNE: _Parser.prune,
}


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        return value[1:-1]
    return value


def _clip(text: str, width: int = 60) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def _describe(block: Block) -> str:
    if isinstance(block, Paragraph):
        return f"paragraph '{_clip(block.text, 40)}'"
    if isinstance(block, Heading):
        return f"heading '{'#' * block.level} {_clip(block.text, 40)}'"
    if isinstance(block, Fence):
        return "fenced block"
    if isinstance(block, ListBlock):
        return "list"
    return block.kind.replace("_", " ")


def _end_of(doc: Document) -> int:
    return max(1, doc.line_count)


def _section_end(doc: Document, blocks: list[Block]) -> int:
    return blocks[-1].end if blocks else _end_of(doc)


def check_plan(text: str) -> tuple[Plan | None, list[Diagnostic]]:
    """Parse plan ``text``; return the plan (None when invalid) and every diagnostic."""
    doc = parse_document(text.removeprefix("\ufeff"))
    if not doc.blocks:
        return None, [Diagnostic(1, "plan-empty", "the plan is empty; expected a `# Title`")]
    parser = _Parser(doc)
    plan = parser.plan()
    return plan, sorted(parser.diags)


def parse_plan(text: str) -> Plan:
    """Parse plan ``text`` or raise :class:`PlanError` with every diagnostic."""
    plan, diags = check_plan(text)
    if plan is None:
        raise PlanError(diags)
    return plan
