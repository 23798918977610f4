"""The board in a real browser: Debian's headless Chromium, driven by Playwright, against
``plankit board`` running as a subprocess over a project that holds every kind of plan.

One browser and one board serve the whole module; each test has a page of its own and
changes plans of its own, so the tests hold in any order, and on any worker.  Every
wait is on a condition, with a generous deadline.  Each test leaves a screenshot in
``build/screenshots/`` for review.  Skipped when Playwright or Chromium is missing
(``tools/test-deps``, the first step of the README's test command, installs chromium).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.board.conftest import BIN, ROOT, Board, make_project
from tests.waiting import wait_until

try:
    from playwright.sync_api import BrowserContext, Locator, Page, expect, sync_playwright
except ImportError:  # pragma: no cover - depends on the environment
    pytest.skip("playwright is not installed (pip install -e '.[test]')", allow_module_level=True)

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).is_file():  # pragma: no cover - depends on the environment
    pytest.skip("chromium is not installed (apt-get install chromium)", allow_module_level=True)

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT = 60_000
"""Milliseconds a wait may take before the test fails: far beyond what any needs."""
SHOTS = ROOT / "build" / "screenshots"

TURN_02 = """# Write the release notes
- **Status:** Green 🟢
- **Plan Type:** Implementation
- **Agent:** Developer

## Rationale
````text
### 1. Synthesis
The greetings module is read; the release needs notes.

### 2. Justification
Notes tell users what changed.

### 3. Expected Outcome
NOTES.md exists.

### 4. State Dashboard
- **Write the notes:** In Progress
````

## Action Plan

### `CREATE`
- **File Path:** [NOTES.md](/NOTES.md)
- **Description:** The release notes.
```markdown
# Notes

- greet says hi.
```
"""

EVIL = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
"""Markup in plan text: shown as text, it never runs."""


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the board and the CLIs of this module keep state (agentflow's control
    plane included: ``state/agentflow``)."""
    return tmp_path_factory.mktemp("browser-state")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, state: Path) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch:  # the board and the CLIs keep state here
        patch.setenv("PLANKIT_HOME", str(state / "plankit"))
        patch.setenv("AGENTFLOW_HOME", str(state / "agentflow"))
        yield make_project(tmp_path_factory.mktemp("browser") / "proj")


@pytest.fixture(scope="module")
def board(project: Path) -> Iterator[Board]:
    running = Board(project)
    wait_until(lambda: running.get("api/plans")[0] == 200, "the board to answer")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """Chromium with a fresh profile, never a downloaded browser."""
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1280, "height": 800},
        )
        context.set_default_timeout(WAIT)
        yield context
        context.close()


