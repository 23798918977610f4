"""The checklist's ``(p)`` screens: one per preview workflow of :mod:`.previews`.

Each screen is a modal that dismisses with a :class:`~.previews.Change` (or None when
nothing changed or the user discarded).  With a previewer the file goes to the editor
and the user confirms with ``y``; without one the content is edited in the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import ClassVar, Protocol

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static, TextArea

from plankit.teddy.format.model import Action, Create, Edit, Execute, Memo, Plan, Prune, Read
from plankit.teddy.format.render import render_action
from plankit.teddy.review.previews import (
    Change,
    Editor,
    PreviewError,
    PreviewKind,
    check_new_path,
    draft_file,
    editable_text,
    file_before,
    finish_create,
    finish_edit,
    preview_kind,
    proposed_final,
    read_only_view,
    unified,
    with_text,
)
from plankit.teddy.run.actions import file_text


class ChecklistApp(Protocol):
    """What a preview screen needs of the checklist that opens it
    (:class:`plankit.teddy.review.tui.ChecklistApp`): the screens sit below the app and
    never import it."""

    plan: Plan
    root: Path
    editor: Editor | None

    @property
    def actions(self) -> Sequence[Action]:
        """The actions as the user changed them."""
        ...

    def draft_dir(self) -> Path:
        """A private temporary directory for the files the editor opens."""
        ...

    def open_in_editor(self, path: Path) -> None:
        """Open ``path`` in the previewer."""
        ...


CREATE_OPENED = (
    "Your editor has been opened to preview the new file's content. "
    "You may edit it directly in this preview."
)
EDIT_OPENED = (
    "Your editor has been opened to preview the proposed changes. You may edit the "
    "file directly in this preview to make final adjustments."
)
NO_EDITOR = (
    "No previewer is set (preview_command in .teddy/config.yaml, or `code` on PATH): "
    "edit below; [tab] moves on, [escape] discards."
)
CREATE_SAVED = "Have you finished editing and saved the file content? (y/n)"
EDIT_SAVED = "Have you finished editing and saved the file? (y/n) ›"
NOT_YET = "Save it in your editor, then press [y]; [escape] discards your changes."


def _syntax(code: str, path: str | None = None, lexer: str | None = None) -> Syntax:
    name = lexer or (Syntax.guess_lexer(PurePosixPath(path).name, code) if path else "text")
    return Syntax(code, name, word_wrap=True, theme="ansi_dark", background_color="default")


class PreviewScreen(ModalScreen[Change | None]):
    """A framed modal with a title, a body and an error line."""

    DEFAULT_CSS = """
    PreviewScreen { align: center middle; }
    PreviewScreen > #box {
        width: 94%; height: 92%; border: round $accent; padding: 0 1; background: $surface;
    }
    PreviewScreen .title { text-style: bold; padding-bottom: 1; }
    PreviewScreen .hint { color: $text-muted; }
    PreviewScreen .question { text-style: bold; }
    PreviewScreen #error { color: $error; }
    PreviewScreen #view { height: 1fr; border: tall $panel; }
    PreviewScreen #editor { height: auto; }
    PreviewScreen TextArea { height: 1fr; }
    PreviewScreen Input { width: 100%; }
    """

    def error(self, message: str) -> None:
        self.query_one("#error", Static).update(Text(message))

    def say(self, widget_id: str, message: str) -> None:
        self.query_one(f"#{widget_id}", Static).update(Text(message))


def _static(text: str, widget_id: str | None = None, classes: str = "") -> Static:
    return Static(Text(text), id=widget_id, classes=classes)


class ReadOnlyScreen(PreviewScreen):
    """READ, PRUNE and memos: shown, not changed."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("c,escape,q", "close", "Close")]

    def __init__(self, title: str, head: str, body: str, path: str | None = None) -> None:
        super().__init__()
        self.heading, self.head, self.body, self.path = title, head, body, path

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield _static(self.heading, classes="title")
            yield _static(self.head)
            with VerticalScroll(id="view"):
                yield Static(_syntax(self.body, self.path))
            yield _static("(c)lose — read-only", classes="hint")
            yield _static("", "error")

    def action_close(self) -> None:
        self.dismiss(None)


