// The argus-supervisor panel. Plain JavaScript, no dependencies, no build step.
//
// Rules this file keeps (the page shows text that came from a remote we do not trust):
// - every piece of remote or operator text reaches the page through textContent, never as HTML;
// - the API token lives in sessionStorage for this tab, is sent as a bearer header, and never goes
//   into a URL or a cookie;
// - nothing here runs code from a string (the Content-Security-Policy forbids it anyway).
"use strict";

const PREFIX = "/api/plugins/argus-supervisor";
const TOKEN_KEY = "argus-supervisor-token";
const REFRESH_MS = 1500;

let timer = null; // the current page's refresh
let feedAbort = null; // the current campaign's live feed
let diagramText = null; // the state diagram, fetched once

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

function notice(text, isError) {
  const n = document.getElementById("notice");
  n.textContent = text || "";
  n.hidden = !text;
  n.className = isError ? "error" : "";
}

function showLogin(message) {
  stopPage();
  document.getElementById("login").hidden = false;
  document.getElementById("view").replaceChildren();
  if (message) notice(message, true);
}

class Unauthorized extends Error {}

// The token was refused: forget it and ask again.
function refused() {
  sessionStorage.removeItem(TOKEN_KEY);
  showLogin("The API token was refused. Enter the supervisor's API token again.");
}

