"""The agent table of a run: which ACP command serves which role.

A run knows its agents from three places, the later overriding the earlier:

1. the defaults: ``teddy acp`` for the planner and for ``default`` (the tasks that name
   no agent);
2. the project file ``.agentflow.toml`` in the project directory::

       [agents]
       planner = "teddy acp --model gpt-4o-mini"
       default = "teddy acp"
       claude-code = "npx @zed-industries/claude-code-acp"

       [run]
       workers = 2          # tasks run at once (--workers)
       timeout = "30m"      # longest turn of one agent (--timeout)

3. the options: ``--planner CMD`` and ``--agent NAME=CMD`` (repeatable).

A command line is split as a POSIX shell would split it (quotes, no expansion).  A task
whose ``agent:`` names an agent the table lacks fails, saying so.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from plankit.errors import InputError

PROJECT_FILE = ".agentflow.toml"
"""The project file with the agent table, in the project directory."""
DEFAULT_COMMAND = "teddy acp"
"""The agent for every role unless told otherwise."""
PLANNER = "planner"
"""The table's name for the planning agent."""
DEFAULT = "default"
"""The table's name for the agent of tasks that name none."""


@dataclass(frozen=True, slots=True)
class AgentTable:
    """Agent names → command lines (already split)."""

    commands: dict[str, list[str]] = field(default_factory=dict)
    """Every agent known, ``planner`` and ``default`` included."""
    workers: int | None = None
    """``[run] workers`` of the project file, if given."""
    timeout: float | None = None
    """``[run] timeout`` of the project file in seconds, if given."""

    def command(self, name: str | None) -> list[str] | None:
        """The command of the agent ``name`` (None: the default agent), or None."""
        return self.commands.get(name or DEFAULT)

    def names(self) -> list[str]:
        """The agents that serve tasks (the planner left out)."""
        return sorted(name for name in self.commands if name != PLANNER)


def split_command(text: str, where: str) -> list[str]:
    """``text`` split like a shell would; a one-line error naming ``where`` otherwise."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise InputError(f"{where}: cannot split {text!r} into a command line ({exc})") from None
    if not argv:
        raise InputError(f"{where}: the command is empty; give the agent's command line")
    return argv


def parse_agent_option(text: str) -> tuple[str, list[str]]:
    """``NAME=CMD`` → (name, argv)."""
    name, sep, command = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise InputError(
            f"--agent {text!r}: expected NAME=CMD, for example --agent default='teddy acp'",
            code="usage",
        )
    return name, split_command(command, f"--agent {name}")


def _duration(value: object, where: str) -> float:
    from plankit.agentflow.clihelp import Duration

    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    if isinstance(value, str):
        try:
            return float(Duration().convert(value, None, None))
        except Exception:
            pass
    raise InputError(f"{where}: expected a duration such as 90s, 30m or 2h, found {value!r}")


def read_project_file(project: str) -> Mapping[str, object]:
    """The parsed ``.agentflow.toml`` of ``project`` ({} when there is none)."""
    import tomllib

    path = os.path.join(project, PROJECT_FILE)
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML ({exc}); fix the file", path=path) from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})", path=path) from None


def agent_table(project: str, agents: Iterable[str] = (), planner: str | None = None) -> AgentTable:
    """The table for a run in ``project`` with the options given."""
    path = os.path.join(project, PROJECT_FILE)
    data = read_project_file(project)
    unknown = sorted(set(data) - {"agents", "run"})
    if unknown:
        raise InputError(f"{path}: unknown section [{unknown[0]}]; expected [agents] or [run]")
    commands = {PLANNER: split_command(DEFAULT_COMMAND, "default")}
    commands[DEFAULT] = list(commands[PLANNER])
    table = data.get("agents", {})
    if not isinstance(table, dict):
        raise InputError(f'{path}: [agents] must be a table of NAME = "command line"')
    for name, value in table.items():
        if not isinstance(value, str):
            raise InputError(f"{path}: agents.{name} must be a command line in quotes")
        commands[name] = split_command(value, f"{path}: agents.{name}")
    run = data.get("run", {})
    if not isinstance(run, dict):
        raise InputError(f"{path}: [run] must be a table (workers, timeout)")
    workers = run.get("workers")
    if workers is not None and (not isinstance(workers, int) or not 1 <= workers <= 64):
        raise InputError(f"{path}: run.workers must be a whole number from 1 to 64")
    timeout = _duration(run["timeout"], f"{path}: run.timeout") if "timeout" in run else None
    for option in agents:
        name, argv = parse_agent_option(option)
        commands[name] = argv
    if planner is not None:
        commands[PLANNER] = split_command(planner, "--planner")
    return AgentTable(commands, workers, timeout)
