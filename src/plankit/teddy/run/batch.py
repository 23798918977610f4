"""Consecutive file writes of a turn that share one flush to disk.

A turn's CREATEs and EDITs usually come in runs.  Run one after the other, each needs
its own flush before its rename (its journal ``start`` entry and its new bytes on disk
before the file takes its name), so a turn of 1,000 CREATEs waits for the disk 1,000
times.  Here a run of up to :data:`GROUP_MAX` of them, on distinct files, goes in two
steps:

1. each action starts (its journal ``start``, "running" on the display), is checked
   and has its new bytes written to a temporary file next to its target; nothing has
   taken a target's name yet;
2. one flush (:func:`plankit.syncing.barrier`) puts every ``start`` and every new byte
   on disk, then the files take their names one by one, in plan order, and each
   action finishes.

After a power cut the journal therefore holds the ``start`` of every action whose file
may have changed, as it does when they run one by one; recovery reports each started
action without a ``finish`` as stopped, and removes the temporary files they left.

A run ends early at an action that fails its checks (the FIND of an EDIT missing, a
CREATE whose file exists): the actions before it are published, it fails, the rest are
skipped as after any failure.  Ctrl-C during step 1 publishes nothing of the run (the
action being staged is interrupted, those staged before it are skipped and their
temporary files removed); during step 2 it waits until the files have their names, then
stops the turn before the next action.  Runs are formed only when flushes are gathered
(:func:`plankit.syncing.gathering`), files are written to the local disk, and no client
is asked before each action (``Runtime.permit``).
"""

from __future__ import annotations

import contextlib
import posixpath
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from plankit import syncing
from plankit.teddy.format.model import Action, Create, Edit
from plankit.teddy.run.actions import EXISTS, Interrupted, LocalFiles, Runtime, run_action
from plankit.teddy.run.approval import Approval
from plankit.teddy.run.journal import NOT_STARTED, Journal
from plankit.teddy.run.report import ActionResult
from plankit.textio import StagedWrite
from plankit.workspace import HAVE_DIR_FD

GROUP_MAX = 128
"""Most actions staged at once: each holds two descriptors (its temporary file and its
directory) until it is published."""


def after_failure(kind: str) -> str:
    """Why an action was skipped after the failure of an earlier one of type ``kind``."""
    return f"skipped after the failure of `{kind}` above"


def group_size(actions: Sequence[Action], start: int, approval: Approval, runtime: Runtime) -> int:
    """How many actions from ``start`` on run as one group: consecutive selected CREATEs
    and EDITs of distinct files.  Below 2, none."""
    if (
        runtime.permit is not None
        or not isinstance(runtime.files, LocalFiles)
        or not HAVE_DIR_FD
        or not syncing.gathering()
    ):
        return 0
    seen: set[str] = set()
    end = start
    while end < len(actions) and end - start < GROUP_MAX:
        action = actions[end]
        if not isinstance(action, Create | Edit):
            break
        if approval.selected is not None and end not in approval.selected:
            break
        # one file under two spellings (a/./b, A vs a on a case-blind disk) ends it too
        key = posixpath.normpath(action.path.lstrip("/")).casefold()
        if key in seen:
            break
        seen.add(key)
        end += 1
    return end - start


@dataclass(slots=True)
class GroupOutcome:
    """What a group did: one result per action, in order, and how the turn goes on."""

    results: list[ActionResult]
    interrupted: bool
    """Ctrl-C came during the group: the turn stops."""
    failed: str | None
    """The type of the action that failed, when one did: the turn stops."""


