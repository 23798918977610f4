"""Git for a run: the integration branch, one worktree per task, merges.

Everything goes through the ``git`` command.  The user's branch, index and working tree
are never touched: branches are created with ``git branch`` (no checkout), each task
works in a worktree of its own under the run's state directory, and a task's commit is
merged with ``git merge-tree --write-tree`` and ``git commit-tree`` (no working tree at
all), then published with a compare-and-swap: ``git update-ref`` with the old value
(one host), or a ``git push`` that is never forced and is retried from a fresh fetch when
the remote moved on (many hosts).

TeDDy's own state (``.teddy/``) and plankit's (``.plankit/``) that an agent leaves in its
worktree are not the task's work: they are left out of its commit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from plankit.errors import InputError

NOT_WORK = (".teddy", ".plankit")
"""Directories an agent's tools keep their state in, never committed as work."""

_IDENTITY = {
    "GIT_AUTHOR_NAME": "agentflow",
    "GIT_AUTHOR_EMAIL": "agentflow@localhost",
    "GIT_COMMITTER_NAME": "agentflow",
    "GIT_COMMITTER_EMAIL": "agentflow@localhost",
}


class GitError(InputError):
    """A git command failed; the message says which and why."""


def git(
    cwd: str, *args: str, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``git ARGS`` in ``cwd``; its completed process (a :class:`GitError` when it
    fails and ``check``)."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})},
            # A terminal's Ctrl-C is the run's to handle: a merge half done by a git
            # killed with it would fail a finished task.
            start_new_session=True,
        )
    except FileNotFoundError:
        raise GitError("git is not installed; agentctl run needs it for worktrees") from None
    if check and done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise GitError(f"git {' '.join(args[:3])} failed: {detail[-1] if detail else 'no output'}")
    return done


def identity(cwd: str) -> dict[str, str]:
    """Author and committer for the commits a run makes: the repository's own (empty:
    git finds them), else agentflow's."""
    name = git(cwd, "config", "user.name", check=False).stdout.strip()
    email = git(cwd, "config", "user.email", check=False).stdout.strip()
    return {} if name and email else dict(_IDENTITY)


def repository_root(project: str) -> str:
    """The top of the git repository ``project`` is in; a one-line refusal otherwise."""
    done = git(project, "rev-parse", "--show-toplevel", check=False)
    if done.returncode != 0:
        raise GitError(
            f"{project} is not in a git repository: agentctl run runs each task in a git "
            "worktree and merges it; run `git init` and commit, then run again"
        )
    root = done.stdout.strip()
    if git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False).returncode != 0:
        raise GitError(f"{root} has no commit yet: commit once, then run again")
    return root


def rev(cwd: str, ref: str) -> str | None:
    """The commit ``ref`` names, or None."""
    done = git(cwd, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False)
    return done.stdout.strip() if done.returncode == 0 else None


@dataclass(frozen=True, slots=True)
class Merge:
    """What merging a task's commit gave."""

    commit: str | None
    """The merge commit on the integration branch (None: conflicts, or nothing to merge)."""
    files: tuple[str, ...] = ()
    """Files the task changed."""
    conflicts: tuple[str, ...] = ()
    """Paths in conflict (then nothing was merged)."""


_WORKTREES = threading.Lock()
"""git's bookkeeping of worktrees is not safe for concurrent changes: one at a time."""


