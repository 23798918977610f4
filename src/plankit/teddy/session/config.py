"""``.teddy/config.yaml``: the user's settings, all optional.

```yaml
model: gpt-4o-mini            # the model `teddy plan` uses (planning issue)
default_agent: Developer      # the agent of a new session's first turn
preview_command: "code"       # previewer for (r)eview and (p)review
execute:
  timeout: 600                # seconds before an EXECUTE command is stopped
  output_cap: 65536           # bytes of stdout and of stderr kept in the report
context:
  max_file_bytes: 200000      # larger files are cut in input.md
research:
  backend: ddgs               # or "fixture:path/to/results.json", or "module:callable"
replan:
  max_attempts: 3
network:                      # what URL reads may reach besides public addresses
  allow_hosts: [localhost]    # host names that may resolve to any address
  allow_networks: ["10.0.0.0/8"]  # address ranges that may be reached
```
Unknown keys and wrong types are errors that name the key, never ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plankit.errors import InputError


@dataclass(frozen=True, slots=True)
class Config:
    """The settings, with their defaults."""

    model: str | None = None
    """The model for ``teddy plan``."""
    default_agent: str = "Developer"
    """The agent of a new session's first turn."""
    preview_command: str | None = None
    """The previewer command; the file to show is passed as its last argument."""
    execute_timeout: float = 600.0
    """Seconds before a running EXECUTE command is stopped."""
    output_cap: int = 65536
    """Bytes of stdout and of stderr kept for the report, each."""
    context_max_file_bytes: int = 200_000
    """Files larger than this are cut in ``input.md``."""
    research_backend: str = "ddgs"
    """The RESEARCH backend: ``ddgs``, ``fixture:PATH`` or ``module:callable``."""
    replan_max_attempts: int = 3
    """Automatic re-plans in a row before giving up."""
    network_allow_hosts: tuple[str, ...] = ()
    """Host names URL reads may reach whatever they resolve to (``*.example.com``:
    its subdomains); see :mod:`plankit.teddy.context.network`."""
    network_allow_networks: tuple[str, ...] = ()
    """Address ranges (``10.0.0.0/8``, ``::1``) URL reads may reach."""


_SCHEMA: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "model": ("model", str),
    "default_agent": ("default_agent", str),
    "preview_command": ("preview_command", str),
    "execute.timeout": ("execute_timeout", (int, float)),
    "execute.output_cap": ("output_cap", int),
    "context.max_file_bytes": ("context_max_file_bytes", int),
    "research.backend": ("research_backend", str),
    "replan.max_attempts": ("replan_max_attempts", int),
    "network.allow_hosts": ("network_allow_hosts", tuple),
    "network.allow_networks": ("network_allow_networks", tuple),
}


_SECTIONS = frozenset(k.split(".")[0] for k in _SCHEMA if "." in k)


def _flatten(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in _SECTIONS and isinstance(value, dict):
            out.update({f"{key}.{sub}": v for sub, v in value.items()})
        else:
            out[str(key)] = value
    return out


def load_config(root: Path) -> Config:
    """Read ``<root>/.teddy/config.yaml`` (defaults when it does not exist)."""
    from plankit.teddy.session.yamlio import load_yaml

    path = root / ".teddy" / "config.yaml"
    data = load_yaml(path, default={})
    if not isinstance(data, dict):
        raise InputError("config.yaml must be a mapping of settings", path=str(path))
    values: dict[str, Any] = {}
    for key, value in _flatten(dict(data)).items():
        if key not in _SCHEMA:
            import difflib

            close = difflib.get_close_matches(key, list(_SCHEMA), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise InputError(f"unknown setting '{key}'{hint}", code="bad-config", path=str(path))
        attr, kind = _SCHEMA[key]
        if value is None:
            continue
        if key.startswith("network."):
            values[attr] = _network(key, value, path)
            continue
        if not isinstance(value, kind) or isinstance(value, bool):
            expected = kind.__name__ if isinstance(kind, type) else "a number"
            raise InputError(
                f"'{key}' must be {expected}, not {value!r}", code="bad-config", path=str(path)
            )
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0:
            raise InputError(f"'{key}' must be positive", code="bad-config", path=str(path))
        values[attr] = value
    return Config(**values)


def _network(key: str, value: object, path: Path) -> tuple[str, ...]:
    """``network.allow_hosts`` or ``network.allow_networks``, checked."""
    from plankit.teddy.context.network import check_hosts, check_networks

    check = check_hosts if key == "network.allow_hosts" else check_networks
    try:
        return check(key, value)
    except ValueError as exc:
        raise InputError(str(exc), code="bad-config", path=str(path)) from None
