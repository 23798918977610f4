"""``teddy acp`` takes a plan copied out of a chat the way ``teddy plan`` takes an answer.

A sentence before the plan, a ```` ```markdown ```` fence around it, actions written
as ``## READ``: the prompt goes down ``answer_to_plan``'s road, and the reply says what
was repaired, line by line.  An answer that reads two ways runs nothing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from plankit.acp.agent import NO_PLAN, TeddyAgent
from plankit.acp.prompt import looks_like_plan
from tests.acp.kit import (
    RecordingClient,
    SchemaCheck,
    create,
    execute,
    in_process,
    plan_text,
    settled,
    start_session,
)


def _prompt(project: Path, check: SchemaCheck, client: RecordingClient, text: str) -> str:
    async def main() -> str:
        async with in_process(TeddyAgent(), client, check) as (conn, transcript):
            session_id = await start_session(conn, client, project)
            response = await conn.prompt(
                session_id=session_id, prompt=[{"type": "text", "text": text}]
            )
            await settled(client, transcript)
            return str(response.stop_reason)

    return asyncio.run(main())


def test_a_chat_copy_with_a_sentence_and_a_fence_runs_and_the_reply_lists_the_repairs(
    project: Path, check: SchemaCheck
) -> None:
    plan = plan_text(create("hello.txt", "hi"), execute("cat hello.txt"))
    answer = (
        "Sure, here's the plan to create the file:\n\n```markdown\n"
        + plan.replace("### `EXECUTE`", "## EXECUTE")
        + "```\n"
    )
    client = RecordingClient(project)
    assert _prompt(project, check, client, answer) == "end_turn"
    assert (project / "hello.txt").read_text() == "hi\n"
    said = client.message()
    assert said != NO_PLAN
    assert "The plan was repaired before it ran:" in said
    assert "- line 1: dropped the text before the plan's title" in said
    assert "as an action heading" in said


def test_an_answer_that_reads_two_ways_runs_nothing_and_says_why(
    project: Path, check: SchemaCheck
) -> None:
    plan = plan_text(create("hello.txt", "hi"), execute("cat hello.txt"))
    answer = (
        plan.rstrip().removesuffix("````") + "\nLet me know if it fails, and I'll look again.\n"
    )
    client = RecordingClient(project)
    assert _prompt(project, check, client, answer) == "end_turn"
    said = client.message()
    assert "The plan reads two ways, so nothing ran:" in said
    assert "or a remark after the plan" in said
    assert not (project / "hello.txt").exists()


def test_answer_like_prompts_are_recognised() -> None:
    plan = plan_text(create("hello.txt", "hi"))
    assert looks_like_plan(plan)
    assert looks_like_plan("Here you go:\n\n```markdown\n" + plan + "```\n")
    assert looks_like_plan(plan.replace("## Action Plan", "# Action Plan:"))
    assert looks_like_plan('{"plan": "# T\\n\\n## Action Plan\\n"}')
    assert not looks_like_plan("please add a health endpoint")
    assert not looks_like_plan("# Notes\n\nNo plan here, just an action plan in words.")
