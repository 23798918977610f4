// plankit board: the list of plans, one plan's page, and live updates.
// Plan text is untrusted: it only ever reaches the page through textContent.
"use strict";

const token = new URLSearchParams(location.search).get("token");
const KINDS = { teddy: "TeDDy sessions", checklist: "Checklists", session: "agentflow sessions",
  agentflow: "agentflow plans", acp: "ACP runs" };
// the board's one vocabulary of states (docs/board.md), whatever the kind of plan
const STATES = ["waiting", "todo", "doing", "review", "blocked", "failed", "skipped", "done"];
const ICON = { done: "✔", doing: "◐", review: "?", blocked: "■", failed: "✘", todo: "○", waiting: "○",
  skipped: "–", untracked: "·" };
const plans = new Map();
let openId = null;

// The URL says what is shown (#plan=ID&commit=N&q=TEXT&state=STATE): a reload, a shared
// link and the back button all land on the same view.
function route() {
  const p = new URLSearchParams(location.hash.slice(1));
  return { plan: p.get("plan"), commit: p.get("commit"), q: p.get("q") || "", state: p.get("state") || "" };
}

function href(changes) {
  const next = { ...route(), ...changes };
  const p = new URLSearchParams();
  for (const key of ["plan", "commit", "q", "state"]) if (next[key]) p.set(key, next[key]);
  return "#" + p.toString();
}

function go(changes, push = true) {
  const target = href(changes);
  if (target === location.hash || (target === "#" && !location.hash)) return;
  if (push) location.hash = target; // a new entry in the history: back returns here
  else { history.replaceState(null, "", target); follow(); }
}

let shown = { plan: null, commit: null };

function follow() {
  const r = route();
  const search = document.getElementById("search"), state = document.getElementById("state");
  if (search.value !== r.q) search.value = r.q;
  if (state.value !== r.state) state.value = r.state;
  if (r.plan !== shown.plan || r.commit !== shown.commit) {
    shown = { plan: r.plan, commit: r.commit };
    if (r.plan) openPlan(r.plan);
    else {
      openId = null;
      document.getElementById("detail").replaceChildren(el("p", { class: "muted", text: "Pick a plan on the left." }));
      delete document.getElementById("detail").dataset.id;
    }
  }
  renderList();
}

// the list's group: agentflow sessions (from the control plane) apart from plan directories
const group = (plan) => (plan.source === "control" ? "session" : plan.kind);

function api(path) {
  const url = new URL(path, location.href);
  if (token) url.searchParams.set("token", token);
  return url;
}