def add_worktree(root: str, path: str, base: str) -> None:
    """A new worktree at ``path`` with ``base`` checked out (a detached HEAD: the
    task's branch is made only when its work has to be kept, see :func:`keep`).

    git's bookkeeping of worktrees is not safe for concurrent additions (one may read
    another's half-made record), so the workers of a process add one at a time, and an
    addition that met another process's is tried again."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with _WORKTREES:  # only git's record is made here; the files are checked out after
        for attempt in range(3):
            done = git(root, "worktree", "add", "-q", "--no-checkout", "--detach", path, base,
                       check=attempt == 2)  # fmt: skip
            if done.returncode == 0:
                break
            shutil.rmtree(path, ignore_errors=True)
    git(path, "reset", "-q", "--hard", base)


def keep(root: str, branch: str, commit: str) -> None:
    """Keep ``commit`` on a new ``branch`` (the work of a task that could not merge)."""
    git(root, "branch", "-f", branch, commit)


def remove_worktree(root: str, path: str, *, prune: bool = True) -> None:
    """Remove the worktree, whatever it holds.  Without ``prune`` only its directory
    goes (no git command, so no wait for the other worktree changes): git's record of
    it is pruned later by :func:`prune_worktrees`."""
    if not prune:
        shutil.rmtree(path, ignore_errors=True)
        return
    with _WORKTREES:
        git(root, "worktree", "remove", "--force", path, check=False)
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
            git(root, "worktree", "prune", check=False)


def prune_worktrees(root: str) -> None:
    """Forget the worktrees whose directories are gone."""
    with _WORKTREES:
        git(root, "worktree", "prune", check=False)


def commit_worktree(path: str, message: str, author: dict[str, str]) -> str | None:
    """Commit everything the agent changed in the worktree; the commit, or None when
    nothing changed (the tools' own state left out, see :data:`NOT_WORK`).  ``author``
    is :func:`identity`."""
    excludes = [f":(exclude){name}" for name in NOT_WORK]
    git(path, "add", "-A", "--", ".", *excludes)
    done = git(path, "commit", "-q", "--no-verify", "-m", message, check=False, env=author)
    if done.returncode != 0:
        if git(path, "diff", "--cached", "--quiet", check=False).returncode == 0:
            return None  # nothing to commit
        raise GitError(f"git commit failed: {(done.stderr or done.stdout).strip()[:300]}")
    return rev(path, "HEAD")


def changed_files(cwd: str, base: str, commit: str) -> tuple[str, ...]:
    """Files that differ between ``base`` and ``commit``."""
    out = git(cwd, "diff", "--name-only", "-z", base, commit).stdout
    return tuple(name for name in out.split("\0") if name)


def merge_commit(
    cwd: str, target: str, commit: str, message: str, author: dict[str, str]
) -> tuple[str | None, list[str]]:
    """A merge of ``commit`` into ``target`` made without a working tree: (the merge
    commit, []) or (None, the conflicting paths)."""
    done = git(cwd, "merge-tree", "--write-tree", "--name-only", target, commit, check=False)
    lines = done.stdout.splitlines()
    if done.returncode == 1:
        paths: list[str] = []
        for line in lines[1:]:
            if not line:
                break
            if line not in paths:
                paths.append(line)
        return None, paths
    if done.returncode != 0 or not lines:
        raise GitError(f"git merge-tree failed: {done.stderr.strip() or 'no output'}")
    tree = lines[0].strip()
    made = git(cwd, "commit-tree", tree, "-p", target, "-p", commit, "-m", message, env=author)
    return made.stdout.strip(), []


class Integration:
    """The session's integration branch, in this repository or in a remote."""

    def __init__(self, root: str, branch: str, remote: str | None = None) -> None:
        self.root = root
        """The repository (a clone, with a remote)."""
        self.branch = branch
        """``agentflow/<session id>``."""
        self.remote = remote
        """The remote that holds the branch for every host, or None (this repository)."""
        self.author = identity(root)
        """Who the run's commits are by (:func:`identity`)."""
        self._known: str | None = None

    @property
    def ref(self) -> str:
        """Where the branch's tip is read from here."""
        if self.remote is None:
            return f"refs/heads/{self.branch}"
        return f"refs/remotes/{self.remote}/{self.branch}"

    def fetch(self) -> None:
        """Bring the remote branch's tip here (nothing to do for a local branch)."""
        if self.remote is not None:
            git(
                self.root,
                "fetch",
                "-q",
                self.remote,
                f"+refs/heads/{self.branch}:{self.ref}",
            )

    def create(self, start: str) -> str:
        """Make the branch at ``start`` unless it exists; its tip."""
        if self.remote is None:
            if rev(self.root, self.ref) is None:
                git(self.root, "branch", self.branch, start)
            tip = rev(self.root, self.ref)
            assert tip is not None
            return tip
        listed = git(self.root, "ls-remote", "--heads", self.remote, self.branch).stdout
        if not listed.strip():
            # Not forced: when another host created it first, this push is refused.
            git(self.root, "push", "-q", self.remote, f"{start}:refs/heads/{self.branch}",
                check=False)  # fmt: skip
        self.fetch()
        tip = rev(self.root, self.ref)
        if tip is None:
            raise GitError(f"the remote {self.remote} has no branch {self.branch}")
        return tip

    def tip(self) -> str:
        """The branch's tip now (fetched first from a remote)."""
        self.fetch()
        tip = rev(self.root, self.ref)
        if tip is None:
            raise GitError(f"the integration branch {self.branch} is gone")
        return tip

    def merge(self, commit: str, message: str, attempts: int = 20) -> Merge:
        """Merge ``commit`` into the branch, again from the new tip whenever another
        task got there first; never forced.  (``files`` is left empty: the caller knows
        what the task changed.)"""
        for _ in range(attempts):
            # The tip this process published last, when nothing else moves the branch
            # (the compare-and-swap below says when something did).
            target = self._known or self.tip()
            self._known = None
            made, conflicts = merge_commit(self.root, target, commit, message, self.author)
            if made is None:
                return Merge(None, (), tuple(conflicts))
            if self._publish(made, target):
                self._known = made if self.remote is None else None
                return Merge(made)
        raise GitError(f"the integration branch {self.branch} kept moving; merge gave up")

    def _publish(self, new: str, old: str) -> bool:
        if self.remote is None:
            done = git(self.root, "update-ref", self.ref, new, old, check=False)
            return done.returncode == 0
        done = git(self.root, "push", "-q", self.remote, f"{new}:refs/heads/{self.branch}",
                   check=False)  # fmt: skip
        if done.returncode == 0:
            git(self.root, "update-ref", self.ref, new, check=False)
            return True
        text = done.stderr
        if "non-fast-forward" in text or "fetch first" in text or "rejected" in text:
            return False
        raise GitError(f"git push to {self.remote} failed: {text.strip().splitlines()[-1:]}")


def diffstat(cwd: str, base: str, tip: str) -> list[str]:
    """``git diff --stat`` lines between two commits (empty when equal)."""
    if base == tip:
        return []
    out = git(cwd, "diff", "--stat", base, tip).stdout
    return [line.rstrip() for line in out.splitlines() if line.strip()]


def names(items: Sequence[str]) -> str:
    """``a, b and c``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
