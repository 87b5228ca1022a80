// The plugin page's state, as an Agent Zero store: loaded once per page, its refresh running only
// while the modal is open (onOpen starts it, cleanup stops it).
import { createStore } from "/js/AlpineStore.js";
import { fetchApi } from "/js/api.js";

const API = "/api/plugins/argus_supervisor/";
// What a verb takes, whether it is asked first (and what it does, said then) and whether it can
// be undone: the daemon's verb table, as the campaign's view lists it (`verbs`), never kept here.
function row(campaign, verb) {
  return ((campaign && campaign.verbs) || []).find((r) => r.name === verb) || null;
}
// Feed kinds that say who decided what and why (the page's "Why" list).
const WHY_KINDS = new Set(["DECISION", "OPERATOR_ACTION", "NEEDS_YOU", "ATTEMPT_COMPLETED", "ATTEMPT_FAILED",
  "ATTEMPT_CANCELED", "MISSION_COMPLETE", "CRITICAL_FAILURE"]);
const EVENTS_SHOWN = 15;
const REFRESH_MS = 3000;

async function call(handler, body) {
  const r = await fetchApi(API + handler, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body || {}),
  });
  if (!r) return { status: 0, body: null };
  let json = null;
  try { json = await r.json(); } catch (_) { json = null; }
  return { status: r.status, body: json };
}

const model = {
  health: "",
  campaigns: [],
  selected: null,
  campaign: null,
  feed: [],
  events: [],
  // The "start or attach supervision" form.
  observeId: "",
  objective: "",
  taskId: "",
  text: "",
  reason: "",
  confirming: null,
  outcome: "",
  outcomeClass: "",
  timer: null,
  // Bumped on every open and close: a refresh begun before the page closed stops at its next step.
  generation: 0,

  onOpen() {
    this.cleanup();
    const gen = this.generation;
    this.refresh(gen);
    this.timer = setInterval(() => this.refresh(gen), REFRESH_MS);
  },

  cleanup() {
    this.generation += 1;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  },

  live(gen) { return gen === undefined || gen === this.generation; },

  destructive(a) { const r = row(this.campaign, a); return Boolean(r && r.destructive); },

  confirmText() {
    const a = this.confirming;
    const r = row(this.campaign, a);
    return "Really " + a + " " + this.selected + "? This will " + ((r && r.confirm) || a) + "." +
      (r && r.destructive ? " This cannot be undone." : "");
  },

  artifacts() {
    const ev = this.campaign && this.campaign.latest_evidence;
    return ((ev && ev.artifacts) || []).map((a) => String(a.name || "unnamed") + " (" + a.bytes + " bytes): " +
      String(a.untrusted_excerpt || ""));
  },

  needs() {
    const q = this.campaign && this.campaign.pending_question;
    if (!q) return "Nothing needs you.";
    return String(q.source) + " asks: " + String(q.text) + "\nHow to answer: " + String(q.how) +
      "\nOptions now: " + (this.campaign.allowed_actions || []).join(", ");
  },

  eventLine(e) {
    const ev = e.event || {};
    const fields = Object.entries(ev).filter(([k, v]) => k !== "type" && (typeof v === "string" || typeof v === "number"))
      .map(([k, v]) => k + " " + v).join(", ");
    return new Date(e.at * 1000).toISOString() + " [" + ev.type + "] " + fields + (e.detail ? " — " + e.detail : "");
  },

  why() { return this.feed.filter((m) => WHY_KINDS.has(m.kind)); },

  stateLine() {
    const c = this.campaign;
    return c.state + " · remote " + (c.remote_state || "unknown") + " · attempts " + c.attempts +
      " · verdict " + (c.reviewer_verdict || "none");
  },

  remoteSays() {
    const c = this.campaign;
    return [c.remote_state, c.remote_stage, c.remote_message].filter((x) => x).map(String).join(" · ") || "nothing yet";
  },

  answer() {
    const ev = this.campaign && this.campaign.latest_evidence;
    const a = ev && ev.answer;
    return a ? String(a.untrusted_text) + " (from its " + String(a.from).replace("_", " ") + ")" : "none given";
  },

  question() {
    return this.campaign && this.campaign.pending_question ? String(this.campaign.pending_question.text) : "none";
  },

  feedLine(m) {
    return new Date(m.at * 1000).toISOString() + " [" + m.kind + "] " + m.text;
  },

  async refresh(gen) {
    if (!this.live(gen)) return;
    const { status, body: h } = await call("health");
    if (!this.live(gen)) return;
    const unreachable = h && h.error && h.error.code === "daemon_unreachable";
    this.health = status === 200 ? "Ready"
      : unreachable ? "Not ready: " + h.error.message + ". Nothing can be sent until it answers again."
      : "Not ready: " + ((((h && h.reasons) || []).map((r) => r.class || r).join(", ")) || (h && h.error && h.error.message) || status);
    if (unreachable) return; // said once, above; the list and the campaign keep their last reading
    const { body } = await call("campaigns");
    if (!this.live(gen)) return;
    this.campaigns = (body && body.campaigns) || [];
    await this.show(gen);
  },

  async show(gen) {
    if (!this.selected || !this.live(gen)) return;
    const { status, body: c } = await call("campaigns", { campaign_id: this.selected });
    if (status !== 200 || !this.live(gen)) return;
    this.campaign = c;
    // Each step checks the page is still open: a refresh begun before it closed starts no call.
    const { body: f } = await call("campaigns", { campaign_id: this.selected, part: "messages" });
    if (!this.live(gen)) return;
    this.feed = (f && f.messages) || [];
    const { body: e } = await call("campaigns", { campaign_id: this.selected, part: "events" });
    if (!this.live(gen)) return;
    this.events = ((e && e.events) || []).slice(-EVENTS_SHOWN);
  },

  select(id) {
    this.selected = id;
    this.confirming = null;
    this.show();
  },

  async observe() {
    const id = this.observeId.trim();
    const body = { objective: this.objective.trim() };
    if (this.taskId.trim()) body.task_id = this.taskId.trim();
    this.selected = id;
    await this.act("observe", body);
  },

  press(a) {
    const r = row(this.campaign, a);
    if (r && r.confirm) {
      this.reason = "";
      this.confirming = a;
    } else {
      this.act(a, {});
    }
  },

  confirm() {
    const a = this.confirming;
    this.confirming = null;
    const why = this.reason.trim();
    this.act(a, why ? { reason: why } : {});
  },

  async act(action, extra) {
    const body = Object.assign({ campaign_id: this.selected, action }, extra);
    const text = this.text.trim();
    const r = row(this.campaign, action);
    if (r && r.fields.includes("message") && text) body.message = text;
    const { status, body: a } = await call("campaign_action", body);
    const said = (a && (a.message || (a.error && a.error.message))) || "";
    const who = a && a.refused_by ? " (refused by " + a.refused_by + ")" : "";
    this.outcome = action + " → " + status + who + " · " + said;
    this.outcomeClass = status === 200 ? "done" : "refused";
    await this.refresh();
  },
};

export const store = createStore("argusSupervisor", model);
