"""The long-term memory, ``.teddy/memos.yaml``: a YAML list of strings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from plankit.errors import InputError
from plankit.teddy.format.model import Memo


def memos_path(root: Path) -> Path:
    """``<root>/.teddy/memos.yaml``."""
    return root / ".teddy" / "memos.yaml"


def load_memos(root: Path) -> list[str]:
    """The memos, in file order (empty when there is no file)."""
    from plankit.teddy.session.yamlio import load_yaml

    path = memos_path(root)
    return _memo_list(load_yaml(path, default=[]), str(path))


def memos_from_text(text: str, path: str) -> list[str]:
    """The memos of a ``memos.yaml`` the caller read (``path`` names it in errors)."""
    from plankit.teddy.session.yamlio import yaml_from_text

    return _memo_list(yaml_from_text(text, path, default=[]), path)


def _memo_list(data: object, path: str) -> list[str]:
    if not isinstance(data, list) or not all(isinstance(m, str) for m in data):
        raise InputError("memos.yaml must be a list of strings", code="bad-memos", path=path)
    return [str(m) for m in data]


def check_memos(changes: Sequence[Memo], existing: Sequence[str]) -> list[str]:
    """Why each change cannot be applied (section 8.2), in order; empty when all can."""
    present = list(existing)
    problems: list[str] = []
    for memo in changes:
        if memo.op == "+":
            if memo.text in present:
                problems.append(f"[+] '{memo.text}' is already in memos.yaml")
            else:
                present.append(memo.text)
        elif memo.text in present:
            present.remove(memo.text)
        else:
            problems.append(f"[-] '{memo.text}' is not in memos.yaml (it must match exactly)")
    return problems


@dataclass(frozen=True, slots=True)
class MemoResult:
    """What happened to one memo change."""

    memo: Memo
    """The change."""
    applied: bool
    """Whether memos.yaml now reflects it."""
    note: str = ""
    """Why not, when it was not applied."""


def apply_memos(root: Path, changes: Sequence[Memo]) -> list[MemoResult]:
    """Apply the changes to memos.yaml atomically (comments in the file are kept)."""
    if not changes:
        return []
    from ruamel.yaml.comments import CommentedSeq

    from plankit.teddy.session.yamlio import dump_yaml, load_yaml

    path = memos_path(root)
    data = load_yaml(path, default=CommentedSeq())
    if not isinstance(data, list):
        raise InputError("memos.yaml must be a list of strings", code="bad-memos", path=str(path))
    results: list[MemoResult] = []
    for memo in changes:
        if memo.op == "+":
            if memo.text in data:
                results.append(MemoResult(memo, False, "already present"))
                continue
            data.append(memo.text)
        else:
            if memo.text not in data:
                results.append(MemoResult(memo, False, "not present"))
                continue
            data.remove(memo.text)
        results.append(MemoResult(memo, True))
    dump_yaml(path, data)
    return results
