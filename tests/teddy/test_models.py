"""Model access: choosing the model, clear errors, retries with backoff, progress, usage.

The only fake is the model itself: plankit's scripted model, registered with llm through
its plugin hook.  No test reaches the network.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

llm = pytest.importorskip("llm")

from plankit.teddy.cli import main  # noqa: E402
from plankit.teddy.planning import models, scripted_model  # noqa: E402
from plankit.teddy.planning.models import (  # noqa: E402
    ModelError,
    ModelPlanner,
    PlanRequest,
    Retry,
    StreamStatus,
    Usage,
    configured_model,
    is_auth_failure,
    is_transient,
    load_model,
)
from plankit.teddy.planning.scripted_model import ScriptedNetworkError  # noqa: E402
from plankit.teddy.session.layout import TurnMeta, read_meta, write_meta  # noqa: E402
from tests.console import run_console  # noqa: E402


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No key, no model setting and an empty llm user directory, for every test."""
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))
    monkeypatch.setenv("PLANKIT_HOME", str(tmp_path / "plankit-home"))
    for name in ("OPENAI_API_KEY", "TEDDY_MODEL", "TEDDY_SCRIPTED_RESPONSES", "TEDDY_SCRIPTED_LOG"):
        monkeypatch.delenv(name, raising=False)
    scripted_model.reset()
    yield
    scripted_model.reset()


def request(tmp_path: Path) -> PlanRequest:
    return PlanRequest(
        "<agent name='Developer'/>", "the payload\n\n# User Message\n\nhi\n", tmp_path
    )


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


# --- the scripted model is an llm plugin ---------------------------------------------------


