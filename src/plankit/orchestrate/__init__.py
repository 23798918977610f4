"""agentflow runs the agents: from a goal to merged work, over ACP, on one host or many.

A layer above agentflow (its control plane: sessions, commits, claims, leases) and acp
(its client pieces: files and terminals confined to a directory), which import nothing
from here.  ``agentctl run`` and ``agentctl worker`` (:mod:`.cli`) are thin commands
over :mod:`.run`; the records of each task's work are kept by
:mod:`plankit.agentflow.evidence`, where ``agentctl plan show`` and the board read them.

* :mod:`.agents`   the agent table: defaults, ``.agentflow.toml``, ``--agent NAME=CMD``
* :mod:`.gitwork`  the integration branch, worktrees, merges without a working tree
* :mod:`.client`   what an agent is offered and allowed; what it reported
* :mod:`.session`  one agent process: start, prompt, cancel, stop
* :mod:`.prompts`  the planner's and the tasks' prompts
* :mod:`.planning` the planner's turns until a valid commit
* :mod:`.runner`   workers: claim, worktree, agent, lease, merge, report
* :mod:`.run`      a whole run (goal → report) and a joining worker
"""
