"""A scripted language model, so that a whole TeDDy session can run offline in tests.

It is an llm plugin that is not installed as one, so that it never appears in a user's
``llm models``: teddy registers it in its own process when the model asked for is
``teddy-scripted`` (:func:`plankit.teddy.planning.models.register_scripted_model`, which
a program of one's own may call too).  It answers each request with the
next prepared response, in order:

- in Python, :func:`script` sets the responses for the running process; a response
  that is an exception instance is raised instead of answered (``ConnectionError`` to
  exercise the retries);
- across processes, ``TEDDY_SCRIPTED_RESPONSES=PATH`` names either a JSON list (each
  item an answer, or ``{"error": "message"}`` for a network failure, optionally with
  ``"status": 503`` for an HTTP status) or a directory whose files, in name order, are
  the answers.  The position of the next response is kept in ``PATH.position``, so
  consecutive ``teddy`` commands go on where the last one stopped; delete that file to
  start again.

Every request is remembered (:func:`received`), and appended as one JSON line
(``{"model", "system", "prompt"}``) to ``TEDDY_SCRIPTED_LOG`` when that is set.
Token usage is reported as one token per four characters, rounded up.

Example (pytest)::

    from plankit.teddy.planning import scripted_model

    def test_my_flow(monkeypatch):
        scripted_model.script(["# A plan …"])
        monkeypatch.setenv("TEDDY_MODEL", "teddy-scripted")
        …
        assert "my message" in scripted_model.received()[0].prompt
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import llm

from plankit.textio import write_text_atomic

MODEL_ID = "teddy-scripted"
"""The model id to pass as ``--model`` or ``TEDDY_MODEL``."""
PLUGIN_NAME = "plankit-teddy-scripted"
"""The name the plugin is registered under."""
ENV_RESPONSES = "TEDDY_SCRIPTED_RESPONSES"
"""Names the responses file or directory."""
ENV_LOG = "TEDDY_SCRIPTED_LOG"
"""Names a file that receives every request as a JSON line."""

_CHUNK = 64


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
    raise llm.ModelError(f'{where}: each response must be a string or {{"error": "…"}}')


def _load(path: Path) -> list[str | BaseException]:
    try:
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
            return [p.read_text(encoding="utf-8") for p in files]
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise llm.ModelError(f"cannot read the scripted responses {path}: {exc}") from None
    if not isinstance(data, list):
        raise llm.ModelError(f"{path}: the scripted responses must be a JSON list")
    return [_from_item(item, str(path)) for item in data]


def _next_from_file(path: Path) -> str | BaseException:
    responses = _load(path)
    state = path.with_name(path.name + ".position")
    try:
        position = int(state.read_text(encoding="utf-8").strip() or 0)
    except (OSError, ValueError):
        position = 0
    if position >= len(responses):
        raise llm.ModelError(
            f"the scripted model has given all {len(responses)} responses of {path}; "
            f"add more, or delete {state.name} to start again"
        )
    write_text_atomic(state, f"{position + 1}\n")
    return responses[position]


def _next() -> str | BaseException:
    global _position
    if _script is not None:
        if _position >= len(_script):
            raise llm.ModelError(
                f"the scripted model has given all {len(_script)} scripted responses"
            )
        _position += 1
        return _script[_position - 1]
    name = os.environ.get(ENV_RESPONSES)
    if not name:
        raise llm.ModelError(
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


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


class ScriptedModel(llm.Model):
    """Answers with the prepared responses (see the module documentation)."""

    model_id = MODEL_ID
    can_stream = True

    def execute(
        self,
        prompt: llm.Prompt,
        stream: bool,
        response: llm.Response,
        conversation: llm.Conversation | None = None,
    ) -> Iterator[str]:
        """Record the request, then stream the next response (or raise it)."""
        request = Request(prompt.system or None, prompt.prompt or "")
        _received.append(request)
        _log(request)
        item = _next()
        if isinstance(item, BaseException):
            raise item
        response.set_usage(
            input=_tokens((request.system or "") + request.prompt), output=_tokens(item)
        )
        step = _CHUNK if stream else max(len(item), 1)
        for start in range(0, len(item), step):
            yield item[start : start + step]


@llm.hookimpl
def register_models(register: Callable[..., None]) -> None:
    """llm's plugin hook: add the scripted model."""
    register(ScriptedModel())
