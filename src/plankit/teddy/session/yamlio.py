"""Small YAML files of the workspace (``memos.yaml``, ``meta.yaml``, ``config.yaml``).

ruamel.yaml in round-trip mode: duplicate keys are rejected, comments survive an
update, and no tag can build a Python object.  Size and nesting are held to plankit's
YAML limits (:mod:`plankit.yamllimits`) before the parser sees the text, so a file
nested ten thousand levels deep is a one-line error at once, not a ``RecursionError``
after many seconds.  Imported only by the commands that read these files.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from plankit.errors import InputError
from plankit.textio import read_text, write_text_atomic
from plankit.yamllimits import MAX_YAML_BYTES, MAX_YAML_DEPTH, YamlLimitError, check_nesting

__all__ = ["MAX_YAML_BYTES", "dump_yaml", "load_yaml", "yaml_from_text"]


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
    return yaml_from_text(text, str(path), default=default)


def yaml_from_text(text: str, path: str, *, default: Any) -> Any:
    """The YAML document ``text`` (read from ``path``, named in errors) as
    :func:`load_yaml` reads it, for a caller that read the file itself."""
    if not text.strip():
        return default
    if len(text.encode("utf-8", "surrogatepass")) > MAX_YAML_BYTES:
        raise InputError(
            f"is over {MAX_YAML_BYTES // 1_048_576} MiB; refused", code="too-large", path=path
        )
    from ruamel.yaml.error import YAMLError

    try:
        check_nesting(text)
        data = _yaml().load(text)
    except YamlLimitError as exc:
        raise InputError(exc.message, code="yaml-limit", path=path, line=exc.line) from None
    except RecursionError:  # pragma: no cover - check_nesting refuses such files first
        raise InputError(
            f"nested more than {MAX_YAML_DEPTH} levels deep; flatten the structure",
            code="yaml-limit",
            path=path,
        ) from None
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(
            f"invalid YAML: {problem}", code="bad-yaml", path=path, line=line
        ) from None
    return default if data is None else data


def dump_yaml(path: Path, data: Any) -> None:
    """Write ``data`` as YAML to ``path`` atomically."""
    buffer = io.StringIO()
    _yaml().dump(data, buffer)
    write_text_atomic(path, buffer.getvalue())
