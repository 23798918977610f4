"""Approval tier 2: the Textual checklist driven headless with its Pilot, SVG snapshots
of its screens, an execution that records the user's changes in report.md, and the
console tier opening it in a real terminal."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from rich.syntax import Syntax
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Input, Static, TextArea

from plankit.teddy.format.model import (
    ChatWithUser,
    Conclude,
    Create,
    Edit,
    EditPair,
    Execute,
    Invoke,
    Memo,
    Plan,
    Prune,
    Read,
    Research,
    Resource,
)
from plankit.teddy.format.parse import parse_plan
from plankit.teddy.review.previews import CommandEditor
from plankit.teddy.review.tui import (
    CHECKED,
    MODIFIED,
    UNCHECKED,
    ChecklistApp,
    TuiApprover,
    checkbox_label,
    raw_label,
)
from plankit.teddy.run.approval import Approval, Decision, ScriptedChat
from plankit.teddy.run.edits import apply_pairs
from plankit.teddy.run.execute import execute_turn
from plankit.teddy.session.config import Config
from plankit.teddy.session.layout import create_session
from tests.waiting import DEADLINE

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "tests" / "data" / "tui"
UPDATE = os.environ.get("PLANKIT_UPDATE_SNAPSHOTS") == "1"
SIZE = (100, 30)

APP = "import os\n\n\ndef main():\n    print('hello')\n\n\ndef helper():\n    return 1\n"

PLAN = Plan(
    title="Every kind of action",
    metadata=(("Status", "Green 🟢"), ("Agent", "Developer")),
    rationale="Exercise the checklist.",
    memos=(Memo("+", "Keep functions small.", "agreed"), Memo("-", "Old rule.")),
    actions=(
        Create("src/new.py", "VALUE = 1", description="A new module."),
        Edit("src/app.py", (EditPair("    print('hello')", "    print('hello, world')"),)),
        Execute("python3 -m pytest -q [tests]", description="Run the tests."),
        Read(Resource("file", "README.md")),
        Prune(Resource("file", "docs/old.md")),
        Research(("textual tree widget", "rich live display")),
        ChatWithUser("Which name do you prefer?\nA or B."),
        Invoke("Architect", message="Please review the design."),
        Conclude(message="Done here."),
    ),
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "src" / "app.py").write_text(APP)
    (root / "README.md").write_text("# Project\n\nRead me.\n")
    (root / "docs" / "old.md").write_text("old notes\n")
    return root


def scripted_editor(tmp_path: Path, replacements: dict[str, str]) -> tuple[CommandEditor, Path]:
    """A real editor command: a script that replaces text in the file it is given and
    logs the file's name; returns the editor and the log."""
    log = tmp_path / "editor.log"
    script = tmp_path / "editor.py"
    script.write_text(
        "import json, sys\n"
        "path = sys.argv[-1]\n"
        f"with open({str(log)!r}, 'a') as f: f.write(path.rsplit('/', 1)[-1] + '\\n')\n"
        "text = open(path, encoding='utf-8').read()\n"
        f"for old, new in json.loads({json.dumps(json.dumps(replacements))}).items():\n"
        "    text = text.replace(old, new)\n"
        "open(path, 'w', encoding='utf-8').write(text)\n"
    )
    return CommandEditor([sys.executable, str(script)]), log


Script = Callable[[Pilot[Approval | None], ChecklistApp], Awaitable[None]]


def drive(app: ChecklistApp, script: Script) -> Approval | None:
    """Run ``app`` headless, play ``script``, return what the app returned; then remove
    its temporary files, as :func:`~plankit.teddy.review.tui.run_checklist` does."""

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await script(pilot, app)
            await pilot.pause()

    try:
        asyncio.run(main())
    finally:
        app.cleanup()
    return app.return_value


def labels(app: ChecklistApp) -> list[str]:
    return [str(node.label) for node in app.items()]


