// The web view of agents: every run, those that need you first, as the
// daemon's tool table gives them (`agents web`, GET /api/runs). Whatever a
// run or an agent wrote is set as text, never as HTML.
"use strict";

const TOKEN_KEY = "agents-token";
const LIVE = new Set(["pending", "starting", "running"]);
const STATUS_GLYPHS = {
  working: "●", stalled: "◐", needs_approval: "◉", waiting_input: "◉", idle: "○", unknown: "·",
};
const END_GLYPHS = {
  succeeded: "✓", failed: "✗", cancelled: "⊘", timed_out: "⧗", blocked: "⊗",
  interrupted: "!", lost: "?", skipped: "–",
};

// The token `agents web` put in the URL's fragment, kept for this tab
// only, and taken out of the address bar.
function token() {
  const given = new URLSearchParams(location.hash.slice(1)).get("token");
  if (given) {
    sessionStorage.setItem(TOKEN_KEY, given);
    history.replaceState(null, "", location.pathname);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

const isLive = (run) => LIVE.has(run.state);
const needsYou = (run) => isLive(run) && (run.status === "needs_approval" || run.status === "waiting_input");
const atWork = (run) => isLive(run) && (run.status === "working" || run.status === "stalled");
const words = (s) => s.replaceAll("_", " ");

// Those that need you, then those at work, the other live ones, the ended;
// the newest first in each (run ids sort by time).
function rank(run) {
  if (needsYou(run)) return 0;
  if (atWork(run)) return 1;
  return isLive(run) ? 2 : 3;
}

function glyph(run) {
  if (!isLive(run)) return END_GLYPHS[run.state] || "·";
  if (run.state === "pending") return "◌";
  return STATUS_GLYPHS[run.status] || "·";
}

function span(kind, text) {
  const element = document.createElement("span");
  element.className = kind;
  element.textContent = text;
  return element;
}

function row(run) {
  const item = document.createElement("li");
  item.className = ["run", isLive(run) ? "live" : "ended", needsYou(run) ? "need" : ""].join(" ").trim();
  item.dataset.id = run.id;
  const where = run.host === "local" ? run.harness : `${run.harness} · ${run.host}`;
  item.append(
    span("glyph", glyph(run)),
    span("name", run.name),
    span("what", words(isLive(run) ? run.status : run.state)),
    span("where", where),
  );
  const why = isLive(run) ? run.evidence : run.reason;
  if (why) {
    const line = document.createElement("p");
    line.className = "why";
    line.textContent = why;
    item.append(line);
  }
  return item;
}

function counts(runs) {
  const n = (keep) => runs.filter(keep).length;
  return [
    `${n(needsYou)} need you`,
    `${n(atWork)} working`,
    `${n(isLive)} live`,
    `${n((r) => r.state === "succeeded")} succeeded`,
    `${n((r) => r.state === "failed")} failed`,
  ].join(" · ");
}

function say(problem) {
  const line = document.getElementById("problem");
  line.textContent = problem || "";
  line.hidden = !problem;
}

async function refresh(key) {
  try {
    const answer = await fetch("/api/runs", { headers: { Authorization: `Bearer ${key}` }, cache: "no-store" });
    const body = await answer.json();
    if (!answer.ok) {
      throw new Error(body.error ? body.error.message : answer.statusText);
    }
    const runs = body.runs.slice().sort((a, b) => rank(a) - rank(b) || (a.id < b.id ? 1 : -1));
    document.getElementById("runs").replaceChildren(...runs.map(row));
    document.getElementById("counts").textContent = counts(runs);
    say(null);
  } catch (e) {
    say(`not up to date: ${e.message}`);
  }
}

function start() {
  const key = token();
  if (!key) {
    say("open the web view from the URL `agents web` printed: it carries the key");
    return;
  }
  refresh(key);
  setInterval(() => refresh(key), 2000);
}

document.addEventListener("DOMContentLoaded", start);
