"""Language models for ``teddy plan``, through the ``llm`` library (simonw/llm).

Which model answers: ``--model``, else the ``TEDDY_MODEL`` environment variable, else
``model:`` in ``.teddy/config.yaml``, else llm's own default (``llm models default``).
Any model llm knows works, including the ones its plugins add (``llm install
llm-anthropic`` …), with the keys llm stores (``llm keys set openai``) or the
provider's environment variable.

A planner turns a :class:`PlanRequest` (system prompt and user prompt) into an
:class:`Answer`.  :class:`ModelPlanner` asks a model: it streams the answer, shows
progress on standard error (a live status line on a terminal, two plain lines
otherwise), records token usage, and retries network failures with backoff a bounded
number of times.  Manual mode (a person pastes the answer) is
:class:`plankit.teddy.planning.manual.ManualPlanner`.

Every failure is a :class:`ModelError` whose text is one line naming the fix.  llm is
imported inside the functions that need it, never when a command starts, and never for
the scripted model (:func:`planning_model`), nor in manual mode.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

from plankit.errors import InputError

if TYPE_CHECKING:
    import llm

    from plankit.teddy.planning.scripted import ScriptedModel

ENV_MODEL = "TEDDY_MODEL"
"""The environment variable naming the model (after ``--model``, before config.yaml)."""

MANUAL = "manual"
"""The planner name recorded in ``meta.yaml`` when a person pasted the plan."""

_TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
_AUTH_STATUS = frozenset({401, 403})
_TRANSIENT_NAMES = (
    "connectionerror",
    "connecterror",
    "timeout",
    "transporterror",
    "remoteprotocolerror",
    "networkerror",
    "ratelimit",
    "overloaded",
    "serviceunavailable",
    "internalservererror",
)


class ModelError(InputError):
    """A model that cannot be used, or that did not answer; ``str()`` names the fix."""


class PlanningCancelled(Exception):
    """The person planning by hand gave up (``q``, an empty answer, end of input)."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one answer, as the provider reported them."""

    input_tokens: int | None
    """Tokens read (system prompt and prompt)."""
    output_tokens: int | None
    """Tokens written."""


@dataclass(frozen=True, slots=True)
class PlanRequest:
    """What a planner is asked."""

    system: str
    """The system prompt (the turn's ``system_prompt.xml``)."""
    prompt: str
    """The user prompt: ``input.md`` followed by the message."""
    turn_dir: Path
    """The turn directory (manual mode writes ``prompt.md`` there)."""
    label: str = ""
    """How messages name the turn (``turn 03``)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A planner's raw answer."""

    text: str
    """The text, exactly as received."""
    model: str
    """The model that wrote it (:data:`MANUAL` for a pasted answer)."""
    usage: Usage | None = None
    """Token usage, when the provider reports it."""
    attempts: int = 1
    """How many requests it took (more than one after retried network failures)."""


class Planner(Protocol):
    """Something that answers a :class:`PlanRequest`."""

    @property
    def name(self) -> str:
        """The model id, or :data:`MANUAL`."""
        ...

    def answer(self, request: PlanRequest) -> Answer:
        """The answer to ``request``; raises :class:`ModelError` or
        :class:`PlanningCancelled`."""
        ...


@dataclass(frozen=True, slots=True)
class Retry:
    """How network failures are retried: one wait per retry, then the error is reported."""

    delays: tuple[float, ...] = (2.0, 5.0, 15.0)
    """Seconds to wait before each retry; its length is the number of retries."""
    sleep: Callable[[float], None] = field(default=time.sleep)
    """How to wait (tests pass a function that records the delays)."""


DEFAULT_RETRY = Retry()
"""The retries of a :class:`ModelPlanner` made without its own :class:`Retry`."""


def configured_model(option: str | None, config_model: str | None) -> str | None:
    """The model asked for: ``--model``, ``TEDDY_MODEL``, config.yaml; None for llm's
    default."""
    return option or os.environ.get(ENV_MODEL) or config_model or None


def _import_llm() -> None:
    try:
        import llm  # noqa: F401
    except ImportError:
        raise ModelError(
            "planning with a language model needs the models extra (llm): "
            "pip install 'plankit[models]'; or plan by hand with --manual",
            code="no-llm",
        ) from None


SCRIPTED_MODEL = "teddy-scripted"
"""The scripted model's id (:mod:`plankit.teddy.planning.scripted_model`)."""


