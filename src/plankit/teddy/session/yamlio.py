"""Small YAML files of the workspace (``memos.yaml``, ``meta.yaml``, ``config.yaml``).

ruamel.yaml in round-trip mode: duplicate keys are rejected, comments survive an
update, and no tag can build a Python object.  Imported only by the commands that
read these files.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from plankit.errors import InputError
from plankit.textio import read_text, write_text_atomic

MAX_YAML_BYTES = 1024 * 1024


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    yaml.default_flow_style = False
    yaml.width = 4096
    return yaml


def load_yaml(path: Path, *, default: Any) -> Any:
    """The YAML document in ``path`` (``default`` when the file does not exist or is empty)."""
    if not path.exists():
        return default
    text = read_text(path, max_bytes=MAX_YAML_BYTES, allow_empty=True).text
    if not text.strip():
        return default
    from ruamel.yaml.error import YAMLError

    try:
        data = _yaml().load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(
            f"invalid YAML: {problem}", code="bad-yaml", path=str(path), line=line
        ) from None
    return default if data is None else data


def dump_yaml(path: Path, data: Any) -> None:
    """Write ``data`` as YAML to ``path`` atomically."""
    buffer = io.StringIO()
    _yaml().dump(data, buffer)
    write_text_atomic(path, buffer.getvalue())
