"""The agent table: defaults, .agentflow.toml, --agent and --planner, and the one-line
errors of a bad project file or option."""

from __future__ import annotations

from pathlib import Path

import pytest

from plankit.errors import InputError
from plankit.orchestrate.agents import agent_table


def test_defaults_are_teddy_acp_for_both_roles(tmp_path: Path) -> None:
    table = agent_table(str(tmp_path))
    assert table.command("planner") == ["teddy", "acp"]
    assert table.command(None) == ["teddy", "acp"]
    assert table.command("codex") is None


def test_the_project_file_then_the_options(tmp_path: Path) -> None:
    (tmp_path / ".agentflow.toml").write_text(
        '[agents]\nplanner = "npx @zed-industries/claude-code-acp"\n'
        "codex = \"codex-acp --flag 'two words'\"\n"
        '[run]\nworkers = 3\ntimeout = "45m"\n'
    )
    table = agent_table(str(tmp_path), ["default=gemini --experimental-acp"], None)
    assert table.command("planner") == ["npx", "@zed-industries/claude-code-acp"]
    assert table.command("codex") == ["codex-acp", "--flag", "two words"]
    assert table.command(None) == ["gemini", "--experimental-acp"]
    assert (table.workers, table.timeout) == (3, 2700.0)
    assert agent_table(str(tmp_path), [], "teddy acp -v").command("planner") == [
        "teddy", "acp", "-v",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[agents\n", "not valid TOML"),
        ("[agent]\ndefault = 'x'\n", "unknown section [agent]"),
        ("[agents]\ndefault = 3\n", "agents.default must be a command line in quotes"),
        ("[agents]\ndefault = ''\n", "the command is empty"),
        ('[agents]\ndefault = "a \'b"\n', "cannot split"),
        ("[run]\nworkers = 0\n", "run.workers must be a whole number from 1 to 64"),
        ("[run]\ntimeout = 'soon'\n", "expected a duration"),
    ],
)
def test_a_bad_project_file_is_one_line_naming_it(tmp_path: Path, text: str, says: str) -> None:
    (tmp_path / ".agentflow.toml").write_text(text)
    with pytest.raises(InputError) as caught:
        agent_table(str(tmp_path))
    message = str(caught.value)
    assert says in message and ".agentflow.toml" in message and "\n" not in message


def test_an_agent_option_without_a_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="expected NAME=CMD"):
        agent_table(str(tmp_path), ["teddy acp"])