async function api(path, options) {
  const headers = { Authorization: "Bearer " + token() };
  const init = Object.assign({ headers }, options || {});
  if (init.body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(PREFIX + path, init);
  if (resp.status === 401) {
    refused();
    throw new Unauthorized();
  }
  let body = null;
  try {
    body = await resp.json();
  } catch (_) {
    body = null;
  }
  return { status: resp.status, body };
}

function stopPage() {
  if (timer) clearInterval(timer);
  timer = null;
  if (feedAbort) feedAbort.abort();
  feedAbort = null;
}

function every(ms, f) {
  f();
  timer = setInterval(f, ms);
}

// A time for a person: "3 min ago (2026-12-02 07:40:00 UTC)"; accepts unix seconds or RFC 3339.
function when(at) {
  if (at === null || at === undefined || at === 0) return "time unknown";
  const ms = typeof at === "number" ? at * 1000 : Date.parse(at);
  if (Number.isNaN(ms)) return String(at);
  const abs = new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  const d = Math.round((Date.now() - ms) / 1000);
  const rel = d >= 0 ? age(d) : "in " + (-d) + " s";
  return rel + " (" + abs + ")";
}

function age(seconds) {
  if (seconds === null || seconds === undefined) return "";
  if (seconds < 60) return seconds + " s ago";
  if (seconds < 3600) return Math.floor(seconds / 60) + " min ago";
  return Math.floor(seconds / 3600) + " h ago";
}

function leaseText(lease) {
  if (!lease) return "none";
  return lease.holder + " · epoch " + lease.epoch + " · expires in " + lease.expires_in_seconds + " s";
}

function eventText(e) {
  if (!e) return "";
  return e.type + (e.stage ? " (" + e.stage + ")" : "");
}

// ----- Campaigns ---------------------------------------------------------------------------

// The superstate a persisted state name belongs to (`controlling.running` → controlling).
function group(state) {
  return String(state || "").split(".")[0];
}

async function campaignsPage(view) {
  const tbody = el("tbody", { id: "campaign-rows" });
  const filter = el("input", { id: "filter", type: "search", placeholder: "Filter: id, objective or state" });
  const sort = el(
    "select",
    { id: "sort" },
    el("option", { value: "id" }, "Sort by campaign"),
    el("option", { value: "state" }, "Sort by state"),
    el("option", { value: "recent" }, "Sort by latest event")
  );
  // Start or attach supervision: observe, as the CLI's `campaigns observe` (its real outcome below).
  const newId = el("input", { id: "observe-id", placeholder: "campaign id", required: "" });
  const objective = el("input", { id: "observe-objective", placeholder: "objective", required: "" });
  const task = el("input", { id: "observe-task", placeholder: "remote task id (optional: attach)" });
  const observed = el("p", { id: "observe-outcome", role: "status" });
  const start = el("form", { id: "observe-form" }, el("strong", {}, "Start or attach supervision "), newId, " ", objective, " ", task, " ",
    el("button", { type: "submit", id: "observe-send" }, "Observe"));
  start.addEventListener("submit", (e) => {
    e.preventDefault();
    const body = { objective: objective.value.trim() };
    if (task.value.trim()) body.task_id = task.value.trim();
    send(newId.value.trim(), "observe", body, observed);
  });
  view.replaceChildren(
    el("h2", {}, "Campaigns"),
    start,
    observed,
    el("p", { class: "controls" }, filter, " ", sort),
    el(
      "table",
      { id: "campaigns" },
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          ...["Campaign", "Objective", "State", "Lease", "Attempts", "Pending question", "Last significant event"].map(
            (h) => el("th", {}, h)
          )
        )
      ),
      tbody
    )
  );
  let campaigns = [];
  const draw = () => {
    const q = filter.value.trim().toLowerCase();
    const shown = campaigns
      .filter((c) => !q || [c.campaign_id, c.objective, c.state].some((v) => String(v || "").toLowerCase().includes(q)))
      .sort((a, b) => {
        if (sort.value === "state") return String(a.state).localeCompare(String(b.state)) || a.campaign_id.localeCompare(b.campaign_id);
        if (sort.value === "recent")
          return (a.latest_significant_age_seconds ?? Infinity) - (b.latest_significant_age_seconds ?? Infinity);
        return a.campaign_id.localeCompare(b.campaign_id);
      });
    tbody.replaceChildren(
      ...shown.map((c) =>
        el(
          "tr",
          { "data-campaign": c.campaign_id },
          el("td", {}, el("a", { href: "#/c/" + encodeURIComponent(c.campaign_id) }, c.campaign_id)),
          el("td", {}, c.objective),
          el("td", { class: "state" }, el("span", { class: "badge state-" + group(c.state) }, c.state)),
          el("td", {}, leaseText(c.lease)),
          el("td", {}, c.attempts),
          el("td", {}, c.pending_question ? el("span", { class: "badge needs-you" }, "Needs you") : ""),
          el("td", {}, eventText(c.latest_significant_event) + " " + age(c.latest_significant_age_seconds))
        )
      )
    );
  };
  filter.addEventListener("input", draw);
  sort.addEventListener("change", draw);
  every(REFRESH_MS, async () => {
    try {
      const { status, body } = await api("/campaigns");
      if (status !== 200) return notice("Campaigns could not be read (" + status + ").", true);
      notice("");
      campaigns = body.campaigns || [];
      draw();
    } catch (e) {
      if (!(e instanceof Unauthorized)) notice("The supervisor did not answer.", true);
    }
  });
}

// ----- One campaign ------------------------------------------------------------------------

const VIEWS = ["overview", "observing", "controlling", "recovery", "ending"];
const viewText = {}; // each view's SVG text, fetched once

// A view's picture: our own static asset (no data in it), parsed as SVG, never as HTML.
async function picture(name) {
  if (viewText[name] === undefined) {
    const resp = await fetch(PREFIX + "/ui/views/" + name + ".svg");
    viewText[name] = await resp.text();
  }
  const doc = new DOMParser().parseFromString(viewText[name], "image/svg+xml");
  return document.importNode(doc.documentElement, true);
}

function nodes(svg) {
  const out = new Map();
  for (const g of svg.querySelectorAll("g.node")) out.set(g.querySelector("title")?.textContent, g);
  return out;
}

// Current node filled, the campaign's path outlined, the steps it took drawn thick.
function highlight(svg, current, path) {
  const visited = new Set(path);
  for (const [name, g] of nodes(svg)) {
    g.classList.toggle("visited", visited.has(name));
    g.classList.toggle("current", name === current);
  }
  const steps = new Set();
  for (let i = 1; i < path.length; i++) steps.add(path[i - 1] + "->" + path[i]);
  for (const g of svg.querySelectorAll("g.edge")) {
    const name = g.querySelector("title")?.textContent || "";
    g.classList.toggle("taken", steps.has(name));
  }
}

