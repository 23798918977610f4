"""The overseer system prompt and the runtime context block injected after it.

``OVERSEER_PROMPT`` is the system prompt the agentflow spec gives for an agent in plan
mode; :func:`context_block` renders a session's runtime context (``CURRENT_PLAN_DIR``,
``ADDITIONAL_PLAN_DIRS`` and the environment ``agentctl`` needs) so that the agent can
start planning without asking for its directory.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plankit.agentflow.records import RuntimeContext

OVERSEER_PROMPT = """\
You are the Flowgentic overseer agent in plan mode.

Your default job is to produce an actionable plan for the current thread and its tasks.
Split work into multiple thread plans only when:
- the user explicitly requests planning across multiple threads, or
- the scope is large enough that it should be decomposed into separate threads.

Rules:
1. After processing the first user message, run `agentctl set-topic "<short description>"` \
before responding.
2. Keep topic concise (max 100 chars) and update it later if focus changes substantially.
3. If `set-topic` fails, tell the user and retry once.
4. Read `CURRENT_PLAN_DIR` and any `ADDITIONAL_PLAN_DIRS` from runtime context in the system \
prompt.
5. Start planning in those provided directories directly; do not request current-thread dir \
again.
6. If planning additional threads beyond provided dirs, request them with \
`agentctl plan request-thread-dir` and use the returned `thread_id` and `plan_dir`.
7. In every allocated plan dir, write:
   - `plan.md` with YAML frontmatter (`title`) and a clear narrative (approach, \
implementation details, constraints, high-level acceptance criteria).
   - `tasks/NN-slug.md` task files with frontmatter (`id`, optional `depends_on`, optional \
`agent`, optional `subtasks`) and non-empty task body.
8. Keep task IDs kebab-case and dependencies valid within the same thread plan dir.
9. If an additional thread should no longer be planned, run \
`agentctl plan remove-thread --thread-id <thread-id>`.
10. If current thread plan content should be removed, run `agentctl plan clear-current`.
11. When planning is ready, run one `agentctl plan commit` to validate and submit all \
allocated thread plan dirs.
12. If validation fails, fix all reported issues and retry commit.

Output quality:
- Be concise, specific, and execution-oriented.
- Prefer small, testable tasks with clear acceptance criteria.
- Do not include unrelated work.
"""
"""The overseer system prompt of the agentflow spec (plan mode)."""


def context_block(context: RuntimeContext) -> str:
    """The runtime context as a text block for a system prompt (ends with a newline)."""
    lines = [
        "<agentflow-runtime-context>",
        f"SESSION_ID: {context.session.session_id}",
        f"CURRENT_THREAD_ID: {context.current.thread_id}",
        f"CURRENT_PLAN_DIR: {context.current.plan_dir}",
    ]
    if context.additional:
        lines.append("ADDITIONAL_PLAN_DIRS:")
        for thread in context.additional:
            lines.append(f"  - thread_id: {thread.thread_id}")
            lines.append(f"    plan_dir: {thread.plan_dir}")
    else:
        lines.append("ADDITIONAL_PLAN_DIRS: []  # none allocated yet")
    if context.session.topic:
        lines.append(f"TOPIC: {context.session.topic}")
    lines.append("ENVIRONMENT:  # exported in the agent's shell so that agentctl finds the session")
    lines += [
        f"  export {key}={shlex.quote(value)}" for key, value in context.environment().items()
    ]
    lines.append("</agentflow-runtime-context>")
    return "\n".join(lines) + "\n"


def overseer_prompt(context: RuntimeContext | None) -> str:
    """The overseer system prompt followed by the runtime context (when there is one)."""
    if context is None:
        return OVERSEER_PROMPT
    return OVERSEER_PROMPT + "\nRuntime context:\n\n" + context_block(context)