async def goto(pilot: Pilot[Approval | None], app: ChecklistApp, action: int) -> None:
    """Put the cursor on action ``action`` (0-based) with the arrow keys."""
    tree = app.query_one("#checklist")
    target = app.items()[len(app.plan.memos) + action]
    for _ in range(40):
        if tree.cursor_node is target:  # type: ignore[attr-defined]
            return
        line = tree.cursor_line  # type: ignore[attr-defined]
        await pilot.press("down" if line < target.line else "up")
    raise AssertionError(f"could not reach action {action}")


# --- labels and toggling ------------------------------------------------------------------


def test_label_helpers_never_stack_prefixes() -> None:
    label = "EDIT:    a.py"
    for _ in range(5):
        label = checkbox_label(label, selected=True, modified=True)
        label = checkbox_label(label, selected=False)
    assert label == UNCHECKED + "EDIT:    a.py"
    assert raw_label(CHECKED + CHECKED + "x" + MODIFIED + MODIFIED) == "x"


def test_initial_checklist_lists_memos_and_actions_all_selected(project: Path) -> None:
    app = ChecklistApp(PLAN, root=project)

    async def look(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        assert labels(app) == [
            "[✓] [+] ADD: Keep functions small.",
            "[✓] [-] REMOVE: Old rule.",
            "[✓] CREATE:  src/new.py",
            "[✓] EDIT:    src/app.py",
            "[✓] EXECUTE: python3 -m pytest -q [tests]",
            "[✓] READ:    README.md",
            "[✓] PRUNE:   docs/old.md",
            "[✓] RESEARCH: 2 queries",
            "[✓] CHAT_WITH_USER: Which name do you prefer?",
            "[✓] INVOKE:  Architect",
            "[✓] CONCLUDE: Done here.",
        ]
        groups = [str(n.label) for n in app.query_one("#checklist").root.children]  # type: ignore[attr-defined]
        assert groups == ["Memos", "Action Plan"]
        await pilot.press("s")

    approval = drive(app, look)
    assert approval == Approval(
        Decision.APPROVE,
        selected=frozenset(range(9)),
        actions=PLAN.actions,
        modified={},
        memos_selected=frozenset({0, 1}),
    )


def test_enter_and_space_toggle_one_item(project: Path) -> None:
    app = ChecklistApp(PLAN, root=project)

    async def toggle(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        await goto(pilot, app, 2)  # EXECUTE
        await pilot.press("enter")
        assert labels(app)[4] == "[ ] EXECUTE: python3 -m pytest -q [tests]"
        await pilot.press("space", "enter", "space")  # back and forth: selected again
        assert labels(app)[4] == "[✓] EXECUTE: python3 -m pytest -q [tests]"
        await pilot.press("space")
        await goto(pilot, app, 0)
        await pilot.press("up", "up", "up", "enter")  # the first memo
        assert app.items()[4].data == {
            "kind": "action", "index": 2, "selected": False,
            "raw": "EXECUTE: python3 -m pytest -q [tests]", "modified": False,
        }  # fmt: skip
        await pilot.press("s")

    approval = drive(app, toggle)
    assert approval is not None
    assert approval.selected == frozenset(range(9)) - {2}
    assert approval.memos_selected == frozenset({1})


def test_toggle_all_selects_all_unless_all_are_selected(project: Path) -> None:
    app = ChecklistApp(PLAN, root=project)

    async def toggle_all(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        await pilot.press("a")  # all selected → unselect all
        assert all(label.startswith(UNCHECKED) for label in labels(app))
        await pilot.press("a")  # none selected → select all
        assert all(label.startswith(CHECKED) for label in labels(app))
        await goto(pilot, app, 3)
        await pilot.press("enter", "a")  # one unselected → select all, not unselect
        assert all(label.startswith(CHECKED) for label in labels(app))
        await pilot.press("a", "down", "enter")  # none selected, then one
        assert [label.startswith(CHECKED) for label in labels(app)].count(True) == 1
        await pilot.press("a")
        assert all(label.startswith(CHECKED) for label in labels(app))
        await pilot.press("a", "s")

    approval = drive(app, toggle_all)
    assert approval is not None
    assert approval.selected == frozenset() and approval.memos_selected == frozenset()


def test_enter_on_a_group_heading_toggles_the_group(project: Path) -> None:
    app = ChecklistApp(PLAN, root=project)

    async def group(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        await pilot.press("up", "enter")  # "Memos"
        assert labels(app)[:2] == [
            "[ ] [+] ADD: Keep functions small.",
            "[ ] [-] REMOVE: Old rule.",
        ]
        assert all(label.startswith(CHECKED) for label in labels(app)[2:])
        await pilot.press("s")

    approval = drive(app, group)
    assert approval is not None and approval.memos_selected == frozenset()


def test_q_goes_back_without_an_approval(project: Path) -> None:
    async def back(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        await pilot.press("a", "q")

    assert drive(ChecklistApp(PLAN, root=project), back) is None


# --- previews -----------------------------------------------------------------------------


def test_preview_create_with_the_editor_changes_path_and_content(
    project: Path, tmp_path: Path
) -> None:
    editor, log = scripted_editor(tmp_path, {"VALUE = 1": "VALUE = 42"})
    app = ChecklistApp(PLAN, root=project, editor=editor)

    async def save_as(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        await goto(pilot, app, 0)
        await pilot.press("p")
        await pilot.pause()
        assert "01-new.py" in log.read_text()  # opened before the path is asked
        assert isinstance(app.focused, Input)
        await pilot.press(*"README.md", "enter")  # an existing file is refused
        assert "README.md already exists" in await shown(pilot)
        await pilot.press(*["backspace"] * 9, *"src/renamed.py", "enter")
        assert "Have you finished editing and saved the file content? (y/n)" in await shown(pilot)
        await pilot.press("n")
        assert "then press [y]" in await shown(pilot)
        await pilot.press("y")
        assert labels(app)[2] == "[✓] CREATE:  src/renamed.py *modified"
        await pilot.press("s")

    approval = drive(app, save_as)
    assert approval is not None and approval.actions is not None
    assert approval.actions[0] == Create("src/renamed.py", "VALUE = 42\n", "A new module.")
    note = approval.modified[0]
    assert "file path `src/new.py` → `src/renamed.py`" in note
    assert "-VALUE = 1\n+VALUE = 42" in note
    assert list(approval.modified) == [0]


def test_preview_create_enter_keeps_the_path_and_escape_discards(
    project: Path, tmp_path: Path
) -> None:
    editor, _ = scripted_editor(tmp_path, {"VALUE = 1": "VALUE = 2"})
    app = ChecklistApp(PLAN, root=project, editor=editor)

    async def keep_then_discard(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        await goto(pilot, app, 0)
        await pilot.press("p", "enter", "y")
        assert labels(app)[2] == "[✓] CREATE:  src/new.py *modified"
        await pilot.press("p", "escape")  # discarding keeps the earlier change
        assert labels(app)[2].endswith(MODIFIED)
        await pilot.press("s")

    approval = drive(app, keep_then_discard)
    assert approval is not None and approval.actions is not None
    assert approval.actions[0] == Create("src/new.py", "VALUE = 2\n", "A new module.")


def test_preview_edit_turns_the_edited_file_back_into_pairs(project: Path, tmp_path: Path) -> None:
    editor, log = scripted_editor(
        tmp_path, {"hello, world": "hello, editor", "return 1": "return 2"}
    )
    app = ChecklistApp(PLAN, root=project, editor=editor)

    async def edit(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        await goto(pilot, app, 1)
        await pilot.press("p")
        await pilot.pause()
        text = await shown(pilot)
        assert "Editing: [src/app.py]" in text
        assert "Have you finished editing and saved the file? (y/n)" in text
        assert "+    print('hello, world')" in text  # the proposed change as a diff
        assert log.read_text() == "02-app.py\n"
        await pilot.press("y")
        assert labels(app)[3] == "[✓] EDIT:    src/app.py *modified"
        await pilot.press("s")

    approval = drive(app, edit)
    assert approval is not None and approval.actions is not None
    edited = approval.actions[1]
    assert isinstance(edited, Edit)
    assert edited.edits == (
        EditPair("    print('hello')", "    print('hello, editor')"),
        EditPair("    return 1", "    return 2"),
    )
    final = APP.replace("'hello'", "'hello, editor'").replace("return 1", "return 2")
    assert apply_pairs(APP, edited.edits)[0] == final
    assert "-    print('hello, world')\n+    print('hello, editor')" in approval.modified[1]


def test_preview_simple_one_line_command(project: Path) -> None:
    app = ChecklistApp(PLAN, root=project)

    async def command(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        await goto(pilot, app, 2)
        await pilot.press("p")
        assert "(e)dit / (c)lose" in await shown(pilot)
        assert "python3 -m pytest -q [tests]" in await shown(pilot)
        await pilot.press("e", *" -x", "enter")  # the cursor starts at the end
        assert labels(app)[4] == "[✓] EXECUTE: python3 -m pytest -q [tests] -x *modified"
        await pilot.press("p", "e", "escape", "c")  # edit cancelled, then closed
        await pilot.press("s")

    approval = drive(app, command)
    assert approval is not None and approval.actions is not None
    assert approval.actions[2] == Execute(
        "python3 -m pytest -q [tests] -x", description="Run the tests."
    )
    assert "+python3 -m pytest -q [tests] -x" in approval.modified[2]


@pytest.mark.parametrize(
    ("action", "typed", "expected"),
    [(5, "third query", Research(("textual tree widget", "rich live display", "third query"))),
     (6, "C also works.", ChatWithUser("Which name do you prefer?\nA or B.\nC also works.")),
     (7, "Thanks.", Invoke("Architect", message="Please review the design.\nThanks.")),
     (8, "Bye.", Conclude(message="Done here.\nBye."))],
)  # fmt: skip
def test_preview_simple_multi_line_text(
    project: Path, action: int, typed: str, expected: object
) -> None:
    app = ChecklistApp(PLAN, root=project)

    async def multi(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        await goto(pilot, app, action)
        await pilot.press("p", "e")
        assert isinstance(app.focused, TextArea)
        await pilot.press("enter", *typed, "tab", "enter")  # the cursor starts at the end
        assert labels(app)[2 + action].endswith(MODIFIED)
        await pilot.press("s")

    approval = drive(app, multi)
    assert approval is not None and approval.actions is not None
    assert approval.actions[action] == expected
    assert list(approval.modified) == [action]


def test_preview_simple_refuses_an_empty_command(project: Path) -> None:
    app = ChecklistApp(PLAN, root=project)

    async def empty(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        await goto(pilot, app, 2)
        await pilot.press("p", "e", "end", *["backspace"] * 40, "enter")
        assert "the command is empty" in await shown(pilot)
        await pilot.press("escape", "c", "s")

    approval = drive(app, empty)
    assert approval is not None and approval.modified == {}


@pytest.mark.parametrize(
    ("action", "expected"),
    [(3, ["Read into the next turn's context: README.md", "Read me."]),
     (4, ["Removed from the next turn's context: docs/old.md", "old notes"])],
)  # fmt: skip
def test_preview_read_and_prune_are_read_only(
    project: Path, action: int, expected: list[str]
) -> None:
    app = ChecklistApp(PLAN, root=project)

    async def read_only(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        await goto(pilot, app, action)
        await pilot.press("p")
        text = await shown(pilot)
        assert all(s in text for s in expected)
        assert "(c)lose — read-only" in text
        await pilot.press("e")  # no editing here
        assert not app.screen.query(TextArea) and not app.screen.query(Input)
        await pilot.press("c", "s")

    approval = drive(app, read_only)
    assert approval is not None and approval.modified == {}
    assert approval.actions == PLAN.actions


def test_preview_without_a_previewer_edits_in_the_terminal(project: Path) -> None:
    app = ChecklistApp(PLAN, root=project, editor=None)

    async def in_terminal(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        await goto(pilot, app, 0)
        await pilot.press("p")
        assert "No previewer is set" in await shown(pilot)
        await pilot.press("shift+tab", "down", *"# more", "tab", *"src/x.py", "enter")
        await goto(pilot, app, 1)
        await pilot.press("p")
        assert isinstance(app.focused, TextArea)
        await pilot.press(*["down"] * 12, *"# end", "tab", "enter")  # tab to Done
        await pilot.press("s")

    approval = drive(app, in_terminal)
    assert approval is not None and approval.actions is not None
    assert approval.actions[0] == Create("src/x.py", "VALUE = 1\n# more", "A new module.")
    edited = approval.actions[1]
    assert isinstance(edited, Edit)
    assert apply_pairs(APP, edited.edits)[0] == APP.replace("'hello'", "'hello, world'") + "# end"
    assert set(approval.modified) == {0, 1}


def test_preview_a_memo_and_a_group(project: Path) -> None:
    app = ChecklistApp(PLAN, root=project)

    async def memo(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        await pilot.press("p")
        assert "Keep functions small." in await shown(pilot) and "# agreed" in await shown(pilot)
        await pilot.press("c", "up", "p")  # on "Memos": nothing to preview
        assert "Move to a memo or an action" in await shown(pilot)
        await pilot.press("s")

    assert drive(app, memo) is not None


async def shown(pilot: Pilot[Approval | None]) -> str:
    """The text of every Static on the top screen, once what was pressed is drawn."""
    await pilot.pause()
    parts: list[str] = []
    for widget in pilot.app.screen.query(Static):
        content = widget.content
        if isinstance(content, Text):
            parts.append(content.plain)
        elif isinstance(content, Syntax):
            parts.append(content.code)
        else:
            parts.append(str(content))
    return "\n".join(parts)


# --- snapshots ----------------------------------------------------------------------------


def _snapshot(app: ChecklistApp) -> str:
    for widget in app.screen.query("Input, TextArea"):
        widget.cursor_blink = False  # type: ignore[attr-defined]
    return app.export_screenshot(title="teddy execute")


def check_snapshots(shots: dict[str, str]) -> None:
    """Compare with tests/data/tui/NAME.svg; write missing files (and fail, to be
    reviewed), or all of them with PLANKIT_UPDATE_SNAPSHOTS=1."""
    written: list[str] = []
    for name, svg in shots.items():
        path = SNAPSHOTS / f"{name}.svg"
        if UPDATE or not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(svg, encoding="utf-8")
            written.append(name)
            continue
        assert svg == path.read_text(encoding="utf-8"), (
            f"{name}: the screen differs from {path}; if the change is intended, run "
            "PLANKIT_UPDATE_SNAPSHOTS=1 pytest tests/teddy/test_tui.py and review the SVGs"
        )
    if written and not UPDATE:
        pytest.fail(f"snapshots written for review (commit them): {', '.join(written)}")


def test_snapshots_of_the_main_screens(project: Path, tmp_path: Path) -> None:
    editor, _ = scripted_editor(tmp_path, {"VALUE = 1": "VALUE = 2"})
    app = ChecklistApp(PLAN, root=project, editor=editor)
    shots: dict[str, str] = {}

    async def tour(pilot: Pilot[Approval | None], app: ChecklistApp) -> None:
        shots["checklist"] = _snapshot(app)
        await goto(pilot, app, 0)
        await pilot.press("p")
        await pilot.pause()
        shots["create-save-as"] = _snapshot(app)
        await pilot.press("enter", "y")
        await pilot.press("down", "p")
        await pilot.pause()
        shots["edit"] = _snapshot(app)
        await pilot.press("escape", "down", "p", "e")
        await pilot.pause()
        shots["simple-edit"] = _snapshot(app)
        await pilot.press("escape", "c", "down", "p")
        shots["read-only"] = _snapshot(app)
        await pilot.press("c", "down", "enter", "down")
        shots["checklist-changed"] = _snapshot(app)
        await pilot.press("s")

    drive(app, tour)
    assert len(shots) == 6
    check_snapshots(shots)


# --- into the report ----------------------------------------------------------------------


def _demo_turn(tmp_path: Path) -> tuple[Path, Path]:
    import shutil

    project = tmp_path / "demo"
    shutil.copytree(ROOT / "examples" / "demo" / "project", project)
    session = create_session(project, "tui", '<agent name="Developer"/>', "Developer")
    turn = session.latest()
    turn.plan_path.write_text((ROOT / "examples" / "demo" / "turn-02.md").read_text())
    turn.context_path.write_text("src/greetings.py\n")
    return project, turn.path


def test_changes_made_in_the_checklist_are_recorded_in_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plankit.teddy.session.layout import find_session

    project, _ = _demo_turn(tmp_path)
    editor, _ = scripted_editor(tmp_path, {"Goodbye": "Farewell"})
    temp = tmp_path / "temp"  # the system's temporary directory, for this test
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))

    async def review(pilot: Pilot[Approval | None]) -> None:
        app = pilot.app
        assert isinstance(app, ChecklistApp)
        await pilot.pause()
        await goto(pilot, app, 1)  # CREATE src/farewells.py: Goodbye → Farewell
        await pilot.press("p", "enter", "y")
        assert [p.name[:14] for p in temp.iterdir()] == ["teddy-preview-"]  # the drafts
        await goto(pilot, app, 2)  # CREATE tests/test_farewells.py: not selected
        await pilot.press("enter")
        await goto(pilot, app, 3)  # EXECUTE: a different command
        await pilot.press("p", "e")
        app.focused.value = "python3 -c 'import farewells' 2>/dev/null || echo checked"  # type: ignore[union-attr]
        await pilot.press("enter", "s")

    turn = find_session(project, None).latest()
    outcome = execute_turn(
        turn,
        approver=TuiApprover(project, editor, auto_pilot=review),
        chat=ScriptedChat([]),
        config=Config(),
    )
    report = turn.report_path.read_text()
    assert outcome.status is not None and str(outcome.status) == "Partial 🟡", report
    assert (project / "src" / "farewells.py").read_text().endswith('return f"Farewell, {name}."\n')
    assert not (project / "tests" / "test_farewells.py").exists()
    sections = report.split("### ")
    create = next(s for s in sections if s.startswith("2. `CREATE` src/farewells.py"))
    assert "- **Modified by user:** yes" in create
    assert '-    return f"Goodbye, {name}."\n+    return f"Farewell, {name}."' in create
    skipped = next(s for s in sections if s.startswith("3. `CREATE`"))
    assert "Skipped 🟡 (not selected)" in skipped and "Modified by user:** no" in skipped
    command = next(s for s in sections if s.startswith("4. `EXECUTE`"))
    assert "- **Modified by user:** yes" in command and "echo checked" in command
    edit = next(s for s in sections if s.startswith("1. `EDIT`"))
    assert "- **Modified by user:** no" in edit
    assert list(temp.iterdir()) == []  # the editor's drafts went with the checklist


def test_tui_approver_quits_on_q(tmp_path: Path) -> None:
    async def leave(pilot: Pilot[Approval | None]) -> None:
        await pilot.pause()
        await pilot.press("q")

    plan = parse_plan((ROOT / "examples" / "demo" / "turn-02.md").read_text())
    assert TuiApprover(tmp_path, auto_pilot=leave).review(plan, None) is Decision.QUIT


# --- the console tier in a real terminal --------------------------------------------------


class Terminal:
    """A program in a pseudo-terminal of a fixed size; output is drained as it comes.

    Nothing here waits a fixed time: each step waits until the screen shows what the
    previous keys did (text, or the checklist's cursor, see :func:`cursor_on`), with a
    deadline that only bounds a test that is already failing.
    """

    def __init__(self, argv: list[str], cwd: Path, size: tuple[int, int] = (100, 30)) -> None:
        import fcntl
        import pty
        import struct
        import subprocess
        import termios

        self.main, child = pty.openpty()
        cols, rows = size
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows)}
        self.proc = subprocess.Popen(
            argv, cwd=cwd, stdin=child, stdout=child, stderr=child, env=env, start_new_session=True
        )
        os.close(child)
        self.seen = b""
        self.mark = 0
        """Where the output that answers the last keys sent starts."""
        self.ended = False

    def _read(self, timeout: float) -> None:
        import select

        if self.ended:
            return
        ready, _, _ = select.select([self.main], [], [], timeout)
        if ready:
            try:
                self.seen += os.read(self.main, 65536)
            except OSError:  # every writer is gone and all was read
                self.ended = True

    def wait_for(self, needle: str | re.Pattern[bytes], seconds: float = DEADLINE) -> None:
        """Read until ``needle`` (text or a pattern of bytes) is in what came after the
        last keys sent."""
        import time

        pattern = (
            needle if isinstance(needle, re.Pattern) else re.compile(re.escape(needle.encode()))
        )
        deadline = time.monotonic() + seconds
        while not pattern.search(self.seen, self.mark):
            if time.monotonic() > deadline or self.ended:
                tail = self.seen[-3000:].decode(errors="replace")
                raise AssertionError(f"never saw {needle!r}; the end of the output:\n{tail}")
            self._read(0.1)

    def send(self, *keys: str) -> None:
        self.mark = len(self.seen)
        for key in keys:
            os.write(self.main, key.encode())

    def close(self, seconds: float = DEADLINE) -> int:
        """Wait for the program to end, reading all it writes; its exit status."""
        import time

        deadline = time.monotonic() + seconds
        try:
            while not self.ended and time.monotonic() < deadline:
                self._read(0.1)  # ends when the program and its children closed the terminal
            code = self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        finally:
            os.close(self.main)
        return code


def cursor_on(label: str) -> re.Pattern[bytes]:
    """The checklist's cursor on the item whose label starts with ``label``, in the
    focused tree: the label drawn bold (a blurred tree's cursor is not bold)."""
    return re.compile(rb"\x1b\[1(?:;[\d;]*)?m" + re.escape(label.encode()))


DOWN, ENTER = "\x1b[B", "\r"


def test_console_tier_opens_the_checklist_in_a_real_terminal(tmp_path: Path) -> None:
    from plankit.teddy.session.layout import find_session

    project, _ = _demo_turn(tmp_path)
    editor, log = scripted_editor(tmp_path, {"Goodbye": "Farewell"})
    (project / ".teddy" / "config.yaml").write_text(
        f"preview_command: {json.dumps(' '.join(editor.command))}\n"
    )
    term = Terminal([str(Path(sys.executable).parent / "teddy"), "execute"], project)
    try:
        term.wait_for("(q)uit \u203a")
        term.send("m\n")
        term.wait_for(cursor_on("[✓] [+] ADD:"))  # the checklist, with its cursor on the memo
        term.send(DOWN, DOWN, DOWN, "p")  # memo → Action Plan → EDIT → CREATE farewells
        term.wait_for("File path:")
        # The editor runs while the checklist is suspended, and the checklist drops the
        # keys that reach it as it suspends: wait until the editor has run and the
        # checklist has the terminal again (it left the alternate screen and came back)
        term.wait_for(re.compile(rb"(?s)\x1b\[\?1049l.*\x1b\[\?1049h"))
        assert log.read_text() == "02-farewells.py\n"
        # the input has the focus once its cursor is drawn (the first character styled
        # apart from the rest): only then does ENTER reach it
        term.wait_for(re.compile(rb"(?s)\x1b\[\?1049h.*s\x1b\[0m\x1b\[[0-9;]*mrc/farewells\.py"))
        term.send(ENTER)  # keep the proposed path
        term.wait_for("saved the file content? (y/n)")
        term.send("y")
        term.wait_for(cursor_on("[✓] CREATE:  src/farewells.py"))  # back in the checklist
        term.send(DOWN)
        term.wait_for(cursor_on("[✓] CREATE:  tests/test_farewells.py"))
        term.send(" ")  # untick it
        term.wait_for("3 of 4 actions selected")
        term.send("s")  # confirm
        code = term.close()
    except BaseException:
        term.proc.kill()
        raise
    report = find_session(project, None).turns()[0].report_path.read_text()
    assert code == 1, term.seen[-2000:]  # Partial: one action was left out
    assert log.read_text() == "02-farewells.py\n"
    assert "Partial 🟡" in report
    assert "### 2. `CREATE` src/farewells.py\n- **Status:** Approved ✅" in report
    assert "- **Modified by user:** yes" in report
    assert (
        "### 3. `CREATE` tests/test_farewells.py\n- **Status:** Skipped 🟡 (not selected)" in report
    )
    assert (project / "src" / "farewells.py").read_text().endswith('"Farewell, {name}."\n')
    assert b"EXECUTE python3 -m unittest discover -s tests -q: done" in term.seen