const viewNames = {}; // each view's node names, read from its picture once

// The name of the detail view that shows the current state, preferring the one the path runs
// through most (decided on the views' node names: no picture is parsed per refresh).
async function detailFor(current, path) {
  let best = null;
  let score = -1;
  for (const name of VIEWS.slice(1)) {
    if (viewNames[name] === undefined) viewNames[name] = new Set(nodes(await picture(name)).keys());
    const names = viewNames[name];
    if (!names.has(current)) continue;
    const s = path.filter((p) => names.has(p)).length;
    if (s > score) {
      best = name;
      score = s;
    }
  }
  return best;
}

// Scroll the box so the current node is in view (the picture is scaled to the box's width).
function reveal(box) {
  const g = box.querySelector("g.node.current");
  if (g) g.scrollIntoView({ block: "center", inline: "center" });
}

function followFeed(id, list) {
  feedAbort = new AbortController();
  const signal = feedAbort.signal;
  (async () => {
    const resp = await fetch(PREFIX + "/campaigns/" + encodeURIComponent(id) + "/messages/stream", {
      headers: { Authorization: "Bearer " + token() },
      signal,
    });
    if (resp.status === 401) return refused();
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (event !== "message" || data.length === 0) continue;
        let m;
        try {
          m = JSON.parse(data.join("\n"));
        } catch (_) {
          continue;
        }
        list.append(
          el("li", { class: "feed-line", "data-kind": m.kind || "" }, el("time", {}, when(m.at)), " ", el("strong", {}, m.kind || ""), " ", m.text || "")
        );
      }
    }
  })().catch(() => {});
}

// The verb table as the campaign view lists it (`verbs`): what each verb takes, whether it can be
// undone. Kept from the newest view; never written here.
let VERBS = new Map();
const takes = (verb, field) => Boolean(VERBS.get(verb) && VERBS.get(verb).fields.includes(field));
// What cannot be taken back: each asks to be confirmed and takes a reason.
const destructive = (verb) => Boolean(VERBS.get(verb) && VERBS.get(verb).destructive);

async function send(id, action, body, outcome) {
  outcome.textContent = action + ": waiting for the outcome…";
  outcome.className = "";
  try {
    const { status, body: answer } = await api("/campaigns/" + encodeURIComponent(id) + "/" + action, {
      method: "POST",
      body: JSON.stringify(body),
    });
    const said = answer && (answer.message || (answer.error && answer.error.message) || answer.outcome) || "";
    outcome.textContent = action + " → " + status + (answer && answer.state ? " · now " + answer.state : "") + (said ? " · " + (typeof said === "string" ? said : JSON.stringify(said)) : "");
    outcome.className = status >= 200 && status < 300 ? "accepted" : "refused";
  } catch (e) {
    if (!(e instanceof Unauthorized)) {
      outcome.textContent = action + ": the supervisor did not answer";
      outcome.className = "refused";
    }
  }
}

async function act(id, action, box, outcome) {
  const body = {};
  const text = box.value.trim();
  if (takes(action, "message") && text) body.message = text;
  return send(id, action, body, outcome);
}

// A form in `box` for a destructive action: nothing is sent until "Confirm" is pressed.
function confirmBox(box, id, action, outcome) {
  const reason = el("textarea", { id: "confirm-reason", placeholder: "Why (kept in the log and, for cancel, sent to the remote)" });
  const yes = el("button", { type: "button", id: "confirm-send", class: "danger" }, "Confirm " + action);
  const no = el("button", { type: "button", id: "confirm-abort" }, "Keep the campaign as it is");
  box.replaceChildren(
    el("p", { id: "confirm-text" }, "Really " + action + " campaign " + id + "? This will " + (VERBS.get(action).confirm || action) + ". This cannot be undone."),
    reason,
    yes,
    no
  );
  box.hidden = false;
  no.addEventListener("click", () => {
    box.hidden = true;
    box.replaceChildren();
  });
  yes.addEventListener("click", () => {
    const body = reason.value.trim() ? { reason: reason.value.trim() } : {};
    box.hidden = true;
    box.replaceChildren();
    send(id, action, body, outcome);
  });
}

