"""Reading TeDDy's own files back (what the board shows): ``report.md`` as
``teddy execute`` writes it, ``meta.yaml`` and ``memos.yaml`` from text a caller read."""

from __future__ import annotations

from pathlib import Path

import pytest

from plankit.errors import InputError
from plankit.teddy.run.approval import Approval, Decision, ScriptedApprover, ScriptedChat
from plankit.teddy.run.execute import execute_turn
from plankit.teddy.run.report import read_report
from plankit.teddy.session.config import load_config
from plankit.teddy.session.layout import (
    SessionError,
    Turn,
    create_session,
    meta_from_data,
    meta_from_text,
    read_meta,
)
from plankit.teddy.session.memos import memos_from_text
from plankit.teddy.session.prompts import get_prompt
from tests.teddy.test_session_e2e import plan

# a file whose content looks like a report's structure: inside its fence, it is text
TRICKY = """### `EXECUTE`
- **Description:** Prints lines that look like a report's structure.
```shell
echo '## 3. Validation Errors'
echo '- not an error'
echo '### 9. `DELETE` everything'
echo '- **Execution:** Failure 🔴'
```"""


def _executed(root: Path, actions: str, approval: Approval | str) -> str:
    session = create_session(root, "report", get_prompt("Developer"), "Developer")
    turn: Turn = session.latest()
    turn.plan_path.write_text(plan(actions), encoding="utf-8")
    execute_turn(
        turn,
        approver=ScriptedApprover([approval]),
        chat=ScriptedChat([]),
        config=load_config(root),
    )
    return turn.report_path.read_text(encoding="utf-8")


def test_a_report_with_a_success_a_failure_and_a_rejected_action(tmp_path: Path) -> None:
    actions = "\n\n".join(
        [
            TRICKY,
            "### `EXECUTE`\n- **Description:** Fails.\n```shell\nexit 3\n```",
            "### `CREATE`\n- **File Path:** [b.txt](/b.txt)\n```\nb\n```",
        ]
    )
    approval = Approval(Decision.APPROVE, selected=frozenset({0, 1}))  # the last one rejected
    report = read_report(_executed(tmp_path, actions, approval))
    assert report.status == "Partial 🟡"
    assert [(a.number, a.type, a.outcome) for a in report.actions] == [
        (1, "EXECUTE", "success"),
        (2, "EXECUTE", "failure"),
        (3, "CREATE", "skipped"),
    ]
    assert report.actions[2].target == "b.txt"
    assert "### 9. `DELETE` everything" in report.actions[0].text  # quoted, not an action
    assert report.actions[2].reason and report.actions[1].reason is None
    assert report.validation_errors == ()