def register_scripted_model() -> None:
    """Make plankit's scripted model, ``teddy-scripted``, known to llm in this process.

    It is for tests and demos, so it is never installed as an llm plugin: ``llm
    models`` does not list it.  teddy registers it when the model asked for is
    ``teddy-scripted`` (``--model``, ``TEDDY_MODEL`` or llm's default); a program of
    one's own calls this before ``llm.get_model("teddy-scripted")``.
    """
    _import_llm()
    from llm.plugins import load_plugins, pm

    from plankit.teddy.planning import scripted_model

    load_plugins()  # type: ignore[no-untyped-call]
    if not pm.is_registered(scripted_model):
        pm.register(scripted_model, name=scripted_model.PLUGIN_NAME)


def _close_names(name: str) -> list[str]:
    import difflib

    import llm

    try:
        names = list(llm.get_model_aliases())
    except Exception:  # a broken plugin must not hide the real message
        return []
    return difflib.get_close_matches(name, names, n=1, cutoff=0.6)


def load_model(name: str | None) -> llm.Model:
    """The model called ``name`` (an id or an alias; None: llm's default), with its key
    checked, so that a missing key is reported before anything is sent."""
    _import_llm()
    import llm

    shown = name or str(llm.get_default_model())  # type: ignore[no-untyped-call]
    if shown == SCRIPTED_MODEL:  # asked for by name: the only way it is known
        register_scripted_model()
    try:
        model = llm.get_model(shown)
    except llm.UnknownModelError:
        close = _close_names(shown)
        hint = f"did you mean '{close[0]}'? " if close else ""
        what = f"unknown model '{shown}'" if name else f"llm's default model '{shown}' is unknown"
        raise ModelError(
            f"{what}; {hint}`llm models` lists the models llm knows, and plugins add more "
            "(e.g. `llm install llm-anthropic`)",
            code="unknown-model",
        ) from None
    try:
        model.get_key()
    except llm.NeedsKeyException:
        raise ModelError(_key_message(model), code="needs-key") from None
    return model


def planning_model(name: str | None) -> llm.Model | ScriptedModel:
    """The model ``teddy`` plans with: :func:`load_model`'s, except that the scripted
    model (``teddy-scripted``) is answered without llm, which would load every provider
    plugin (the OpenAI SDK among them) to find it."""
    from plankit.teddy.planning import scripted

    if name == scripted.MODEL_ID:
        return scripted.ScriptedModel()
    return load_model(name)


def _key_message(model: llm.Model | ScriptedModel) -> str:
    fix = f"run `llm keys set {model.needs_key}`"
    if model.key_env_var:
        fix += f" or set {model.key_env_var}"
    return f"model '{model.model_id}' needs an API key: {fix} (or plan by hand with --manual)"


