"""``teddy acp`` driven by the SDK's own client, in-process over a socket pair.

Every message both ways is validated against the official v1 schema (the ``check``
fixture fails the test on any problem).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from plankit.acp.agent import NO_PLAN, TeddyAgent
from tests.acp.kit import (
    RecordingClient,
    SchemaCheck,
    chat,
    create,
    edit,
    execute,
    in_process,
    plan_text,
    read,
    settled,
    start_session,
)
from tests.waiting import DEADLINE, record_group, until, wait_for_group_end


def run_turns(
    project: Path,
    check: SchemaCheck,
    client: RecordingClient,
    *prompts: str,
    agent: TeddyAgent | None = None,
) -> tuple[list[str], str, Any]:
    """Start a session and send each prompt; the stop reasons, the session id, the
    transcript."""

    async def main() -> tuple[list[str], str, Any]:
        async with in_process(agent or TeddyAgent(), client, check) as (conn, transcript):
            session_id = await start_session(conn, client, project)
            stops = []
            for text in prompts:
                response = await conn.prompt(
                    session_id=session_id, prompt=[{"type": "text", "text": text}]
                )
                stops.append(response.stop_reason)
            # the command list is sent after session/new's answer, so it may come late
            await until(lambda: client.of_kind("available_commands_update"), "the commands")
            await settled(client, transcript)
            return stops, session_id, transcript

    return asyncio.run(main())


def report(project: Path, session_id: str, turn: str = "01") -> str:
    return (project / ".teddy" / session_id / turn / "report.md").read_text(encoding="utf-8")


def test_initialize_and_new_session(project: Path, check: SchemaCheck) -> None:
    client = RecordingClient(project)

    async def main() -> tuple[Any, str]:
        async with in_process(TeddyAgent(), client, check) as (conn, _):
            init = await conn.initialize(protocol_version=1)
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            await asyncio.wait_for(client.update_seen.wait(), DEADLINE)
            return init, session.session_id

    init, session_id = asyncio.run(main())
    assert init.protocol_version == 1
    assert init.agent_info.name == "teddy"
    assert init.agent_capabilities.load_session is True
    assert init.agent_capabilities.session_capabilities.list is not None
    assert session_id.split("-", 1)[1].startswith("acp-")
    assert not (project / ".teddy").exists()  # the first prompt creates the session
    commands = client.of_kind("available_commands_update")[0]["availableCommands"]
    assert [c["name"] for c in commands] == ["execute", "parse", "context", "report"]


def test_new_session_refuses_a_relative_cwd(project: Path, check: SchemaCheck) -> None:
    from acp import RequestError

    async def main() -> None:
        async with in_process(TeddyAgent(), RecordingClient(project), check) as (conn, _):
            await conn.initialize(protocol_version=1)
            await conn.new_session(cwd="relative/dir", mcp_servers=[])

    with pytest.raises(RequestError) as info:
        asyncio.run(main())
    assert "not an existing absolute directory" in str(info.value.data)


def test_approved_turn_sends_plan_tool_calls_permissions_and_results(
    project: Path, check: SchemaCheck
) -> None:
    client = RecordingClient(project)
    plan = plan_text(create("hello.txt", "hi"), execute("cat hello.txt"))
    stops, session_id, transcript = run_turns(project, check, client, plan)
    assert stops == ["end_turn"]
    assert (project / "hello.txt").read_text() == "hi\n"
    # the plan: all pending first, then each entry in progress and completed, in place
    plans = client.plans()
    assert plans[0] == [
        ("CREATE hello.txt: Make it.", "pending"),
        ("EXECUTE cat hello.txt: Run it.", "pending"),
    ]
    assert plans[-1] == [
        ("CREATE hello.txt: Make it.", "completed"),
        ("EXECUTE cat hello.txt: Run it.", "completed"),
    ]
    assert ["awaiting_permission", "pending"] in [
        [e["_meta"]["plankit"]["status"] for e in u["entries"]] for u in client.of_kind("plan")
    ]
    # tool calls: edit with a diff for CREATE, execute for EXECUTE
    calls = client.of_kind("tool_call")
    assert [(c["kind"], c["title"]) for c in calls] == [
        ("edit", "CREATE hello.txt"),
        ("execute", "EXECUTE cat hello.txt"),
    ]
    diff = calls[0]["content"][0]
    assert diff == {
        "type": "diff",
        "path": str(project / "hello.txt"),
        "oldText": None,
        "newText": "hi\n",
    } or (diff["type"] == "diff" and diff["newText"] == "hi\n" and "oldText" not in diff)
    finals = [u for u in client.of_kind("tool_call_update") if u.get("status") == "completed"]
    assert len(finals) == 2
    assert "hi" in finals[1]["content"][0]["content"]["text"]  # the command's output
    # one permission request per action, with the four options
    assert [p["toolCall"]["toolCallId"] for p in client.permissions] == ["turn-01-1", "turn-01-2"]
    assert [o["kind"] for o in client.permissions[0]["options"]] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    # the write went through the client's fs/write_text_file
    assert client.writes == [str(project / "hello.txt")]
    assert "Completed" in client.message()
    assert "Completed 🟢" in report(project, session_id)
    assert (project / ".teddy" / session_id / "02").is_dir()  # the next turn is ready
    methods = transcript.methods("incoming")
    assert methods.count("session/request_permission") == 2
    assert "fs/write_text_file" in methods


def test_rejected_action_is_skipped_and_the_rest_runs(project: Path, check: SchemaCheck) -> None:
    client = RecordingClient(project, ["reject-once", "allow-once"])
    plan = plan_text(create("no.txt", "no"), create("yes.txt", "yes"))
    stops, session_id, _ = run_turns(project, check, client, plan)
    assert stops == ["end_turn"]
    assert not (project / "no.txt").exists()
    assert (project / "yes.txt").exists()
    assert client.rich() == ["rejected", "completed"]
    # content stays as it was; the rejected entry did not run, so it is not completed
    assert client.plans()[-1][0] == ("CREATE no.txt: Make it.", "pending")
    assert client.of_kind("plan")[-1]["entries"][0]["_meta"]["plankit"]["reason"] == (
        "rejected by the user"
    )
    assert {e[0] for plan in client.plans() for e in plan[:1]} == {"CREATE no.txt: Make it."}
    failed = [u for u in client.of_kind("tool_call_update") if u.get("status") == "failed"]
    assert failed[0]["toolCallId"] == "turn-01-1"
    text = report(project, session_id)
    assert "Skipped 🟡 (rejected by the user)" in text
    assert "Partial" in text


def test_reject_everything(project: Path, check: SchemaCheck) -> None:
    client = RecordingClient(project, default="reject-once")
    stops, session_id, _ = run_turns(
        project, check, client, plan_text(create("a.txt", "a"), execute("touch ran"))
    )
    assert stops == ["end_turn"]
    assert not (project / "a.txt").exists()
    assert not (project / "ran").exists()
    assert client.rich() == ["rejected", "rejected"]
    assert "Skipped ⚪" in report(project, session_id)
    assert "2 rejected" in client.message()


def test_allow_always_is_remembered_per_action_type_for_the_session(
    project: Path, check: SchemaCheck
) -> None:
    client = RecordingClient(project, ["allow-always", "reject-always", "allow-once"])
    first = plan_text(create("a.txt", "a"), create("b.txt", "b"), execute("touch one"))
    second = plan_text(create("c.txt", "c"), execute("touch two"), read("a.txt"))
    stops, _, _ = run_turns(project, check, client, first, second)
    assert stops == ["end_turn", "end_turn"]
    # asked: CREATE (always allow), EXECUTE (always reject), READ (once); nothing else
    assert [p["toolCall"]["title"] for p in client.permissions] == [
        "CREATE a.txt",
        "EXECUTE touch one",
        "READ a.txt",
    ]
    assert all((project / f).exists() for f in ("a.txt", "b.txt", "c.txt"))
    assert not (project / "one").exists()
    assert not (project / "two").exists()
    assert client.rich() == ["completed", "rejected", "completed"]
    note = client.of_kind("plan")[-1]["entries"][1]["_meta"]["plankit"]["note"]
    assert "always reject EXECUTE" in note


def test_cancel_mid_execute_stops_the_command_and_the_report_records_it(
    project: Path, check: SchemaCheck
) -> None:
    client = RecordingClient(project)
    group = project / "group"
    plan = plan_text(
        create("first.txt", "ran"),
        execute(
            f"{record_group(group)}; echo started > started.txt; sleep 30; echo late > late.txt"
        ),
        create("never.txt", "no"),
    )

    async def main() -> tuple[str, str]:
        async with in_process(TeddyAgent(), client, check) as (conn, transcript):
            session_id = await start_session(conn, client, project)
            prompt = asyncio.ensure_future(
                conn.prompt(session_id=session_id, prompt=[{"type": "text", "text": plan}])
            )
            await until((project / "started.txt").exists, "the command to start")
            await conn.cancel(session_id=session_id)
            response = await asyncio.wait_for(prompt, DEADLINE)
            await settled(client, transcript)
            return response.stop_reason, session_id

    stop, session_id = asyncio.run(main())
    assert stop == "cancelled"
    assert (project / "first.txt").exists()
    wait_for_group_end(group)  # the command was stopped, not waited for:
    assert not (project / "late.txt").exists()  # it never got past its sleep
    assert not (project / "never.txt").exists()
    assert client.rich() == ["completed", "cancelled", "cancelled"]
    text = report(project, session_id)
    assert "Partial" in text
    assert "### 1. `CREATE` first.txt" in text and "Success 🟢" in text
    assert "interrupted" in text


def test_cancel_while_asking_permission(project: Path, check: SchemaCheck) -> None:
    holder: dict[str, Any] = {}

    async def cancel_now(asked: dict[str, Any]) -> None:
        await holder["conn"].cancel(session_id=holder["session"])

    client = RecordingClient(project, ["cancelled"], on_permission=cancel_now)

    async def main() -> str:
        async with in_process(TeddyAgent(), client, check) as (conn, _):
            holder["conn"] = conn
            holder["session"] = await start_session(conn, client, project)
            response = await conn.prompt(
                session_id=holder["session"],
                prompt=[
                    {"type": "text", "text": plan_text(create("a.txt", "a"), execute("touch b"))}
                ],
            )
            return str(response.stop_reason)

    assert asyncio.run(main()) == "cancelled"
    assert not (project / "a.txt").exists()
    assert not (project / "b").exists()
    assert client.rich() == ["cancelled", "cancelled"]
    assert len(client.permissions) == 1


def test_chat_with_user_becomes_a_message_and_ends_the_turn(
    project: Path, check: SchemaCheck
) -> None:
    client = RecordingClient(project)
    plan = plan_text(create("a.txt", "a"), chat("Shall I go on with **b**?"), create("b.txt", "b"))
    stops, _, _ = run_turns(project, check, client, plan)
    assert stops == ["end_turn"]
    assert "Shall I go on with **b**?" in client.message()
    assert (project / "a.txt").exists()
    assert not (project / "b.txt").exists()
    assert client.rich() == ["completed", "completed", "skipped"]
    assert [p["toolCall"]["title"] for p in client.permissions] == ["CREATE a.txt"]


def test_edit_goes_through_the_client_and_shows_a_diff(project: Path, check: SchemaCheck) -> None:
    client = RecordingClient(project)
    stops, _, _ = run_turns(
        project,
        check,
        client,
        plan_text(read("app.py")),
        plan_text(edit("app.py", "x = 1", "x = 2")),
    )
    assert stops == ["end_turn", "end_turn"]
    assert (project / "app.py").read_text() == "x = 2\n"
    diff = client.of_kind("tool_call")[-1]["content"][0]
    assert diff["type"] == "diff"
    assert (diff["oldText"], diff["newText"]) == ("x = 1\n", "x = 2\n")
    assert client.reads.count(str(project / "app.py")) >= 1  # fs/read_text_file
    assert client.writes == [str(project / "app.py")]


def test_without_fs_capability_files_are_local(project: Path, check: SchemaCheck) -> None:
    client = RecordingClient(project, fs=False)
    run_turns(project, check, client, plan_text(create("local.txt", "here")))
    assert (project / "local.txt").read_text() == "here\n"
    assert client.writes == []


def test_execute_in_the_clients_terminal(project: Path, check: SchemaCheck) -> None:
    client = RecordingClient(project, terminal=True)
    stops, session_id, transcript = run_turns(
        project, check, client, plan_text(execute("echo from-terminal; exit 3"))
    )
    assert stops == ["end_turn"]
    assert "terminal/create" in transcript.methods("incoming")
    assert "terminal/release" in transcript.methods("incoming")
    final = client.of_kind("tool_call_update")[-1]
    assert final["status"] == "failed"
    assert final["content"][0] == {
        "type": "terminal",
        "terminalId": final["content"][0]["terminalId"],
    }
    text = report(project, session_id)
    assert "from-terminal" in text and "Exit code:** 3" in text


def test_invalid_plan_is_reported_not_run(project: Path, check: SchemaCheck) -> None:
    client = RecordingClient(project)
    stops, session_id, _ = run_turns(
        project, check, client, plan_text(edit("missing.py", "a", "b"), create("x.txt", "x"))
    )
    assert stops == ["end_turn"]
    assert "Validation Failed" in client.message()
    assert "missing.py" in client.message()
    assert not (project / "x.txt").exists()
    assert client.permissions == []
    assert client.rich() == ["skipped", "skipped"]
    assert "Validation Failed" in report(project, session_id)


def test_a_prompt_without_a_plan_gets_an_explanation(project: Path, check: SchemaCheck) -> None:
    client = RecordingClient(project)
    stops, session_id, _ = run_turns(project, check, client, "please add a health endpoint")
    assert stops == ["end_turn"]
    assert client.message() == NO_PLAN
    assert not (project / ".teddy" / session_id / "01" / "plan.md").exists()


def test_a_prompt_naming_a_plan_file_runs_it(project: Path, check: SchemaCheck) -> None:
    (project / "plans").mkdir()
    (project / "plans" / "next.md").write_text(plan_text(create("named.txt", "n")))
    client = RecordingClient(project)
    run_turns(project, check, client, "run plans/next.md please", "/execute plans/next.md")
    assert (project / "named.txt").exists()
    assert "already exists" in client.message()  # the second run: CREATE refused


def test_a_planner_writes_the_plan(project: Path, check: SchemaCheck) -> None:
    asked: list[tuple[str, str]] = []

    def planner(text: str, turn: Any) -> str:
        asked.append((text, turn.name))
        return plan_text(create("planned.txt", text))

    client = RecordingClient(project)
    run_turns(project, check, client, "from a model", agent=TeddyAgent(planner))
    assert asked == [("from a model", "01")]
    assert (project / "planned.txt").read_text() == "from a model\n"


def test_slash_commands(project: Path, check: SchemaCheck) -> None:
    (project / "p.md").write_text(plan_text(create("p.txt", "p"), execute("true")))
    client = RecordingClient(project)
    run_turns(
        project, check, client, "/parse p.md", "/context", "/report", "/execute p.md", "/report"
    )
    text = client.message()
    assert "A plan: 2 actions; the plan is valid." in text
    assert "input.md" in text
    assert "No turn of this session has been executed yet." in text
    assert "# Execution Report: A plan" in text
    assert client.plans()[0] == [
        ("CREATE p.txt: Make it.", "pending"),
        ("EXECUTE true: Run it.", "pending"),
    ]


def test_a_second_prompt_while_one_runs_is_refused(project: Path, check: SchemaCheck) -> None:
    from acp import RequestError

    client = RecordingClient(project)
    plan = plan_text(execute("touch started; sleep 30"))

    async def main() -> None:
        async with in_process(TeddyAgent(), client, check) as (conn, _):
            session_id = await start_session(conn, client, project)
            first = asyncio.ensure_future(
                conn.prompt(session_id=session_id, prompt=[{"type": "text", "text": plan}])
            )
            await until((project / "started").exists, "the first prompt's command to start")
            with pytest.raises(RequestError):
                await conn.prompt(session_id=session_id, prompt=[{"type": "text", "text": plan}])
            await conn.cancel(session_id=session_id)
            await first

    asyncio.run(main())


def test_every_update_we_send_is_a_valid_sdk_model(project: Path, check: SchemaCheck) -> None:
    """The agent sends its updates as JSON straight to the SDK's connection; they must
    also be what the SDK's own models accept (and give back unchanged)."""
    from plankit.acp.turn import update_model

    client = RecordingClient(project, ["reject-once"])
    run_turns(project, check, client, plan_text(create("a.txt", "a"), execute("true"), chat("ok?")))
    kinds = {u["sessionUpdate"] for u in client.updates}
    assert kinds == {
        "plan",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
        "agent_thought_chunk",
        "available_commands_update",
    }
    for update in client.updates:
        model = update_model(update)
        assert model.model_dump(mode="json", by_alias=True, exclude_none=True) == update


def test_the_early_initialize_answer_is_the_sdk_answer() -> None:
    from acp.schema import InitializeResponse

    from plankit.acp.stdio import answer_initialize, initialize_result

    model = InitializeResponse.model_validate(initialize_result())
    assert model.model_dump(mode="json", by_alias=True, exclude_unset=True) == initialize_result()
    read_fd, write_fd = __import__("os").pipe()
    line = b'{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true},"terminal":true}}}\n'
    assert answer_initialize(line, write_fd) == (True, False, True)
    answer = __import__("json").loads(__import__("os").read(read_fd, 65536))
    assert answer == {"jsonrpc": "2.0", "id": 7, "result": initialize_result()}
    assert (
        answer_initialize(
            b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}\n', write_fd
        )
        is None
    )
    assert answer_initialize(b"not json\n", write_fd) is None
