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

async function campaignsPage(view) {
  const tbody = el("tbody", { id: "campaign-rows" });
  view.replaceChildren(
    el("h2", {}, "Campaigns"),
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
  every(REFRESH_MS, async () => {
    try {
      const { status, body } = await api("/campaigns");
      if (status !== 200) return notice("Campaigns could not be read (" + status + ").", true);
      notice("");
      const rows = (body.campaigns || []).map((c) =>
        el(
          "tr",
          { "data-campaign": c.campaign_id },
          el("td", {}, el("a", { href: "#/c/" + encodeURIComponent(c.campaign_id) }, c.campaign_id)),
          el("td", {}, c.objective),
          el("td", { class: "state" }, c.state),
          el("td", {}, leaseText(c.lease)),
          el("td", {}, c.attempts),
          el("td", {}, c.pending_question || ""),
          el("td", {}, eventText(c.latest_significant_event) + " " + age(c.latest_significant_age_seconds))
        )
      );
      tbody.replaceChildren(...rows);
    } catch (e) {
      if (!(e instanceof Unauthorized)) notice("The supervisor did not answer.", true);
    }
  });
}

// ----- One campaign ------------------------------------------------------------------------

async function diagram() {
  if (diagramText === null) {
    const resp = await fetch(PREFIX + "/ui/campaign.svg");
    diagramText = await resp.text();
  }
  // Our own static asset (no data in it), parsed as SVG, never as HTML.
  const doc = new DOMParser().parseFromString(diagramText, "image/svg+xml");
  return document.importNode(doc.documentElement, true);
}

function highlight(svg, current, path) {
  const visited = new Set(path);
  for (const g of svg.querySelectorAll("g.node")) {
    const name = g.querySelector("title")?.textContent;
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
        list.append(el("li", { class: "feed-line", "data-kind": m.kind || "" }, el("strong", {}, m.kind || ""), " ", m.text || ""));
      }
    }
  })().catch(() => {});
}

const NEEDS_TEXT = { submit: "message", intervene: "message", "next-attempt": "message" };

async function act(id, action, box, outcome) {
  const body = {};
  const text = box.value.trim();
  if ((NEEDS_TEXT[action] || action === "answer") && text) body.message = text;
  if (action === "resolve") {
    if (text) body.applied = text;
    else body.not_applied = true;
  }
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

async function campaignPage(view, id) {
  const title = el("h2", {}, "Campaign ", el("span", { id: "campaign-id" }, id));
  const state = el("p", { id: "campaign-state" });
  const lease = el("p", { id: "campaign-lease" });
  const svgBox = el("div", { class: "diagram", id: "diagram" });
  const feed = el("ol", { id: "feed" });
  const evidence = el("pre", { id: "evidence" });
  const question = el("p", { id: "question" });
  const remoteMessage = el("pre", { id: "remote-message" });
  const answer = el("textarea", { id: "answer-text", placeholder: "Your answer" });
  const answerButton = el("button", { type: "button", id: "answer-send" }, "Answer");
  const message = el("textarea", { id: "action-text", placeholder: "Message for submit / intervene / next-attempt; task id for resolve (empty: not applied)" });
  const buttons = el("div", { class: "actions", id: "actions" });
  const outcome = el("p", { id: "outcome", role: "status" });
  view.replaceChildren(
    title,
    state,
    lease,
    el("h3", {}, "State diagram (current state filled, path taken outlined)"),
    svgBox,
    el(
      "div",
      { class: "grid" },
      el("section", {}, el("h3", {}, "Feed"), feed),
      el(
        "section",
        {},
        el("h3", {}, "Actions"),
        message,
        buttons,
        outcome,
        el("section", { id: "question-box" }, el("h3", {}, "Pending question"), question,
          el("section", { class: "untrusted" }, el("h3", {}, "What the remote says"), remoteMessage),
          answer, answerButton),
        el("section", { class: "untrusted" }, el("h3", {}, "Latest evidence"), evidence)
      )
    )
  );
  answerButton.addEventListener("click", () => act(id, "answer", answer, outcome));
  let svg = null;
  try {
    svg = await diagram();
    svgBox.append(svg);
  } catch (_) {
    svgBox.textContent = "The state diagram could not be loaded.";
  }
  followFeed(id, feed);
  let shownActions = null;
  every(REFRESH_MS, async () => {
    try {
      const { status, body: c } = await api("/campaigns/" + encodeURIComponent(id));
      if (status !== 200) return notice("Campaign " + id + " could not be read (" + status + ").", true);
      notice("");
      state.textContent = "State: " + c.state + " · remote: " + (c.remote_state || "unknown") + (c.remote_stage ? " (" + c.remote_stage + ")" : "") + " · attempts: " + c.attempts;
      lease.textContent = "Lease: " + leaseText(c.lease);
      if (svg) highlight(svg, c.diagram_state, c.path || []);
      svgBox.dataset.current = c.diagram_state;
      const allowed = new Set(c.allowed_actions || []);
      const all = (c.actions || []).filter((a) => a !== "observe" && a !== "answer");
      if (shownActions !== all.join(",")) {
        shownActions = all.join(",");
        buttons.replaceChildren(
          ...all.map((a) => {
            const b = el("button", { type: "button", id: "action-" + a, "data-action": a }, a);
            b.addEventListener("click", () => act(id, a, message, outcome));
            return b;
          })
        );
      }
      for (const b of buttons.querySelectorAll("button")) b.disabled = !allowed.has(b.dataset.action);
      const q = c.pending_question;
      question.textContent = q ? q.text + " (from " + q.source + ")" : "No question pending.";
      remoteMessage.textContent = c.remote_message || "nothing";
      answer.disabled = answerButton.disabled = !allowed.has("answer");
      evidence.textContent = c.latest_evidence ? JSON.stringify(c.latest_evidence, null, 2) : "none yet";
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
  const health = el("dl", { class: "kv", id: "health" });
  const status = el("dl", { class: "kv", id: "status" });
  view.replaceChildren(el("h2", {}, "Health"), board, health, el("h2", {}, "Status and counters"), status);
  every(REFRESH_MS * 2, async () => {
    try {
      // Readiness first: ready, or each reason it is not (the daemon's own words).
      const { status: code, body: h } = await api("/health");
      const ready = h && h.status === "ok";
      board.replaceChildren(
        el("p", { class: ready ? "badge ok" : "badge bad" }, ready ? "Ready" : "Not ready (HTTP " + code + ")"),
        ...((h && h.reasons) || []).map((r) => el("p", { class: "reason" }, r.class + ": " + (r.detail || ""))),
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