def describe(exc: BaseException) -> str:
    """``ClassName: first line of the message``, cut to a readable length."""
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    if len(first) > 200:
        first = first[:199] + "…"
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def _status_code(exc: BaseException) -> int | None:
    for candidate in (exc, getattr(exc, "response", None)):
        code = getattr(candidate, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` looks like a network failure worth retrying (a lost connection, a
    timeout, a rate limit, a provider's 5xx), judged without importing any provider."""
    code = _status_code(exc)
    if code is not None:
        return code in _TRANSIENT_STATUS or code >= 500
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    names = [cls.__name__.lower() for cls in type(exc).__mro__]
    return any(marker in name for name in names for marker in _TRANSIENT_NAMES)


def is_auth_failure(exc: BaseException) -> bool:
    """Whether the provider refused the key (HTTP 401 or 403)."""
    code = _status_code(exc)
    if code is not None:
        return code in _AUTH_STATUS
    names = [cls.__name__ for cls in type(exc).__mro__]
    return "AuthenticationError" in names or "PermissionDeniedError" in names


class StreamStatus:
    """Progress of one answer on standard error.

    On a terminal: a status line redrawn in place (a spinner, characters received, elapsed
    seconds), erased when the answer is complete.  Otherwise: one line when the request
    starts and one when it ends.
    """

    _FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(
        self,
        label: str,
        err: TextIO | None = None,
        *,
        live: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.err = err if err is not None else sys.stderr
        if live is None:
            isatty = getattr(self.err, "isatty", None)
            live = bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"
        self.live = live
        self.clock = clock
        self.started = clock()
        self.chars = 0
        self._drawn = 0.0
        self._frame = 0
        self._dirty = False

    def start(self) -> None:
        """The request is sent."""
        self.started = self.clock()
        if self.live:
            self._draw()
        else:
            self._line(f"asking {self.label} …")

    def received(self, chunk: str) -> None:
        """A piece of the answer arrived."""
        self.chars += len(chunk)
        if self.live and self.clock() - self._drawn >= 0.1:
            self._draw()

    def done(self, usage: Usage | None) -> None:
        """The answer is complete."""
        elapsed = self.clock() - self.started
        tokens = ""
        if usage is not None and (usage.input_tokens or usage.output_tokens):
            tokens = f", {_count(usage.input_tokens)} tokens in / {_count(usage.output_tokens)} out"
        self._line(f"{self.label} answered: {self.chars:,} characters in {elapsed:.1f} s{tokens}")

    def note(self, message: str) -> None:
        """A message of its own line (a retry, a failure)."""
        self._line(message)

    def clear(self) -> None:
        """Erase the status line (before an error is reported)."""
        if self._dirty:
            self.err.write("\r\x1b[K")
            self.err.flush()
            self._dirty = False

    def _draw(self) -> None:
        self._drawn = self.clock()
        frame = self._FRAMES[self._frame % len(self._FRAMES)]
        self._frame += 1
        elapsed = self._drawn - self.started
        self.err.write(f"\r{frame} {self.label}: {self.chars:,} characters, {elapsed:.0f} s\x1b[K")
        self.err.flush()
        self._dirty = True

    def _line(self, message: str) -> None:
        self.clear()
        self.err.write(f"teddy: {message}\n")
        self.err.flush()


def _count(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


class ModelPlanner:
    """Plans with a language model (see the module documentation)."""

    def __init__(
        self,
        model: llm.Model | ScriptedModel,
        *,
        retry: Retry | None = None,
        err: TextIO | None = None,
        live: bool | None = None,
        on_chunk: Callable[[str], None] | None = None,
    ) -> None:
        self.model = model
        self.retry = retry
        self.err = err
        self.live = live
        self.on_chunk = on_chunk
        """Told each piece of the answer as it arrives (``teddy acp`` streams it)."""

    @property
    def name(self) -> str:
        """The model id."""
        return str(self.model.model_id)

    def answer(self, request: PlanRequest) -> Answer:
        """Ask the model, retrying network failures (see :class:`Retry`)."""
        from plankit.teddy.planning import scripted

        if isinstance(self.model, scripted.ScriptedModel):  # offline: llm is not loaded
            needs_key: tuple[type[Exception], ...] = ()
            model_error: tuple[type[Exception], ...] = (scripted.ScriptedError,)
        else:
            import llm

            needs_key, model_error = (llm.NeedsKeyException,), (llm.ModelError,)
        retry = self.retry if self.retry is not None else DEFAULT_RETRY
        attempts = len(retry.delays) + 1
        status = StreamStatus(self.name, self.err, live=self.live)
        for attempt in range(1, attempts + 1):
            status.chars = 0
            status.start()
            try:
                response = self.model.prompt(
                    request.prompt, system=request.system, stream=bool(self.model.can_stream)
                )
                chunks: list[str] = []
                for chunk in response:
                    chunks.append(chunk)
                    status.received(chunk)
                    if self.on_chunk is not None:
                        self.on_chunk(chunk)
                usage = response.usage()
            except KeyboardInterrupt:
                status.clear()
                raise
            except needs_key:
                status.clear()
                raise ModelError(_key_message(self.model), code="needs-key") from None
            except model_error as exc:  # written by the plugin for the user
                status.clear()
                raise ModelError(
                    f"{self.name}: {describe(exc).partition(': ')[2] or exc}", code="model-failed"
                ) from None
            except Exception as exc:
                status.clear()
                if is_auth_failure(exc):
                    raise ModelError(
                        f"{self.name} refused the API key ({describe(exc)}); set a valid one "
                        f"with `llm keys set {self.model.needs_key or 'NAME'}`",
                        code="key-refused",
                    ) from None
                if not is_transient(exc):
                    raise ModelError(
                        f"{self.name} failed: {describe(exc)}", code="model-failed"
                    ) from None
                if attempt == attempts:
                    raise ModelError(
                        f"{self.name} could not be reached after {attempts} attempt"
                        f"{'s' * (attempts != 1)} ({describe(exc)}); check the network and "
                        "run the command again, or plan by hand with --manual",
                        code="model-unreachable",
                    ) from None
                delay = retry.delays[attempt - 1]
                status.note(
                    f"{self.name}: {describe(exc)}; retrying in {delay:g} s "
                    f"(attempt {attempt + 1} of {attempts})"
                )
                retry.sleep(delay)
                continue
            found = Usage(usage.input, usage.output)
            found_usage = None if found == Usage(None, None) else found
            status.done(found_usage)
            return Answer("".join(chunks), self.name, found_usage, attempt)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises
