"""The logic behind the checklist's previews, without Textual."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from plankit.teddy.format.model import (
    ChatWithUser,
    Conclude,
    Create,
    Edit,
    EditPair,
    Execute,
    Invoke,
    Prune,
    Read,
    Research,
    Resource,
)
from plankit.teddy.review.previews import (
    CommandEditor,
    PreviewError,
    PreviewKind,
    draft_file,
    editable_text,
    file_before,
    finish_create,
    finish_edit,
    pairs_between,
    preview_kind,
    proposed_final,
    read_only_view,
    with_text,
)
from plankit.teddy.run.edits import apply_pairs

APP = "import os\n\n\ndef main():\n    print('hello')\n\n\ndef helper():\n    return 1\n"
EDIT = Edit("src/app.py", (EditPair("    print('hello')", "    print('hello, world')"),))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(APP)
    (tmp_path / "README.md").write_text("# Project\n\nRead me.\n")
    return tmp_path


def test_each_action_kind_gets_its_workflow() -> None:
    read = Read(Resource("file", "a.md"))
    assert preview_kind(Create("a", "x")) is PreviewKind.SAVE_AS
    assert preview_kind(EDIT) is PreviewKind.EDIT
    assert preview_kind(read) is PreviewKind.READ_ONLY
    assert preview_kind(Prune(Resource("file", "a.md"))) is PreviewKind.READ_ONLY
    for simple in (Execute("ls"), Research(("q",)), ChatWithUser("hi"), Invoke("Architect"),
                   Conclude()):  # fmt: skip
        assert preview_kind(simple) is PreviewKind.SIMPLE


# --- CREATE -----------------------------------------------------------------------------


def test_create_unchanged_is_not_modified(root: Path) -> None:
    action = Create("src/new.py", "VALUE = 1")
    change = finish_create(action, "src/new.py", "VALUE = 1\n", root)
    assert change.action == action and not change.modified and change.note == ""


def test_create_with_a_new_path_and_content(root: Path) -> None:
    action = Create("src/new.py", "VALUE = 1", description="why")
    change = finish_create(action, "/src/other.py", "VALUE = 2\n", root)
    assert change.action == Create("src/other.py", "VALUE = 2\n", description="why")
    assert "file path `src/new.py` → `src/other.py`" in change.note
    assert "-VALUE = 1\n+VALUE = 2" in change.note
    assert "```diff" in change.note


@pytest.mark.parametrize(
    ("path", "message"),
    [("", "the file path is empty"), ("../out.py", "../out.py"), ("README.md", "already exists"),
     ("~/x", "~/x")],
)  # fmt: skip
def test_create_refuses_a_bad_path(root: Path, path: str, message: str) -> None:
    with pytest.raises(PreviewError, match=message.replace(".", r"\.")):
        finish_create(Create("src/new.py", "x"), path, "x", root)


def test_draft_file_keeps_the_name_for_highlighting(tmp_path: Path) -> None:
    draft = draft_file(tmp_path, 2, "src/pkg/mod.py", "a = 1\r\n")
    assert draft.name == "03-mod.py"
    assert draft.read_bytes() == b"a = 1\r\n"


# --- EDIT -------------------------------------------------------------------------------


def test_proposed_final_applies_the_pairs(root: Path) -> None:
    before = file_before([EDIT], 0, root)
    assert before == APP
    assert proposed_final(EDIT, before) == APP.replace("'hello'", "'hello, world'")


def test_file_before_sees_earlier_actions_of_the_plan(root: Path) -> None:
    created = Create("src/new.py", "A = 1\nB = 2")
    edited = Edit("src/new.py", (EditPair("A = 1", "A = 10"),))
    later = Edit("src/new.py", (EditPair("B = 2", "B = 20"),))
    assert file_before([created, edited, later], 2, root) == "A = 10\nB = 2\n"
    with pytest.raises(PreviewError, match="does not exist"):
        file_before([later], 0, root)


def test_crlf_file_is_previewed_with_lf(root: Path) -> None:
    (root / "src" / "app.py").write_bytes(APP.replace("\n", "\r\n").encode())
    assert file_before([EDIT], 0, root) == APP


def test_finish_edit_turns_the_final_file_back_into_surgical_pairs(root: Path) -> None:
    final = APP.replace("'hello'", "'hi there'").replace("return 1", "return 2")
    change = finish_edit(EDIT, APP, final)
    assert isinstance(change.action, Edit)
    assert change.action.edits == (
        EditPair("    print('hello')", "    print('hi there')"),
        EditPair("    return 1", "    return 2"),
    )
    assert apply_pairs(APP, change.action.edits)[0] == final
    assert "-    print('hello, world')\n+    print('hi there')" in change.note
    assert "the final version of `src/app.py`" in change.note


def test_finish_edit_with_the_proposal_unchanged_is_not_modified() -> None:
    change = finish_edit(EDIT, APP, proposed_final(EDIT, APP))
    assert change.action is EDIT and not change.modified


def test_finish_edit_back_to_the_original_is_refused() -> None:
    with pytest.raises(PreviewError, match="change nothing; untick the action"):
        finish_edit(EDIT, APP, APP)


def test_pairs_grow_context_until_unique() -> None:
    before = "x = 1\ny = 2\nx = 1\nz = 3\n"
    after = "x = 1\ny = 2\nx = 5\nz = 3\n"
    pairs = pairs_between(before, after)
    # "x = 1" is there twice: one line of context on each side makes it unique
    assert pairs == (EditPair("y = 2\nx = 1\nz = 3", "y = 2\nx = 5\nz = 3"),)
    # a pure insertion gets a line of context to anchor it
    assert pairs_between("a\nb\n", "a\nnew\nb\n") == (EditPair("a\nb", "a\nnew\nb"),)


def test_pairs_merge_regions_whose_context_meets() -> None:
    before = "same\nsame\nsame\nsame\n"
    after = "same\nSAME\nsame\nSAME\n"
    pairs = pairs_between(before, after)
    assert apply_pairs(before, pairs)[0] == after


def test_pairs_for_a_blank_file_are_refused() -> None:
    with pytest.raises(PreviewError, match="blank"):
        pairs_between("\n\n", "text\n")


def test_pairs_between_round_trips_random_edits() -> None:
    rng = random.Random(4)
    words = ["a", "b", "def f():", "    return 1", "", "x = 1", "}"]
    for _ in range(400):
        lines = [rng.choice(words) + "\n" for _ in range(rng.randint(1, 25))]
        before = "".join(lines)
        if not before.strip():
            continue
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(lines) + 1)
            what = rng.random()
            if what < 0.4:
                lines.insert(at, rng.choice(words) + "\n")
            elif lines and what < 0.7:
                lines.pop(min(at, len(lines) - 1))
            elif lines:
                lines[min(at, len(lines) - 1)] = f"changed {rng.random()}\n"
        after = "".join(lines)
        if after != before:
            assert apply_pairs(before, pairs_between(before, after))[0] == after


# --- simple and read-only actions ---------------------------------------------------------


def test_simple_actions_edit_their_one_text() -> None:
    change = with_text(Execute("pytest -q", cwd="src"), "pytest -q -x\n")
    assert change.action == Execute("pytest -q -x", cwd="src")
    assert "-pytest -q\n+pytest -q -x" in change.note and "the command" in change.note
    research = with_text(Research(("one",)), "one\n\n two \n")
    assert research.action == Research(("one", "two"))
    chat = with_text(ChatWithUser("A or B?"), "A, B or C?")
    assert chat.action == ChatWithUser("A, B or C?")
    invoke = with_text(Invoke("Architect", message="Review."), "")
    assert invoke.action == Invoke("Architect", message="") and invoke.modified
    assert not with_text(Conclude(message="Done."), "Done.\n").modified
    assert editable_text(Research(("a", "b"))) == "a\nb"


@pytest.mark.parametrize(
    ("action", "message"),
    [(Execute("ls"), "the command is empty"), (Research(("q",)), "no query is left"),
     (ChatWithUser("hi"), "the message is empty")],
)  # fmt: skip
def test_simple_actions_refuse_empty_text(action: Execute, message: str) -> None:
    with pytest.raises(PreviewError, match=message):
        with_text(action, "  \n")


def test_read_only_views(root: Path) -> None:
    head, body = read_only_view(Read(Resource("file", "README.md")), root)
    assert head == "Read into the next turn's context: README.md"
    assert body == "# Project\n\nRead me."
    head, body = read_only_view(Prune(Resource("file", "gone.md")), root)
    assert head.startswith("Removed from the next turn's context")
    assert body == "(the file does not exist)"
    _, body = read_only_view(Read(Resource("url", "https://example.org/a")), root)
    assert "fetched when the next turn's input.md is built" in body
    (root / "big.txt").write_text("".join(f"{i}\n" for i in range(1000)))
    _, body = read_only_view(Read(Resource("file", "big.txt")), root)
    assert body.endswith("399\n… 600 more lines")


def test_command_editor_passes_the_file_last(tmp_path: Path) -> None:
    script = tmp_path / "ed.py"
    script.write_text("import sys\nopen(sys.argv[-1], 'a').write(sys.argv[1])\n")
    target = tmp_path / "f.txt"
    target.write_text("x")
    CommandEditor([sys.executable, str(script), "+arg"]).open(target)
    assert target.read_text() == "x+arg"
    with pytest.raises(PreviewError, match="could not start"):
        CommandEditor([str(tmp_path / "missing-editor")]).open(target)