// Resolve asks which it was, explicitly: applied (with the task it created) or not applied.
function resolveBox(box, id, outcome) {
  const applied = el("input", { type: "radio", name: "resolve", id: "resolve-applied", value: "applied" });
  const task = el("input", { type: "text", id: "resolve-task", placeholder: "the task id it created" });
  const notApplied = el("input", { type: "radio", name: "resolve", id: "resolve-not-applied", value: "not" });
  const go = el("button", { type: "button", id: "resolve-send" }, "Resolve");
  const no = el("button", { type: "button", id: "resolve-abort" }, "Not now");
  box.replaceChildren(
    el("p", {}, "The write's outcome could not be read back. What happened at the remote?"),
    el("label", {}, applied, " applied — task ", task),
    el("br", {}),
    el("label", {}, notApplied, " not applied"),
    el("br", {}),
    go,
    no
  );
  box.hidden = false;
  no.addEventListener("click", () => {
    box.hidden = true;
    box.replaceChildren();
  });
  go.addEventListener("click", () => {
    let body;
    if (applied.checked && task.value.trim()) body = { applied: task.value.trim() };
    else if (notApplied.checked) body = { not_applied: true };
    else return (outcome.textContent = "resolve: choose applied (with its task id) or not applied");
    box.hidden = true;
    box.replaceChildren();
    send(id, "resolve", body, outcome);
  });
}