async function getJson(path) {
  const response = await fetch(api(path));
  try {
    return await response.json();
  } catch {
    return { error: `${response.status} ${response.statusText}` };
  }
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function bar(progress, label) {
  const pct = progress.total ? Math.round((100 * progress.done) / progress.total) : 0;
  const fill = el("span");
  fill.style.width = pct + "%";
  return el("div", { class: "bar", title: `${progress.done}/${progress.total}`, role: "progressbar",
    "aria-label": label || "progress", "aria-valuemin": "0", "aria-valuemax": String(progress.total),
    "aria-valuenow": String(progress.done), "aria-valuetext": `${progress.done} of ${progress.total} done` }, fill);
}

// "11:59" today, "2026-11-20" before (the whole time in the tooltip)
function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const today = new Date().toDateString() === date.toDateString();
  const pad = (n) => String(n).padStart(2, "0");
  return today ? `${pad(date.getHours())}:${pad(date.getMinutes())}`
    : `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

// search (title, path, status) and a filter by state, across every plan
function matches(plan, r) {
  if (r.state && (plan.state || "todo") !== r.state) return false;
  if (!r.q) return true;
  const hay = `${plan.title} ${plan.path} ${plan.status || ""} ${plan.kind}`.toLowerCase();
  return r.q.toLowerCase().split(/\s+/).filter(Boolean).every((word) => hay.includes(word));
}

function renderList() {
  const nav = document.getElementById("list");
  const focused = document.activeElement && document.activeElement.closest ? document.activeElement.closest("#list .card") : null;
  const keep = focused ? focused.dataset.id : null;
  nav.replaceChildren();
  const r = route();
  let shownCount = 0;
  for (const kind of Object.keys(KINDS)) {
    const mine = [...plans.values()].filter((p) => group(p) === kind && matches(p, r));
    if (!mine.length) continue;
    shownCount += mine.length;
    nav.append(el("h2", { text: `${KINDS[kind]} (${mine.length})` }));
    const list = el("ul", { class: "cards", "aria-label": KINDS[kind] });
    for (const plan of mine) {
      const state = plan.state || "todo";
      const card = el("a", { class: "card" + (plan.id === openId ? " open" : ""), "data-id": plan.id,
        "data-state": state, href: href({ plan: plan.id, commit: null }),
        "aria-current": plan.id === openId ? "page" : "false" },
        el("span", { class: "title", text: plan.title }),
        el("span", { class: "path", text: plan.path }),
        bar(plan.progress, `${plan.title}: progress`),
        el("span", { class: "meta" },
          el("span", { text: `${plan.progress.done}/${plan.progress.total}` }),
          el("span", { class: "state " + state, text: plan.status || state }),
          el("span", { title: plan.updated || "", text: when(plan.updated) })));
      list.append(el("li", {}, card));
    }
    nav.append(list);
  }
  if (!shownCount && plans.size) nav.append(el("p", { class: "muted", text: "No plan matches the search and the filter." }));
  nav.dataset.count = String(plans.size);
  nav.dataset.shown = String(shownCount);
  if (keep) {
    const again = nav.querySelector(`.card[data-id="${CSS.escape(keep)}"]`);
    if (again) again.focus();
  }
}

// Up and Down move between the cards; Enter opens one (it is a link)
function cardKeys(event) {
  if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
  const cards = [...document.querySelectorAll("#list .card")];
  const at = cards.indexOf(document.activeElement);
  if (at < 0) return;
  event.preventDefault();
  const next = cards[Math.max(0, Math.min(cards.length - 1, at + (event.key === "ArrowDown" ? 1 : -1)))];
  next.focus();
}

function problems(list, cls, heading) {
  if (!list || !list.length) return null;
  return el("div", { class: cls }, el("strong", { text: heading }),
    el("ul", {}, ...list.map((d) => el("li", { text: `${d.file || ""}${d.line ? ":" + d.line : ""} ${d.code} ${d.message}` }))));
}

// "Completed 🟢" → the word, shown in the colour of its state (no emoji font needed)
const PICTOGRAPHS = /[\p{Extended_Pictographic}\u{1F7E0}-\u{1F7EB}\uFE0F]/gu;

// a turn's box and badge: the colour of its state
function turnClass(turn) {
  if (turn.status === "awaiting execution") return "pending";
  if (!turn.status || turn.status === "no plan yet") return "";
  return { done: "ok", skipped: "partial", failed: "bad" }[turn.state] || "";
}

function stateIcon(state, native) {
  return el("span", { class: "st " + state, title: native && native !== state ? `${state} (${native})` : state,
    "aria-label": state, text: ICON[state] || "·" });
}

function lines(text, sign, cls) {
  return String(text).split("\n").map((line) => el("span", { class: cls, text: sign + line + "\n" }));
}

// many nodes as one: spread into a call (append(...nodes)), past ~100,000 of them
// (the lines of a big diff) the arguments overflow the stack
function fragment(nodes) {
  const out = document.createDocumentFragment();
  for (const node of nodes) out.append(node);
  return out;
}

function plannedAction(a, notRun) {
  const target = a.path || a.resource || a.command || a.agent || "";
  const body = [];
  if (a.edits) for (const e of a.edits) body.push(el("pre", { class: "diff" }, fragment([...lines(e.find, "-", "del"), ...lines(e.replace, "+", "add")])));
  else if (a.content !== undefined && a.content !== null) body.push(el("pre", { text: a.content }));
  else if (a.command) body.push(el("pre", { text: a.command }));
  else if (a.message) body.push(el("pre", { text: a.message }));
  return el("li", {}, el("details", {},
    el("summary", {}, notRun ? stateIcon("skipped", "not run") : stateIcon("todo", "planned"), ` ${a.type} ${target}`,
      a.description ? el("span", { class: "muted", text: ` — ${a.description}` }) : null),
    ...body));
}

function teddyView(plan) {
  const out = [];
  if (plan.call_stack && plan.call_stack.length) out.push(el("p", {}, el("strong", { text: "Call stack: " }), plan.call_stack.join(" ← ")));
  if (plan.memos && plan.memos.length) out.push(el("details", {}, el("summary", { text: `Memos (${plan.memos.length})` }), el("ul", {}, ...plan.memos.map((m) => el("li", { text: m })))));
  out.push(problems(plan.errors, "errors", "Problems"));
  for (const turn of plan.turns) {
    const state = turnClass(turn);
    const usage = turn.model ? `${turn.model}${turn.input_tokens ? ` · ${turn.input_tokens} in / ${turn.output_tokens || "?"} out` : ""}` : "";
    const box = el("div", { class: "turn " + state, "data-turn": turn.turn },
      el("h3", { text: `Turn ${turn.turn}: ${turn.title || "(no plan yet)"}` }),
      el("div", { class: "line" },
        el("span", { class: "badge " + state, title: turn.status || "", text: (turn.status || "").replace(PICTOGRAPHS, "").trim() }),
        el("span", { text: turn.agent || "" }),
        el("span", { class: "muted", text: usage })));
    if (turn.message) box.append(el("details", {}, el("summary", { text: "Message" }), el("pre", { text: turn.message })));
    if (turn.reasons && turn.reasons.length)
      box.append(el("div", { class: "errors", "data-reasons": "" }, el("strong", { text: "Why the plan was not run" }),
        el("ul", {}, ...turn.reasons.map((r) => el("li", { text: r })))));
    box.append(problems(turn.errors, "errors", "Plan problems") || "");
    if (turn.actions.length) {
      box.append(el("ul", { class: "tasks" }, ...turn.actions.map((a) => {
        const why = a.state === "failed" ? failureLine(a.text) : a.reason;
        const details = el("details", {},
          el("summary", {}, stateIcon(a.state, a.outcome), ` ${a.type} ${a.target || ""}`,
            why ? el("span", { class: "note " + a.state, text: ` — ${why}` }) : null),
          el("pre", { text: a.text }));
        return el("li", { "data-state": a.state }, details);
      })));
    } else if (turn.plan) {
      if (state === "pending") box.append(el("p", { class: "muted", text: "This plan awaits execution (teddy execute):" }));
      if (turn.plan.memos && turn.plan.memos.length)
        box.append(el("ul", { class: "tasks" }, ...turn.plan.memos.map((m) => el("li", { text: `memo ${m.op} ${m.text}` }))));
      box.append(el("ul", { class: "tasks" }, ...turn.plan.actions.map((a) => plannedAction(a, turn.state === "failed"))));
    }
    out.push(box);
  }
  return out;
}

// the line of a failed action's report that says why (its first note, error or output)
function failureLine(text) {
  const lines = String(text || "").split("\n");
  const note = lines.find((l) => /^- \*\*(Note|Error)/.test(l));
  if (note) return note.replace(/^- \*\*[^*]+:\*\*\s*/, "");
  const fence = lines.findIndex((l) => /^(`{3,}|~{3,})/.test(l));
  const first = fence >= 0 ? lines.slice(fence + 1).find((l) => l.trim() && !/^(`{3,}|~{3,})/.test(l)) : null;
  return first ? first.trim().slice(0, 200) : "failed";
}

function checklistView(plan) {
  const out = [problems(plan.errors, "errors", "Errors"), problems(plan.warnings, "warnings", "Lint warnings")];
  if (!plan.plan) return out;
  if (plan.plan.goal) out.push(el("p", {}, el("strong", { text: "Goal: " }), plan.plan.goal));
  if (plan.current) out.push(el("p", {}, el("strong", { text: "Current: " }), `${plan.current.step} ${plan.current.title}`));
  if (plan.next) out.push(el("p", {}, el("strong", { text: "Next: " }), `${plan.next.step} ${plan.next.title}`));
  for (const phase of plan.plan.phases) {
    out.push(el("h3", { text: `Phase ${phase.number}: ${phase.name}` }), bar(phase.progress));
    out.push(el("ul", { class: "tasks" }, ...phase.tasks.map((t) =>
      el("li", { "data-step": t.step, "data-status": t.status, "data-state": t.state || t.status, class: "depth" + Math.min(3, t.step.split(".").length - 2) },
        stateIcon(t.state || t.status, t.status),
        ` ${t.step} ${t.title}`, (t.blocked_reason || t.review_note) ? el("span", { class: "note " + t.status, text: ` — ${t.blocked_reason || t.review_note}` }) : null))));
  }
  if (plan.plan.questions && plan.plan.questions.length)
    out.push(el("h3", { text: "Questions for the user" }), el("ul", {}, ...plan.plan.questions.map((q) => el("li", { text: q }))));
  if (plan.plan.notes) out.push(el("h3", { text: "Notes" }), el("pre", { text: plan.plan.notes }));
  return out;
}

function graphView(graph) {
  const ns = "http://www.w3.org/2000/svg";
  const W = 150, H = 44, GX = 44, GY = 16;
  const cols = Math.max(1, ...graph.nodes.map((n) => n.x + 1));
  const rows = Math.max(1, ...graph.nodes.map((n) => n.y + 1));
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "graph");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `dependency graph of ${graph.nodes.length} tasks: ` +
    graph.nodes.map((n) => `${n.id} ${n.state}`).join(", "));
  svg.setAttribute("width", cols * (W + GX) + GX);
  svg.setAttribute("height", rows * (H + GY) + GY);
  const at = new Map(graph.nodes.map((n) => [n.id, { x: GX / 2 + n.x * (W + GX), y: GY + n.y * (H + GY) }]));
  const column = new Map(graph.nodes.map((n) => [n.id, n.x]));
  for (const e of graph.edges) {
    const a = at.get(e.from), b = at.get(e.to);
    if (!a || !b) continue;
    const sx = a.x + W, sy = a.y + H / 2, tx = b.x, ty = b.y + H / 2;
    let d = `M ${sx} ${sy} L ${tx} ${ty}`;
    if (column.get(e.to) - column.get(e.from) > 1) {
      // past the next column: along the gap above the higher of the two rows, so the
      // edge never runs through a task's box
      const gy = Math.min(a.y, b.y) - GY / 2, q = GX / 2;
      d = `M ${sx} ${sy} C ${sx + q} ${sy} ${sx + q} ${gy} ${sx + GX} ${gy} L ${tx - GX} ${gy} C ${tx - q} ${gy} ${tx - q} ${ty} ${tx} ${ty}`;
    }
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", d);
    path.setAttribute("class", e.critical ? "edge critical" : "edge");
    path.setAttribute("data-from", e.from);
    path.setAttribute("data-to", e.to);
    svg.append(path);
  }
  const fill = { done: "#e6f4e9", doing: "#fff1d6", review: "#fff1d6", failed: "#fdecea", blocked: "#fdecea", todo: "#e4ecfa" };
  for (const n of graph.nodes) {
    const p = at.get(n.id);
    const g = document.createElementNS(ns, "g");
    g.setAttribute("data-task", n.id);
    const rect = document.createElementNS(ns, "rect");
    rect.setAttribute("x", p.x); rect.setAttribute("y", p.y); rect.setAttribute("width", W); rect.setAttribute("height", H);
    rect.setAttribute("rx", 6); rect.setAttribute("fill", fill[n.state] || "#ffffff");
    rect.setAttribute("stroke", graph.critical_path.includes(n.id) ? "#c23b2e" : "#9a9a94");
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", p.x + 8); label.setAttribute("y", p.y + 18);
    label.textContent = n.id.length > 21 ? n.id.slice(0, 20) + "…" : n.id;
    const tip = document.createElementNS(ns, "title");
    tip.textContent = `${n.id}: ${n.state}${n.native && n.native !== n.state ? ` (${n.native})` : ""}`;
    const state = document.createElementNS(ns, "text");
    state.setAttribute("x", p.x + 8); state.setAttribute("y", p.y + 34); state.setAttribute("fill", "#6b6b66");
    state.textContent = n.state;
    g.append(tip, rect, label, state);
    svg.append(g);
  }
  return svg;
}

function agentflowView(plan) {
  const out = [problems(plan.errors, "errors", "Validation problems")];
  if (!plan.plan) return out;
  const states = new Map(plan.graph.nodes.map((n) => [n.id, n]));
  if (plan.owner_session) out.push(el("p", { class: "muted", "data-session": plan.owner_session,
    text: `Task states from agentflow session ${plan.owner_session}, which owns this directory.` }));
  out.push(el("p", { class: "muted", text: `${plan.plan.tasks.length} tasks in ${plan.plan.waves.length} waves; critical path: ${plan.graph.critical_path.join(" → ")}` }));
  out.push(el("div", { class: "graphbox" }, graphView(plan.graph)));
  if (plan.plan.body && plan.plan.body.trim()) out.push(el("details", {}, el("summary", { text: "The plan" }), el("pre", { text: plan.plan.body.trim() })));
  out.push(el("ul", { class: "tasks" }, ...plan.plan.tasks.map((t) => {
    const node = states.get(t.id) || { state: "todo" };
    const state = node.state;
    return el("li", { "data-task": t.id, "data-state": state }, el("details", {},
      el("summary", {}, stateIcon(state, node.native), " ", el("strong", { text: t.id }),
        t.agent ? el("span", { class: "muted", text: ` (${t.agent})` }) : null,
        t.depends_on.length ? el("span", { class: "muted", text: ` ← ${t.depends_on.join(", ")}` }) : null),
      t.subtasks.length ? el("ul", {}, ...t.subtasks.map((x) => el("li", { text: x }))) : null,
      el("pre", { text: (t.body || "").trim() || t.file })));
  })));
  return out;
}

function commitsChart(plan, pick) {
  // the commits over time: one dot per commit, its height the number of tasks
  const ns = "http://www.w3.org/2000/svg";
  const W = 560, H = 90, PAD = 24;
  const times = plan.commits.map((c) => new Date(c.committed_at).getTime());
  // reduce, not Math.min(...times): spread arguments overflow the stack past ~100,000
  const t0 = times.reduce((a, b) => Math.min(a, b), Infinity);
  const t1 = times.reduce((a, b) => Math.max(a, b), -Infinity);
  const most = plan.commits.reduce((a, c) => Math.max(a, c.task_count), 1);
  const x = (t) => (t1 > t0 ? PAD + ((W - 2 * PAD) * (t - t0)) / (t1 - t0) : W / 2);
  const y = (n) => H - PAD / 2 - ((H - PAD) * n) / most;
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "commits");
  svg.setAttribute("width", W);
  svg.setAttribute("height", H);
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", plan.commits.map((c, i) => `${x(times[i])},${y(c.task_count)}`).join(" "));
  line.setAttribute("class", "trend");
  svg.append(line);
  plan.commits.forEach((c, i) => {
    const dot = document.createElementNS(ns, "circle");
    dot.setAttribute("cx", x(times[i]));
    dot.setAttribute("cy", y(c.task_count));
    dot.setAttribute("r", c.commit === plan.commit ? 6 : 4);
    dot.setAttribute("class", c.commit === plan.commit ? "dot shown" : "dot");
    dot.setAttribute("data-commit", c.commit);
    const tip = document.createElementNS(ns, "title");
    tip.textContent = `commit ${c.commit}: ${c.task_count} tasks in ${c.thread_count} threads, ${c.committed_at}`;
    dot.append(tip);
    dot.addEventListener("click", () => pick(c.commit));
    const label = document.createElementNS(ns, "text");
    label.setAttribute("x", x(times[i]));
    label.setAttribute("y", H - 2);
    label.setAttribute("text-anchor", "middle");
    label.textContent = String(c.commit);
    svg.append(dot, label);
  });
  return svg;
}

function sessionView(plan) {
  const s = plan.session;
  const out = [problems(plan.errors, "errors", "Problems")];
  out.push(el("p", { class: "muted" },
    `session ${s.session_id}`, s.agent_session_id ? ` · agent session ${s.agent_session_id}` : "",
    s.host ? ` · host ${s.host}` : "", ` · started ${s.created_at}`, s.ended_at ? ` · ended ${s.ended_at}` : ""));
  out.push(el("h3", { text: `Threads (${plan.threads.length})` }), el("ul", { class: "tasks" }, ...plan.threads.map((t) =>
    el("li", { "data-thread": t.thread_id }, el("strong", { text: t.thread_id }), ` ${t.kind}`,
      el("span", { class: "muted", text: t.removed_at ? ` — removed ${t.removed_at}` : ` — ${t.plan_dir}` })))));
  if (!plan.commits.length) {
    out.push(el("p", { class: "muted", text: "No commit yet: the agent submits its plans with agentctl plan commit." }));
    return out;
  }
  const pick = (number) => {
    const latest = plan.commits[plan.commits.length - 1].commit;
    go({ plan: plan.id, commit: number === latest ? null : String(number) });
  };
  const select = el("select", { "aria-label": "commit" });
  for (const c of plan.commits)
    select.append(el("option", { value: c.commit, text: `commit ${c.commit} · ${c.committed_at} · ${c.task_count} tasks` }));
  select.value = String(plan.commit);
  select.addEventListener("change", () => pick(Number(select.value)));
  const count = plan.commit_count || plan.commits.length;
  const latest = count > plan.commits.length ? ` — the latest ${plan.commits.length} shown` : "";
  out.push(el("h3", { text: `Commits over time (${count})${latest}` }),
    el("div", { class: "graphbox" }, commitsChart(plan, pick)), el("p", {}, "Showing ", select,
      plan.tracked ? el("span", { class: "muted", text: " — the tracked commit: task states as agents report them" })
        : el("span", { class: "muted", text: " — an earlier commit: task states are tracked for the latest one only" })));
  for (const thread of plan.plans) {
    const tasks = new Map(thread.tasks.map((t) => [t.task_id, t]));
    out.push(el("h3", { "data-thread-plan": thread.thread_id, text: `${thread.thread_id} (${thread.kind}): ${thread.plan.title}` }));
    out.push(el("p", { class: "muted", text: `${thread.plan.tasks.length} tasks in ${thread.plan.waves.length} waves; critical path: ${thread.graph.critical_path.join(" → ")}` }));
    out.push(el("div", { class: "graphbox" }, graphView(thread.graph)));
    const states = new Map(thread.graph.nodes.map((n) => [n.id, n]));
    out.push(el("ul", { class: "tasks" }, ...thread.plan.tasks.map((t) => {
      const node = states.get(t.id) || { state: "todo" };
      const state = node.state;
      const tracked = tasks.get(t.id);
      const who = tracked && tracked.holder ? ` — ${tracked.holder}${tracked.host ? "@" + tracked.host : ""}` : "";
      return el("li", { "data-task": t.id, "data-state": state }, el("details", {},
        el("summary", {}, stateIcon(state, node.native), " ", el("strong", { text: t.id }),
          el("span", { class: "muted", text: ` ${state}${node.native && node.native !== state ? ` (${node.native})` : ""}${who}` }),
          t.depends_on.length ? el("span", { class: "muted", text: ` ← ${t.depends_on.join(", ")}` }) : null,
          tracked && tracked.reason ? el("span", { class: "note failed", text: ` — ${tracked.reason}` }) : null),
        t.subtasks.length ? el("ul", {}, ...t.subtasks.map((x) => el("li", { text: x }))) : null,
        el("pre", { text: (t.body || "").trim() || t.file }),
        tracked && tracked.evidence ? evidenceView(tracked.evidence) : null));
    })));
  }
  return out;
}

// what agentctl run recorded for a task: its agent's last plan, its tool calls, how it ended
function evidenceView(ev) {
  const facts = [
    ["run", `${ev.outcome || "?"} — attempt ${ev.attempts}, agent ${ev.agent || "?"}${ev.host ? " on " + ev.host : ""}`],
    ["stop reason", ev.stop_reason], ["reason", ev.reason], ["merged as", ev.merge_commit],
    ["files changed", (ev.files_changed || []).join(", ")], ["last message", ev.last_message],
  ].filter(([, v]) => v);
  return el("div", { class: "evidence", "data-evidence": ev.outcome || "" },
    el("dl", {}, ...facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: String(v) })])),
    ev.plan.length ? el("ul", { class: "tasks", "aria-label": "the agent's plan" }, ...ev.plan.map((e) =>
      el("li", { "data-state": e.status }, stateIcon(e.status === "completed" ? "done" : e.status === "in_progress" ? "doing" : "todo", e.status), ` ${e.content}`))) : null,
    ev.tool_calls.length ? el("ul", { "aria-label": "tool calls" }, ...ev.tool_calls.map((c) =>
      el("li", { text: `${c.kind}: ${c.title} → ${c.exit_status}` }))) : null);
}

function acpView(plan) {
  return [problems(plan.errors, "errors", "Problems"), el("ul", { class: "tasks" }, ...(plan.entries || []).map((e) =>
    el("li", { "data-state": e.state }, stateIcon(e.state, ((e._meta || {}).plankit || {}).status || e.status), ` ${e.content}`,
      ((e._meta || {}).plankit || {}).reason ? el("span", { class: "note " + e.state, text: ` — ${e._meta.plankit.reason}` }) : null,
      ((e._meta || {}).plankit || {}).note ? el("span", { class: "muted", text: ` — ${e._meta.plankit.note}` }) : null,
      el("span", { class: "muted", text: e.priority ? ` (${e.priority})` : "" }))))];
}

function historyView(plan) {
  if (!plan.history || plan.history.length < 2) return null;
  const pick = (sel) => {
    const s = el("select");
    plan.history.forEach((v) => s.append(el("option", { value: v.version, text: `${v.version + 1}. ${v.label}` })));
    s.value = String(sel);
    return s;
  };
  const from = pick(plan.history.length - 2), to = pick(plan.history.length - 1);
  const out = el("pre", { class: "diff" });
  const show = async () => {
    const data = await getJson(`api/plans/${encodeURIComponent(plan.id)}/diff?from=${from.value}&to=${to.value}`);
    const text = data.diff === undefined ? data.error : data.diff;
    out.replaceChildren(text ? fragment(text.split("\n").map((line) =>
      el("span", { class: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "", text: line + "\n" }))) : "(no change)");
  };
  from.addEventListener("change", show);
  to.addEventListener("change", show);
  show();
  return el("details", { class: "diffbox" }, el("summary", { text: `History (${plan.history.length} versions): what changed` }),
    el("div", {}, "from ", from, " to ", to), out);
}

// Live updates: every event schedules one refresh of the list (and of the open plan
// when the event is about it); refreshes never overlap and one that starts after an
// event reflects it, so the page always ends on the latest state.
let refreshing = null;
let dirty = { list: false, detail: false };

function schedule(list, detail) {
  dirty = { list: dirty.list || list, detail: dirty.detail || detail };
  if (!refreshing) refreshing = refresh().finally(() => { refreshing = null; });
  return refreshing;
}

async function refresh() {
  while (dirty.list || dirty.detail) {
    const todo = dirty;
    dirty = { list: false, detail: false };
    try {
      if (todo.list) await loadList();
      if (todo.detail && openId) await showPlan(openId);
    } catch (error) {
      document.getElementById("live").classList.remove("on");
    }
  }
}

async function loadList() {
  const data = await getJson("api/plans");
  if (data.error) {
    document.getElementById("root").textContent = data.error;
    return;
  }
  document.getElementById("root").textContent = data.root;
  const trouble = (data.sources || []).filter((s) => s.error);
  document.getElementById("sources").replaceChildren(...trouble.map((s) =>
    el("p", { class: "errors", "data-source": s.name }, el("strong", { text: `${s.name}: ` }), s.error)));
  plans.clear();
  for (const plan of data.plans) plans.set(plan.id, plan);
  renderList();
}

function openPlan(id) {
  openId = id;
  renderList();
  return showPlan(id);
}

async function showPlan(id) {
  const r = route();
  const commit = r.plan === id && r.commit && /^\d+$/.test(r.commit) ? r.commit : null;
  const plan = await getJson(`api/plans/${encodeURIComponent(id)}${commit ? `?commit=${commit}` : ""}`);
  if (id !== openId) return; // another plan was picked meanwhile
  const section = document.getElementById("detail");
  const keep = section.dataset.id === id ? openDetails(section) : null;
  if (plan.error) {
    section.replaceChildren(el("p", { class: "muted", text: plan.error }));
  } else {
    const views = { teddy: teddyView, checklist: checklistView, agentflow: agentflowView, acp: acpView };
    const view = plan.session ? sessionView : views[plan.kind];
    section.replaceChildren(
      el("h2", {}, el("span", { class: "badge " + plan.kind, text: plan.kind }), " ", plan.title),
      el("div", { class: "meta" }, el("span", { text: plan.path }), el("span", { text: plan.status || "" }),
        el("span", { text: `${plan.progress.done}/${plan.progress.total}` })),
      ...(view || (() => []))(plan).filter(Boolean),
      historyView(plan) || "");
  }
  if (keep) restoreDetails(section, keep);
  section.dataset.id = id;
  section.dataset.version = String(Number(section.dataset.version || 0) + 1);
}

// A live update redraws the plan: the sections the reader opened stay open.
function detailsKeys(section) {
  const seen = new Map();
  return [...section.querySelectorAll("details")].map((d) => {
    const owner = d.closest("[data-turn]");
    const summary = d.querySelector("summary");
    const key = `${owner ? owner.dataset.turn : ""}|${summary ? summary.textContent.replace(/\d+/g, "#") : ""}`;
    seen.set(key, (seen.get(key) || 0) + 1);
    return [d, `${key}|${seen.get(key)}`];
  });
}

function openDetails(section) {
  return new Set(detailsKeys(section).filter(([d]) => d.open).map(([, key]) => key));
}

function restoreDetails(section, keys) {
  for (const [d, key] of detailsKeys(section)) if (keys.has(key)) d.open = true;
}

function start() {
  const search = document.getElementById("search"), state = document.getElementById("state");
  for (const s of STATES) state.append(el("option", { value: s, text: s }));
  search.addEventListener("input", () => go({ q: search.value }, false));
  state.addEventListener("change", () => go({ state: state.value }));
  document.getElementById("list").addEventListener("keydown", cardKeys);
  window.addEventListener("hashchange", follow);
  follow();
  schedule(true, false);
  const events = new EventSource(api("api/events"));
  events.onerror = () => {
    document.getElementById("live").classList.remove("on");
    document.body.dataset.live = "";
  };
  events.onmessage = async (message) => {
    const event = JSON.parse(message.data);
    if (event.type === "hello") {
      // (re)connected: nothing is missed from here on; catch up with what changed before
      await schedule(true, openId !== null);
      document.getElementById("live").classList.add("on");
      document.body.dataset.live = "on";
      return;
    }
    const about = event.type === "removed" ? event.id : event.plan.id;
    if (event.type === "removed" && about === openId) {
      openId = null;
      document.getElementById("detail").replaceChildren(el("p", { class: "muted", text: "This plan is gone from disk." }));
    }
    schedule(true, about === openId);
  };
}

start();
