"""``session/cancel`` while the model is still writing its plan: the planning stops.

The model is plankit's scripted one, made slow (``TEDDY_SCRIPTED_CHUNK_DELAY``): its
answer would take minutes to stream, so a prompt that ends soon after the cancel
shows the planning was given up, not waited for.  Every message is validated against
the v1 schema.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from pathlib import Path

from tests.acp.kit import (
    PLANKIT,
    ROOT,
    TEDDY,
    RecordingClient,
    SchemaCheck,
    create,
    plan_text,
    settled,
    start_session,
    subprocess_agent,
)
from tests.waiting import until, wait_until

SLOW = "0.2"
"""Seconds between two pieces of the model's answer."""


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def test_cancel_while_the_model_writes_stops_the_planning(
    tmp_path: Path, project: Path, check: SchemaCheck
) -> None:
    plan = plan_text(create("hello.txt", "hi"), title="Say hello")
    # ~2000 pieces of 64 characters: about 400 s at SLOW, if nothing stopped it
    long_answer = "Let me think about this at length.\n" + "thinking " * 14_000 + "\n\n" + plan
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([long_answer]))
    env = {
        "PYTHONPATH": str(ROOT),
        "TEDDY_SCRIPTED_RESPONSES": str(answers),
        "TEDDY_SCRIPTED_CHUNK_DELAY": SLOW,
    }
    client = RecordingClient(project)
    second = plan_text(create("after.txt", "after"), title="After the cancel")

    def streamed() -> str:
        return "".join(u["content"]["text"] for u in client.of_kind("agent_message_chunk"))

    async def main() -> None:
        async with subprocess_agent(
            client, check, *TEDDY, "acp", "--model", "teddy-scripted", cwd=project, env=env
        ) as (conn, transcript, _):
            session_id = await start_session(conn, client, project)
            prompt = asyncio.ensure_future(
                conn.prompt(session_id=session_id, prompt=text("say hello"))
            )
            await until(lambda: "thinking" in streamed(), "the model's answer to stream")
            await conn.cancel(session_id=session_id)
            response = await asyncio.wait_for(prompt, 60)
            assert response.stop_reason == "cancelled"
            await settled(client, transcript)
            # the session goes on: the next prompt runs (the abandoned planning let go)
            again = await asyncio.wait_for(
                conn.prompt(session_id=session_id, prompt=text(second)), 60
            )
            assert again.stop_reason == "end_turn"
            await settled(client, transcript)

    asyncio.run(main())
    assert len(streamed()) < len(long_answer) // 2  # the model's call was abandoned
    assert "Planning cancelled: no plan was saved or run." in streamed()
    assert not (project / "hello.txt").exists()
    assert (project / "after.txt").read_text() == "after\n"
    # nothing of the cancelled planning was shown as a plan, let alone as done
    assert not any(
        "hello.txt" in entry["content"] for update in client.of_kind("plan")
        for entry in update["entries"]
    )  # fmt: skip


def test_cancel_while_the_model_re_plans_stops_it_and_runs_nothing(
    tmp_path: Path, project: Path, check: SchemaCheck
) -> None:
    bad = plan_text(create("app.py", "x = 2"), title="Create app.py again")  # app.py exists
    good = plan_text(create("hello.txt", "hi"), title="Say hello")
    long_answer = "Correcting it.\n" + "thinking " * 14_000 + "\n\n" + good
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([bad, long_answer]))
    env = {
        "PYTHONPATH": str(ROOT),
        "TEDDY_SCRIPTED_RESPONSES": str(answers),
        "TEDDY_SCRIPTED_CHUNK_DELAY": SLOW,
    }
    client = RecordingClient(project)

    def streamed() -> str:
        return "".join(u["content"]["text"] for u in client.of_kind("agent_message_chunk"))

    async def main() -> None:
        async with subprocess_agent(
            client, check, *TEDDY, "acp", "--model", "teddy-scripted", cwd=project, env=env
        ) as (conn, transcript, _):
            session_id = await start_session(conn, client, project)
            prompt = asyncio.ensure_future(
                conn.prompt(session_id=session_id, prompt=text("say hello"))
            )
            await until(lambda: "Correcting it." in streamed(), "the re-plan to stream")
            await conn.cancel(session_id=session_id)
            response = await asyncio.wait_for(prompt, 60)
            assert response.stop_reason == "cancelled"
            await settled(client, transcript)

    asyncio.run(main())
    out = streamed()
    assert "re-planning was cancelled" in out
    assert out.count("thinking") < 7_000  # the model's call was abandoned
    assert not (project / "hello.txt").exists()
    assert (project / "app.py").read_text() == "x = 1\n"
    statuses = [e["status"] for update in client.of_kind("plan") for e in update["entries"]]
    assert statuses and "completed" not in statuses


def test_ctrl_c_in_plankit_acp_run_while_the_model_writes_exits_130(
    tmp_path: Path, project: Path
) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(["Let me think.\n" + "thinking " * 14_000]))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TEDDY_SCRIPTED_RESPONSES": str(answers),
        "TEDDY_SCRIPTED_CHUNK_DELAY": SLOW,
    }
    out = tmp_path / "out.txt"
    with out.open("w") as sink:
        client = subprocess.Popen(
            [*PLANKIT, "acp", "run", "--approve-all", "--", *TEDDY, "acp", "--model",
             "teddy-scripted", "say hello"],
            cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=sink,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )  # fmt: skip
        try:
            wait_until(lambda: "thinking" in out.read_text(), "the model's answer to show")
            os.killpg(client.pid, signal.SIGINT)  # a terminal's Ctrl-C
            code = client.wait(timeout=60)
        finally:
            if client.poll() is None:
                os.killpg(client.pid, signal.SIGKILL)
                client.wait()
    shown = out.read_text()
    assert code == 130, shown
    assert "Planning cancelled: no plan was saved or run." in shown
    assert "[done] cancelled" in shown
    assert shown.count("thinking") < 7_000