def test_installing_plankit_adds_no_model_to_llms_list() -> None:
    # `llm models` in a fresh process, as a user who installed plankit runs it
    listed = subprocess.run(
        [sys.executable, "-c", "import llm; print([m.model_id for m in llm.get_models()])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "teddy-scripted" not in listed
    assert "plankit" not in str(
        subprocess.run(
            [sys.executable, "-c", "import llm; print(llm.get_plugins())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )


def test_the_scripted_model_is_registered_for_whoever_asks_for_it() -> None:
    model = models.load_model("teddy-scripted")  # teddy --model teddy-scripted
    assert isinstance(model, scripted_model.ScriptedModel)
    assert isinstance(llm.get_model("teddy-scripted"), scripted_model.ScriptedModel)
    models.register_scripted_model()  # idempotent
    assert [m.model_id for m in llm.get_models()].count("teddy-scripted") == 1


def test_scripted_answers_come_in_order_with_usage_and_are_recorded() -> None:
    scripted_model.script(["first answer", "second"])
    model = load_model("teddy-scripted")
    response = model.prompt("hello there", system="be brief")
    assert response.text() == "first answer"
    assert response.usage().input == (len("be brief" + "hello there") + 3) // 4
    assert response.usage().output == 3
    assert model.prompt("again").text() == "second"
    assert [(r.system, r.prompt) for r in scripted_model.received()] == [
        ("be brief", "hello there"),
        (None, "again"),
    ]
    with pytest.raises(llm.ModelError, match="has given all 2 scripted responses"):
        model.prompt("more").text()


def test_scripted_responses_from_a_directory_go_on_across_processes(tmp_path: Path) -> None:
    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "01.md").write_text("one\n")
    (answers / "02.md").write_text("two\n")
    log = tmp_path / "log.jsonl"
    code = (
        "from plankit.teddy.planning.models import load_model; "
        "print(load_model('teddy-scripted').prompt('q', system='s').text(), end='')"
    )
    env = {**os.environ, "TEDDY_SCRIPTED_RESPONSES": str(answers), "TEDDY_SCRIPTED_LOG": str(log)}
    outs = [
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        for _ in range(3)
    ]
    assert [o.stdout for o in outs[:2]] == ["one\n", "two\n"]
    assert "has given all 2 responses" in outs[2].stderr
    assert (tmp_path / "answers.position").read_text() == "2\n"
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert entries[0] == {"model": "teddy-scripted", "system": "s", "prompt": "q"}
    assert len(entries) == 3


# --- which model ----------------------------------------------------------------------------


def test_model_comes_from_option_then_environment_then_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert configured_model(None, None) is None
    assert configured_model(None, "from-config") == "from-config"
    monkeypatch.setenv("TEDDY_MODEL", "from-env")
    assert configured_model(None, "from-config") == "from-env"
    assert configured_model("from-option", "from-config") == "from-option"


def test_unknown_model_suggests_the_close_name() -> None:
    with pytest.raises(ModelError) as err:
        load_model("gpt-4o-mnii")
    assert err.value.code == "unknown-model"
    assert "unknown model 'gpt-4o-mnii'; did you mean 'gpt-4o-mini'?" in str(err.value)
    assert "`llm models`" in str(err.value)


def test_missing_key_names_the_fix_before_anything_is_sent() -> None:
    with pytest.raises(ModelError) as err:
        load_model("gpt-4o-mini")
    assert str(err.value) == (
        "model 'gpt-4o-mini' needs an API key: run `llm keys set openai` or set "
        "OPENAI_API_KEY (or plan by hand with --manual)"
    )


def test_a_key_stored_by_llm_is_found(tmp_path: Path) -> None:
    (tmp_path / "llm-home").mkdir(exist_ok=True)
    (tmp_path / "llm-home" / "keys.json").write_text('{"openai": "sk-test"}')
    assert load_model("4o-mini").model_id == "gpt-4o-mini"  # an alias works too


def _session(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    assert run_console(main, "new", "demo", cwd=root).returncode == 0


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (
            ["--model", "no-such-model"],
            {},
            "teddy: unknown model 'no-such-model'; `llm models` lists the models llm knows",
        ),
        (
            [],
            {"TEDDY_MODEL": "gpt-4o-mini"},
            "teddy: model 'gpt-4o-mini' needs an API key: run `llm keys set openai` or set "
            "OPENAI_API_KEY",
        ),
    ],
    ids=["unknown-model", "missing-key"],
)
def test_cli_model_errors_are_one_line_and_exit_1(
    tmp_path: Path, args: list[str], env: dict[str, str], expected: str
) -> None:
    root = tmp_path / "proj"
    _session(root)
    result = run_console(main, "plan", "-m", "Do it", *args, cwd=root, env=env)
    assert result.returncode == 1
    assert result.stderr.startswith(expected)
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    assert result.stdout == ""
    turn = next((root / ".teddy").glob("*-demo")) / "01"
    assert not (turn / "plan.md").exists() and not (turn / "message.md").exists()


# --- retries ----------------------------------------------------------------------------


def test_network_failures_are_retried_with_backoff(tmp_path: Path) -> None:
    scripted_model.script(
        [ConnectionError("connection reset"), ScriptedNetworkError("busy", 503), "# Plan\n"]
    )
    sleeps, err = Sleeps(), io.StringIO()
    planner = ModelPlanner(
        load_model("teddy-scripted"), retry=Retry((0.5, 1.0, 2.0), sleeps), err=err, live=False
    )
    answer = planner.answer(request(tmp_path))
    assert answer.text == "# Plan\n" and answer.attempts == 3 and answer.model == "teddy-scripted"
    assert sleeps.calls == [0.5, 1.0]
    log = err.getvalue()
    assert "connection reset; retrying in 0.5 s (attempt 2 of 4)" in log
    assert "ScriptedNetworkError: busy; retrying in 1 s (attempt 3 of 4)" in log
    assert len(scripted_model.received()) == 3


def test_retries_are_bounded_then_reported(tmp_path: Path) -> None:
    scripted_model.script([ConnectionError("no route")] * 5)
    sleeps = Sleeps()
    planner = ModelPlanner(
        load_model("teddy-scripted"), retry=Retry((1.0, 2.0, 4.0), sleeps), err=io.StringIO()
    )
    with pytest.raises(ModelError) as err:
        planner.answer(request(tmp_path))
    assert sleeps.calls == [1.0, 2.0, 4.0]
    assert len(scripted_model.received()) == 4
    assert str(err.value) == (
        "teddy-scripted could not be reached after 4 attempts (ConnectionError: no route); "
        "check the network and run the command again, or plan by hand with --manual"
    )


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (ValueError("bad option"), "teddy-scripted failed: ValueError: bad option"),
        (
            ScriptedNetworkError("invalid key", 401),
            "teddy-scripted refused the API key (ScriptedNetworkError: invalid key)",
        ),
    ],
)
def test_other_failures_are_not_retried(tmp_path: Path, failure: Exception, expected: str) -> None:
    scripted_model.script([failure, "# never"])
    sleeps = Sleeps()
    planner = ModelPlanner(
        load_model("teddy-scripted"), retry=Retry((1.0,), sleeps), err=io.StringIO()
    )
    with pytest.raises(ModelError, match="^" + expected.replace("(", r"\(").replace(")", r"\)")):
        planner.answer(request(tmp_path))
    assert sleeps.calls == []


def test_failure_classification_needs_no_provider_library() -> None:
    class APIConnectionError(Exception):
        pass

    class RateLimited(Exception):
        status_code = 429

    class AuthenticationError(Exception):
        pass

    assert is_transient(APIConnectionError()) and is_transient(RateLimited())
    assert is_transient(TimeoutError()) and not is_transient(ValueError())
    assert is_auth_failure(AuthenticationError()) and not is_auth_failure(RateLimited())


def test_cli_reports_exhausted_retries_without_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from plankit.teddy.cli import cli

    root = tmp_path / "proj"
    _session(root)
    monkeypatch.chdir(root)
    monkeypatch.setattr(models, "DEFAULT_RETRY", Retry((0.0, 0.0), Sleeps()))
    scripted_model.script([ConnectionError("down")] * 3)
    result = CliRunner().invoke(cli, ["plan", "-m", "go", "--model", "teddy-scripted"])
    assert result.exit_code == 1
    assert "teddy: teddy-scripted could not be reached after 3 attempts" in result.output
    assert result.output.count("retrying in 0 s") == 2
    assert "Traceback" not in result.output


# --- progress and usage -------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_live_status_line_is_redrawn_then_erased() -> None:
    err, clock = io.StringIO(), Clock()
    status = StreamStatus("gpt-x", err, live=True, clock=clock)
    status.start()
    clock.now += 0.0625
    status.received("abc")  # too soon to redraw
    clock.now += 1.0625
    status.received("defg")
    status.done(Usage(1200, 34))
    out = err.getvalue()
    assert out.startswith("\r⠋ gpt-x: 0 characters, 0 s\x1b[K")
    assert "\r⠙ gpt-x: 7 characters, 1 s\x1b[K" in out
    assert "3 characters" not in out
    assert out.endswith(
        "\r\x1b[Kteddy: gpt-x answered: 7 characters in 1.1 s, 1,200 tokens in / 34 out\n"
    )


def test_plain_progress_when_not_a_terminal() -> None:
    err, clock = io.StringIO(), Clock()
    status = StreamStatus("gpt-x", err, clock=clock)  # a StringIO is not a terminal
    status.start()
    status.received("x" * 5000)
    clock.now += 2
    status.done(None)
    assert err.getvalue() == (
        "teddy: asking gpt-x …\nteddy: gpt-x answered: 5,000 characters in 2.0 s\n"
    )


def test_meta_keeps_model_and_usage(tmp_path: Path) -> None:
    path = tmp_path / "meta.yaml"
    write_meta(path, TurnMeta("02", "01", None, "Developer", 'odd "model"', 1500, 320))
    assert read_meta(path, "x") == TurnMeta("02", "01", None, "Developer", 'odd "model"', 1500, 320)
    write_meta(path, TurnMeta("02", "01"))
    assert "model" not in path.read_text() and "tokens" not in path.read_text()
    path.write_text('turn_id: "02"\ninput_tokens: many\n')
    with pytest.raises(Exception, match="'input_tokens' must be a whole number of tokens"):
        read_meta(path, "02")
