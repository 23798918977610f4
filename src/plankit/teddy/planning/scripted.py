"""The scripted model's answers, without llm: what ``teddy-scripted`` says, and the
model object ``teddy plan``, ``teddy run``, the re-plan loop and ``teddy acp`` use.

``teddy-scripted`` is a fake at the network's edge: planning with it must start as fast
as any offline command, so nothing here imports llm or a provider's SDK (llm alone
loads the OpenAI SDK with its default plugins, seconds on a busy machine).
:mod:`plankit.teddy.planning.scripted_model` makes the same answers an llm plugin for
``llm -m teddy-scripted``; both read the same script and responses (see that module for
``TEDDY_SCRIPTED_RESPONSES`` and ``TEDDY_SCRIPTED_LOG``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from plankit.errors import PlankitError
from plankit.textio import write_text_atomic

MODEL_ID = "teddy-scripted"
"""The model id to pass as ``--model`` or ``TEDDY_MODEL``."""
ENV_RESPONSES = "TEDDY_SCRIPTED_RESPONSES"
"""Names the responses file or directory."""
ENV_LOG = "TEDDY_SCRIPTED_LOG"
"""Names a file that receives every request as a JSON line."""
ENV_DELAY = "TEDDY_SCRIPTED_CHUNK_DELAY"
"""Seconds to wait before each streamed chunk but the first: a slow model, for tests
of what happens while one is still writing (unset, empty or not a number: no wait)."""

_CHUNK = 64


class ScriptedError(PlankitError):
    """The script cannot answer (it is used up, missing or unreadable); the message
    says how to fix it."""


class ScriptedNetworkError(ConnectionError):
    """A network failure the script asked for (with an HTTP status when it gave one)."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


@dataclass(frozen=True, slots=True)
class Request:
    """One request the scripted model received."""

    system: str | None
    """The system prompt."""
    prompt: str
    """The user prompt."""


_script: list[str | BaseException] | None = None
_position = 0
_received: list[Request] = []


def script(responses: Iterable[str | BaseException]) -> None:
    """Answer the next requests of this process with ``responses``, in order (this wins
    over ``TEDDY_SCRIPTED_RESPONSES``), and forget the requests received so far."""
    global _script, _position
    _script = list(responses)
    _position = 0
    _received.clear()


def reset() -> None:
    """Forget the in-process script and the requests received."""
    global _script, _position
    _script = None
    _position = 0
    _received.clear()


def received() -> list[Request]:
    """The requests received in this process, oldest first."""
    return list(_received)


def remaining() -> int:
    """How many in-process responses are left (0 when none were scripted)."""
    return 0 if _script is None else len(_script) - _position


def _from_item(item: object, where: str) -> str | BaseException:
    if isinstance(item, str):
        return item
    if isinstance(item, dict) and isinstance(item.get("error"), str):
        status = item.get("status")
        return ScriptedNetworkError(item["error"], status if isinstance(status, int) else None)
    raise ScriptedError(f'{where}: each response must be a string or {{"error": "…"}}')


def _load(path: Path) -> list[str | BaseException]:
    try:
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
            return [p.read_text(encoding="utf-8") for p in files]
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScriptedError(f"cannot read the scripted responses {path}: {exc}") from None
    if not isinstance(data, list):
        raise ScriptedError(f"{path}: the scripted responses must be a JSON list")
    return [_from_item(item, str(path)) for item in data]


def _next_from_file(path: Path) -> str | BaseException:
    responses = _load(path)
    state = path.with_name(path.name + ".position")
    try:
        position = int(state.read_text(encoding="utf-8").strip() or 0)
    except (OSError, ValueError):
        position = 0
    if position >= len(responses):
        raise ScriptedError(
            f"the scripted model has given all {len(responses)} responses of {path}; "
            f"add more, or delete {state.name} to start again"
        )
    write_text_atomic(state, f"{position + 1}\n")
    return responses[position]


def _next() -> str | BaseException:
    global _position
    if _script is not None:
        if _position >= len(_script):
            raise ScriptedError(
                f"the scripted model has given all {len(_script)} scripted responses"
            )
        _position += 1
        return _script[_position - 1]
    name = os.environ.get(ENV_RESPONSES)
    if not name:
        raise ScriptedError(
            "the scripted model has nothing to say: call "
            "plankit.teddy.planning.scripted_model.script() "
            f"or set {ENV_RESPONSES} to a JSON list or a directory of answers"
        )
    return _next_from_file(Path(name))


def _log(request: Request) -> None:
    name = os.environ.get(ENV_LOG)
    if not name:
        return
    line = json.dumps(
        {"model": MODEL_ID, "system": request.system, "prompt": request.prompt},
        ensure_ascii=False,
    )
    with open(name, "a", encoding="utf-8") as out:
        out.write(line + "\n")


def _chunk_delay() -> float:
    try:
        delay = float(os.environ.get(ENV_DELAY) or 0)
    except ValueError:
        return 0.0
    return delay if 0 < delay < 60 else 0.0


def tokens(text: str) -> int:
    """The scripted token count: one token per four characters, rounded up."""
    return (len(text) + 3) // 4


def respond(system: str | None, prompt: str) -> str:
    """Record the request, then the next response (raised when it is an error)."""
    request = Request(system or None, prompt)
    _received.append(request)
    _log(request)
    item = _next()
    if isinstance(item, BaseException):
        raise item
    return item


@dataclass(frozen=True, slots=True)
class ScriptedUsage:
    """Token usage, as llm's ``Response.usage()`` gives it."""

    input: int
    output: int


class ScriptedResponse:
    """The answer to one prompt: its text in chunks, then its usage."""

    def __init__(self, system: str | None, prompt: str, stream: bool) -> None:
        self._system, self._prompt, self._stream = system, prompt, stream
        self._usage = ScriptedUsage(0, 0)

    def __iter__(self) -> Iterator[str]:
        text = respond(self._system, self._prompt)
        self._usage = ScriptedUsage(tokens((self._system or "") + self._prompt), tokens(text))
        step = _CHUNK if self._stream else max(len(text), 1)
        delay = _chunk_delay()
        for start in range(0, len(text), step):
            if start and delay:
                time.sleep(delay)
            yield text[start : start + step]

    def usage(self) -> ScriptedUsage:
        return self._usage


class ScriptedModel:
    """``teddy-scripted`` as the planners see a model (the part of llm's ``Model`` they
    use): it needs no key and streams the next response."""

    model_id = MODEL_ID
    can_stream = True
    needs_key: str | None = None
    key_env_var: str | None = None

    def prompt(
        self, prompt: str, *, system: str | None = None, stream: bool = True
    ) -> ScriptedResponse:
        """The response to ``prompt``: the script's next answer, read as it is iterated.
        The system prompt is received stripped, as llm sends it to every model."""
        return ScriptedResponse((system or "").strip() or None, prompt, stream)