class SimpleScreen(PreviewScreen):
    """EXECUTE, RESEARCH, CHAT_WITH_USER, INVOKE, CONCLUDE: (e)dit or (c)lose."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "edit", "Edit"),
        Binding("c", "close", "Close"),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, app: ChecklistApp, index: int) -> None:
        super().__init__()
        self.index = index
        self.current = app.actions[index]
        self.original = app.plan.actions[index]
        self.editing = False

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield _static(f"{self.current.type} (action {self.index + 1})", classes="title")
            with VerticalScroll(id="view"):
                yield Static(_syntax(render_action(self.current), lexer="markdown"))
            yield Vertical(id="editor")
            yield _static("(e)dit / (c)lose", "hint", "hint")
            yield _static("", "error")

    def action_edit(self) -> None:
        if self.editing:
            return
        self.editing = True
        text = editable_text(self.current)
        area = self.query_one("#editor", Vertical)
        area.styles.height = "1fr"
        if isinstance(self.current, Execute) and "\n" not in text:
            field: Input | TextArea = Input(value=text, id="text", select_on_focus=False)
            self.say("hint", "[enter] saves, [escape] cancels")
            area.styles.height = "auto"
        else:
            field = TextArea(text, id="text")
            self.say("hint", "[tab] to Save and [enter] saves, [escape] cancels")
            area.mount(field)
            area.mount(Button("Save", id="save"))
            field.move_cursor(field.document.end)  # most changes add to the end
            field.focus()
            return
        area.mount(field)
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._save(event.value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self._save(self.query_one("#text", TextArea).text)

    def _save(self, text: str) -> None:
        try:
            self.dismiss(with_text(self.original, text))
        except PreviewError as exc:
            self.error(str(exc))

    def action_close(self) -> None:
        self.dismiss(None)

    def action_cancel(self) -> None:
        if not self.editing:
            self.dismiss(None)
            return
        self.editing = False
        area = self.query_one("#editor", Vertical)
        area.remove_children()
        area.styles.height = "auto"
        self.say("hint", "(e)dit / (c)lose")
        self.error("")


class _DraftScreen(PreviewScreen):
    """A preview that opens a draft file in the editor and ends with a y/n question."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "yes", "Yes", show=False),
        Binding("n", "no", "No", show=False),
        Binding("escape", "discard", "Discard"),
    ]

    def __init__(self, app: ChecklistApp, index: int) -> None:
        super().__init__()
        self.checklist = app
        self.index = index
        self.draft: Path | None = None


class SaveAsScreen(_DraftScreen):
    """CREATE: the content in the editor, the path asked, then ``y`` to take both."""

    def __init__(self, app: ChecklistApp, index: int) -> None:
        super().__init__(app, index)
        current = app.actions[index]
        original = app.plan.actions[index]
        assert isinstance(current, Create) and isinstance(original, Create)
        self.current, self.original = current, original
        self.path = current.path
        self.asking = False

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield _static(f"CREATE: {self.current.path}", classes="title")
            if self.checklist.editor is not None:
                yield _static(CREATE_OPENED)
            else:
                yield _static(NO_EDITOR, classes="hint")
                yield TextArea(file_text(self.current.content), id="content")
            yield _static("")
            yield _static(f"File path: [{self.current.path}]")
            yield Input(placeholder=self.current.path, id="path")
            yield _static("Press Enter to confirm, or type a new path ›", classes="hint")
            yield _static("", "question", "question")
            yield _static("", "error")

    def on_mount(self) -> None:
        self.query_one("#path", Input).focus()
        if self.checklist.editor is not None:
            text = file_text(self.current.content)
            self.draft = draft_file(self.checklist.draft_dir(), self.index, self.path, text)
            self.call_after_refresh(self._open)

    def _open(self) -> None:
        assert self.draft is not None
        try:
            self.checklist.open_in_editor(self.draft)
        except PreviewError as exc:
            self.error(str(exc))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        path = event.value.strip() or self.current.path
        try:
            check_new_path(path, self.checklist.root)
        except PreviewError as exc:
            self.error(str(exc))
            return
        self.path = path
        self.error("")
        if self.draft is None:  # edited in the terminal: nothing to wait for
            self._finish(self.query_one("#content", TextArea).text)
            return
        self.asking = True
        self.say("question", f"{CREATE_SAVED}  [path: {path}]")
        self.set_focus(None)

    def action_yes(self) -> None:
        if self.asking and self.draft is not None:
            self._finish(self.draft.read_text(encoding="utf-8"))

    def action_no(self) -> None:
        if self.asking:
            self.say("question", f"{CREATE_SAVED}  {NOT_YET}")

    def _finish(self, content: str) -> None:
        try:
            self.dismiss(finish_create(self.original, self.path, content, self.checklist.root))
        except PreviewError as exc:
            self.asking = False
            self.say("question", "")
            self.error(str(exc))
            self.query_one("#path", Input).focus()

    def action_discard(self) -> None:
        self.dismiss(None)


