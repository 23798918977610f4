"""``teddy acp``'s sessions: loaded with their history replayed, listed, each with its
own project's configuration and model; the model's answer streamed and the plan's
Rationale sent as a thought; content it did not advertise refused; permission
requests that show what they ask for.  Every message validated against the v1 schema."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from plankit.acp.agent import TeddyAgent
from tests.acp.kit import (
    ROOT,
    RecordingClient,
    SchemaCheck,
    create,
    execute,
    in_process,
    plan_text,
    settled,
    start_session,
    subprocess_agent,
)

ENV = {"PYTHONPATH": str(ROOT)}
FIRST = plan_text(create("one.txt", "one"), title="First turn")
SECOND = plan_text(create("two.txt", "two"), title="Second turn")


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def test_a_loaded_session_replays_its_history_and_goes_on(
    project: Path, check: SchemaCheck
) -> None:
    first = RecordingClient(project)
    later = RecordingClient(project)

    async def main() -> str:
        async with in_process(TeddyAgent(), first, check) as (conn, _):
            session_id = await start_session(conn, first, project)
            await conn.prompt(session_id=session_id, prompt=text(FIRST))
        # a new connection (an editor restarted): load the session, then go on
        async with in_process(TeddyAgent(), later, check) as (conn, transcript):
            await conn.initialize(protocol_version=1, client_capabilities=later.capabilities())
            await conn.load_session(cwd=str(project), session_id=session_id, mcp_servers=[])
            replayed = len(later.updates)
            assert replayed >= 4
            listed = await conn.list_sessions(cwd=str(project))
            assert [s.session_id for s in listed.sessions] == [session_id]
            assert listed.sessions[0].title == "First turn"
            response = await conn.prompt(session_id=session_id, prompt=text(SECOND))
            assert response.stop_reason == "end_turn"
            await settled(later, transcript)
        return session_id

    session_id = asyncio.run(main())
    kinds = [u["sessionUpdate"] for u in later.updates]
    first_plan = kinds.index("plan")
    assert kinds[:first_plan] == ["user_message_chunk", "agent_thought_chunk"]
    assert later.updates[0]["content"]["text"].startswith("# First turn")
    assert "### 1. Synthesis" in later.updates[1]["content"]["text"]
    replayed_plan = later.updates[first_plan]
    assert [(e["content"], e["status"]) for e in replayed_plan["entries"]] == [
        ("CREATE one.txt: Make it.", "completed")
    ]
    assert "Completed" in later.updates[first_plan + 1]["content"]["text"]
    # the second prompt is the session's next turn, not a new session
    folder = project / ".teddy" / session_id
    assert (folder / "02" / "report.md").is_file()
    assert (project / "two.txt").read_text() == "two\n"
    assert len(list((project / ".teddy").iterdir())) == 1


def test_loading_an_unknown_session_is_resource_not_found(
    project: Path, check: SchemaCheck
) -> None:
    from acp import RequestError

    async def main() -> None:
        async with in_process(TeddyAgent(), RecordingClient(project), check) as (conn, _):
            await conn.initialize(protocol_version=1)
            for bad in ("20260101-nope", "../../etc", "20260101-x/../../y"):
                with pytest.raises(RequestError) as info:
                    await conn.load_session(cwd=str(project), session_id=bad, mcp_servers=[])
                assert info.value.code == -32002, bad

    asyncio.run(main())


def test_a_broken_config_where_the_agent_starts_is_reported_for_that_project(
    tmp_path: Path, project: Path, check: SchemaCheck
) -> None:
    from acp import RequestError

    broken = tmp_path / "broken"
    (broken / ".teddy").mkdir(parents=True)
    (broken / ".teddy" / "config.yaml").write_text("model: [unclosed\n")
    client = RecordingClient(project)

    async def main() -> None:
        async with subprocess_agent(client, check, cwd=broken, env=ENV) as (conn, _, _):
            init = await conn.initialize(protocol_version=1)  # it started
            assert init.protocol_version == 1
            with pytest.raises(RequestError) as info:
                await conn.new_session(cwd=str(broken), mcp_servers=[])
            assert "config.yaml" in json.dumps(info.value.data)
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            response = await conn.prompt(
                session_id=session.session_id, prompt=text(plan_text(create("a.txt", "a")))
            )
            assert response.stop_reason == "end_turn"

    asyncio.run(main())
    assert (project / "a.txt").read_text() == "a\n"


def test_each_session_plans_with_its_own_projects_model_and_streams_it(
    tmp_path: Path, project: Path, check: SchemaCheck
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".teddy").mkdir()
    (project / ".teddy" / "config.yaml").write_text("model: teddy-scripted\n")
    plan = plan_text(create("hello.txt", "hi"), title="Say hello")
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([f"Here is my plan.\n\n{plan}"]))
    env = {**ENV, "TEDDY_SCRIPTED_RESPONSES": str(answers)}
    env_without = {k: v for k, v in os.environ.items() if k != "TEDDY_MODEL"}
    client = RecordingClient(project)

    async def main() -> None:
        async with subprocess_agent(client, check, cwd=elsewhere, env={**env_without, **env}) as (
            conn,
            transcript,
            _,
        ):
            session_id = await start_session(conn, client, project)
            response = await conn.prompt(session_id=session_id, prompt=text("say hello"))
            assert response.stop_reason == "end_turn"
            await settled(client, transcript)

    asyncio.run(main())
    assert (project / "hello.txt").read_text() == "hi\n"
    kinds = [u["sessionUpdate"] for u in client.updates]
    first_plan = kinds.index("plan")
    before = "".join(
        u["content"]["text"]
        for u in client.updates[:first_plan]
        if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert "Here is my plan." in before  # the answer streamed while the model planned
    thoughts = client.of_kind("agent_thought_chunk")
    assert "### 1. Synthesis" in thoughts[0]["content"]["text"]


def test_content_it_did_not_advertise_is_refused(project: Path, check: SchemaCheck) -> None:
    from acp import RequestError

    client = RecordingClient(project)

    async def main() -> None:
        async with in_process(TeddyAgent(), client, check) as (conn, _):
            session_id = await start_session(conn, client, project)
            image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
            with pytest.raises(RequestError) as info:
                await conn.prompt(session_id=session_id, prompt=[*text("look"), image])
            assert info.value.code == -32602
            assert "image" in json.dumps(info.value.data)

    asyncio.run(main())
    assert not (project / ".teddy").exists()


def test_a_linked_plan_outside_the_project_is_refused(
    tmp_path: Path, project: Path, check: SchemaCheck
) -> None:
    outside = tmp_path / "x.md"
    outside.write_text(plan_text(create("pwned.txt", "no")))
    client = RecordingClient(project)

    async def main() -> None:
        async with in_process(TeddyAgent(), client, check) as (conn, transcript):
            session_id = await start_session(conn, client, project)
            link = {"type": "resource_link", "name": "x.md", "uri": outside.as_uri()}
            await conn.prompt(session_id=session_id, prompt=[*text("run this"), link])
            await settled(client, transcript)

    asyncio.run(main())
    assert not (project / "pwned.txt").exists()
    assert "outside the project" in client.message() or "not a .md file inside" in client.message()
    assert not client.permissions


def test_a_malformed_link_is_refused_in_one_line(project: Path, check: SchemaCheck) -> None:
    client = RecordingClient(project)

    async def main() -> None:
        async with in_process(TeddyAgent(), client, check) as (conn, transcript):
            session_id = await start_session(conn, client, project)
            link = {"type": "resource_link", "name": "x.md", "uri": "file://x[/a.md"}
            await conn.prompt(session_id=session_id, prompt=[*text("run this"), link])
            await settled(client, transcript)

    asyncio.run(main())
    assert "is not a valid URI" in client.message()
    assert not client.permissions


def test_permission_requests_carry_the_diff_and_the_command(
    project: Path, check: SchemaCheck
) -> None:
    client = RecordingClient(project)

    async def main() -> None:
        async with in_process(TeddyAgent(), client, check) as (conn, _):
            session_id = await start_session(conn, client, project)
            plan = plan_text(create("a.txt", "alpha"), execute("echo hi"))
            await conn.prompt(session_id=session_id, prompt=text(plan))

    asyncio.run(main())
    create_asked, execute_asked = (p["toolCall"] for p in client.permissions)
    diff = create_asked["content"][0]
    assert diff["type"] == "diff" and diff["newText"] == "alpha\n" and diff.get("oldText") is None
    assert execute_asked["content"][0]["content"]["text"] == "$ echo hi"


def rpc(lines: list[str], cwd: Path) -> tuple[list[dict[str, Any]], str]:
    """Raw JSON-RPC lines to ``teddy acp``; its answers and its stderr."""
    import subprocess

    from tests.acp.kit import TEDDY

    done = subprocess.run(
        [*TEDDY, "acp"],
        input="".join(line + "\n" for line in lines),
        cwd=cwd,
        env={**os.environ, **ENV},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr


@pytest.mark.hostile_peer
def test_hostile_lines_get_answers_and_no_tracebacks(project: Path) -> None:
    init = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}'
    lines = [
        init,
        '{"jsonrpc":"2.0","method":"no/such/notification","params":{}}',
        '{"jsonrpc":"2.0","method":"session/cancel","params":{}}',
        '{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":5}}',
        '{"jsonrpc":"2.0","method":"session/cancel"}',
        '{"jsonrpc":"2.0","id":1,"method":"nope\\ud800","params":{}}',
        '{"jsonrpc":"2.0","id":"\\udfff","method":"session/list","params":{}}',
        '{"jsonrpc":"2.0","id":2,"method":"session/prompt",'
        '"params":{"sessionId":"x\\ud800","prompt":[]}}',
    ]
    answers, stderr = rpc(lines, project)
    by_id = {a["id"]: a for a in answers if "method" not in a}
    assert set(by_id) == {0, 1, "\udfff", 2}  # every request answered, none dropped
    assert by_id[1]["error"]["code"] == -32601
    assert by_id[2]["error"]["code"] == -32602
    assert "result" in by_id["\udfff"]
    assert "Traceback" not in stderr, stderr


def test_a_prompt_holding_a_lone_surrogate_is_refused(project: Path, check: SchemaCheck) -> None:
    from acp import RequestError

    client = RecordingClient(project)

    async def main() -> None:
        async with in_process(TeddyAgent(), client, check) as (conn, _):
            session_id = await start_session(conn, client, project)
            plan = plan_text(create("a.txt", "x\ud800y"), title="Sur\udfffrogate")
            with pytest.raises(RequestError) as info:
                await conn.prompt(session_id=session_id, prompt=text(plan))
            assert info.value.code == -32602
            assert "surrogate" in info.value.data["details"]

    asyncio.run(main())
    assert not (project / ".teddy").exists() and not (project / "a.txt").exists()
