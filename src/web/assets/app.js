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

// The runs as the TUI's tree: each under the run that started it; the
// trees holding a run that needs you first, then those at work, then the
// other live ones, then the ended — the newest first in each.
function tree(runs) {
  const ids = new Set(runs.map((r) => r.id));
  const children = new Map();
  for (const run of runs) {
    const parent = run.parent_id && ids.has(run.parent_id) ? run.parent_id : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(run);
  }
  const best = new Map();
  const rankOf = (run) => {
    if (!best.has(run.id)) {
      best.set(run.id, Math.min(rank(run), ...(children.get(run.id) || []).map(rankOf)));
    }
    return best.get(run.id);
  };
  const order = (list) => list.slice().sort((a, b) => rankOf(a) - rankOf(b) || (a.id < b.id ? 1 : -1));
  const shown = [];
  const walk = (run, depth) => {
    shown.push([run, depth]);
    for (const child of order(children.get(run.id) || [])) walk(child, depth + 1);
  };
  for (const root of order(children.get(null) || [])) walk(root, 0);
  return shown;
}

function row(run, depth) {
  const item = document.createElement("li");
  if (depth > 0) {
    item.classList.add("child");
    item.dataset.depth = String(depth);
    item.style.paddingLeft = `${Math.min(depth, 6) * 1.1}rem`;
  }
  item.tabIndex = 0;
  item.addEventListener("click", () => select(run.id));
  item.addEventListener("keydown", (e) => { if (e.key === "Enter") select(run.id); });
  item.classList.add("run", isLive(run) ? "live" : "ended");
  if (needsYou(run)) item.classList.add("need");
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

// The TUI header's counts, in its words: live runs by status (a pending
// one as itself, never idle), then the ended by how they ended.
function counts(runs) {
  const n = (keep) => runs.filter(keep).length;
  const live = (...statuses) => n((r) => isLive(r) && r.state !== "pending" && statuses.includes(r.status));
  const shown = [
    [live("working"), "working", true],
    [live("stalled"), "stalled", false],
    [live("waiting_input", "needs_approval"), "waiting", true],
    [live("idle", "unknown"), "idle", true],
    [n((r) => r.state === "pending"), "pending", false],
    [n((r) => r.state === "succeeded"), "succeeded", true],
    [n((r) => r.state === "failed"), "failed", true],
  ];
  for (const state of ["cancelled", "timed_out", "blocked", "interrupted", "lost"]) {
    shown.push([n((r) => r.state === state), words(state), false]);
  }
  return shown.filter(([count, , always]) => always || count > 0).map(([count, word]) => `${count} ${word}`).join(" · ");
}

function say(problem) {
  const line = document.getElementById("problem");
  line.textContent = problem || "";
  line.hidden = !problem;
}

// The run whose sheet is open, and the runs as last listed.
let selected = null;
let listed = [];
let key = null;

function select(id) {
  const changed = id !== selected;
  selected = id;
  if (changed) {
    document.getElementById("prompt").value = "";
    document.getElementById("outcome").textContent = "";
    document.getElementById("earlier-lines").hidden = true;
    if (id) Screen.watch(id, key);
    else Screen.stop();
  }
  showSheet();
}

// The open run's sheet: its state and why, its question's answers while it
// waits, the prompt box and cancel while it lives, resume once it ended
// with a conversation. Its prompt box is kept across refreshes (a draft is
// never wiped).
function showSheet() {
  const sheet = document.getElementById("sheet");
  const run = listed.find((r) => r.id === selected);
  if (!run) {
    sheet.hidden = true;
    return;
  }
  sheet.hidden = false;
  document.getElementById("sheet-name").textContent = run.name;
  document.getElementById("sheet-state").textContent =
    `${glyph(run)} ${words(isLive(run) ? run.status : run.state)} · ${run.harness} · ${run.host}`;
  document.getElementById("sheet-why").textContent = (isLive(run) ? run.evidence : run.reason) || "";
  document.getElementById("answers").hidden = !needsYou(run);
  document.getElementById("compose").hidden = !isLive(run);
  document.getElementById("ended-actions").hidden = isLive(run) || !run.session_id;
  Tabs.show(run.id);
}

// The last lines the run wrote, as `agents logs` shows them: what
// scrolled off its screen, asked for by a click.
async function showEarlier() {
  const id = selected;
  const body = await read(`/api/runs/${encodeURIComponent(id)}/lines?last=2000`);
  if (body && body.lines && id === selected) {
    const earlier = document.getElementById("earlier-lines");
    earlier.textContent = body.lines.join("\n");
    earlier.hidden = false;
    earlier.scrollTop = earlier.scrollHeight;
  }
}

// `GET path` of the API: its JSON (the typed error's, when refused), or
// null when the web view cannot be reached.
async function read(path) {
  try {
    const answer = await fetch(path, { headers: { Authorization: `Bearer ${key}` }, cache: "no-store" });
    return await answer.json();
  } catch (e) {
    return null;
  }
}

// One of the run's actions: its outcome, or its typed error, said.
async function act(what, body) {
  const run = listed.find((r) => r.id === selected);
  if (!run) return null;
  const outcome = document.getElementById("outcome");
  try {
    const answer = await fetch(`/api/runs/${encodeURIComponent(run.id)}/${what}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const reply = await answer.json();
    if (!answer.ok) {
      throw new Error(reply.error ? reply.error.message : answer.statusText);
    }
    refresh();
    return reply;
  } catch (e) {
    outcome.textContent = `not done: ${e.message}`;
    return null;
  }
}

// An id of the caller's for an answer or a prompt (a retry of it is
// applied once); made from the browser's randomness, which a page served
// over plain http beyond loopback has too (unlike crypto's UUIDs).
function freshId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// The browser's own notification when a run starts waiting for you (not
// for those that already waited when the page opened); a click on it
// opens that run's sheet.
let heardOnce = false;

function tellNewlyWaiting(before, now) {
  const waited = new Set(before.filter(needsYou).map((r) => r.id));
  const first = !heardOnce;
  heardOnce = true;
  if (first || !("Notification" in window) || Notification.permission !== "granted") return;
  for (const run of now.filter((r) => needsYou(r) && !waited.has(r.id))) {
    const note = new Notification(`${run.name} needs you`, { body: run.evidence || "", tag: run.id });
    note.onclick = () => {
      window.focus();
      select(run.id);
    };
  }
}

// Notifications are asked for by a click, as browsers require.
function offerNotifications() {
  const button = document.getElementById("notify");
  if (!("Notification" in window) || Notification.permission !== "default") return;
  button.hidden = false;
  button.addEventListener("click", async () => {
    await Notification.requestPermission();
    button.hidden = true;
  });
}

function said(text) {
  document.getElementById("outcome").textContent = text;
}

function wire() {
  document.getElementById("sheet-close").addEventListener("click", () => select(null));
  for (const choice of ["yes", "no"]) {
    document.getElementById(`answer-${choice}`).addEventListener("click", async () => {
      if (await act("answer", { answer: choice, answer_id: freshId() })) said(`answered ${choice}`);
    });
  }
  document.getElementById("send").addEventListener("click", async () => {
    const box = document.getElementById("prompt");
    const text = box.value;
    if (!text.trim()) return;
    const sent = await act("send", { text, prompt_id: freshId() });
    if (sent) {
      box.value = "";
      said(sent.why ? `${sent.state}: ${sent.why}` : sent.state);
    }
  });
  document.getElementById("resume").addEventListener("click", async () => {
    const resumed = await act("resume", { launch_id: freshId() });
    if (resumed) {
      await refresh();
      select(resumed.id);
      said(`resumed: this is the new run`);
    }
  });
  document.getElementById("earlier").addEventListener("click", showEarlier);
  Tabs.wire();
  Screen.wire();
  document.getElementById("cancel").addEventListener("click", async () => {
    const run = listed.find((r) => r.id === selected);
    if (run && confirm(`Cancel ${run.name} and the runs it owns?`)) {
      if (await act("cancel", {})) said("cancelling");
    }
  });
}

async function refresh() {
  try {
    const answer = await fetch("/api/runs", { headers: { Authorization: `Bearer ${key}` }, cache: "no-store" });
    const body = await answer.json();
    if (answer.status === 401) {
      say(body.error.message);
      return;
    }
    if (!answer.ok) {
      throw new Error(body.error ? body.error.message : answer.statusText);
    }
    const runs = body.runs;
    tellNewlyWaiting(listed, runs);
    listed = runs;
    document.getElementById("runs").replaceChildren(...tree(runs).map(([run, depth]) => row(run, depth)));
    document.getElementById("counts").textContent = counts(runs);
    const need = runs.filter(needsYou).length;
    document.title = need > 0 ? `(${need}) agents` : "agents";
    showSheet();
    say(null);
  } catch (e) {
    say(`not up to date: ${e.message}`);
  }
}

function start() {
  key = token();
  if (!key) {
    say("open the web view from the URL `agents web` printed: it carries the key");
    return;
  }
  wire();
  offerNotifications();
  refresh();
  listen();
}

// The change feed: the list is read again when the daemon says a run
// changed (a burst read once), and every 2 s while the feed is down.
let feedUp = false;
let again = null;

function listen() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/api/feed`);
  socket.onopen = () => socket.send(JSON.stringify({ token: key }));
  socket.onmessage = (message) => {
    const said = JSON.parse(message.data);
    if (said.ready) {
      feedUp = true;
      refresh();
    } else if (said.changed && again === null) {
      again = setTimeout(() => {
        again = null;
        refresh();
      }, 100);
    }
  };
  socket.onclose = () => {
    feedUp = false;
    setTimeout(listen, 3000);
  };
}

setInterval(() => {
  if (!feedUp && key) refresh();
}, 2000);

document.addEventListener("DOMContentLoaded", start);