@pytest.fixture
def page(browser: BrowserContext, board: Board, request: pytest.FixtureRequest) -> Iterator[Page]:
    """The board's page, loaded and following the event stream; its screenshot is saved
    when the test ends, and a script error on the page fails the test."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", lambda dialog: errors.append(f"a dialog opened: {dialog.message}"))
    page.goto(board.url)
    live(page)
    yield page
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"board-{request.node.name}.png"), full_page=True)
    page.close()
    assert errors == []


def live(page: Page) -> None:
    """Wait until the page has its list and follows the event stream (from then on, no
    change on disk is missed)."""
    page.wait_for_selector("body[data-live=on]", timeout=WAIT)
    page.wait_for_selector("#list .card", timeout=WAIT)


def card(page: Page, plan_id: str) -> Locator:
    """The plan's card in the list (the id quoted as a CSS string: JSON's escapes are)."""
    return page.locator(f".card[data-id={json.dumps(plan_id)}]")


def open_plan(page: Page, plan_id: str) -> None:
    card(page, plan_id).click()
    page.wait_for_function(
        "id => document.getElementById('detail').dataset.id === id", arg=plan_id, timeout=WAIT
    )


def mark_unreloaded(page: Page) -> None:
    page.evaluate("window.__sameDocument = true")


def assert_not_reloaded(page: Page) -> None:
    assert page.evaluate("window.__sameDocument === true"), "the page was reloaded"


def teddy(project: Path, *args: str) -> None:
    env = {**os.environ, "TEDDY_SESSION": ""}
    done = subprocess.run(
        [BIN / "teddy", *args], cwd=project, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr


def plans(board: Board) -> list[dict[str, Any]]:
    status, body = board.get("api/plans")
    assert status == 200
    found: list[dict[str, Any]] = json.loads(body)["plans"]
    return found


def test_the_page_shows_every_kind_of_plan(page: Page, board: Board) -> None:
    headings = page.locator("#list h2")
    for label in ("TeDDy sessions", "Checklists", "agentflow plans", "ACP runs"):
        expect(headings.filter(has_text=label)).to_have_count(1, timeout=WAIT)
    for plan in plans(board):
        expect(card(page, plan["id"]).locator(".title")).to_have_text(plan["title"], timeout=WAIT)
    for plan_id, shown in [
        ("checklist:PLAN.md", "Phase 1: Build"),
        ("agentflow:plans/auth", "critical path"),
        ("acp:.plankit/acp/run-1.jsonl", "Change it"),
    ]:
        open_plan(page, plan_id)
        expect(page.locator("#detail")).to_contain_text(shown, timeout=WAIT)
    session = next(p["id"] for p in plans(board) if p["kind"] == "teddy")
    open_plan(page, session)
    turn = page.locator('.turn[data-turn="01"]')
    expect(turn.locator("h3")).to_have_text(
        "Turn 01: Read the greetings module before changing it", timeout=WAIT
    )
    expect(turn.locator(".st.success")).to_have_count(2, timeout=WAIT)


def test_a_step_done_on_disk_appears_without_a_reload(page: Page, project: Path) -> None:
    open_plan(page, "checklist:PLAN.md")
    step = page.locator('#detail li[data-step="1.2"]')
    expect(step).to_have_attribute("data-status", "doing", timeout=WAIT)
    mark_unreloaded(page)
    done = subprocess.run(
        [BIN / "plankit", "checklist", "done", "1.2", "--store", "PLAN.md"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    expect(step).to_have_attribute("data-status", "done", timeout=WAIT)
    expect(card(page, "checklist:PLAN.md").locator(".meta")).to_contain_text("2/4", timeout=WAIT)
    expect(page.locator("#detail")).to_contain_text("Next: 1.3", timeout=WAIT)

    text = (project / "PLAN.md").read_text(encoding="utf-8")
    edited = project / "PLAN.md.part"  # replaced in one step, as plankit writes: the
    edited.write_text(  # board never reads it half written, and the diff shows one change
        text.replace("- [ ] 2.1 Tag the release", "- [>] 2.1 Tag the release — CI is red"),
        encoding="utf-8",
    )
    edited.replace(project / "PLAN.md")
    blocked = page.locator('#detail li[data-step="2.1"]')
    expect(blocked).to_have_attribute("data-status", "blocked", timeout=WAIT)
    expect(blocked).to_contain_text("CI is red")

    history = page.locator("#detail details.diffbox")
    history.locator("summary").click()
    diff = history.locator("pre.diff")
    expect(diff).to_contain_text("+- [>] 2.1 Tag the release — CI is red", timeout=WAIT)
    expect(diff).to_contain_text("-- [ ] 2.1 Tag the release")
    assert_not_reloaded(page)


def test_a_new_teddy_turn_appears_live(page: Page, board: Board, project: Path) -> None:
    [session] = (project / ".teddy").glob("*-board")
    plan_id = f"teddy:{session.relative_to(project).as_posix()}"
    open_plan(page, plan_id)
    second = page.locator('.turn[data-turn="02"]')
    expect(second.locator(".badge")).to_have_text("no plan yet", timeout=WAIT)
    mark_unreloaded(page)

    (session / "02" / "plan.md").write_text(TURN_02, encoding="utf-8")
    expect(second.locator("h3")).to_have_text("Turn 02: Write the release notes", timeout=WAIT)
    expect(second.locator(".badge")).to_have_text("awaiting execution", timeout=WAIT)
    expect(second.locator(".st.pending")).to_have_count(1, timeout=WAIT)

    teddy(project, "execute", "-y")
    expect(second.locator(".badge")).to_contain_text("Completed", timeout=WAIT)
    expect(second.locator(".st.success")).to_contain_text("✔", timeout=WAIT)
    expect(page.locator('.turn[data-turn="03"]')).to_have_count(1, timeout=WAIT)
    expect(card(page, plan_id).locator(".meta")).to_contain_text("2/3", timeout=WAIT)
    assert_not_reloaded(page)


def test_the_agentflow_graph_renders(page: Page, project: Path) -> None:
    open_plan(page, "agentflow:plans/auth")
    graph = page.locator("#detail svg.graph")
    nodes = graph.locator("g[data-task]")
    expect(nodes).to_have_count(3, timeout=WAIT)
    expect(graph.locator("path.edge")).to_have_count(2)
    names = [nodes.nth(i).get_attribute("data-task") for i in range(3)]
    assert names == ["create-schema", "implement-service", "wire-handler"]
    box = graph.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 40
    for i in range(3):  # every node is drawn, left to right in dependency order
        node = nodes.nth(i).bounding_box()
        assert node is not None and node["width"] > 50
    xs = [nodes.nth(i).bounding_box()["x"] for i in range(3)]  # type: ignore[index]
    assert xs == sorted(xs) and len(set(xs)) == 3
    critical = graph.locator("path.edge.critical")
    expect(critical).to_have_count(2)
    edge = graph.locator('path.edge[data-from="create-schema"]').bounding_box()
    assert edge is not None and edge["width"] > 20  # drawn between the two boxes

    mark_unreloaded(page)  # task states where tracked, live
    (project / "plans" / "auth" / "state.json").write_text(
        json.dumps({"create-schema": "done", "implement-service": "claimed"}), encoding="utf-8"
    )
    first = graph.locator('g[data-task="create-schema"] text').nth(1)
    expect(first).to_have_text("done", timeout=WAIT)
    flow = card(page, "agentflow:plans/auth")
    expect(flow.locator(".meta")).to_contain_text("1/3", timeout=WAIT)
    assert_not_reloaded(page)


def test_an_agentflow_session_is_followed_live(page: Page, state: Path) -> None:
    from plankit.agentflow.control import ControlPlane
    from tests.agentflow.helpers import task, write_plan

    plane = ControlPlane(state / "agentflow")  # the control plane the board reads
    try:
        context = plane.start_session()
        sid = context.session.session_id
        directory = Path(context.current.plan_dir)
        steps = {"schema": [], "api": ["schema"], "ui": ["api"]}
        files = {f"{i:02d}-{t}.md": task(t, deps) for i, (t, deps) in enumerate(steps.items())}
        write_plan(directory, title="Login page", tasks=files)
        plane.set_topic("Ship the login page", sid)
        plane.commit(sid)
        plan_id = f"agentflow:@session/{sid}"
        mark_unreloaded(page)
        expect(card(page, plan_id).locator(".title")).to_have_text("Ship the login page")
        expect(page.locator("#list h2").filter(has_text="agentflow sessions")).to_have_count(1)
        open_plan(page, plan_id)
        graph = page.locator("#detail svg.graph")
        expect(graph.locator("g[data-task]")).to_have_count(3)
        expect(graph.locator("path.edge.critical")).to_have_count(2)
        dots = page.locator("#detail svg.commits circle.dot")
        expect(dots).to_have_count(1)

        claim = plane.claim(sid, agent="w1")  # an agent takes a task and finishes it
        assert claim.task is not None
        plane.done(claim.task.ref, sid, claim=claim.task.claim)
        state_of = graph.locator('g[data-task="schema"] text').nth(1)
        expect(state_of).to_have_text("done")
        expect(graph.locator('g[data-task="api"] text').nth(1)).to_have_text("ready")
        expect(card(page, plan_id).locator(".meta")).to_contain_text("1/3")

        (directory / "tasks" / "03-docs.md").write_text(task("docs", ["ui"]))
        plane.commit(sid)  # commits over time: a second dot; the first shows its own plan
        expect(dots).to_have_count(2)
        expect(graph.locator("g[data-task]")).to_have_count(4)
        page.locator('#detail svg.commits circle[data-commit="1"]').click()
        expect(graph.locator("g[data-task]")).to_have_count(3)
        expect(state_of).to_have_text("untracked")
        expect(page.locator("#detail")).to_contain_text("an earlier commit")
        assert_not_reloaded(page)
    finally:
        plane.close()


def write_untrusted_plans(project: Path) -> dict[str, str]:
    """Plans of every kind whose text is markup; by id, the text each page shows."""
    (project / "evil.plan.md").write_text(
        f"# Plan: {EVIL}\n\nGoal: {EVIL}\n\n### Phase 1: {EVIL}\n"
        f"- [>] 1.1 {EVIL} — {EVIL}\n- [ ] 1.2 Fine\n",
        encoding="utf-8",
    )
    odd = "x <img src=y onerror=window.__pwned=3>.plan.md"
    (project / odd).write_text("# Plan: A file name with markup\n\n### Phase 1: A\n- [ ] 1.1 A\n")
    session = project / ".teddy" / "20260101-evil" / "01"
    session.mkdir(parents=True)
    (session / "meta.yaml").write_text('turn_id: "01"\nagent: "Developer"\n', encoding="utf-8")
    (session / "message.md").write_text(EVIL, encoding="utf-8")
    (session / "plan.md").write_text(f"# {EVIL}\n- **Status:** Green 🟢\n", encoding="utf-8")
    flow = project / "plans" / "evil"
    (flow / "tasks").mkdir(parents=True)
    (flow / "plan.md").write_text(
        f"---\ntitle: {json.dumps(EVIL)}\n---\n\n{EVIL}\n", encoding="utf-8"
    )
    (flow / "tasks" / "01-a.md").write_text(
        f"---\nid: {json.dumps(EVIL)}\n---\n\n{EVIL}\n", encoding="utf-8"
    )
    update = {
        "sessionUpdate": "plan",
        "entries": [{"content": EVIL, "status": "pending", "priority": "high"}],
        "_meta": {"plankit": {"title": EVIL}},
    }
    line = {"message": {"method": "session/update", "params": {"sessionId": "s", "update": update}}}
    (project / ".plankit" / "acp" / "evil.jsonl").write_text(json.dumps(line) + "\n")
    return {
        "checklist:evil.plan.md": EVIL,
        f"checklist:{odd}": "A file name with markup",
        "teddy:.teddy/20260101-evil": EVIL,
        "agentflow:plans/evil": EVIL,
        "acp:.plankit/acp/evil.jsonl": EVIL,
    }


def test_untrusted_plan_text_is_shown_as_text(page: Page, project: Path) -> None:
    shown = write_untrusted_plans(project)
    for plan_id, title in shown.items():  # new plans appear in the list, live
        expect(card(page, plan_id).locator(".title")).to_have_text(title, timeout=WAIT)
    for plan_id in shown:
        open_plan(page, plan_id)
        expect(page.locator("#detail h2")).to_contain_text(shown[plan_id], timeout=WAIT)
    open_plan(page, "checklist:evil.plan.md")
    expect(page.locator('#detail li[data-step="1.1"]')).to_contain_text(EVIL, timeout=WAIT)
    open_plan(page, "agentflow:plans/evil")
    expect(page.locator("#detail .errors")).to_contain_text("<img", timeout=WAIT)
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img, script:not([src]), #detail script, #list script").count() == 0


def test_the_page_works_through_the_token_url(browser: BrowserContext, project: Path) -> None:
    running = Board(project, "--token", "page-token")
    try:
        assert running.url.endswith("?token=page-token")
        page = browser.new_page()
        refused = page.goto(running.url.split("?")[0])
        assert refused is not None and refused.status == 403
        page.goto(running.url)
        live(page)
        expect(card(page, "checklist:PLAN.md")).to_have_count(1)
        page.screenshot(path=str(SHOTS / "board-token.png"))
        page.close()
    finally:
        running.stop()
