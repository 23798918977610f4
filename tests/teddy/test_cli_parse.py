"""`teddy parse`: summary, JSON, diagnostics, and every bad input the issue names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from plankit.teddy import cli as teddy_cli
from plankit.teddy.format.model import plan_to_dict
from plankit.teddy.format.parse import parse_plan

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "finisher-agent-research.md"
INVALID = ROOT / "tests" / "data" / "plans" / "invalid" / "fields.md"
TEDDY = Path(sys.executable).parent / "teddy"


def run(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(teddy_cli.cli, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_summary_lists_title_metadata_and_actions() -> None:
    code, out, err = run("parse", str(EXAMPLE))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == 'Research and Propose a New "Finisher" Agent Role'
    assert "  Status: Green 🟢" in lines
    assert "Actions (5):" in lines
    assert any(line.split()[:3] == ["line", "42", "CREATE"] for line in lines)
    assert "docs/briefs/01-finisher-agent-brief.md (7 lines)" in out


def test_json_is_the_plan_model() -> None:
    code, out, _ = run("parse", "--json", str(EXAMPLE))
    assert code == 0
    data = json.loads(out)
    assert data == plan_to_dict(parse_plan(EXAMPLE.read_text(encoding="utf-8")))
    assert set(data) == {"title", "metadata", "rationale", "memos", "actions"}
    create = data["actions"][1]
    assert create["path"] == "docs/briefs/01-finisher-agent-brief.md"
    assert create["content"].startswith('# Brief: The "Finisher" Agent\n')


def test_stdin_with_dash() -> None:
    code, out, _ = run("parse", "--json", "-", stdin=EXAMPLE.read_bytes())
    assert code == 0
    assert json.loads(out)["title"].startswith("Research and Propose")


def test_invalid_plan_lists_every_problem() -> None:
    code, out, err = run("parse", str(INVALID))
    assert code == 1
    assert out == ""
    problems = [line for line in err.splitlines() if line.startswith(f"{INVALID}:")]
    assert len(problems) == 8  # seven diagnostics and the closing count
    assert problems[0] == (
        f"{INVALID}:18: field-missing CREATE needs a '- **File Path:** …' item in its metadata list"
    )
    assert err.splitlines()[-1] == f"{INVALID}: 7 problems; the plan is invalid"


def test_invalid_plan_json_errors() -> None:
    code, out, _ = run("parse", "--json", str(INVALID))
    assert code == 1
    errors = json.loads(out)["errors"]
    assert [(e["line"], e["code"]) for e in errors][:3] == [
        (18, "field-missing"),
        (19, "unknown-field"),
        (20, "unknown-field"),
    ]
    # the shape every command's --json shares: code, message, line (or null), file
    assert all(set(e) == {"code", "message", "line", "file"} for e in errors)
    assert {e["file"] for e in errors} == {str(INVALID)}


def _bad_inputs(tmp: Path) -> dict[str, tuple[Path, str]]:
    cases: dict[str, tuple[Path, str]] = {}

    def add(name: str, data: bytes | None, code: str) -> None:
        path = tmp / f"{name}.md"
        if data is not None:
            path.write_bytes(data)
        cases[name] = (path, code)

    add("empty", b"", "empty")
    add("blank", b"  \n\n", "empty")
    add("latin1", "# Café\n".encode("latin-1"), "not-utf8")
    add("nul", b"# T\n\x00\n", "nul-byte")
    add("missing", None, "not-found")
    directory = tmp / "plans"
    directory.mkdir()
    cases["directory"] = (directory, "is-directory")
    big = tmp / "big.md"
    with big.open("wb") as handle:
        handle.write(b"# Big\n")
        handle.truncate(50 * 1024 * 1024)
    cases["50mb"] = (big, "too-large")
    return cases


@pytest.mark.parametrize(
    "name", ["empty", "blank", "latin1", "nul", "missing", "directory", "50mb"]
)
def test_bad_input_is_one_clear_line(tmp_path: Path, name: str) -> None:
    path, expected_code = _bad_inputs(tmp_path)[name]
    before = path.read_bytes() if path.is_file() else None
    code, out, err = run("parse", str(path))
    assert code == 1
    assert out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith(f"teddy: {path}")
    assert "Traceback" not in err
    code, out, _ = run("parse", "--json", str(path))
    assert code == 1
    error = json.loads(out)["errors"][0]
    assert error["code"] == expected_code
    assert error["file"] == str(path)
    assert error["line"] is None or error["line"] >= 1  # never the old 0
    if before is not None:
        assert path.read_bytes() == before


def test_bad_input_messages_say_where_and_how(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# ok\nline two \xff\n")
    _, _, err = run("parse", str(bad))
    assert err == (
        f"teddy: {bad}:2: not UTF-8 text (byte 0xff at offset 14); save the file as UTF-8\n"
    )


def test_real_command_exit_codes(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    ok = subprocess.run([TEDDY, "parse", EXAMPLE], capture_output=True, text=True, env=env)
    assert ok.returncode == 0 and ok.stdout.startswith("Research and Propose")
    bad = subprocess.run([TEDDY, "parse", tmp_path / "none.md"], capture_output=True, text=True)
    assert bad.returncode == 1
    assert bad.stderr == f"teddy: {tmp_path / 'none.md'}: no such file; check the path\n"
    usage = subprocess.run([TEDDY, "parse"], capture_output=True, text=True)
    assert usage.returncode == 2
    assert "Missing argument 'PLAN'" in usage.stderr
    unknown = subprocess.run([TEDDY, "parse", "--nope", EXAMPLE], capture_output=True, text=True)
    assert unknown.returncode == 2


def test_interrupt_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import plankit.teddy.format.parse as parse_module

    def interrupted(text: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(parse_module, "check_plan", interrupted)
    with pytest.raises(SystemExit) as info:
        teddy_cli.main(["parse", str(EXAMPLE)])
    assert info.value.code == 130
    assert capsys.readouterr().err.strip() == "teddy: interrupted"