async function campaignPage(view, id) {
  const title = el("h2", {}, "Campaign ", el("span", { id: "campaign-id" }, id));
  const state = el("p", { id: "campaign-state" });
  const lease = el("p", { id: "campaign-lease" });
  const argus = el("p", { id: "campaign-argus" });
  const overviewBox = el("div", { class: "diagram overview", id: "overview" });
  const detailBox = el("div", { class: "diagram detail", id: "diagram" });
  const timeline = el("ol", { id: "timeline" });
  const feed = el("ol", { id: "feed" });
  const evidenceLabel = el("p", { id: "evidence-label" });
  const evidence = el("pre", { id: "evidence" });
  const question = el("p", { id: "question" });
  const remoteMessage = el("pre", { id: "remote-message" });
  const remoteAnswer = el("pre", { id: "remote-answer" });
  const answer = el("textarea", { id: "answer-text", placeholder: "Your answer" });
  const answerButton = el("button", { type: "button", id: "answer-send" }, "Answer");
  const message = el("textarea", { id: "action-text", placeholder: "Message for submit / intervene / next-attempt" });
  const buttons = el("div", { class: "actions", id: "actions" });
  const confirm = el("div", { class: "confirm", id: "confirm", hidden: "" });
  const outcome = el("p", { id: "outcome", role: "status" });
  view.replaceChildren(
    title,
    state,
    lease,
    argus,
    el(
      "div",
      { class: "grid" },
      el("section", {}, el("h3", {}, "Actions"), message, buttons, confirm, outcome),
      el(
        "section",
        { id: "question-box" },
        el("h3", {}, "Pending question"),
        question,
        el("section", { class: "untrusted" }, el("h3", {}, "What the remote says"), remoteMessage),
        el("section", { class: "untrusted" }, el("h3", {}, "The remote's answer"), remoteAnswer),
        answer,
        answerButton
      )
    ),
    el("h3", {}, "Where it is (current state filled, its path outlined)"),
    el("div", { class: "grid diagrams" }, overviewBox, detailBox),
    el(
      "div",
      { class: "grid" },
      el("section", {}, el("h3", {}, "Feed"), feed),
      el("section", {}, el("h3", {}, "Its path"), timeline)
    ),
    el("section", { class: "untrusted" }, el("h3", {}, "Latest evidence"), evidenceLabel, evidence)
  );
  answerButton.addEventListener("click", () => act(id, "answer", answer, outcome));
  let overview = null;
  try {
    overview = await picture("overview");
    overviewBox.append(overview);
  } catch (_) {
    overviewBox.textContent = "The overview could not be loaded.";
  }
  followFeed(id, feed);
  let shownActions = null;
  let shownDetail = null;
  every(REFRESH_MS, async () => {
    try {
      const { status, body: c } = await api("/campaigns/" + encodeURIComponent(id));
      if (status !== 200) return notice("Campaign " + id + " could not be read (" + status + ").", true);
      notice("");
      state.textContent = "State: " + c.state + " · remote: " + (c.remote_state || "unknown") + (c.remote_stage ? " (" + c.remote_stage + ")" : "") + " · attempts: " + c.attempts;
      lease.textContent = "Lease: " + leaseText(c.lease);
      // Argus's side: its status for this campaign and its Reviewer's newest verdict.
      argus.textContent = c.argus_project_id
        ? "Argus: " + (c.argus_status || "unknown") + " · Reviewer verdict: " + (c.reviewer_verdict || "none yet")
        : "Argus: not attached (decisions are the operator's)";
      const path = c.path || [];
      if (overview) highlight(overview, c.diagram_superstate, []);
      // The detail view holding the current state; switched (and scrolled to) when it changes.
      const view = await detailFor(c.diagram_state, path);
      if (view && view !== shownDetail) {
        shownDetail = view;
        const detail = await picture(view);
        detailBox.replaceChildren(detail);
        highlight(detail, c.diagram_state, path);
        reveal(detailBox);
      } else {
        const svg = detailBox.querySelector("svg");
        if (svg) highlight(svg, c.diagram_state, path);
      }
      detailBox.dataset.current = c.diagram_state;
      timeline.replaceChildren(
        ...(c.timeline || []).map((t) => el("li", { "data-state": t.state }, el("time", {}, when(t.at)), " ", t.state))
      );
      VERBS = new Map((c.verbs || []).map((row) => [row.name, row]));
      const allowed = new Set(c.allowed_actions || []);
      const all = (c.actions || []).filter((a) => a !== "observe" && a !== "answer");
      if (shownActions !== all.join(",")) {
        shownActions = all.join(",");
        buttons.replaceChildren(
          ...all.map((a) => {
            const b = el("button", { type: "button", id: "action-" + a, "data-action": a, class: destructive(a) ? "danger" : "" }, a);
            b.addEventListener("click", () => {
              if (destructive(a)) return confirmBox(confirm, id, a, outcome);
              if (a === "resolve") return resolveBox(confirm, id, outcome);
              act(id, a, message, outcome);
            });
            return b;
          })
        );
      }
      for (const b of buttons.querySelectorAll("button")) b.disabled = !allowed.has(b.dataset.action);
      const q = c.pending_question;
      question.textContent = q ? q.text + " (from " + q.source + ", asked " + when(q.asked_at) + ")" : "No question pending.";
      remoteMessage.textContent = c.remote_message || "nothing";
      // The ended attempt's final answer, as the remote gave it (artifacts, status or history).
      const said = c.latest_evidence && c.latest_evidence.answer;
      remoteAnswer.textContent = said ? said.untrusted_text + " (from its " + said.from.replace("_", " ") + ")" : "none given";
      answer.disabled = answerButton.disabled = !allowed.has("answer");
      // Evidence says which attempt and task it is from: during attempt 2 it may still be 1's.
      const ev = c.latest_evidence;
      if (ev) {
        const n = (c.attempt_history || []).findIndex((a) => a.task_id === ev.task);
        const which = n >= 0 ? "attempt " + (n + 1 + (c.older_attempts || 0)) : "an attempt";
        evidenceLabel.textContent =
          "Evidence of " + which + " (task " + ev.task + ")" + (ev.task !== c.remote_task_id ? " — an earlier attempt, not the current one" : "");
        evidence.textContent = JSON.stringify(ev.artifacts || [], null, 2);
      } else {
        evidenceLabel.textContent = "";
        evidence.textContent = "none yet";
      }
    } catch (e) {
      if (!(e instanceof Unauthorized)) notice("The supervisor did not answer.", true);
    }
  });
}

