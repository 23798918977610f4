"""The context budget: what leaves input.md first, and what never does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from plankit.teddy.cli import cli
from plankit.teddy.context.budget import Budget, Candidate, choose_left_out, count_tokens
from plankit.teddy.context.payload import assemble_payload
from plankit.teddy.session.layout import create_session
from plankit.teddy.session.prompts import get_prompt


def _project(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A session whose turn context holds two reports and two READ files (oldest first),
    with a user file in session.context that the turn context also lists."""
    session = create_session(tmp_path, "budget", get_prompt("Developer"), "Developer")
    turn = session.latest()
    for name in ("user.md", "read1.md", "read2.md"):
        (tmp_path / name).write_text(name * 500 + "\n")
    reports = []
    for old in ("a00", "a99"):  # not turn names: the latest turn stays 01
        report = session.path / old / "report.md"
        report.parent.mkdir()
        report.write_text(f"report {old}\n" * 300)
        reports.append(report.relative_to(tmp_path).as_posix())
    (session.path / "session.context").write_text("user.md\n")
    entries = [reports[0], "read1.md", reports[1], "read2.md", "user.md"]
    (turn.path / "turn.context").write_text("\n".join(entries) + "\n")
    return tmp_path, session.path, turn.path


def _left(tmp_path: Path, budget: Budget) -> tuple[list[str], str]:
    root, session, turn = _project(tmp_path)
    payload = assemble_payload(root, session, turn, budget=budget)
    return [r.key for r in payload.resources if r.left_out], payload.text


def test_no_budget_keeps_everything(tmp_path: Path) -> None:
    left, text = _left(tmp_path, Budget())
    assert left == []
    assert "Left out" not in text


def test_reports_leave_first_oldest_first_then_ai_files_never_the_users(tmp_path: Path) -> None:
    root, session, turn = _project(tmp_path)
    whole = assemble_payload(root, session, turn)
    sizes = {r.key: r.size for r in whole.resources}
    total = len(whole.text.encode())
    reports = sorted(k for k in sizes if k.endswith("report.md"))

    # just over by a little: the oldest report leaves, nothing else
    payload = assemble_payload(root, session, turn, budget=Budget(max_bytes=total - 10))
    assert [r.key for r in payload.resources if r.left_out] == [reports[0]]
    assert len(payload.text.encode()) <= total - 10
    assert f"- `{reports[0]}` (READ it again to see it)" in payload.text
    assert "report a00" not in payload.text and "report a99" in payload.text

    # a budget nothing can meet: every report and AI file leaves, the user's file stays
    tiny = assemble_payload(root, session, turn, budget=Budget(max_bytes=100))
    listed = tiny.text.split("### Left out to fit the context budget\n")[1].split("\n\n")[0]
    left = [line.split("`")[1] for line in listed.splitlines()]
    assert left == [reports[0], reports[1], "read1.md", "read2.md"]  # the leaving order
    assert "user.md" * 10 in tiny.text


def test_a_token_budget_counts_tokens(tmp_path: Path) -> None:
    root, session, turn = _project(tmp_path)
    whole = assemble_payload(root, session, turn)
    tokens = count_tokens(whole.text)
    payload = assemble_payload(root, session, turn, budget=Budget(max_tokens=tokens - 5))
    assert sum(r.left_out for r in payload.resources) == 1
    assert count_tokens(payload.text) <= tokens - 5


def test_choose_left_out_stops_as_soon_as_it_fits() -> None:
    candidates = [
        Candidate("a.md", 0, 100, 25),
        Candidate(".teddy/s/01/report.md", 1, 100, 25),
        Candidate("b.md", 2, 100, 25),
    ]
    assert choose_left_out(250, 60, candidates, Budget(max_bytes=200)) == [".teddy/s/01/report.md"]
    assert choose_left_out(250, 60, candidates, Budget(max_bytes=100)) == [
        ".teddy/s/01/report.md",
        "a.md",
    ]
    assert choose_left_out(250, 60, candidates, Budget(max_bytes=300)) == []


def test_count_tokens_estimates_without_a_tokenizer() -> None:
    assert count_tokens("abcd" * 10) == 10
    assert count_tokens("abcde") == 2
    assert count_tokens("é") == 1


def test_teddy_context_stats_and_the_config_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _, _ = _project(tmp_path)
    (root / ".teddy" / "config.yaml").write_text("context:\n  max_bytes: 100\n")
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["context", "--stats"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].endswith("input.md")
    assert sum("left out (context budget)" in line for line in lines) == 4
    assert any(line.startswith("user.md") and "left out" not in line for line in lines)
    result = CliRunner().invoke(cli, ["context", "--json"])
    data = json.loads(result.stdout)
    assert {r["resource"]: r["left_out"] for r in data["resources"]}["user.md"] is False
    assert sum(r["left_out"] for r in data["resources"]) == 4


@pytest.mark.parametrize(
    ("yaml", "message"),
    [
        ("context:\n  max_bytes: -1\n", "'context.max_bytes' must be positive"),
        ("prices: {m: {input: 1}}\n", "'m' needs exactly input and output"),
        ("prices: {m: {input: 1, output: -2}}\n", "prices cannot be negative"),
    ],
)
def test_bad_budget_and_price_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, yaml: str, message: str
) -> None:
    root, _, _ = _project(tmp_path)
    (root / ".teddy" / "config.yaml").write_text(yaml)
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["context"])
    assert result.exit_code == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
