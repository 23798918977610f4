"""A checkpoint in git: the turn's ref, and one commit holding the files as they were.

:func:`commit_files` writes HEAD's tree with the turn's files as read (absent ones left
out) as a commit on ``refs/teddy/<session>/<turn>`` (see :func:`checkpoint_ref`), HEAD
as its parent, with one ``git fast-import`` after one ``rev-parse``; the user's branch,
HEAD, index and working tree are never touched.  Everything that goes into
fast-import's stream is made safe first: paths are quoted and refused with a line break
or a tab or inside a ``.git`` folder, the ref must be a plain name, and file contents
and the message are sent by length.  :mod:`plankit.teddy.run.checkpoint` falls back to
copies when this raises :class:`GitFailed`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

from plankit.teddy.run.gitcmd import GitFailed, git, git_env, object_id

REF_PREFIX = "refs/teddy"
"""TeDDy's own refs: ``refs/teddy/<session>/<turn>``."""


_REV_PARSE = ("--show-object-format", "--show-prefix")


_REF_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


def _plain_ref(ref: str) -> bool:
    """Whether each part of ``ref`` is a name git takes as it is (no ``..``, no part
    ending in ``.lock`` or ``.``): a ref git refuses would stop fast-import half way."""
    return all(_plain_part(part) for part in ref.split("/"))


def _plain_part(part: str) -> bool:
    return (
        bool(_REF_PART.fullmatch(part)) and ".." not in part and not part.endswith((".lock", "."))
    )


def checkpoint_ref(prefix: str, session: str, turn: str) -> str:
    """The ref of a turn's checkpoint: ``refs/teddy/<session>/<turn>`` for a project at
    the repository's top; for one in a subdirectory (``prefix``, as ``git rev-parse
    --show-prefix`` gives it: ``packages/app/``), that directory comes first, so two
    projects of one repository never share a ref.  A directory name that cannot be part
    of a ref is replaced by a digest of the whole prefix."""
    parts = [p for p in prefix.split("/") if p]
    if not all(_plain_part(part) for part in parts):
        parts = [
            "dir-" + hashlib.sha256(prefix.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        ]
    return "/".join([REF_PREFIX, *parts, session, turn])


def _in_git_dir(path: str) -> bool:
    """Whether a part of ``path`` names a ``.git`` folder as git and some file systems
    read it (letter case ignored, trailing dots and blanks dropped)."""
    return any(part.lower().rstrip(". ") == ".git" for part in path.split("/"))


def _quoted(path: str) -> bytes:
    """``path`` as fast-import reads a quoted path (C style: every byte as it is, but a
    backslash and a double quote escaped; line breaks and tabs are refused before)."""
    text = path.replace("\\", "\\\\").replace('"', '\\"')
    return b'"' + text.encode("utf-8", "surrogateescape") + b'"'


def commit_files(
    root: Path, session: str, turn: str, files: Sequence[tuple[str, int, bytes | None]]
) -> tuple[str, str, list[str | None]]:
    """Store ``files`` (root-relative path, permission bits before the turn, and bytes,
    or ``None`` for a file that was absent) as a commit on the turn's ref.  Returns the
    ref, the commit and each file's blob id (``None`` for an absent one); raises
    :class:`GitFailed` when git cannot keep them."""
    env = git_env()
    if any("\n" in path or "\t" in path for path, _, _ in files):
        raise GitFailed("a path holds a line break or a tab")
    if any(_in_git_dir(path) for path, _, _ in files):  # git refuses such a tree entry
        raise GitFailed("a path lies inside a .git folder")
    try:  # one process when there is a HEAD commit (nearly always)
        out = git(root, "rev-parse", *_REV_PARSE, "--verify", "-q", "HEAD^{commit}", env=env)
        lines = out.decode("utf-8", "surrogateescape").split("\n")
        head_id: str | None = lines[2].strip()
    except GitFailed:  # no commit yet (or no repository: the next call says which)
        out = git(root, "rev-parse", *_REV_PARSE, env=env)
        lines = out.decode("utf-8", "surrogateescape").split("\n")
        head_id = None
    algorithm, prefix = lines[0].strip(), lines[1]
    if algorithm not in ("sha1", "sha256"):
        raise GitFailed(f"unknown object format {algorithm!r}")
    ref = checkpoint_ref(prefix, session, turn)
    if not _plain_ref(ref):  # it goes into fast-import's stream: one plain line
        raise GitFailed(f"the ref {ref!r} is not a plain name")
    message = (
        f"teddy checkpoint: session {session}, turn {turn}\n\n"
        f"The {len(files)} file(s) the turn may change, as they were before it ran;\n"
        "`teddy undo` restores them.\n"
    ).encode("utf-8", "surrogateescape")
    stream = [
        b"commit " + ref.encode() + b"\nmark :1\ncommitter TeDDy <teddy@localhost> now\n",
        b"data %d\n" % len(message) + message,
    ]
    if head_id is not None:
        stream.append(b"from " + head_id.encode() + b"\n")
    blobs: list[str | None] = []
    for name, mode, data in files:
        path = _quoted(prefix + name)
        if data is not None:
            kind = b"100755" if mode & 0o111 else b"100644"
            stream += [b"M " + kind + b" inline " + path + b"\ndata %d\n" % len(data), data, b"\n"]
            blobs.append(object_id(data, algorithm))  # the bytes read are the blob's
        else:
            blobs.append(None)
            if head_id is not None:
                stream.append(b"D " + path + b"\n")
    stream.append(b"\nget-mark :1\ndone\n")  # the commit's id, on fast-import's stdout
    out = git(
        root,
        "fast-import",
        "--quiet",
        "--done",
        "--force",
        "--date-format=now",
        env=env,
        data=b"".join(stream),
    )
    commit = out.decode().strip()
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
        raise GitFailed(f"git fast-import: no commit id ({commit[:80]!r})")
    return ref, commit, blobs
