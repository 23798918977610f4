"""Pre-flight validation of a plan against the workspace (``plankit.teddy.run.validate``).

What a user sees of it: one issue per problem, all at once, each with the action's
position, the line of its heading, a stable code and a message naming the action and
the file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plankit.errors import Diagnostic
from plankit.teddy.format.model import (
    Action,
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
from plankit.teddy.run.edits import edit_file_text
from plankit.teddy.run.validate import Workspace, describe, validate_plan

Issue = tuple[int | None, int, str, str]


def _plan(*actions: Action, memos: tuple[Memo, ...] = ()) -> Plan:
    return Plan("A plan", (("Status", "Green 🟢"),), "Why.", memos, actions)


def _issues(plan: Plan, root: Path, **workspace: object) -> list[Issue]:
    found = validate_plan(plan, Workspace(root, **workspace))  # type: ignore[arg-type]
    return [(_action(plan, i.line), i.line, i.code, i.message) for i in found]


def _action(plan: Plan, line: int) -> int | None:
    """The 1-based position of the action whose heading is on ``line`` (None: line 0)."""
    at = [n for n, action in enumerate(plan.actions, 1) if line and action.line == line]
    return at[0] if at else None


def _edit(path: str, *pairs: tuple[str, str], line: int = 5) -> Edit:
    return Edit(path, tuple(EditPair(f, r) for f, r in pairs), line=line)


def _file(kind: str, target: str) -> Resource:
    return Resource(kind, target)  # type: ignore[arg-type]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    (project / "src").mkdir()
    return project


# --- a plan that may run ------------------------------------------------------------------


def test_a_plan_of_every_kind_of_valid_action_has_no_issues(root: Path) -> None:
    plan = _plan(
        Create("src/new.py", "print('hi')", line=3),
        Read(_file("file", "a.py"), line=9),
        Read(_file("url", "https://example.com/doc"), line=12),
        _edit("a.py", ("x = 1", "x = 10"), line=15),
        Execute("ls", cwd="src", line=20),
        Execute("ls", line=25),
        Research(("python dataclasses",), line=30),
        ChatWithUser("Shall I go on?", line=33),
        Prune(_file("file", "a.py"), line=36),
        Invoke("Architect", ("a.py", "https://example.com/x"), line=40),
        Conclude(("src/new.py",), line=45),
    )
    workspace = {
        "turn_context": ("a.py", "README.md"),
        "known_agents": ("Architect", "Developer"),
    }
    assert _issues(plan, root, **workspace) == []


def test_an_empty_plan_has_no_issues(root: Path) -> None:
    assert _issues(_plan(), root) == []


# --- memos --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("memos", "existing", "expected"),
    [
        ((Memo("+", "use uv"),), ("use uv",), ["Memos: [+] 'use uv' is already in memos.yaml"]),
        (
            (Memo("-", "use pip"),),
            ("use uv",),
            ["Memos: [-] 'use pip' is not in memos.yaml (it must match exactly)"],
        ),
        ((Memo("+", "new"), Memo("-", "new")), (), []),
        ((Memo("-", "old"), Memo("+", "old")), ("old",), []),
        (
            (Memo("+", "a"), Memo("+", "a"), Memo("-", "b")),
            (),
            [
                "Memos: [+] 'a' is already in memos.yaml",
                "Memos: [-] 'b' is not in memos.yaml (it must match exactly)",
            ],
        ),
    ],
)
def test_memo_conflicts_are_issues_of_the_whole_plan(
    root: Path, memos: tuple[Memo, ...], existing: tuple[str, ...], expected: list[str]
) -> None:
    issues = _issues(_plan(memos=memos), root, memos=existing)
    assert issues == [(None, 0, "memo-conflict", message) for message in expected]


# --- paths that leave the project ---------------------------------------------------------

REFUSED = [
    ("../outside.txt", "'..' is refused; paths must stay inside the project"),
    ("src/../../outside.txt", "'..' is refused; paths must stay inside the project"),
    ("/etc/passwd", "absolute paths are refused; give a path relative to the project root"),
    ("~/notes.txt", "paths starting with ~ are refused; give a path inside the project"),
    ("a\0b.txt", "the path contains a NUL byte"),
    ("out/x.txt", "goes through a symbolic link that leads outside the project; refused"),
]


def _link_out(root: Path) -> None:
    outside = root.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "x.txt").write_text("secret\n", encoding="utf-8")
    os.symlink(outside, root / "out")


@pytest.mark.parametrize(("path", "why"), REFUSED)
@pytest.mark.parametrize(
    ("label", "make"),
    [
        ("CREATE", lambda p: Create(p, "text", line=7)),
        ("EDIT", lambda p: _edit(p, ("secret", "public"), line=7)),
        ("READ", lambda p: Read(_file("file", p), line=7)),
        ("PRUNE", lambda p: Prune(_file("file", p), line=7)),
        ("EXECUTE", lambda p: Execute("ls", cwd=p, line=7)),
        ("INVOKE", lambda p: Invoke("Architect", ("a.py", p), line=7)),
        ("CONCLUDE", lambda p: Conclude((p,), line=7)),
    ],
)
def test_every_path_a_plan_names_must_stay_inside_the_project(
    root: Path, path: str, why: str, label: str, make: object
) -> None:
    _link_out(root)
    action = make(path)  # type: ignore[operator]
    assert _issues(_plan(action), root) == [(1, 7, "path-refused", f"`{label}` on `{path}`: {why}")]
    assert not (root.parent / "outside.txt").exists()


def test_an_empty_path_is_refused_without_naming_it(root: Path) -> None:
    assert _issues(_plan(Create("", "x", line=2)), root) == [
        (1, 2, "path-refused", "`CREATE`: the path is empty")
    ]


def test_a_symbolic_link_inside_the_project_is_followed(root: Path) -> None:
    os.symlink(root / "src", root / "source")
    (root / "src" / "m.py").write_text("old\n", encoding="utf-8")
    plan = _plan(_edit("source/m.py", ("old", "new")), Execute("ls", cwd="source"))
    assert _issues(plan, root) == []


def test_a_symbolic_link_loop_is_refused_not_a_crash(root: Path) -> None:
    os.symlink(root / "loop_b", root / "loop_a")
    os.symlink(root / "loop_a", root / "loop_b")
    issues = _issues(_plan(Create("loop_a/x.txt", "x", line=4)), root)
    assert [(a, line, code) for a, line, code, _ in issues] == [(1, 4, "path-refused")]
    assert issues[0][3].startswith("`CREATE` on `loop_a/x.txt`: ")
    assert issues[0][3].endswith("refused")


@pytest.mark.parametrize(
    "action",
    [
        Read(_file("url", "https://example.com/../etc")),
        Prune(_file("url", "https://example.com/../etc")),
        Invoke("Architect", ("https://example.com/../x", "HTTP://example.com/~x")),
        Conclude(("http://example.com/../x",)),
    ],
)
def test_urls_are_not_checked_as_paths(root: Path, action: Action) -> None:
    assert _issues(_plan(action), root) == []


def test_a_malformed_url_is_refused_wherever_a_plan_names_one(root: Path) -> None:
    plan = _plan(
        Read(_file("url", "https://exa mple.com/docs"), line=4),
        Invoke("Architect", ("a.py", "https://example.com:0/spec"), line=9),
        Conclude(("http://[::1/notes",), line=14),
    )
    assert _issues(plan, root) == [
        (
            1,
            4,
            "url-invalid",
            "`READ` on `https://exa mple.com/docs`: the URL's host contains a space or a "
            "control character; write a valid http(s) URL",
        ),
        (
            2,
            9,
            "url-invalid",
            "`INVOKE` on `https://example.com:0/spec`: not a valid URL (port 0); "
            "write a valid http(s) URL",
        ),
        (
            3,
            14,
            "url-invalid",
            "`CONCLUDE` on `http://[::1/notes`: not a valid URL (Invalid IPv6 URL); "
            "write a valid http(s) URL",
        ),
    ]


# --- CREATE -------------------------------------------------------------------------------


def test_create_of_an_existing_file_is_refused(root: Path) -> None:
    assert _issues(_plan(Create("a.py", "x = 2", line=8)), root) == [
        (1, 8, "file-exists", "`CREATE` on `a.py`: the file already exists; use EDIT to change it")
    ]


def test_create_of_an_existing_directory_is_refused(root: Path) -> None:
    assert [i[2] for i in _issues(_plan(Create("src", "x")), root)] == ["file-exists"]


def test_create_of_a_file_created_earlier_in_the_plan_is_refused(root: Path) -> None:
    plan = _plan(Create("new.py", "a", line=3), Create("new.py", "b", line=9))
    assert _issues(plan, root) == [
        (
            2,
            9,
            "file-exists",
            "`CREATE` on `new.py`: the file already exists; use EDIT to change it",
        )
    ]


def test_create_under_a_file_names_the_file_in_the_way(root: Path) -> None:
    # the model takes a module for a package: `a.py/helpers.py`, `src/config/...`
    (root / "src" / "config").write_text("debug = true\n", encoding="utf-8")
    plan = _plan(
        Create("a.py/helpers.py", "x", line=3),
        Create("src/config/settings/base.py", "y", line=9),
        Create("src/settings.py", "z", line=15),
    )
    assert _issues(plan, root) == [
        (
            1,
            3,
            "not-a-directory",
            "`CREATE` on `a.py/helpers.py`: 'a.py' is a file, not a directory: nothing can "
            "be created under it",
        ),
        (
            2,
            9,
            "not-a-directory",
            "`CREATE` on `src/config/settings/base.py`: 'src/config' is a file, not a "
            "directory: nothing can be created under it",
        ),
    ]


def test_create_under_a_file_an_earlier_create_makes_is_refused(root: Path) -> None:
    # the plan itself makes `config` a file, then takes it for a folder
    plan = _plan(
        Create("config", "debug = true", line=3),
        Create("config/settings.py", "x", line=9),
        Create("settings/base.py", "y", line=15),  # a folder the plan only names: fine
        Create("settings/local.py", "z", line=21),
        Create("src/app", "app = 1", line=27),
        Create("src/app/views/home.py", "v", line=33),  # deeper under it
    )
    assert _issues(plan, root) == [
        (
            2,
            9,
            "not-a-directory",
            "`CREATE` on `config/settings.py`: 'config' is a file an earlier CREATE makes, "
            "not a directory: nothing can be created under it",
        ),
        (
            6,
            33,
            "not-a-directory",
            "`CREATE` on `src/app/views/home.py`: 'src/app' is a file an earlier CREATE "
            "makes, not a directory: nothing can be created under it",
        ),
    ]


def test_a_file_in_the_way_that_is_gone_when_it_is_named_is_no_issue(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from plankit.teddy.run import validate

    # the look at the path met a file on the way, which another program then removed
    monkeypatch.setattr(validate, "_existing", lambda target: None)
    assert _issues(_plan(Create("src/new/x.py", "x", line=4)), root) == []


def test_create_under_a_link_to_a_file_names_the_file_it_leads_to(root: Path) -> None:
    (root / "current").symlink_to("a.py")
    assert _issues(_plan(Create("current/x.py", "x", line=4)), root) == [
        (
            1,
            4,
            "not-a-directory",
            "`CREATE` on `current/x.py`: 'a.py' is a file, not a directory: nothing can be "
            "created under it",
        )
    ]


# --- EDIT ---------------------------------------------------------------------------------


def test_edit_of_a_missing_file_is_refused(root: Path) -> None:
    assert _issues(_plan(_edit("b.py", ("x", "y"), line=6)), root) == [
        (1, 6, "file-missing", "`EDIT` on `b.py`: the file does not exist")
    ]


def test_edit_of_a_directory_is_refused_as_missing(root: Path) -> None:
    assert [i[2] for i in _issues(_plan(_edit("src", ("x", "y"))), root)] == ["file-missing"]


def test_edit_of_a_file_that_is_not_utf8_is_refused(root: Path) -> None:
    (root / "latin.txt").write_bytes("café\n".encode("latin-1"))
    assert _issues(_plan(_edit("latin.txt", ("caf", "cafe"), line=11)), root) == [
        (1, 11, "file-not-text", "`EDIT` on `latin.txt`: the file cannot be read as UTF-8 text")
    ]


NOT_IN_CONTEXT = (
    "`EDIT` on `a.py`: the file is not in the turn's context; READ it first so that the "
    "FIND blocks are written against its real content"
)


def test_edit_of_a_file_not_in_the_turns_context_is_refused(root: Path) -> None:
    plan = _plan(_edit("a.py", ("x = 1", "x = 2"), line=4))
    assert _issues(plan, root, turn_context=("README.md",)) == [
        (1, 4, "not-in-context", NOT_IN_CONTEXT)
    ]


@pytest.mark.parametrize("entry", ["a.py", "/a.py"])
def test_edit_of_a_file_in_the_turns_context_is_allowed(root: Path, entry: str) -> None:
    plan = _plan(_edit("a.py", ("x = 1", "x = 2")))
    assert _issues(plan, root, turn_context=(entry,)) == []


def test_without_a_session_the_context_is_not_checked(root: Path) -> None:
    assert _issues(_plan(_edit("a.py", ("x = 1", "x = 2"))), root, turn_context=None) == []


def test_edit_of_a_file_created_earlier_in_the_plan_needs_no_context(root: Path) -> None:
    plan = _plan(
        Create("src/new.py", "def f():\n    return 1", line=3),
        _edit("src/new.py", ("return 1", "return 2"), line=10),
    )
    assert _issues(plan, root, turn_context=()) == []


def test_a_failing_find_is_reported_with_its_pair_and_code(root: Path) -> None:
    plan = _plan(_edit("a.py", ("x = 1", "x = 5"), ("z = 9", "z = 0"), line=12))
    assert _issues(plan, root) == [
        (
            1,
            12,
            "find-no-match",
            "`EDIT` on `a.py`: pair 2: the FIND block matches nowhere; the closest region "
            "is lines 1-1 (60% similar)",
        )
    ]


@pytest.mark.parametrize(
    ("pairs", "code"),
    [
        ((("", "x"),), "find-empty"),
        ((("x = 1", "x = 1"),), "replace-unchanged"),
        ((("= ", "!= "),), "find-ambiguous"),
        ((("nothing like it at all", "q"),), "find-no-match"),
    ],
)
def test_each_kind_of_failing_pair_keeps_its_code(
    root: Path, pairs: tuple[tuple[str, str], ...], code: str
) -> None:
    issues = _issues(_plan(_edit("a.py", *pairs)), root)
    assert [(i[2], i[3].split(": ")[1]) for i in issues] == [(code, "pair 1")]


def test_a_file_out_of_context_with_a_failing_find_gets_both_issues(root: Path) -> None:
    plan = _plan(_edit("a.py", ("q = 0", "q = 1"), line=4))
    issues = _issues(plan, root, turn_context=())
    assert [(a, line, code) for a, line, code, _ in issues] == [
        (1, 4, "not-in-context"),
        (1, 4, "find-no-match"),
    ]


def test_an_edit_sees_the_text_an_earlier_create_wrote(root: Path) -> None:
    plan = _plan(
        Create("new.py", "a = 1", line=3),
        _edit("new.py", ("a = 1\n", "a = 2\n"), line=8),  # CREATE adds the final newline
        _edit("new.py", ("b = 1", "b = 2"), line=14),
    )
    assert [i[:3] for i in _issues(plan, root)] == [(3, 14, "find-no-match")]


def test_an_edit_sees_the_text_an_earlier_edit_left(root: Path) -> None:
    plan = _plan(
        _edit("a.py", ("x = 1", "x = 100"), line=3),
        _edit("a.py", ("x = 100", "x = 1000"), line=8),
        _edit("a.py", ("x = 1\n", "x = 2\n"), line=13),
    )
    issues = _issues(plan, root)
    assert [i[:3] for i in issues] == [(3, 13, "find-no-match")]
    assert issues[0][3].startswith("`EDIT` on `a.py`: pair 1: the FIND block matches nowhere")


def test_a_failed_edit_leaves_the_text_for_later_actions_as_it_was(root: Path) -> None:
    plan = _plan(
        _edit("a.py", ("x = 1", "x = 2"), ("nowhere at all", "z")),
        _edit("a.py", ("x = 1", "x = 3")),
    )
    assert [i[:3] for i in _issues(plan, root)] == [(1, 5, "find-no-match")]


def test_the_disk_is_left_alone(root: Path) -> None:
    plan = _plan(Create("new.py", "a"), _edit("a.py", ("x = 1", "x = 2")))
    assert _issues(plan, root) == []
    assert not (root / "new.py").exists()
    assert (root / "a.py").read_text(encoding="utf-8") == "x = 1\ny = 2\n"


def test_finds_written_with_lf_apply_to_a_crlf_file(root: Path) -> None:
    (root / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    plan = _plan(_edit("win.txt", ("one\ntwo", "1\n2")), _edit("win.txt", ("2\nthree", "2\n3")))
    assert _issues(plan, root) == []


def test_a_file_with_mixed_line_endings_is_checked_as_it_will_be_edited(root: Path) -> None:
    original = b"ax\r\ny\nz\n"
    (root / "mixed.txt").write_bytes(original)
    pairs = (EditPair("x\ny", "x y"),)
    with pytest.raises(Exception, match="matches nowhere"):  # what execution will do
        edit_file_text(original.decode(), pairs)
    issues = _issues(_plan(Edit("mixed.txt", pairs)), root)
    assert [i[2] for i in issues] == ["find-no-match"]


# --- PRUNE --------------------------------------------------------------------------------


def test_prune_of_a_resource_not_in_the_context_is_refused(root: Path) -> None:
    plan = _plan(
        Prune(_file("file", "a.py"), line=3),
        Prune(_file("url", "https://example.com/doc"), line=7),
    )
    assert _issues(plan, root, turn_context=("b.py",)) == [
        (1, 3, "not-in-context", "`PRUNE` on `a.py`: the resource is not in the turn's context"),
        (
            2,
            7,
            "not-in-context",
            "`PRUNE` on `https://example.com/doc`: the resource is not in the turn's context",
        ),
    ]


@pytest.mark.parametrize(
    ("target", "context"),
    [
        ("a.py", ("a.py",)),
        ("a.py", ("/a.py",)),
        ("/docs/", ("docs",)),
        ("https://example.com/doc", ("https://example.com/doc",)),
    ],
)
def test_prune_of_a_resource_in_the_context_is_allowed(
    root: Path, target: str, context: tuple[str, ...]
) -> None:
    kind = "url" if target.startswith("https") else "file"
    plan = _plan(Prune(_file(kind, target.strip("/") if kind == "file" else target)))
    assert _issues(plan, root, turn_context=context) == []


def test_prune_is_not_checked_against_the_context_without_a_session(root: Path) -> None:
    assert _issues(_plan(Prune(_file("file", "gone.py"))), root) == []


# --- EXECUTE ------------------------------------------------------------------------------


@pytest.mark.parametrize("cwd", ["build", "a.py"])
def test_execute_in_a_missing_directory_is_refused(root: Path, cwd: str) -> None:
    assert _issues(_plan(Execute("make", cwd=cwd, line=9)), root) == [
        (1, 9, "cwd-missing", f"`EXECUTE`: cwd '{cwd}' is not an existing directory of the project")
    ]


def test_execute_in_a_directory_an_earlier_create_makes_is_allowed(root: Path) -> None:
    plan = _plan(Create("tests/unit/test_a.py", "def test(): pass"), Execute("pytest", cwd="tests"))
    assert _issues(plan, root) == []


# --- INVOKE and CONCLUDE ------------------------------------------------------------------


def test_invoke_of_an_unknown_agent_is_refused_naming_the_known_ones(root: Path) -> None:
    plan = _plan(Invoke("Ghost", line=5))
    assert _issues(plan, root, known_agents=("Architect", "Developer")) == [
        (
            1,
            5,
            "unknown-agent",
            "`INVOKE`: unknown agent 'Ghost'; known agents: Architect, Developer",
        )
    ]


@pytest.mark.parametrize(
    ("agent", "known"),
    [("architect", ("Architect",)), ("DEVELOPER", ("developer",)), ("Anyone", None)],
)
def test_invoke_of_a_known_agent_is_allowed_in_any_letter_case(
    root: Path, agent: str, known: tuple[str, ...] | None
) -> None:
    assert _issues(_plan(Invoke(agent)), root, known_agents=known) == []


def test_conclude_is_valid_with_or_without_a_caller(root: Path) -> None:
    # without a caller it says the work is done (teddy run stops there)
    assert _issues(_plan(Conclude(line=21)), root) == []


# --- every problem at once ----------------------------------------------------------------


def test_every_problem_is_reported_at_once_with_its_action_line_and_code(root: Path) -> None:
    (root / "bin.dat").write_bytes(b"\xff\xfe\x00")
    plan = _plan(
        Create("a.py", "x", line=10),
        _edit("missing.py", ("a", "b"), line=15),
        _edit("bin.dat", ("a", "b"), line=20),
        Read(_file("file", "../up.txt"), line=25),
        Prune(_file("file", "never-read.py"), line=30),
        Execute("make", cwd="nowhere", line=35),
        Invoke("Ghost", line=40),
        Conclude(line=45),
        memos=(Memo("-", "absent"),),
    )
    issues = validate_plan(
        plan,
        Workspace(root, turn_context=(), known_agents=("Developer",)),
    )
    assert [(_action(plan, i.line), i.line, i.code) for i in issues] == [
        (None, 0, "memo-conflict"),
        (1, 10, "file-exists"),
        (2, 15, "file-missing"),
        (3, 20, "file-not-text"),
        (4, 25, "path-refused"),
        (5, 30, "not-in-context"),
        (6, 35, "cwd-missing"),
        (7, 40, "unknown-agent"),
    ]
    # the report and the re-plan message: each issue's line and code, as parse problems
    assert describe(issues) == [
        f"line {i.line}: {i.code} {i.message}" if i.line else f"{i.code} {i.message}"
        for i in issues
    ]
    assert describe(issues)[4] == (
        "line 25: path-refused `READ` on `../up.txt`: '..' is refused; paths must stay inside "
        "the project"
    )


def test_a_find_that_matches_nowhere_carries_the_diff_against_the_closest_region(
    root: Path,
) -> None:
    (root / "a.py").write_text("def f():\n    return 1\n")
    plan = _plan(_edit("a.py", ("def f():\n    return 2", "def f():\n    return 3"), line=12))
    [issue] = validate_plan(plan, Workspace(root))
    assert (issue.line, issue.code) == (12, "find-no-match")
    assert issue.detail.splitlines() == [
        "--- file, lines 1-2",
        "+++ FIND",
        "@@ -1,2 +1,2 @@",
        " def f():",
        "-    return 1",
        "+    return 2",
    ]
    assert describe([issue]) == [f"line 12: find-no-match {issue.message}\n{issue.detail}"]


def test_an_issue_is_a_diagnostic_with_its_line_code_and_message(root: Path) -> None:
    plan = _plan(_edit("missing.py", ("x", "y"), line=17))
    [issue] = validate_plan(plan, Workspace(root))
    assert issue == Diagnostic(17, "file-missing", issue.message)
    assert issue.message.startswith("`EDIT` on `missing.py`: ")
    assert issue.to_json("plan.md") == {
        "code": "file-missing",
        "message": issue.message,
        "line": 17,
        "file": "plan.md",
    }


# --- protected paths ----------------------------------------------------------------------


def _protected(suffix: str) -> str:
    return (
        f"protected path: plans may not {suffix} (protected_paths."
        + ("write" if suffix.startswith("create") else "read")
        + " in .teddy/config.yaml; change that list to allow it)"
    )


@pytest.fixture
def with_git(root: Path) -> Path:
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (root / ".teddy").mkdir()
    (root / ".teddy" / "memos.yaml").write_text("- a\n", encoding="utf-8")
    os.symlink(root / ".git", root / "g")
    return root


def test_by_default_plans_may_not_write_git_or_teddy_nor_read_git(with_git: Path) -> None:
    plan = _plan(
        Create(".git/hooks/pre-commit", "x", line=1),
        _edit(".teddy/memos.yaml", ("a", "b"), line=2),
        Read(_file("file", ".git/config"), line=3),
        Read(_file("file", "g/config"), line=5),
        Conclude((".git/config",), line=8),
        Invoke("Architect", ("g/config",), line=9),
    )
    write = _protected("create or edit paths matching '{}'")
    read = _protected("read paths matching '.git'")
    assert _issues(plan, with_git) == [
        (1, 1, "protected-path", "`CREATE` on `.git/hooks/pre-commit`: " + write.format(".git")),
        (2, 2, "protected-path", "`EDIT` on `.teddy/memos.yaml`: " + write.format(".teddy")),
        (3, 3, "protected-path", "`READ` on `.git/config`: " + read),
        (4, 5, "protected-path", "`READ` on `g/config`: leads to `.git/config`, a " + read),
        (5, 8, "protected-path", "`CONCLUDE` on `.git/config`: " + read),
        (6, 9, "protected-path", "`INVOKE` on `g/config`: leads to `.git/config`, a " + read),
    ]


def test_what_is_only_write_protected_may_be_read_pruned_and_run_in(with_git: Path) -> None:
    plan = _plan(
        Read(_file("file", ".teddy/memos.yaml")),
        Prune(_file("file", ".git/config")),
        Execute("ls", cwd=".teddy"),
        Execute("ls", cwd=".git"),
        Conclude((".teddy/memos.yaml",)),
    )
    assert _issues(plan, with_git) == []


@pytest.mark.parametrize(
    ("write", "read", "code"),
    [
        (("gen",), (), "protected-path"),  # EDIT writes
        ((), ("gen",), "protected-path"),  # and reads
        ((), (), None),
    ],
)
def test_edit_is_checked_as_a_write_and_as_a_read(
    root: Path, write: tuple[str, ...], read: tuple[str, ...], code: str | None
) -> None:
    from plankit.teddy.session.config import Config

    (root / "gen").mkdir()
    (root / "gen" / "out.py").write_text("v = 1\n", encoding="utf-8")
    config = Config(protected_write=write, protected_read=read)
    issues = _issues(_plan(_edit("gen/out.py", ("v = 1", "v = 2"))), root, config=config)
    assert [i[2] for i in issues] == ([code] if code else [])


# --- context entries as they are written --------------------------------------------------


@pytest.mark.parametrize(
    ("path", "turn", "shared"),
    [
        ("src/m.py", ("src/m.py",), ()),
        ("./src//m.py", ("src/m.py",), ()),
        ("src/m.py", (), ("/src/m.py",)),
        ("src/m.py", ("README.md",), ("src/m.py",)),
        ("Xm.py", ("/Xm.py/",), ()),
        ("Xm.py", (), ("/Xm.py",)),
    ],
)
def test_an_edit_may_target_the_turns_or_the_shared_context(
    root: Path, path: str, turn: tuple[str, ...], shared: tuple[str, ...]
) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("old\n", encoding="utf-8")
    plan = _plan(_edit(path, ("old", "new")))
    assert _issues(plan, root, turn_context=turn, shared_context=shared) == []


def test_a_prune_may_only_target_the_turns_context(root: Path) -> None:
    plan = _plan(Prune(_file("file", "a.py"), line=4))
    assert _issues(plan, root, turn_context=(), shared_context=("a.py",)) == [
        (1, 4, "not-in-context", "`PRUNE` on `a.py`: the resource is not in the turn's context")
    ]


@pytest.mark.parametrize(("target", "entry"), [("docs/", "docs"), ("Xdocs", "/Xdocs/")])
def test_a_prune_matches_context_entries_whatever_their_slashes(
    root: Path, target: str, entry: str
) -> None:
    assert _issues(_plan(Prune(_file("file", target))), root, turn_context=(entry,)) == []


def test_an_edit_with_a_refused_path_does_not_stop_the_checks_of_later_actions(
    root: Path,
) -> None:
    plan = _plan(_edit("../x.py", ("a", "b"), line=3), Create("a.py", "x", line=9))
    assert [i[:3] for i in _issues(plan, root)] == [
        (1, 3, "path-refused"),
        (2, 9, "file-exists"),
    ]


# --- the workspace of a session turn ------------------------------------------------------


def test_a_turns_workspace_has_its_context_the_shared_context_memos_and_agents(
    tmp_path: Path,
) -> None:
    from plankit.teddy.run.validate import turn_workspace
    from plankit.teddy.session.config import Config
    from plankit.teddy.session.layout import create_session
    from plankit.teddy.session.prompts import get_prompt

    session = create_session(tmp_path, "ws", get_prompt("Developer"), "Developer")
    turn = session.latest()
    turn.context_path.write_text("a.py\n# a comment\n/b.py\n", encoding="utf-8")
    session.context_path.write_text("docs/s.md\n", encoding="utf-8")
    (tmp_path / ".teddy" / "global.context").write_text("g.md\n", encoding="utf-8")
    (tmp_path / ".teddy" / "memos.yaml").write_text("- use uv\n", encoding="utf-8")
    (tmp_path / ".teddy" / "prompts").mkdir(exist_ok=True)
    (tmp_path / ".teddy" / "prompts" / "reviewer.xml").write_text(
        '<agent name="Reviewer">Review.</agent>\n', encoding="utf-8"
    )
    config = Config(protected_write=("x",))
    ws = turn_workspace(turn, config)
    assert ws.root == tmp_path
    assert ws.turn_context == ("a.py", "/b.py")
    assert ws.shared_context == ("docs/s.md", "g.md")
    assert ws.memos == ("use uv",)
    assert ws.known_agents is not None
    assert {"Developer", "Reviewer"} <= set(ws.known_agents)  # the project's own prompts too
    assert ws.config is config


def test_an_issue_on_the_first_line_is_told_with_its_line() -> None:
    # a plan's heading can be its first line (a plan given without its title, say):
    # line 1 is a line like any other, only line 0 (the whole plan) has no "line N:"
    first = Diagnostic(1, "file-missing", "EDIT on `a.py`: no such file")
    whole = Diagnostic(0, "memo-limit", "memos: too many")
    assert describe([first, whole]) == [
        "line 1: file-missing EDIT on `a.py`: no such file",
        "memo-limit memos: too many",
    ]
