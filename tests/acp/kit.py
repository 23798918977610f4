"""Test helpers for ACP: the v1 schema check, a recording SDK client, connections.

:class:`SchemaCheck` validates JSON-RPC messages against the official v1 schema
(``tests/data/acp/schema/v1/schema.json``): a request's or notification's ``params``
against the definition whose ``x-method`` is its method, a response's ``result``
against the response definition of the request it answers.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from plankit.acp.host import TerminalMethods

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "tests" / "data" / "acp" / "schema" / "v1" / "schema.json"
TEDDY = [
    sys.executable,
    "-c",
    "import sys; from plankit.teddy.cli import main; sys.argv[0] = 'teddy'; main()",
]
"""How to spawn ``teddy`` from the test interpreter."""
PLANKIT = [
    sys.executable,
    "-c",
    "import sys; from plankit.cli import main; sys.argv[0] = 'plankit'; main()",
]


class SchemaCheck:
    """Validates messages against the v1 schema; collects the problems."""

    def __init__(self, path: Path = SCHEMA) -> None:
        from jsonschema import Draft202012Validator

        schema = json.loads(path.read_text(encoding="utf-8"))
        defs = schema["$defs"]
        self.params: dict[str, str] = {}
        self.results: dict[str, str] = {}
        for name, body in defs.items():
            method = body.get("x-method")
            if method is None:
                continue
            if name.endswith("Response"):
                self.results[method] = name
            else:
                self.params[method] = name
        self._defs = defs
        self._validators: dict[str, Any] = {}
        self._cls = Draft202012Validator
        self.problems: list[str] = []
        self.checked = 0

    def validator(self, name: str) -> Any:
        if name not in self._validators:
            self._validators[name] = self._cls({"$ref": f"#/$defs/{name}", "$defs": self._defs})
        return self._validators[name]

    def errors(self, name: str, value: Any) -> list[str]:
        """Schema errors of ``value`` as definition ``name`` (empty when valid)."""
        return [
            f"{name}: {e.message} at {list(e.absolute_path)}"
            for e in self.validator(name).iter_errors(value)
        ]

    def check(self, message: dict[str, Any], method_of_response: str | None = None) -> None:
        """Check one message (``method_of_response``: the method a response answers)."""
        self.checked += 1
        if message.get("jsonrpc") != "2.0":
            self.problems.append(f"not JSON-RPC 2.0: {message}")
        method = message.get("method")
        if method is not None:
            name = self.params.get(method)
            if name is None:
                if not method.startswith("_"):
                    self.problems.append(f"unknown method {method}")
                return
            self.problems += self.errors(name, message.get("params"))
        elif "result" in message and method_of_response is not None:
            name = self.results.get(method_of_response)
            if name is not None:
                self.problems += self.errors(name, message["result"])
        elif "error" in message:
            self.problems += self.errors("Error", message["error"])


class Transcript:
    """An SDK connection observer: records and validates every message both ways."""

    def __init__(self, check: SchemaCheck) -> None:
        self.check = check
        self.messages: list[tuple[str, dict[str, Any]]] = []
        self._asked: dict[str, dict[Any, str]] = {"incoming": {}, "outgoing": {}}

    def __call__(self, event: Any) -> None:
        direction = event.direction.value
        message = event.message
        self.messages.append((direction, message))
        if "method" in message and "id" in message:
            self._asked[direction][message["id"]] = message["method"]
            self.check.check(message)
        elif "method" in message:
            self.check.check(message)
        else:  # a response to a request that went the other way
            other = "outgoing" if direction == "incoming" else "incoming"
            self.check.check(message, self._asked[other].get(message.get("id")))

    def methods(self, direction: str = "incoming") -> list[str]:
        """The methods of the requests/notifications that went ``direction``."""
        return [m["method"] for d, m in self.messages if d == direction and "method" in m]


def update_json(update: Any) -> dict[str, Any]:
    """An SDK update model as its wire JSON."""
    data: dict[str, Any] = update.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


class RecordingClient(TerminalMethods):
    """An SDK client that records updates and answers permissions from a script.

    ``answers``: option ids in order (``"cancelled"`` answers the cancelled outcome);
    when it runs out, ``default`` is used.  ``on_permission`` is awaited before
    answering (a test can cancel the turn there).  It offers ``fs`` (reads and writes
    in ``root``) unless ``fs=False``; terminals through plankit's host when
    ``terminal=True``.
    """

    def __init__(
        self,
        root: Path,
        answers: list[str] | None = None,
        *,
        default: str = "allow-once",
        fs: bool = True,
        terminal: bool = False,
        on_permission: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        from plankit.acp.host import Terminals

        self.root = root
        self.answers = list(answers or [])
        self.default = default
        self.fs = fs
        self.terminal = terminal
        self.on_permission = on_permission
        self.updates: list[dict[str, Any]] = []
        self.permissions: list[dict[str, Any]] = []
        self.reads: list[str] = []
        self.writes: list[str] = []
        self.terminals = Terminals(root)
        self.update_seen = asyncio.Event()

    def capabilities(self) -> Any:
        from acp.schema import ClientCapabilities, FileSystemCapabilities

        return ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=self.fs, write_text_file=self.fs),
            terminal=self.terminal,
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update_json(update))
        self.update_seen.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        asked = {"toolCall": update_json(tool_call), "options": [update_json(o) for o in options]}
        self.permissions.append(asked)
        if self.on_permission is not None:
            result = self.on_permission(asked)
            if asyncio.iscoroutine(result):
                await result
        answer = self.answers.pop(0) if self.answers else self.default
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> Any:
        from acp.schema import ReadTextFileResponse

        self.reads.append(path)
        return ReadTextFileResponse(content=Path(path).read_text(encoding="utf-8"))

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> Any:
        from acp.schema import WriteTextFileResponse

        self.writes.append(path)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(content, encoding="utf-8")
        return WriteTextFileResponse()

    # --- views of what arrived -------------------------------------------------------

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.updates if u["sessionUpdate"] == kind]

    def plans(self) -> list[list[tuple[str, str]]]:
        """Each plan update as [(content, status)]."""
        return [[(e["content"], e["status"]) for e in u["entries"]] for u in self.of_kind("plan")]

    def rich(self, plan_index: int = -1) -> list[str]:
        """The ``_meta.plankit.status`` of each entry of a plan update."""
        return [
            e["_meta"]["plankit"]["status"] for e in self.of_kind("plan")[plan_index]["entries"]
        ]

    def message(self) -> str:
        return "".join(u["content"]["text"] for u in self.of_kind("agent_message_chunk"))


@asynccontextmanager
async def in_process(
    agent: Any, client: Any, check: SchemaCheck
) -> AsyncIterator[tuple[Any, Transcript]]:
    """The agent and an SDK client connected over a socket pair in this process; the
    client-side connection and the transcript (validated as it goes)."""
    from acp.core import AgentSideConnection, ClientSideConnection

    left, right = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=left)
    client_reader, client_writer = await asyncio.open_connection(sock=right)
    transcript = Transcript(check)
    agent_conn = AgentSideConnection(agent, agent_writer, agent_reader, listening=True)
    client_conn = ClientSideConnection(client, client_writer, client_reader, observers=[transcript])
    try:
        yield client_conn, transcript
    finally:
        await client_conn.close()
        await agent_conn.close()
        for writer in (agent_writer, client_writer):
            writer.close()


@asynccontextmanager
async def subprocess_agent(
    client: Any,
    check: SchemaCheck,
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[tuple[Any, Transcript, Any]]:
    """``teddy acp`` (or ``args``) spawned over stdio with the SDK; conn, transcript, process."""
    import os

    from acp import spawn_agent_process

    transcript = Transcript(check)
    command = list(args) if args else [*TEDDY, "acp"]
    async with spawn_agent_process(
        client,
        command[0],
        *command[1:],
        env={**os.environ, **(env or {})},
        cwd=cwd,
        observers=[transcript],
        transport_kwargs={"stderr": None},
    ) as (conn, process):
        yield conn, transcript, process


async def settled(client: RecordingClient, transcript: Transcript) -> None:
    """Wait until the client has handled every ``session/update`` that has arrived.

    The SDK runs each notification's handler in a task of its own, so the answer to a
    prompt can be read before the handlers of the updates sent ahead of it have run.
    """
    from tests.waiting import until

    await until(
        lambda: len(client.updates) >= transcript.methods().count("session/update"),
        "the client to handle every update that arrived",
    )


async def start_session(conn: Any, client: RecordingClient, cwd: Path) -> str:
    """``initialize`` and ``session/new``; the session id."""
    await conn.initialize(protocol_version=1, client_capabilities=client.capabilities())
    session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
    return str(session.session_id)


def plan_text(*actions: str, title: str = "A plan") -> str:
    """A valid TeDDy plan with the given action blocks (Markdown, one string each)."""
    rationale = (
        "````text\n### 1. Synthesis\nA test.\n### 2. Justification\nTests.\n"
        "### 3. Expected Outcome\nIt works.\n### 4. State Dashboard\nok\n````"
    )
    body = "\n\n".join(actions)
    return (
        f"# {title}\n- Status: Green 🟢\n- Agent: Developer\n\n## Rationale\n{rationale}\n\n"
        f"## Action Plan\n\n{body}\n"
    )


def create(path: str, content: str, description: str = "Make it.") -> str:
    return (
        f"### `CREATE`\n- **File Path:** [{path}](/{path})\n- **Description:** {description}\n"
        f"````text\n{content}\n````"
    )


def execute(command: str, description: str = "Run it.") -> str:
    return (
        f"### `EXECUTE`\n- **Description:** {description}\n- **Expected Outcome:** it runs\n"
        f"````shell\n{command}\n````"
    )


def read(path: str) -> str:
    return f"### `READ`\n- **Resource:** [{path}](/{path})\n- **Description:** Look."


def edit(path: str, find: str, replace: str) -> str:
    return (
        f"### `EDIT`\n- **File Path:** [{path}](/{path})\n- **Description:** Change it.\n\n"
        f"#### `FIND:`\n````text\n{find}\n````\n#### `REPLACE:`\n````text\n{replace}\n````"
    )


def chat(message: str) -> str:
    return f"### `CHAT_WITH_USER`\n{message}"


def acpx_sockets(home: str) -> Path:
    """The folder acpx keeps its queue sockets in for ``home``: outside HOME, in /tmp,
    named by a hash of HOME (acpx 0.19's ``queueSocketBaseDir``), and left there."""
    return Path("/tmp") / f"acpx-{hashlib.sha256(home.encode()).hexdigest()[:10]}"
