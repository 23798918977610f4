# ruff: noqa: F811 - the fixtures imported from test_browser are parameters here
"""The board as a tool, in headless Chromium: a URL per plan and per view (reload, a
shared link, the back button), the keyboard, an accessibility check, why a turn
failed, search and a filter by state across every plan, emoji that render.

The browser, the board and its project are this module's own (the fixtures of
tests/board/test_browser.py, imported); each test changes plans of its own.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.board.conftest import BIN, Board
from tests.board.test_browser import (  # noqa: F401 - fixtures, used by name
    WAIT,
    BrowserContext,
    Page,
    board,
    browser,
    card,
    expect,
    live,
    open_plan,
    page,
    project,
    state,
)
from tests.teddy.test_session_e2e import plan as teddy_plan


def _failed_session(project: Path, name: str) -> str:
    """A TeDDy session whose plan failed validation (a CREATE of a file that exists),
    run by ``teddy execute``; its plan id."""
    env = {**os.environ, "TEDDY_SESSION": name}
    made = subprocess.run(
        [BIN / "teddy", "new", name], cwd=project, capture_output=True, text=True, env=env
    )
    assert made.returncode == 0, made.stderr
    session = Path(made.stdout.strip())
    (session / "01" / "plan.md").write_text(
        teddy_plan(
            "### `CREATE`\n- **File Path:** [README.md](/README.md)\n```\n# New 🟢\n```",
            title="Replace the readme",
        )
    )
    subprocess.run([BIN / "teddy", "execute", "-y"], cwd=project, capture_output=True, env=env)
    return f"teddy:{session.relative_to(project).as_posix()}"


def test_each_plan_has_a_url_that_survives_reload_sharing_and_back(
    page: Page, browser: BrowserContext, board: Board
) -> None:
    open_plan(page, "checklist:PLAN.md")
    assert "plan=checklist%3APLAN.md" in page.url
    open_plan(page, "agentflow:plans/auth")
    page.reload()
    live(page)
    expect(page.locator("#detail h2")).to_contain_text("Add user authentication", timeout=WAIT)
    page.go_back()  # the checklist again, as the back button promises
    expect(page.locator("#detail h2")).to_contain_text("Ship the release", timeout=WAIT)
    expect(card(page, "checklist:PLAN.md")).to_have_attribute("aria-current", "page")
    shared = browser.new_page()  # a link given to someone else opens the same view
    try:
        shared.goto(page.url)
        expect(shared.locator("#detail h2")).to_contain_text("Ship the release", timeout=WAIT)
    finally:
        shared.close()


def test_cards_are_reached_and_opened_with_the_keyboard(page: Page) -> None:
    page.locator("#search").focus()
    page.keyboard.press("Tab")  # the state filter
    page.keyboard.press("Tab")  # the first card
    first = page.evaluate("document.activeElement.dataset.id")
    assert first, "the first card takes the focus after the search and the filter"
    page.keyboard.press("ArrowDown")
    second = page.evaluate("document.activeElement.dataset.id")
    assert second and second != first
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("none", ""), "the focused card shows where the focus is"
    page.keyboard.press("Enter")
    page.wait_for_function(
        "id => document.getElementById('detail').dataset.id === id", arg=second, timeout=WAIT
    )


def test_every_control_has_a_role_and_a_name(page: Page) -> None:
    open_plan(page, "agentflow:plans/auth")
    tree = page.locator("body").aria_snapshot()
    assert 'searchbox "Search every plan"' in tree
    assert 'combobox "Filter by state"' in tree
    assert re.search(r'navigation "plans"', tree)
    assert re.search(r'link "Ship the release', tree)  # a card is a link named by its plan
    assert re.search(r'progressbar "Ship the release: progress"', tree)
    assert re.search(r'img "dependency graph of 3 tasks', tree)
    # nothing a pointer can use is left without a name for a screen reader
    unnamed = page.evaluate(
        """() => [...document.querySelectorAll('a, button, input, select, summary, [role]')]
            .filter((e) => !(e.getAttribute('aria-label') || e.textContent.trim()
                             || (e.labels && e.labels.length)))
            .map((e) => e.outerHTML.slice(0, 80))"""
    )
    assert unnamed == []


def test_a_turn_that_failed_says_why_on_the_page(page: Page, project: Path) -> None:
    plan_id = _failed_session(project, "failing")
    expect(card(page, plan_id)).to_have_attribute("data-state", "failed", timeout=WAIT)
    open_plan(page, plan_id)
    turn = page.locator('.turn[data-turn="01"]')
    expect(turn.locator(".badge")).to_have_text("Validation Failed", timeout=WAIT)
    reasons = turn.locator("[data-reasons]")
    expect(reasons).to_contain_text("Why the plan was not run")
    expect(reasons).to_contain_text("README.md")
    expect(reasons).to_contain_text("already exists")


def test_search_and_the_state_filter_span_every_plan(page: Page) -> None:
    page.locator("#search").fill("release")
    expect(card(page, "checklist:PLAN.md")).to_have_count(1, timeout=WAIT)
    expect(card(page, "agentflow:plans/auth")).to_have_count(0, timeout=WAIT)
    assert "q=release" in page.url
    page.locator("#search").fill("")
    page.locator("#state").select_option("todo")
    expect(card(page, "agentflow:plans/auth")).to_have_count(1, timeout=WAIT)
    expect(card(page, "checklist:PLAN.md")).to_have_count(0, timeout=WAIT)
    for value in page.locator("#list .card").evaluate_all(
        "cards => cards.map(c => c.dataset.state)"
    ):
        assert value == "todo"
    page.reload()  # the filter is part of the URL
    live(page)
    expect(page.locator("#state")).to_have_value("todo")
    expect(card(page, "checklist:PLAN.md")).to_have_count(0, timeout=WAIT)


def test_emoji_render_in_colour(page: Page) -> None:
    """An emoji in the page's fonts is drawn in colour (a missing glyph is a grey box)."""
    coloured = page.evaluate(
        """() => {
            const canvas = document.createElement('canvas');
            canvas.width = canvas.height = 40;
            const g = canvas.getContext('2d');
            g.font = '28px ' + getComputedStyle(document.querySelector('pre') || document.body).fontFamily;
            g.fillText('🟢', 4, 32);
            const px = g.getImageData(0, 0, 40, 40).data;
            let green = 0;
            for (let i = 0; i < px.length; i += 4) if (px[i + 3] > 0 && px[i + 1] > px[i] + 30 && px[i + 1] > px[i + 2] + 30) green++;
            return green;
        }"""
    )
    assert coloured > 20
