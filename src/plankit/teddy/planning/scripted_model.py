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

The answers themselves are :mod:`plankit.teddy.planning.scripted`'s, which imports
neither llm nor a provider's SDK: ``teddy`` plans with ``teddy-scripted`` through that
module, and only ``llm -m teddy-scripted`` (or Python code asking llm for it) goes
through this plugin.

Example (pytest)::

    from plankit.teddy.planning import scripted_model

    def test_my_flow(monkeypatch):
        scripted_model.script(["# A plan …"])
        monkeypatch.setenv("TEDDY_MODEL", "teddy-scripted")
        …
        assert "my message" in scripted_model.received()[0].prompt
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import llm

from plankit.teddy.planning.scripted import (
    ENV_LOG,
    ENV_RESPONSES,
    MODEL_ID,
    Request,
    ScriptedError,
    ScriptedNetworkError,
    received,
    remaining,
    reset,
    respond,
    script,
    tokens,
)

__all__ = [
    "ENV_LOG",
    "ENV_RESPONSES",
    "MODEL_ID",
    "PLUGIN_NAME",
    "Request",
    "ScriptedModel",
    "ScriptedNetworkError",
    "received",
    "remaining",
    "reset",
    "script",
]

PLUGIN_NAME = "plankit-teddy-scripted"
"""The name the plugin is registered under."""

_CHUNK = 64


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
        system, text = prompt.system or None, prompt.prompt or ""
        try:
            item = respond(system, text)
        except ScriptedError as exc:
            raise llm.ModelError(str(exc)) from None
        response.set_usage(input=tokens((system or "") + text), output=tokens(item))
        step = _CHUNK if stream else max(len(item), 1)
        for start in range(0, len(item), step):
            yield item[start : start + step]


@llm.hookimpl
def register_models(register: Callable[..., None]) -> None:
    """llm's plugin hook: add the scripted model."""
    register(ScriptedModel())
