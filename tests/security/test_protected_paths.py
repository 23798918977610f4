"""Plans may not write git's data or TeDDy's own state, nor read git's data.

An EDIT adding ``core.fsmonitor`` to ``.git/config`` runs a command at the user's next
``git status``; a hook runs at the next commit; ``.teddy/config.yaml`` holds TeDDy's own
timeout and research backend.  Validation refuses such plans (nothing runs), and
execution refuses the write again on its own (defence in depth).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from plankit.errors import InputError
from plankit.protected_paths import protected_by, protected_links
from plankit.teddy.format.model import Create, Edit, EditPair, Read, Resource
from plankit.teddy.format.parse import parse_plan
from plankit.teddy.run import protect
from plankit.teddy.run.actions import Runtime, run_action
from plankit.teddy.run.approval import ShowOnly
from plankit.teddy.run.protect import hard_link_check
from plankit.teddy.run.validate import Workspace, validate_plan
from plankit.teddy.session.config import Config, load_config
from plankit.workspace import PathRefused
from tests.security.helpers import create, edit, plan, read, snapshot, start_session, teddy

GIT_CONFIG = "[core]\n\trepositoryformatversion = 0\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text(GIT_CONFIG)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\n")
    return root


def _execute(project: Path, actions: str, context: str = "") -> tuple[str, str]:
    """Run ``actions`` as turn 01 with ``teddy execute -y``; validation must fail:
    (report, stderr)."""
    turn = start_session(project)
    (turn / "turn.context").write_text(context)
    (turn / "plan.md").write_text(plan(actions))
    before = snapshot(project / ".git")
    config = project / ".teddy" / "config.yaml"
    config_before = config.read_bytes() if config.exists() else None
    result = teddy(project, "execute", "-y", "--no-replan", check=1)
    assert snapshot(project / ".git") == before  # nothing written under .git/
    assert (config.read_bytes() if config.exists() else None) == config_before
    return (turn / "report.md").read_text(), result.stderr


def test_an_edit_adding_fsmonitor_to_git_config_is_refused(project: Path) -> None:
    action = edit(".git/config", "[core]", "[core]\n\tfsmonitor = touch /tmp/pwned")
    report, stderr = _execute(project, action, context=".git/config\n")
    assert "Validation Failed" in report
    why = (
        "`EDIT` on `.git/config`: protected path: plans may not create or edit paths "
        "matching '.git' (protected_paths.write in .teddy/config.yaml; change that list "
        "to allow it)"
    )
    assert why in report and why in stderr
    assert (project / ".git" / "config").read_text() == GIT_CONFIG


def test_a_hook_created_anywhere_under_a_git_directory_is_refused(project: Path) -> None:
    (project / "sub" / ".git").mkdir(parents=True)
    actions = "\n\n".join([create(".git/hooks/pre-commit"), create("sub/.git/hooks/post-checkout")])
    report, _ = _execute(project, actions)
    assert report.count("protected path: plans may not create or edit paths matching '.git'") == 2
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert list((project / "sub" / ".git").iterdir()) == []


def test_teddy_state_is_refused_but_memos_still_change_through_the_memos_section(
    project: Path,
) -> None:
    (project / ".teddy").mkdir()
    (project / ".teddy" / "config.yaml").write_text("execute:\n  timeout: 600\n")
    actions = "\n\n".join(
        [
            edit(".teddy/config.yaml", "timeout: 600", "timeout: 99999"),
            create(".teddy/memos.yaml", "- obey the plan"),
        ]
    )
    report, _ = _execute(project, actions, context=".teddy/config.yaml\n")
    assert report.count("matching '.teddy'") == 2
    assert not (project / ".teddy" / "memos.yaml").exists()

    # The Memos section is how memos change; it is not a plan CREATE/EDIT.
    turn = sorted(p for p in (project / ".teddy").glob("*-sec/*") if p.is_dir())[-1]
    (turn / "plan.md").write_text(plan(read("src/app.py"), memos="[+] Keep it small."))
    teddy(project, "execute", "-y")
    assert "Keep it small." in (project / ".teddy" / "memos.yaml").read_text()


def test_reading_git_data_is_refused(project: Path) -> None:
    report, _ = _execute(project, read(".git/config"))
    assert (
        "`READ` on `.git/config`: protected path: plans may not read paths matching '.git' "
        "(protected_paths.read in .teddy/config.yaml" in report
    )
    turn2 = next((project / ".teddy").glob("*-sec/02"))
    assert ".git/config" not in (turn2 / "turn.context").read_text()


# -- the same rules at library level: every spelling of the path ------------------

SPELLINGS = [
    ".git/config",
    "./.git/config",
    ".git/./config",
    ".git//config",
    ".git",
    ".GIT/config",  # the same directory on case-insensitive file systems
    ".git./config",  # and on Windows, where trailing dots are dropped
    "sub/.git/hooks/x",
    "a/b/c/.git/objects/pack/p",
    ".teddy/config.yaml",
    ".teddy/20260101-x/01/plan.md",
    "nested/.teddy/memos.yaml",
]


@pytest.mark.parametrize("path", SPELLINGS)
def test_every_spelling_of_a_protected_path_is_refused(project: Path, path: str) -> None:
    parsed = parse_plan(plan(create(path)))
    issues = validate_plan(parsed, Workspace(project))
    assert [i.code for i in issues] == ["protected-path"], issues


def test_a_symlink_inside_the_project_does_not_hide_git(project: Path) -> None:
    (project / "innocent").symlink_to(project / ".git", target_is_directory=True)
    parsed = parse_plan(plan(create("innocent/hooks/pre-push") + "\n\n" + read("innocent/config")))
    issues = validate_plan(parsed, Workspace(project))
    assert [i.code for i in issues] == ["protected-path", "protected-path"]
    assert "leads to `.git/hooks/pre-push`, a protected path" in issues[0].message


@pytest.mark.parametrize(
    "path", ["src/git.py", "src/.gitignore", ".github/workflows/ci.yml", "docs/.teddy.md"]
)
def test_look_alikes_are_not_protected(project: Path, path: str) -> None:
    parsed = parse_plan(plan(create(path)))
    assert validate_plan(parsed, Workspace(project)) == []


def test_handoff_resources_may_not_carry_git_data(project: Path) -> None:
    text = plan(
        "### `INVOKE`\n- **Agent:** Debugger\n- **Handoff Resources:**\n"
        "  - [.git/config](/.git/config)\n\nPlease look."
    )
    issues = validate_plan(parse_plan(text), Workspace(project))
    assert [i.code for i in issues] == ["protected-path"]


# -- execution refuses on its own ------------------------------------------------


def _runtime(project: Path, config: Config | None = None) -> Runtime:
    return Runtime(project, config or Config(), ShowOnly(io.StringIO()))


def test_execution_refuses_protected_writes_even_without_validation(project: Path) -> None:
    rt = _runtime(project)
    before = snapshot(project / ".git")
    results = [
        run_action(Create(".git/hooks/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n"), rt),
        run_action(Edit(".git/config", (EditPair("[core]", "[core]\n\tfsmonitor = x"),)), rt),
        run_action(Create("sub/.git/config", "x"), rt),
    ]
    for result in results:
        assert result.success is False
        assert "protected path" in result.notes[0]
    assert snapshot(project / ".git") == before
    assert not (project / "sub").exists()


# -- the rules are settings --------------------------------------------------------


def _config(project: Path, text: str) -> Config:
    (project / ".teddy").mkdir(exist_ok=True)
    (project / ".teddy" / "config.yaml").write_text(text)
    return load_config(project)


def test_the_rules_are_configurable(project: Path) -> None:
    config = _config(
        project,
        "protected_paths:\n  write: ['.git', '.teddy', 'secrets/**']\n  read: ['.git', '*.pem']\n",
    )
    assert config.protected_write == (".git", ".teddy", "secrets/**")
    parsed = parse_plan(plan(create("secrets/token.txt") + "\n\n" + read("certs/server.pem")))
    issues = validate_plan(parsed, Workspace(project))
    assert [i.code for i in issues] == ["protected-path", "protected-path"]
    assert "matching 'secrets/**'" in issues[0].message
    assert "matching '*.pem'" in issues[1].message

    lifted = _config(project, "protected_paths:\n  write: []\n")
    rt = _runtime(project, lifted)
    assert run_action(Create(".git/info/exclude", "*.log"), rt).success
    assert (project / ".git" / "info" / "exclude").read_text() == "*.log\n"
    # reading is still protected by the default read rules, at execution too
    refused = run_action(Read(Resource("file", ".git/config")), rt)
    assert refused.success is False
    assert "plans may not read paths matching '.git'" in refused.notes[0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("protected_paths: ['.git']\n", "'protected_paths' is a section: give its settings (write, read) under it"),
        ("protected_paths:\n  write: .git\n", "'protected_paths.write' must be a list of path rules"),
        ("protected_paths:\n  writes: ['.git']\n", "unknown setting 'protected_paths.writes'; did you mean 'protected_paths.write'?"),
        ("protected_paths:\n  read: ['../x']\n", "'..' are not allowed"),
        ("protected_paths:\n  read: ['']\n", "a rule must be a non-empty path pattern"),
        ("protected_paths:\n  read: [3]\n", "3 is not text"),
    ],
)  # fmt: skip
def test_bad_rules_are_errors_that_say_what_to_fix(project: Path, text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        _config(project, text)
    assert message in str(caught.value)
    assert caught.value.code == "bad-config"


@pytest.mark.parametrize(
    ("path", "rules", "expected"),
    [
        (".git/config", [".git"], ".git"),
        ("a/.git", [".git"], ".git"),
        ("a/.gitignore", [".git"], None),
        ("docs/a/secret.md", ["docs/**/secret.md"], "docs/**/secret.md"),
        ("docs/secret.md", ["docs/**/secret.md"], "docs/**/secret.md"),
        ("x/docs/secret.md", ["docs/**/secret.md"], None),
        ("x/docs/secret.md", ["/docs/*"], None),
        ("docs/a/b", ["/docs/*"], "/docs/*"),
        ("a/b.PEM", ["*.pem"], "*.pem"),
        ("/".join(["a"] * 120) + "/.git/x", [".git"], ".git"),
    ],
)
def test_rule_matching(path: str, rules: list[str], expected: str | None) -> None:
    assert protected_by(path, rules) == expected


def test_execute_is_not_a_path_write_and_is_not_refused(project: Path) -> None:
    # EXECUTE can do anything the shell can (see docs/security.md); it is approved,
    # not path-checked.
    text = plan("### `EXECUTE`\n- **Description:** d\n```shell\ngit --version\n```")
    assert validate_plan(parse_plan(text), Workspace(project)) == []
    assert os.path.isdir(project / ".git")


# -- symbolic and hard links: where a path leads, what a file is ---------------------


@pytest.mark.parametrize("name", [" .git", "X.git", "git-data"])
def test_a_symlink_whose_name_only_looks_like_git_is_refused_for_where_it_leads(
    project: Path, name: str
) -> None:
    (project / name).symlink_to(".git", target_is_directory=True)
    result = run_action(Read(Resource("file", f"{name}/config")), _runtime(project))
    assert result.success is False
    assert result.notes == (
        f"{name}/config: leads to `.git/config`, a protected path: plans may not read paths "
        "matching '.git' (protected_paths.read in .teddy/config.yaml; change that list to "
        "allow it)",
    )


def test_an_execution_refusal_names_the_path_and_the_rule(project: Path) -> None:
    result = run_action(Create(".git/hooks/pre-commit", "touch /tmp/pwned\n"), _runtime(project))
    assert result.notes == (
        ".git/hooks/pre-commit: protected path: plans may not create or edit paths matching "
        "'.git' (protected_paths.write in .teddy/config.yaml; change that list to allow it)",
    )


def test_a_plan_may_read_teddys_config_whose_protection_is_against_writes(project: Path) -> None:
    _config(project, "execute:\n  timeout: 30\n")
    parsed = parse_plan(plan(read(".teddy/config.yaml")))
    assert validate_plan(parsed, Workspace(project)) == []
    assert run_action(Read(Resource("file", ".teddy/config.yaml")), _runtime(project)).success


HARD_LINK_REFUSED = (
    "is a hard link to a protected file: plans may not read it under another name "
    "(protected_paths.read in .teddy/config.yaml)"
)


def test_a_read_of_a_hard_link_to_git_config_is_refused(project: Path) -> None:
    os.link(project / ".git" / "config", project / "remote.txt")
    issues = validate_plan(parse_plan(plan(read("remote.txt"))), Workspace(project))
    assert [(i.code, i.message) for i in issues] == [
        ("protected-path", f"`READ` on `remote.txt`: {HARD_LINK_REFUSED}")
    ]
    result = run_action(Read(Resource("file", "remote.txt")), _runtime(project))
    assert result.success is False
    assert result.notes == (f"remote.txt: {HARD_LINK_REFUSED}",)


def test_a_hard_link_to_git_config_may_be_pruned_from_the_context(project: Path) -> None:
    # remote.txt (a hard link to .git/config) is in the turn's context, put there by a
    # person; a plan that drops it reads nothing, so the read rules have nothing to
    # refuse; only a READ of it is refused
    os.link(project / ".git" / "config", project / "remote.txt")
    prune = "### `PRUNE`\n- **Resource:** [remote.txt](/remote.txt)"
    workspace = Workspace(project, turn_context=("remote.txt",))
    assert validate_plan(parse_plan(plan(prune)), workspace) == []
    issues = validate_plan(parse_plan(plan(read("remote.txt"))), workspace)
    assert [i.code for i in issues] == ["protected-path"]


def test_a_hard_link_between_two_ordinary_files_is_read(project: Path) -> None:
    os.link(project / "src" / "app.py", project / "app-copy.py")
    assert validate_plan(parse_plan(plan(read("app-copy.py"))), Workspace(project)) == []
    assert run_action(Read(Resource("file", "app-copy.py")), _runtime(project)).success


def test_the_opened_file_is_refused_when_it_is_a_hard_link_to_git_config(project: Path) -> None:
    os.link(project / ".git" / "config", project / "remote.txt")
    check = hard_link_check(project, Config())
    with pytest.raises(PathRefused) as refused:
        check(os.stat(project / "remote.txt"))
    assert (refused.value.code, str(refused.value)) == ("protected-path", HARD_LINK_REFUSED)
    check(os.stat(project / "src" / "app.py"))  # an ordinary file passes
    # with no read rules, nothing is protected from reading
    open_rules = _config(project, "protected_paths:\n  read: []\n")
    hard_link_check(project, open_rules)(os.stat(project / "remote.txt"))


def test_the_project_is_listed_only_for_files_with_more_than_one_link(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # listing the protected files walks the whole project: not for every file read
    calls: list[Path] = []

    def counted(root: Path, rules: tuple[str, ...]) -> set[tuple[int, int]]:
        calls.append(root)
        return protected_links(root, rules)

    monkeypatch.setattr(protect, "protected_links", counted)
    check = hard_link_check(project, Config())
    check(os.stat(project / ".git" / "config"))  # one name: no hard link to anything
    check(os.stat(project / "src" / "app.py"))
    assert calls == []
    os.link(project / "src" / "app.py", project / "app-copy.py")
    check(os.stat(project / "app-copy.py"))
    check(os.stat(project / "src" / "app.py"))
    assert calls == [project]  # listed once
