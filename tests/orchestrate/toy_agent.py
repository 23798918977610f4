"""A small ACP agent for the run tests, written with the SDK.

    python -m tests.orchestrate.toy_agent [--plan FILE] [--mode MODE] [--log FILE]

As the planner (``--plan FILE``, a JSON plan ``{"title", "narrative", "tasks": [{"id",
"depends_on", "agent", "body"}]}``): it reads ``CURRENT_PLAN_DIR`` from its prompt,
writes the plan there and runs ``agentctl plan commit`` in the client's terminal.
``--mode bad-plan`` writes a task without a body first and fixes it when prompted again;
``--mode never`` never fixes it.

As a task's agent it reads its task id from the prompt (``# Your task: ID``) and, by
mode: ``write`` (default) writes ``ID.txt`` through the client's fs (with the prompt's
list of dependencies in it) and runs ``ls`` in a terminal; ``shared`` writes
``shared.txt`` (two such tasks conflict); ``refuse`` ends with ``refusal``; ``crash``
exits mid-turn; ``hang`` waits to be cancelled (touching ``started-ID`` in the
directory named by ``--log`` first); ``outside`` asks to write outside its worktree.
A task body may override the mode with a line ``mode: MODE``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ToolCallUpdate,
)

import acp


def _plan_files(plan: dict[str, Any], broken: bool) -> dict[str, str]:
    files = {"plan.md": f'---\ntitle: "{plan["title"]}"\n---\n\n{plan["narrative"]}\n'}
    for n, task in enumerate(plan["tasks"], 1):
        head = [f"id: {task['id']}", f"depends_on: [{', '.join(task.get('depends_on', []))}]"]
        if task.get("agent"):
            head.append(f"agent: {task['agent']}")
        body = "" if broken and n == 1 else task["body"]
        files[f"tasks/{n:02d}-{task['id']}.md"] = "---\n" + "\n".join(head) + f"\n---\n\n{body}\n"
    return files


class Toy:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.turns = 0

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=1, agent_capabilities=AgentCapabilities())

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self.cwd = cwd
        servers = kwargs.get("mcp_servers") or []
        self.mcp = [getattr(s, "name", "") for s in servers]
        return NewSessionResponse(session_id="toy-1")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.cancelled.set()

    async def say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id, acp.update_agent_message_text(text))

    async def run(self, session_id: str, *argv: str) -> int:
        term = await self.conn.create_terminal(
            session_id=session_id, command=argv[0], args=list(argv[1:]), cwd=self.cwd
        )
        await self.conn.session_update(
            session_id,
            acp.start_tool_call(
                "t" + term.terminal_id[:6], f"run {' '.join(argv)}", kind="execute",
                status="in_progress",
                content=[acp.schema.TerminalToolCallContent(type="terminal",
                                                            terminal_id=term.terminal_id)],
            ),
        )  # fmt: skip
        done = await self.conn.wait_for_terminal_exit(
            session_id=session_id, terminal_id=term.terminal_id
        )
        out = await self.conn.terminal_output(session_id=session_id, terminal_id=term.terminal_id)
        await self.conn.release_terminal(session_id=session_id, terminal_id=term.terminal_id)
        status = "completed" if done.exit_code == 0 else "failed"
        await self.conn.session_update(
            session_id, acp.update_tool_call("t" + term.terminal_id[:6], status=status)
        )
        self.output = out.output
        return int(done.exit_code if done.exit_code is not None else -1)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        self.cancelled = asyncio.Event()
        self.turns += 1
        text = "".join(getattr(block, "text", "") for block in prompt)
        if self.args.plan:
            return await self.planner(session_id, text)
        return await self.worker(session_id, text)

    async def planner(self, session_id: str, text: str) -> PromptResponse:
        plan = json.loads(Path(self.args.plan).read_text())
        if self.turns == 1:
            found = re.search(r"^CURRENT_PLAN_DIR: (.+)$", text, re.M)
            assert found, "no CURRENT_PLAN_DIR in the prompt"
            self.plan_dir = Path(found.group(1).strip())
            if self.args.log:
                Path(self.args.log).write_text(
                    json.dumps({"prompt": text, "mcp": self.mcp, "cwd": self.cwd,
                                "env": os.environ.get("AGENTFLOW_SESSION_ID")})
                )  # fmt: skip
        broken = self.args.mode == "never" or (self.args.mode == "bad-plan" and self.turns == 1)
        for name, content in _plan_files(plan, broken).items():
            path = self.plan_dir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
        await self.conn.session_update(
            session_id,
            acp.update_plan([acp.plan_entry("Write the plan", status="completed")]),
        )
        code = await self.run(session_id, "agentctl", "plan", "commit")
        await self.say(session_id, f"commit exited {code}: {self.output.strip()[:200]}")
        return PromptResponse(stop_reason="end_turn")

    async def worker(self, session_id: str, text: str) -> PromptResponse:
        found = re.search(r"^# Your task: (\S+)", text, re.M)
        task = found.group(1) if found else "unknown"
        override = re.search(r"^mode: (\S+)$", text, re.M)
        mode = override.group(1) if override else self.args.mode
        await self.conn.session_update(
            session_id,
            acp.update_plan([acp.plan_entry(f"Do {task}", status="in_progress")]),
        )
        if mode == "refuse":
            await self.say(session_id, "I will not do that.")
            return PromptResponse(stop_reason="refusal")
        if mode == "crash":
            os._exit(3)
        if mode == "hang":
            if self.args.log:
                # written whole, then named: a reader never sees the file empty
                mark = Path(self.args.log, f"started-{task}")
                mark.with_name(mark.name + ".part").write_text(str(os.getpid()))
                mark.with_name(mark.name + ".part").replace(mark)
            await self.cancelled.wait()
            return PromptResponse(stop_reason="cancelled")
        if mode == "outside":
            answer = await self.conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(
                    tool_call_id="w1", title="Write /tmp/elsewhere.txt",
                    locations=[acp.schema.ToolCallLocation(path="/tmp/elsewhere.txt")],
                ),
                options=[
                    PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
                ],
            )  # fmt: skip
            chosen = getattr(answer.outcome, "option_id", "cancelled")
            await self.say(session_id, f"permission: {chosen}")
            return PromptResponse(stop_reason="end_turn")
        name = "shared.txt" if mode == "shared" else f"{task}.txt"
        deps = sorted(re.findall(r"^- ([a-z0-9-]+): merged as", text, re.M))
        seen = sorted(p.name for p in Path(self.cwd).glob("*.txt"))
        await self.conn.session_update(
            session_id, acp.start_tool_call("w1", f"Write {name}", kind="edit", status="pending")
        )
        await self.conn.write_text_file(
            session_id=session_id,
            path=f"{self.cwd}/{name}",
            content=f"task {task}\ndeps {' '.join(deps)}\nseen {' '.join(seen)}\n",
        )
        await self.conn.session_update(session_id, acp.update_tool_call("w1", status="completed"))
        await self.run(session_id, "ls")
        await self.conn.session_update(
            session_id, acp.update_plan([acp.plan_entry(f"Do {task}", status="completed")])
        )
        await self.say(session_id, f"wrote {name} for {task}")
        return PromptResponse(stop_reason="end_turn")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plan")
    parser.add_argument("--mode", default="write")
    parser.add_argument("--log")
    args = parser.parse_args()
    asyncio.run(acp.run_agent(Toy(args)))


if __name__ == "__main__":
    sys.exit(main())
