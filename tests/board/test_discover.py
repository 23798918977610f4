"""What the board's walk lists, skips and refuses, on trees laid out by hand: links that
lead out of the root, special files named like plans, plan ids typed into a URL."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from plankit.board import discover as walk
from plankit.board.discover import PlanRef, discover, locate, looks_like_plan, parse_id

PLAN = "# Plan: Ship it\n\n### Phase 1: Build\n- [ ] 1.1 Write the code\n"


def _ids(root: Path) -> list[str]:
    return [ref.id for ref in discover(root)]


def _write(root: Path, rel: str, text: str = PLAN) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "plan_id",
    [
        "checklist",
        "checklist:",
        "sheet:PLAN.md",
        ":PLAN.md",
        "checklist:/etc/PLAN.md",
        "checklist:docs//PLAN.md",
        "checklist:docs/",
        "checklist:../PLAN.md",
        "checklist:docs/../../PLAN.md",
        "checklist:./PLAN.md",
        "checklist:docs\\PLAN.md",
        "checklist:PLAN.md\0",
    ],
)
def test_an_id_that_names_no_plan_under_the_root_is_refused(plan_id: str) -> None:
    assert parse_id(plan_id) is None


@pytest.mark.parametrize(
    ("plan_id", "kind", "rel"),
    [
        ("checklist:docs/PLAN.md", "checklist", "docs/PLAN.md"),
        ("teddy:.teddy/20261120-port", "teddy", ".teddy/20261120-port"),
        ("acp:.plankit/acp/run:1.jsonl", "acp", ".plankit/acp/run:1.jsonl"),
        ("agentflow:plans/auth", "agentflow", "plans/auth"),
    ],
)
def test_an_id_is_its_kind_and_path(plan_id: str, kind: str, rel: str) -> None:
    ref = parse_id(plan_id)
    assert ref == PlanRef(kind, rel) and ref.id == plan_id


@pytest.mark.parametrize(
    ("rel", "plan"),
    [
        ("PLAN.md", True),
        ("docs/Plan.MD", True),
        ("release.plan.md", True),
        ("budget.xlsx", True),
        (".teddy/20261120-port/01/report.md", True),
        (".plankit/acp/run-1.jsonl", True),
        ("sub/.plankit/acp/run-1.jsonl", True),
        ("plans/auth/tasks/01-design.md", True),
        ("tasks/01-design.md", True),
        ("README.md", False),
        ("src/app.py", False),
        ("logs/run-1.jsonl", False),
        (".plankit/run-1.jsonl", False),
        ("acp/run-1.jsonl", False),
        ("tasks", False),
        ("plans/auth/plan.txt", False),
    ],
)
def test_which_changed_files_can_change_a_plan(rel: str, plan: bool) -> None:
    assert looks_like_plan(rel) is plan


def test_every_kind_is_found_sorted_by_kind_and_path(tmp_path: Path) -> None:
    _write(tmp_path, "PLAN.md")
    _write(tmp_path, "docs/Release.Plan.md")
    _write(tmp_path, "docs/plan.MD")
    (tmp_path / "budget.xlsx").write_bytes(b"PK\x03\x04")
    _write(tmp_path, ".teddy/20261120-port/01/plan.md", "# Write\n")
    _write(tmp_path, ".teddy/20261119-docs/01/PLAN.md")  # inside a session: its turn's file
    _write(tmp_path, ".teddy/notes/PLAN.md")  # not a session, not walked
    _write(tmp_path, ".teddy/memos.yaml", "- a memo\n")
    _write(tmp_path, ".teddy/old.plan.md")  # beside the sessions: not a plan of the user's
    _write(tmp_path, "plans/auth/plan.md", "---\ntitle: Auth\n---\n")
    _write(tmp_path, "plans/auth/tasks/01-design.md", "---\nid: design\n---\n")
    _write(tmp_path, "plans/auth/tasks/PLAN.md")  # a task folder is not walked
    _write(tmp_path, ".plankit/acp/run-1.jsonl", "{}\n")
    _write(tmp_path, ".plankit/acp/notes.txt", "x\n")
    _write(tmp_path, "sub/.plankit/acp/run-2.jsonl", "{}\n")
    _write(tmp_path, "logs/run-3.jsonl", "{}\n")
    assert _ids(tmp_path) == [
        "acp:.plankit/acp/run-1.jsonl",
        "acp:sub/.plankit/acp/run-2.jsonl",
        "agentflow:plans/auth",
        "checklist:PLAN.md",
        "checklist:budget.xlsx",
        "checklist:docs/Release.Plan.md",
        "checklist:docs/plan.MD",
        "teddy:.teddy/20261119-docs",
        "teddy:.teddy/20261120-port",
    ]


def test_a_plan_md_beside_a_tasks_file_is_a_checklist(tmp_path: Path) -> None:
    _write(tmp_path, "notes/plan.md")
    _write(tmp_path, "notes/tasks", "buy milk\n")  # a file, not a task folder
    _write(tmp_path, "ideas/plan.md")  # no tasks at all
    _write(tmp_path, "src/tasks/__init__.py", "")  # a task folder with no plan.md
    _write(tmp_path, "src/tasks/PLAN.md")
    assert _ids(tmp_path) == [
        "checklist:ideas/plan.md",
        "checklist:notes/plan.md",
        "checklist:src/tasks/PLAN.md",
    ]


def test_tool_and_cache_folders_are_not_walked(tmp_path: Path) -> None:
    skipped = [".git", "node_modules/pkg", ".venv", "venv", "__pycache__", ".tox", "site-packages"]
    for where in skipped:
        _write(tmp_path, f"{where}/PLAN.md")
    _write(tmp_path, "docs/PLAN.md")
    assert _ids(tmp_path) == ["checklist:docs/PLAN.md"]


def test_links_are_not_followed_out_of_the_root(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    outside = tmp_path / "outside"
    _write(outside, "PLAN.md", "# Plan: Secret\n")
    _write(outside, ".teddy/20261120-secret/01/plan.md", "# Secret\n")
    _write(root, "PLAN.md")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "secret.plan.md").symlink_to(outside / "PLAN.md")
    (root / ".teddy").mkdir()
    (root / ".teddy" / "20261120-secret").symlink_to(outside / ".teddy" / "20261120-secret")
    assert _ids(root) == ["checklist:PLAN.md"]
    for plan_id in (
        "checklist:linked/PLAN.md",
        "checklist:secret.plan.md",
        "teddy:.teddy/20261120-secret",
    ):
        ref = parse_id(plan_id)
        assert ref is not None and locate(root, ref) is None
    assert locate(root, PlanRef("checklist", "PLAN.md")) == root / "PLAN.md"
    assert locate(root, PlanRef("checklist", "gone/PLAN.md")) is None


def test_a_link_swapped_in_for_a_folder_after_the_walk_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, "docs/PLAN.md")
    [ref] = discover(tmp_path)
    (tmp_path / "docs").rename(tmp_path / "elsewhere")
    (tmp_path / "docs").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert locate(tmp_path, ref) is None


def test_special_files_named_like_a_checklist_are_listed_others_not(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "waiting.plan.md")
    os.mkfifo(tmp_path / "notes.md")
    os.mkfifo(tmp_path / "budget.xlsx")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "PLAN.md"))
        assert _ids(tmp_path) == ["checklist:PLAN.md", "checklist:waiting.plan.md"]


def test_the_walk_stops_after_its_limit_of_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, "PLAN.md")
    _write(tmp_path, "docs/PLAN.md")  # the root has 2 entries, docs/ 1
    monkeypatch.setattr(walk, "MAX_ENTRIES", 3)
    assert _ids(tmp_path) == ["checklist:PLAN.md", "checklist:docs/PLAN.md"]
    monkeypatch.setattr(walk, "MAX_ENTRIES", 2)
    assert _ids(tmp_path) == ["checklist:PLAN.md"]


def test_every_id_the_walk_gives_can_be_asked_for_even_with_the_root_a_plan_directory(
    tmp_path: Path,
) -> None:
    _write(tmp_path, "plan.md", "---\ntitle: Auth\n---\n")  # plankit board plans/auth
    _write(tmp_path, "tasks/01-design.md", "---\nid: design\n---\n")
    _write(tmp_path, "docs/PLAN.md")
    found = discover(tmp_path)
    assert [ref.id for ref in found] == ["checklist:docs/PLAN.md"]
    assert all(parse_id(ref.id) == ref for ref in found)


def test_a_folder_that_cannot_be_read_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, "a-private/PLAN.md")
    _write(tmp_path, "b/PLAN.md")
    _write(tmp_path, "c/PLAN.md")
    real = os.scandir

    def scandir(path: Path) -> object:
        if Path(path).name == "a-private":  # another user's folder, mode 0700
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(walk.os, "scandir", scandir)
    assert _ids(tmp_path) == ["checklist:b/PLAN.md", "checklist:c/PLAN.md"]
