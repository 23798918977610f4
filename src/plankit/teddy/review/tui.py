"""Approval tier 2: the interactive checklist (``teddy-session-workflow.md`` §7 and §9).

A :class:`textual.widgets.Tree` lists the memo changes and the actions, each with a
checkbox.  A node's state is a boolean in its ``data`` dictionary; its label is drawn
again from the raw text by :func:`checkbox_label` on every change, so prefixes are
never stacked.  Keys: arrows move, enter or space toggles (on a group heading: the
group), ``a`` toggles everything (select all unless all are selected, then unselect
all), ``p`` previews and may change the action (:mod:`.preview_screens`), ``s``
confirms, ``q`` or escape goes back to the tier-1 prompt.

The app returns an :class:`~plankit.teddy.review.Approval` on ``s`` and None on ``q``.
Textual is imported only by this module and the screens, never at CLI start-up.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, Literal, TypedDict

from rich.text import Text
from textual.app import App, AutopilotCallbackType, ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

from plankit.teddy.format.model import Action, ChatWithUser, Conclude, Memo, Plan
from plankit.teddy.review.previews import Change, Editor, PreviewError
from plankit.teddy.run.approval import Approval, Decision
from plankit.teddy.run.report import action_target

HELP = (
    "Use [↑/↓] to navigate, [enter] to toggle, [a] to toggle all, "
    "[p] to preview details, [s] to confirm, [q] to go back."
)
CHECKED = "[✓] "
UNCHECKED = "[ ] "
MODIFIED = " *modified"
_WIDTH = max(len("EXECUTE"), len("CREATE")) + 1
"""Types up to EXECUTE are padded so targets line up, as in the spec's example."""


class ItemData(TypedDict):
    """``TreeNode.data`` of a memo or action: its state and its raw label."""

    kind: Literal["memo", "action"]
    index: int
    """0-based position among the plan's memos or actions."""
    selected: bool
    raw: str
    """The label without checkbox or marker."""
    modified: bool


def raw_label(label: str) -> str:
    """``label`` without any checkbox prefixes and ``*modified`` markers."""
    text = label
    while text.startswith((CHECKED, UNCHECKED)):
        text = text[len(CHECKED) :]
    while text.endswith(MODIFIED):
        text = text[: -len(MODIFIED)]
    return text


def checkbox_label(raw: str, selected: bool, modified: bool = False) -> str:
    """The label shown for an item: checkbox, raw text, ``*modified`` when changed."""
    text = raw_label(raw)
    return (CHECKED if selected else UNCHECKED) + text + (MODIFIED if modified else "")


def memo_label(memo: Memo) -> str:
    """``[+] ADD: text`` or ``[-] REMOVE: text``."""
    verb = "[+] ADD:" if memo.op == "+" else "[-] REMOVE:"
    return f"{verb} {memo.text}"


def action_label(action: Action) -> str:
    """``TYPE: target`` on one line (a chat or conclusion shows its message's start)."""
    target = action_target(action)
    if not target and isinstance(action, ChatWithUser | Conclude):
        target = action.message.strip().splitlines()[0] if action.message.strip() else ""
    if len(target) > 70:
        target = target[:69] + "…"
    head = f"{action.type}:"
    return f"{head.ljust(_WIDTH)} {target}".rstrip() if target else head