class EditScreen(_DraftScreen):
    """EDIT: the proposed final file in the editor; ``y`` turns it back into pairs."""

    def __init__(self, app: ChecklistApp, index: int) -> None:
        super().__init__(app, index)
        current = app.actions[index]
        original = app.plan.actions[index]
        assert isinstance(current, Edit) and isinstance(original, Edit)
        self.current, self.original = current, original
        self.before = ""
        self.proposed = ""
        self.problem = ""
        try:
            self.before = file_before(app.actions, index, app.root)
            self.proposed = proposed_final(current, self.before)
        except PreviewError as exc:
            self.problem = str(exc)

    def compose(self) -> ComposeResult:
        with Vertical(id="box"):
            yield _static(f"Editing: [{self.current.path}]", classes="title")
            if self.problem:
                yield _static("", "error")
                yield _static("[escape] closes", classes="hint")
                return
            editor = self.checklist.editor is not None
            yield _static(EDIT_OPENED if editor else NO_EDITOR, classes="" if editor else "hint")
            diff = unified(self.before, self.proposed, "now", "proposed")
            with VerticalScroll(id="view"):
                yield Static(_syntax(diff or "(no change)", lexer="diff"))
            if editor:
                yield _static(EDIT_SAVED, "question", "question")
            else:
                yield TextArea(self.proposed, id="content")
                yield Button("Done", id="done")
            yield _static("", "error")

    def on_mount(self) -> None:
        if self.problem:
            self.error(self.problem)
        elif self.checklist.editor is not None:
            draft_dir = self.checklist.draft_dir()
            self.draft = draft_file(draft_dir, self.index, self.current.path, self.proposed)
            self.call_after_refresh(self._open)
        else:
            self.query_one("#content", TextArea).focus()

    def _open(self) -> None:
        assert self.draft is not None
        try:
            self.checklist.open_in_editor(self.draft)
        except PreviewError as exc:
            self.error(str(exc))

    def action_yes(self) -> None:
        if self.draft is not None:
            self._finish(self.draft.read_text(encoding="utf-8"))

    def action_no(self) -> None:
        if self.draft is not None:
            self.say("question", f"{EDIT_SAVED}  {NOT_YET}")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "done":
            self._finish(self.query_one("#content", TextArea).text)

    def _finish(self, final: str) -> None:
        try:
            self.dismiss(finish_edit(self.original, self.before, final))
        except PreviewError as exc:
            self.error(str(exc))

    def action_discard(self) -> None:
        self.dismiss(None)


def memo_screen(memo: Memo) -> ReadOnlyScreen:
    """A memo change, read-only."""
    verb = "ADD" if memo.op == "+" else "REMOVE"
    body = memo.text + (f"\n\n# {memo.comment}" if memo.comment else "")
    return ReadOnlyScreen(f"Memo: {verb}", "Applied to .teddy/memos.yaml when approved.", body)


def screen_for(app: ChecklistApp, index: int) -> PreviewScreen:
    """The preview screen for action ``index`` (0-based) in its current form."""
    action = app.actions[index]
    match preview_kind(action):
        case PreviewKind.SAVE_AS:
            return SaveAsScreen(app, index)
        case PreviewKind.EDIT:
            return EditScreen(app, index)
        case PreviewKind.SIMPLE:
            return SimpleScreen(app, index)
    assert isinstance(action, Read | Prune)
    head, body = read_only_view(action, app.root)
    path = action.resource.target if action.resource.kind == "file" else None
    return ReadOnlyScreen(f"{action.type} (action {index + 1})", head, body, path)
