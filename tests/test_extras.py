"""Optional parts are extras: a feature that alone needs a heavy library installs it
with ``plankit[EXTRA]``, and without it says the exact command.  Each library is made
missing in this process (``sys.modules[name] = None`` makes its import fail), then the
feature is used as a user would."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

from plankit.errors import PlankitError

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXTRAS: dict[str, list[str]] = PYPROJECT["project"]["optional-dependencies"]
FEATURES = ("models", "research", "postgres", "gsheets")
"""The extras that each serve one feature (``all`` is their union; ``test`` and
``mutation`` are for developers)."""


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_all_is_every_feature_and_the_tests_get_all() -> None:
    assert set(EXTRAS) == {*FEATURES, "all", "test", "mutation"}
    assert EXTRAS["all"] == [f"plankit[{','.join(FEATURES)}]"]
    assert "plankit[all]" in EXTRAS["test"]
    core = _names(PYPROJECT["project"]["dependencies"])
    for extra in FEATURES:  # an extra's library is not installed by plain `pip install`
        assert not _names(EXTRAS[extra]) & core, extra


def test_the_readme_says_which_extra_serves_what() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for extra in (*FEATURES, "all"):
        assert re.search(rf"^\| `plankit\[{extra}\]` \| ", readme, re.M), extra


def _missing(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for name in list(sys.modules):
        if name.split(".", 1)[0] in modules:
            monkeypatch.delitem(sys.modules, name)
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def _says_install(exc: BaseException, extra: str) -> None:
    message = str(exc)
    assert f"pip install 'plankit[{extra}]'" in message, message
    assert "\n" not in message


def test_a_language_model_without_the_models_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from plankit.teddy.planning.models import load_model

    _missing(monkeypatch, "llm")
    with pytest.raises(PlankitError) as caught:
        load_model("gpt-4o-mini")
    _says_install(caught.value, "models")


def test_the_price_table_without_the_models_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from plankit.teddy.planning.costs import UnknownPrice, price_per_million
    from plankit.teddy.session.config import Config

    _missing(monkeypatch, "genai_prices")
    with pytest.raises(UnknownPrice) as caught:
        price_per_million("gpt-4o-mini", Config())
    _says_install(caught.value, "models")


def test_research_without_the_research_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from plankit.teddy.run.research import load_backend

    _missing(monkeypatch, "ddgs")
    with pytest.raises(PlankitError) as caught:
        load_backend("ddgs", tmp_path)
    _says_install(caught.value, "research")


def test_postgresql_without_the_postgres_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from plankit.agentflow.pgstore import connect_postgres

    _missing(monkeypatch, "psycopg")
    with pytest.raises(PlankitError) as caught:
        connect_postgres("postgresql://agentflow@localhost/agentflow")
    _says_install(caught.value, "postgres")


def test_google_sheets_without_the_gsheets_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from plankit.checklist import PlanManager
    from plankit.checklist.stores import open_store

    _missing(monkeypatch, "gspread")
    store = open_store("gsheets:1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", credentials=None)
    with pytest.raises(PlankitError) as caught:
        PlanManager(store).get_plan()
    _says_install(caught.value, "gsheets")