class Checklist(Tree[ItemData]):
    """The tree, with enter and space bound to toggling instead of expanding."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_item", "Toggle", show=False),
        Binding("a", "toggle_all", "Toggle all", show=False),
        Binding("p", "preview", "Preview", show=False),
        Binding("s", "confirm", "Confirm", show=False),
        Binding("q,escape", "back", "Back", show=False),
    ]
    """On the tree, not the app: the keys must not act while a preview is open."""

    def _checklist(self) -> ChecklistApp:
        app = self.app
        assert isinstance(app, ChecklistApp)
        return app

    def action_toggle_item(self) -> None:
        self._checklist().toggle(self.cursor_node)

    def action_toggle_all(self) -> None:
        self._checklist().toggle_all()

    def action_preview(self) -> None:
        self._checklist().preview(self.cursor_node)

    def action_confirm(self) -> None:
        app = self._checklist()
        app.exit(app.approval())

    def action_back(self) -> None:
        self._checklist().exit(None)


class ChecklistApp(App[Approval | None]):
    """The checklist; ``run()`` returns the :class:`Approval`, or None to go back."""

    TITLE = "TeDDy"
    CSS = """
    #title { text-style: bold; padding: 0 1; }
    #help { color: $text-muted; padding: 0 1 1 1; }
    #status { dock: bottom; height: 1; padding: 0 1; background: $panel; }
    Checklist { border: none; padding: 0 1; }
    """

    def __init__(
        self,
        plan: Plan,
        *,
        root: Path,
        editor: Editor | None = None,
        draft_dir: Path | None = None,
    ) -> None:
        super().__init__()
        self.plan = plan
        self.root = root
        self.editor = editor
        self.actions: list[Action] = list(plan.actions)
        """The actions as the user changed them."""
        self.notes: dict[int, str] = {}
        """Action position → what the user changed (Markdown)."""
        self._draft_dir = draft_dir
        self._own_draft_dir = False

    # --- layout and state ---------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(f'▶ Modify Plan: "{self.plan.title}"', id="title", markup=False)
        yield Static(HELP, id="help", markup=False)
        tree = Checklist("Plan", id="checklist")
        tree.show_root = False
        tree.guide_depth = 3
        yield tree
        yield Static("", id="status", markup=False)

    def on_mount(self) -> None:
        tree = self.query_one(Checklist)
        if self.plan.memos:
            group = tree.root.add("Memos", expand=True)
            for i, memo in enumerate(self.plan.memos):
                self._add(group, ItemData(kind="memo", index=i, selected=True,
                                          raw=memo_label(memo), modified=False))  # fmt: skip
        group = tree.root.add("Action Plan", expand=True)
        for i, action in enumerate(self.actions):
            self._add(group, ItemData(kind="action", index=i, selected=True,
                                      raw=action_label(action), modified=False))  # fmt: skip
        tree.root.expand()
        tree.focus()
        first = self.items()[0]
        self.call_after_refresh(lambda: tree.move_cursor(first))
        self._status()

    def _add(self, group: TreeNode[ItemData], data: ItemData) -> None:
        group.add_leaf(self._label(data), data)

    @staticmethod
    def _label(data: ItemData) -> Text:
        # Text, not str: a path or command with brackets must not be read as markup
        label = Text(checkbox_label(data["raw"], data["selected"]))
        if data["modified"]:
            label.append(" ")
            label.append(MODIFIED.strip(), style="bold yellow")
        return label

    def _redraw(self, node: TreeNode[ItemData]) -> None:
        assert node.data is not None
        node.set_label(self._label(node.data))

    def items(self, group: TreeNode[ItemData] | None = None) -> list[TreeNode[ItemData]]:
        """The memo and action nodes (of one group), in order."""
        groups = [group] if group is not None else list(self.query_one(Checklist).root.children)
        return [node for g in groups for node in g.children if node.data is not None]

    def _status(self, message: str = "") -> None:
        chosen = [n.data for n in self.items() if n.data is not None and n.data["selected"]]
        actions = sum(1 for d in chosen if d["kind"] == "action")
        memos = sum(1 for d in chosen if d["kind"] == "memo")
        text = f"{actions} of {len(self.actions)} actions selected"
        if self.plan.memos:
            text += f", {memos} of {len(self.plan.memos)} memos"
        if self.notes:
            text += f", {len(self.notes)} modified"
        self.query_one("#status", Static).update(Text(f"{text}. {message}".rstrip()))

    def toggle(self, node: TreeNode[ItemData] | None) -> None:
        """Enter/space: flip one item; on a group heading, toggle the whole group."""
        if node is None:
            return
        if node.data is None:
            self._toggle_all(self.items(node))
            return
        node.data["selected"] = not node.data["selected"]
        self._redraw(node)
        self._status()

    def _toggle_all(self, nodes: Sequence[TreeNode[ItemData]]) -> None:
        target = not all(n.data is not None and n.data["selected"] for n in nodes)
        for node in nodes:
            assert node.data is not None
            node.data["selected"] = target
            self._redraw(node)
        self._status()

    def toggle_all(self) -> None:
        """``a``: select all unless all are selected; then unselect all."""
        self._toggle_all(self.items())

    def approval(self) -> Approval:
        """The Approval the current state stands for."""

        def chosen(kind: str) -> frozenset[int]:
            return frozenset(
                n.data["index"]
                for n in self.items()
                if n.data is not None and n.data["kind"] == kind and n.data["selected"]
            )

        return Approval(
            Decision.APPROVE,
            selected=chosen("action"),
            actions=tuple(self.actions),
            modified=dict(self.notes),
            memos_selected=chosen("memo"),
        )

    def preview(self, node: TreeNode[ItemData] | None) -> None:
        """``p``: the preview screen of the item under the cursor."""
        from plankit.teddy.review import preview_screens

        if node is None or node.data is None:
            self._status("Move to a memo or an action to preview it.")
            return
        data = node.data
        if data["kind"] == "memo":
            memo = self.plan.memos[data["index"]]
            self.push_screen(preview_screens.memo_screen(memo))
            return
        index = data["index"]
        screen = preview_screens.screen_for(self, index)

        def done(change: Change | None) -> None:
            if change is not None:
                self._apply(node, index, change)

        self.push_screen(screen, done)

    def _apply(self, node: TreeNode[ItemData], index: int, change: Change) -> None:
        assert node.data is not None
        self.actions[index] = change.action
        if change.modified:
            self.notes[index] = change.note
        else:
            self.notes.pop(index, None)
        node.data["modified"] = change.modified
        node.data["raw"] = action_label(change.action)
        self._redraw(node)
        self._status("Changed." if change.modified else "")

    # --- what the preview screens need --------------------------------------------

    def draft_dir(self) -> Path:
        """A private temporary directory for the files the editor opens."""
        if self._draft_dir is None:
            self._draft_dir = Path(tempfile.mkdtemp(prefix="teddy-preview-"))
            self._own_draft_dir = True
        return self._draft_dir

    def open_in_editor(self, path: Path) -> None:
        """Open ``path`` in the previewer, giving it the terminal while it runs.

        A GUI editor (``code``) returns at once; a terminal editor has the screen until
        it exits.  Raises :class:`PreviewError` when there is no editor or it fails.
        """
        if self.editor is None:
            raise PreviewError("no previewer is configured")
        try:
            with self.suspend():
                self.editor.open(path)
        except SuspendNotSupported:  # headless (tests) or a web driver
            self.editor.open(path)

    def cleanup(self) -> None:
        """Remove the temporary files."""
        if self._own_draft_dir and self._draft_dir is not None:
            shutil.rmtree(self._draft_dir, ignore_errors=True)


def run_checklist(plan: Plan, *, root: Path, editor: Editor | None) -> Approval | None:
    """Show the checklist in the terminal; the Approval, or None when the user went back."""
    app = ChecklistApp(plan, root=root, editor=editor)
    try:
        return app.run()
    finally:
        app.cleanup()


class TuiApprover:
    """Goes straight to the checklist (``s`` approves, ``q`` quits); for scripts and
    tests, ``auto_pilot`` drives it headless with Textual's Pilot."""

    def __init__(
        self,
        root: Path,
        editor: Editor | None = None,
        *,
        auto_pilot: AutopilotCallbackType | None = None,
    ) -> None:
        self.root = root
        self.editor = editor
        self.auto_pilot = auto_pilot

    def review(self, plan: Plan, plan_file: Path | None) -> Decision | Approval:
        app = ChecklistApp(plan, root=self.root, editor=self.editor)
        try:
            if self.auto_pilot is None:
                result = app.run()
            else:
                result = app.run(headless=True, auto_pilot=self.auto_pilot)
        finally:
            app.cleanup()
        return result if result is not None else Decision.QUIT