def run_group(
    actions: Sequence[Action],
    indices: range,
    approval: Approval,
    runtime: Runtime,
    journal: Journal | None,
    run: Callable[[Action, Runtime, list[StagedWrite]], ActionResult] = run_action,
) -> GroupOutcome:
    """Run the actions at ``indices`` as one group (see the module documentation), each
    staged by ``run``."""
    progress = runtime.progress

    def finish(index: int, result: ActionResult) -> ActionResult:
        if index in approval.modified:
            result = replace(result, modified=approval.modified[index])
        if progress is not None:
            progress.finished(index, result)
        if journal is not None:
            journal.finish(index, result)
        return result

    staged: list[tuple[int, ActionResult, StagedWrite]] = []
    last: tuple[int, ActionResult] | None = None
    interrupted = False
    files = runtime.files
    holding = files.holding_root() if isinstance(files, LocalFiles) else contextlib.nullcontext()
    try:
        with holding:  # the root, for the walks of the staging only
            for index in indices:
                action = actions[index]
                if journal is not None:
                    journal.start(index, action)
                if progress is not None:
                    progress.started(index, action)
                writes: list[StagedWrite] = []
                try:
                    result = run(action, runtime, writes)
                except Interrupted as exc:
                    last, interrupted = (index, exc.result), True
                    break
                if not writes:  # it failed before writing anything
                    last = (index, result)
                    break
                staged.append((index, result, writes[0]))
        if interrupted:  # none published: their temporary files go in the finally below
            done = [finish(i, ActionResult(r.action, True, NOT_STARTED)) for i, r, _ in staged]
        else:
            with _ctrl_c_held() as held:
                done = _publish(staged, finish)
            interrupted = held()
    finally:  # whatever broke off the group, no temporary file stays behind
        for _, _, write in staged:
            write.discard()
    if last is not None:
        done.append(finish(*last))
    failed = next((r.action.type for r in done if r.success is False), None)
    return GroupOutcome(done, interrupted, failed)


def _publish(
    staged: list[tuple[int, ActionResult, StagedWrite]],
    finish: Callable[[int, ActionResult], ActionResult],
) -> list[ActionResult]:
    """One flush, then each staged file takes its name, in order; after a failure the
    rest are skipped (their temporary files removed)."""
    error: str | None = None
    if staged:
        for _, _, write in staged:  # files under a mount point in the project too
            syncing.watch(write.fd, write.device)
        try:
            syncing.barrier(staged[0][2].fd)
        except OSError as exc:  # the first action fails with it, as alone it would
            error = f"{exc.strerror or exc}"
    done: list[ActionResult] = []
    failed: str | None = None
    for index, result, write in staged:
        if failed is not None:
            write.discard()
            result = ActionResult(result.action, True, after_failure(failed))
        elif error is not None:
            write.discard()
            result = _failure(result, error)
        else:
            try:
                write.publish()
            except FileExistsError:  # a file of that name appeared since it was checked
                result = _failure(result, EXISTS)
            except OSError as exc:
                result = _failure(result, f"{exc.strerror or exc}")
        if result.success is False:
            failed = result.action.type
        done.append(finish(index, result))
    return done


def _failure(result: ActionResult, why: str) -> ActionResult:
    return replace(result, success=False, details="", notes=(why,))


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[Callable[[], bool]]:
    """Ctrl-C (SIGINT) held back in the block, then handled as its handler says; yields
    a function telling, after the block, whether it interrupted (its handler raised
    KeyboardInterrupt).  Outside the main thread nothing is held: only the main thread
    handles signals.  The handler is swapped for one that notes the signal (a signal
    mask would not do: the kernel hands a process's signal to any thread not masking
    it, and Python then runs the handler in the main thread all the same)."""
    seen = [False]
    current = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or current in (
        None,  # a handler set outside Python: left alone
        signal.SIG_IGN,  # Ctrl-C does nothing anyway
    ):
        yield lambda: seen[0]
        return
    came: list[object] = []
    before = signal.signal(signal.SIGINT, lambda number, frame: came.append(frame))
    try:
        yield lambda: seen[0]
    finally:
        signal.signal(signal.SIGINT, before)
        if came and before is signal.SIG_DFL:
            signal.raise_signal(signal.SIGINT)  # the process ends, as it would have
        elif came and callable(before):
            try:
                before(signal.SIGINT, None)
            except KeyboardInterrupt:
                seen[0] = True
