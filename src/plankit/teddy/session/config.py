"""``.teddy/config.yaml``: the user's settings, all optional.

```yaml
model: gpt-4o-mini            # the model `teddy plan` uses (planning issue)
default_agent: Developer      # the agent of a new session's first turn
preview_command: "code"       # previewer for (r)eview and (p)review
execute:
  timeout: 600                # seconds before an EXECUTE command is stopped
  output_cap: 65536           # bytes of stdout and of stderr kept in the report
  checkpoint: true            # keep what a turn will change first, for `teddy undo`
context:
  max_file_bytes: 200000      # larger files are cut in input.md
  max_bytes: 100000           # input.md's budget: older reports, then AI-added files leave
  max_tokens: 30000           # the same in tokens (the provider's tokenizer, else estimated)
research:
  backend: ddgs               # or "fixture:path/to/results.json", or "module:callable"
replan:
  max_attempts: 3
network:                      # what URL reads may reach besides public addresses
  allow_hosts: [localhost]    # host names that may resolve to any address
  allow_networks: ["10.0.0.0/8"]  # address ranges that may be reached
prices:                       # USD per million tokens, for `teddy run --max-cost`
  my-local-model: {input: 0, output: 0}   # (models genai-prices does not know)
protected_paths:              # paths plans may not touch (see docs/security.md)
  write: [".git", ".teddy"]   # CREATE and EDIT refused
  read: [".git"]              # READ, EDIT and handoff resources refused
```
Unknown keys and wrong types are errors that name the key (with "did you mean" when
one is close), never ignored, with one exception: the settings of teddy-cli 0.2.x that
plankit does not use (:data:`TEDDY_CLI_KEYS`), so that a config.yaml written for it
works here too; they are named once, in a warning on standard error.  A
``protected_paths`` list replaces its default: keep the default rules in it unless you
mean to lift them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plankit.errors import InputError

PROTECTED_WRITE: tuple[str, ...] = (".git", ".teddy")
"""Default ``protected_paths.write``: git's data (a hook or ``core.fsmonitor`` in
``.git/config`` runs commands) and TeDDy's own state (its config, sessions, memos), at
any depth."""
PROTECTED_READ: tuple[str, ...] = (".git",)
"""Default ``protected_paths.read``: git's data (remote URLs can carry credentials)."""
TEDDY_CLI_KEYS: frozenset[str] = frozenset(
    {
        "editor",
        "diff_flags",
        "execution",
        "read",
        "yolo_default",
        "yolo_guardrails",
        "auto_pruning",
        "llm",
        "research.max_results",
    }
)
"""Settings of teddy-cli 0.2.x's config.yaml (as its bundled config.yaml lists them)
that plankit does not read: accepted with a warning, never an error.  A top-level name
covers everything under it.  plankit's nearest equivalents: ``editor`` →
``preview_command``, ``llm.model`` → ``model``, ``execution.default_timeout_seconds``
→ ``execute.timeout``, ``yolo_guardrails`` → ``teddy run --max-turns/--max-cost``,
``auto_pruning`` → ``context.max_bytes``."""


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
    execute_checkpoint: bool = True
    """Whether a turn's files are checkpointed before it runs (``teddy undo`` needs it;
    see :mod:`plankit.teddy.run.checkpoint`)."""
    output_cap: int = 65536
    """Bytes of stdout and of stderr kept for the report, each."""
    context_max_file_bytes: int = 200_000
    """Files larger than this are cut in ``input.md``."""
    context_max_bytes: int | None = None
    """``input.md``'s budget in bytes (None: no budget); see
    :mod:`plankit.teddy.context.budget`."""
    context_max_tokens: int | None = None
    """``input.md``'s budget in tokens (None: no budget)."""
    prices: tuple[tuple[str, float, float], ...] = ()
    """Per-model prices (model, USD per million input tokens, per million output tokens)
    that win over the bundled price table."""
    research_backend: str = "ddgs"
    """The RESEARCH backend: ``ddgs``, ``fixture:PATH`` or ``module:callable``."""
    replan_max_attempts: int = 3
    """Automatic re-plans in a row before giving up."""
    network_allow_hosts: tuple[str, ...] = ()
    """Host names URL reads may reach whatever they resolve to (``*.example.com``:
    its subdomains); see :mod:`plankit.teddy.context.network`."""
    network_allow_networks: tuple[str, ...] = ()
    """Address ranges (``10.0.0.0/8``, ``::1``) URL reads may reach."""
    protected_write: tuple[str, ...] = PROTECTED_WRITE
    """Path rules plans may not CREATE or EDIT (:func:`plankit.protected_paths.protected_by`)."""
    protected_read: tuple[str, ...] = PROTECTED_READ
    """Path rules plans may not READ, EDIT or hand off."""