// ----- Health ------------------------------------------------------------------------------

function kv(obj, prefix, out) {
  for (const [k, v] of Object.entries(obj || {})) {
    const key = prefix ? prefix + "." + k : k;
    if (v && typeof v === "object" && !Array.isArray(v)) kv(v, key, out);
    else {
      let text = Array.isArray(v) ? v.map((x) => (typeof x === "object" ? JSON.stringify(x) : x)).join(", ") : String(v);
      // Unix times (card retrieved, started, ...) also say how long ago.
      if (k.endsWith("_at") && typeof v === "number") text += " (" + age(Math.max(0, Math.floor(Date.now() / 1000) - v)) + ")";
      out.push(el("dt", {}, key), el("dd", {}, text));
    }
  }
  return out;
}

async function healthPage(view) {
  const board = el("div", { id: "readiness" });
  const tiles = el("div", { class: "tiles", id: "tiles" });
  const health = el("dl", { class: "kv", id: "health" });
  const status = el("dl", { class: "kv", id: "status" });
  view.replaceChildren(
    el("h2", {}, "Health"),
    board,
    tiles,
    el("details", {}, el("summary", {}, "Everything health says"), health),
    el("details", {}, el("summary", {}, "Status and counters"), status)
  );
  const tile = (name, value, good) =>
    el("div", { class: "tile " + (good ? "ok" : "bad"), "data-tile": name }, el("h3", {}, name), el("p", {}, String(value)));
  every(REFRESH_MS * 2, async () => {
    try {
      // Readiness first: ready, or each reason it is not (the daemon's own words).
      const { status: code, body: h } = await api("/health");
      const ready = h && h.status === "ok";
      board.replaceChildren(
        el("p", { class: ready ? "badge ok" : "badge bad" }, ready ? "Ready" : "Not ready (HTTP " + code + ")"),
        ...((h && h.reasons) || []).map((r) => el("p", { class: "reason" }, r.class + ": " + (r.detail || ""))),
      );
      const r = (h && h.remote) || {};
      const tick = h && h.heartbeat ? h.heartbeat.last_tick_age_seconds : null;
      tiles.replaceChildren(
        tile("Remote", (r.state || "?") + (r.dialect ? " · A2A " + r.dialect : "") + (r.can ? " · can: " + r.can.join(", ") : ""), r.state === "discovered"),
        tile("Argus", h ? h.argus : "?", !h || h.argus === "running" || h.argus === "not configured"),
        tile("Foreman", h ? h.foreman : "?", !h || h.foreman === "running" || h.foreman === "not configured"),
        tile("Heartbeat", tick === null || tick === undefined ? "no tick yet" : "last tick " + age(tick), tick !== null && tick !== undefined),
        tile("Campaigns", h ? h.campaigns : "?", true),
        tile("Supervision", h ? h.supervision : "?", h && h.supervision === "on")
      );
      health.replaceChildren(...kv(h, "", []));
      const { body } = await api("/status");
      status.replaceChildren(...kv(body, "", []));
    } catch (e) {
      if (!(e instanceof Unauthorized)) notice("The supervisor did not answer.", true);
    }
  });
}

// ----- Routing -----------------------------------------------------------------------------

function route() {
  stopPage();
  notice("");
  if (!token()) return showLogin();
  document.getElementById("login").hidden = true;
  const view = document.getElementById("view");
  const hash = location.hash || "#/";
  if (hash.startsWith("#/c/")) return campaignPage(view, decodeURIComponent(hash.slice(4)));
  if (hash === "#/health") return healthPage(view);
  return campaignsPage(view);
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("login-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = document.getElementById("token");
    sessionStorage.setItem(TOKEN_KEY, input.value);
    input.value = "";
    route();
  });
  document.getElementById("forget-token").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showLogin();
  });
  window.addEventListener("hashchange", route);
  route();
});