def test_a_validation_failed_report_gives_its_reasons(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("exists\n")
    actions = "### `CREATE`\n- **File Path:** [a.txt](/a.txt)\n```\nx\n```"
    report = read_report(_executed(tmp_path, actions, "approve"))
    assert report.status == "Validation Failed 🔴"
    assert report.actions == ()
    [reason] = report.validation_errors
    assert "a.txt" in reason and "exists" in reason


def test_a_report_without_a_status_line_or_sections() -> None:
    report = read_report("# Execution Report: x\n\nsome text\n### 1. `CREATE` a\n")
    assert report.status is None and report.actions == ()


def test_meta_and_memos_from_text_read_as_the_files_are() -> None:
    meta = meta_from_text(
        'turn_id: "02"\nparent_turn_id: "01"\ncaller_turn_id: null\nagent: "Developer"\n'
        'model: "scripted: x"\ninput_tokens: 12\n',
        "s/02/meta.yaml",
        "02",
    )
    assert (meta.parent_turn_id, meta.agent, meta.model, meta.input_tokens) == (
        "01",
        "Developer",
        "scripted: x",
        12,
    )
    assert meta_from_text("", "m", "07").turn_id == "07"
    with pytest.raises(SessionError, match="whole number"):
        meta_from_text("input_tokens: -1\n", "m", "01")
    with pytest.raises(InputError, match="invalid YAML"):
        meta_from_text("agent: [\n", "m", "01")
    assert memos_from_text('- "use: colons"\n- plain\n', "memos.yaml") == ["use: colons", "plain"]
    with pytest.raises(InputError, match="list of strings"):
        memos_from_text("a: b\n", "memos.yaml")


def test_read_meta_still_reads_the_file(tmp_path: Path) -> None:
    (tmp_path / "meta.yaml").write_text('turn_id: "03"\nagent: "Pathfinder"\n')
    assert read_meta(tmp_path / "meta.yaml", "x").agent == "Pathfinder"


def test_the_status_alone_is_read_from_the_header(tmp_path: Path) -> None:
    from plankit.teddy.run.report import read_status

    text = _executed(tmp_path, "### `EXECUTE`\n```shell\nexit 1\n```", "approve")
    assert read_status(text) == read_report(text).status == "Failed 🔴"
    assert (
        read_status("# Execution Report: x\n\n## 1. Rationale\n- **Overall Status:** no\n") is None
    )


# meta.yaml as teddy writes it (read without a YAML parser: True), and as people edit
# it (left to the parser: False). Where the quick reading answers, it is the parser's.
_METAS = [
    ('turn_id: "01"\nparent_turn_id: null\ncaller_turn_id: null\nagent: "Developer"\n', True),
    (
        'turn_id: "02"\nparent_turn_id: "01"\ncaller_turn_id: null\nagent: "Pathfinder"\n'
        'model: "anthropic/claude-sonnet-4"\ninput_tokens: 1530\noutput_tokens: 0\n',
        True,
    ),
    ('turn_id: "03"\nagent: "Dévelopeur 🟢"\nmodel: "a # not a comment: a colon"\n', True),
    ('turn_id: "04"\nagent: null\ninput_tokens: 0\n', True),
    ('turn_id: "05"\nmodel: "tab\tinside"\n', False),
    ('turn_id: "06"\nmodel: "say \\"hi\\""\n', False),  # an escape
    ('turn_id: "07"\ninput_tokens: 012\n', False),  # a leading zero
    ("turn_id: 08\n", False),  # unquoted
    ('turn_id: "09"  \n', False),  # trailing blanks
    ('turn_id: "10"\n\nagent: "x"\n', False),  # a blank line
    ('turn_id: "11"\n# a comment\n', False),
    ('turn_id: "12"', False),  # no final newline
    ('turn_id: "13"\nagent: "\u2028"\n', False),  # a line separator
    ("turn_id: '14'\n", False),  # single quotes
]


@pytest.mark.parametrize(("text", "answers"), _METAS)
def test_meta_read_without_a_parser_is_what_the_parser_reads(text: str, answers: bool) -> None:
    from plankit.teddy.session.layout import written_meta
    from plankit.teddy.session.yamlio import yaml_from_text

    quick = written_meta(text)
    assert (quick is not None) == answers
    if quick is not None:
        assert quick == dict(yaml_from_text(text, "meta.yaml", default={}))
    assert meta_from_text(text, "meta.yaml", "01") == meta_from_data(
        yaml_from_text(text, "meta.yaml", default={}), "meta.yaml", "01"
    )


def test_a_repeated_key_in_meta_is_refused_as_yaml_refuses_it() -> None:
    with pytest.raises(InputError, match="invalid YAML"):
        meta_from_text('turn_id: "10"\nturn_id: "11"\n', "meta.yaml", "01")


def test_what_teddy_writes_is_read_without_a_parser(tmp_path: Path) -> None:
    from plankit.teddy.session.layout import TurnMeta, write_meta, written_meta

    meta = TurnMeta("02", "01", None, "Developer", "anthropic/claude-sonnet-4", 1530, 12)
    write_meta(tmp_path / "meta.yaml", meta)
    text = (tmp_path / "meta.yaml").read_text(encoding="utf-8")
    assert written_meta(text) is not None
    assert read_meta(tmp_path / "meta.yaml", "x") == meta