_SCHEMA: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "model": ("model", str),
    "default_agent": ("default_agent", str),
    "preview_command": ("preview_command", str),
    "execute.timeout": ("execute_timeout", (int, float)),
    "execute.output_cap": ("output_cap", int),
    "execute.checkpoint": ("execute_checkpoint", bool),
    "context.max_file_bytes": ("context_max_file_bytes", int),
    "context.max_bytes": ("context_max_bytes", int),
    "context.max_tokens": ("context_max_tokens", int),
    "research.backend": ("research_backend", str),
    "replan.max_attempts": ("replan_max_attempts", int),
    "network.allow_hosts": ("network_allow_hosts", tuple),
    "network.allow_networks": ("network_allow_networks", tuple),
    "protected_paths.write": ("protected_write", list),
    "protected_paths.read": ("protected_read", list),
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


_WARNED: set[str] = set()


def _warn_foreign(path: Path, keys: list[str]) -> None:
    """Name teddy-cli's settings once per file and process, on standard error."""
    if not keys or str(path) in _WARNED:
        return
    _WARNED.add(str(path))
    sys.stderr.write(
        f"teddy: {path}: ignoring teddy-cli settings plankit does not use: "
        f"{', '.join(keys)} (plankit's settings: docs/teddy-sessions.md)\n"
    )


def load_config(root: Path) -> Config:
    """Read ``<root>/.teddy/config.yaml`` (defaults when it does not exist)."""
    from plankit.teddy.session.yamlio import load_yaml

    path = root / ".teddy" / "config.yaml"
    data = load_yaml(path, default={})
    if not isinstance(data, dict):
        raise InputError("config.yaml must be a mapping of settings", path=str(path))
    values: dict[str, Any] = {}
    data = dict(data)
    foreign = [str(k) for k in data if k in TEDDY_CLI_KEYS]
    for key in foreign:
        del data[key]
    if "prices" in data:
        values["prices"] = _prices(data.pop("prices"), path)
    for key, value in _flatten(data).items():
        if key in TEDDY_CLI_KEYS:
            foreign.append(key)
            continue
        if key in _SECTIONS:
            keys = ", ".join(k.split(".", 1)[1] for k in _SCHEMA if k.startswith(key + "."))
            raise InputError(
                f"'{key}' is a section: give its settings ({keys}) under it",
                code="bad-config",
                path=str(path),
            )
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
        if kind is bool:
            if not isinstance(value, bool):
                raise InputError(
                    f"'{key}' must be true or false, not {value!r}",
                    code="bad-config",
                    path=str(path),
                )
            values[attr] = value
            continue
        if kind is list:
            values[attr] = _rules(key, value, path)
            continue
        if not isinstance(value, kind) or isinstance(value, bool):
            expected = kind.__name__ if isinstance(kind, type) else "a number"
            raise InputError(
                f"'{key}' must be {expected}, not {value!r}", code="bad-config", path=str(path)
            )
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 0:
            raise InputError(f"'{key}' must be positive", code="bad-config", path=str(path))
        values[attr] = value
    _warn_foreign(path, foreign)
    return Config(**values)


def _rules(key: str, value: object, path: Path) -> tuple[str, ...]:
    """A list of protected-path rules, each checked."""
    from plankit.protected_paths import check_rule

    if not isinstance(value, list):
        raise InputError(
            f'\'{key}\' must be a list of path rules such as [".git", ".teddy"], not {value!r}',
            code="bad-config",
            path=str(path),
        )
    for rule in value:
        problem = check_rule(rule) if isinstance(rule, str) else f"{rule!r} is not text"
        if problem is not None:
            raise InputError(f"'{key}': {problem}", code="bad-config", path=str(path))
    return tuple(value)


def _network(key: str, value: object, path: Path) -> tuple[str, ...]:
    """``network.allow_hosts`` or ``network.allow_networks``, checked."""
    from plankit.teddy.context.network import check_hosts, check_networks

    check = check_hosts if key == "network.allow_hosts" else check_networks
    try:
        return check(key, value)
    except ValueError as exc:
        raise InputError(str(exc), code="bad-config", path=str(path)) from None


def _prices(value: object, path: Path) -> tuple[tuple[str, float, float], ...]:
    """``prices``: model → ``{input: USD, output: USD}`` per million tokens."""

    def bad(message: str) -> InputError:
        return InputError(f"'prices': {message}", code="bad-config", path=str(path))

    if value is None:
        return ()
    if not isinstance(value, dict):
        raise bad("give a mapping of model names to {input: USD, output: USD} per 1M tokens")
    out = []
    for model, price in value.items():
        if not isinstance(price, dict) or set(price) != {"input", "output"}:
            raise bad(f"'{model}' needs exactly input and output (USD per 1M tokens)")
        numbers = [price["input"], price["output"]]
        if not all(isinstance(n, int | float) and not isinstance(n, bool) for n in numbers):
            raise bad(f"'{model}': input and output must be numbers")
        if any(n < 0 for n in numbers):
            raise bad(f"'{model}': prices cannot be negative")
        out.append((str(model), float(numbers[0]), float(numbers[1])))
    return tuple(out)
