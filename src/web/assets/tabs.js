// The tabs of a run's sheet, as the TUI's side panel has them: its screen,
// its record, the agent's own transcript, its lineage and its events —
// each read from the tool table when shown, and again when the run
// changes. Every value is set as text.
"use strict";

const Tabs = (() => {
  const NAMES = ["screen", "record", "transcript", "lineage", "events"];
  // Transcript pages read at most, and messages shown (the newest).
  const TRANSCRIPT_PAGES = 10;
  const TRANSCRIPT_SHOWN = 300;
  let chosen = "screen";

  function wire() {
    for (const button of document.querySelectorAll("#tabs button")) {
      button.addEventListener("click", () => {
        chosen = button.dataset.tab;
        if (selected) show(selected);
      });
    }
  }

  function show(id) {
    for (const button of document.querySelectorAll("#tabs button")) {
      button.classList.toggle("chosen", button.dataset.tab === chosen);
    }
    for (const name of NAMES) document.getElementById(`tab-${name}`).hidden = name !== chosen;
    if (chosen !== "screen") load(id, chosen);
  }

  async function load(id, tab) {
    const run = `/api/runs/${encodeURIComponent(id)}`;
    const body = tab === "transcript" ? await transcript(run) : await read(run + (tab === "lineage" ? "/lineage" : ""));
    if (id !== selected || tab !== chosen || !body) return;
    const element = document.getElementById(`tab-${tab}`);
    if (body.error) {
      element.replaceChildren(line("p", `nothing to show: ${body.error.message}`));
      return;
    }
    ({ record, events, transcript: messages, lineage })[tab](element, body);
  }

  // The transcript's pages, oldest first, up to its newest message.
  async function transcript(run) {
    let all = [];
    let after = null;
    for (let page = 0; page < TRANSCRIPT_PAGES; page++) {
      const body = await read(`${run}/transcript${after === null ? "" : `?after=${after}`}`);
      if (!body || body.error) return all.length ? { messages: all } : body;
      all = all.concat(body.messages);
      if (!body.more || body.last_seq === null) break;
      after = body.last_seq;
    }
    return { messages: all };
  }

  function line(tag, text, kind) {
    const element = document.createElement(tag);
    element.textContent = text;
    if (kind) element.className = kind;
    return element;
  }

  // As `agents show` says it (values::sandbox::Sandbox::describe).
  function boxed(how) {
    if (!how) return null;
    const network = how === "offline" ? "no network" : "network on";
    return `bubblewrap, ${network}: only its cwd is written, the home and state hidden`;
  }

  function record(element, run) {
    const pairs = [
      ["id", run.id],
      ["state", isLive(run) ? `${run.state} · ${words(run.status)}` : run.state],
      ["why", isLive(run) ? run.evidence : run.reason],
      ["harness", run.harness_version ? `${run.harness} ${run.harness_version}` : run.harness],
      ["host", run.host],
      ["cwd", run.cwd],
      ["worktree", run.worktree],
      ["sandbox", boxed(run.sandbox)],
      ["command", (run.command || []).join(" ")],
      ["session", run.session_id],
      ["resumed from", run.resumed_from],
      ["parent", run.parent_id],
      ["created", run.created_at],
      ["started", run.started_at],
      ["ended", run.ended_at],
      ["exit", run.exit_code ?? run.signal],
      ["output", `${run.output_bytes} bytes`],
      ["tokens", run.usage ? tokens(run.usage) : null],
      ["prompts waiting", run.waiting && run.waiting.length ? String(run.waiting.length) : null],
      ["prompts unsent", run.undelivered && run.undelivered.length ? String(run.undelivered.length) : null],
      ["attempts", run.attempts && run.attempts.length > 1 ? String(run.attempts.length) : null],
    ];
    const rows = [];
    for (const [name, value] of pairs) {
      if (value === null || value === undefined || value === "") continue;
      rows.push(line("dt", name), line("dd", String(value)));
    }
    element.replaceChildren(...rows);
  }

  function tokens(usage) {
    const t = usage.tokens;
    const cost = usage.estimated_cost_usd ? ` · ~$${usage.estimated_cost_usd.toFixed(2)}` : "";
    return `${t.input} in · ${t.output} out · ${t.cache_read} cached${cost}`;
  }

  function events(element, run) {
    const items = run.events.map((event) => {
      const item = line("li", "");
      const data = JSON.stringify(event.data);
      item.append(line("span", when(event.at), "at"), line("span", event.kind, "kind"));
      if (data && data !== "{}" && data !== "null") item.append(line("span", data.slice(0, 300), "data"));
      return item;
    });
    element.replaceChildren(...items.reverse());
  }

  // An event's time as a person reads it: the time of day, the date
  // only when it is not today.
  function when(at) {
    const t = new Date(at);
    if (Number.isNaN(t.getTime())) return at;
    const today = t.toDateString() === new Date().toDateString();
    return today ? t.toLocaleTimeString() : t.toLocaleString();
  }

  function messages(element, page) {
    const shown = page.messages.slice(-TRANSCRIPT_SHOWN);
    const items = shown.map((message) => {
      const item = line("li", "", `message ${message.role}`);
      item.append(line("span", message.role, "role"));
      if (message.text) item.append(line("p", message.text, "text"));
      for (const call of message.tool_calls || []) {
        item.append(line("p", `→ ${call.name} ${JSON.stringify(call.input).slice(0, 300)}`, "tool"));
      }
      if (message.tool_result) {
        item.append(line("p", message.tool_result.is_error ? "← failed" : "← done", "tool"));
      }
      return item;
    });
    if (page.messages.length > shown.length) {
      items.unshift(line("li", `${page.messages.length - shown.length} older messages not shown`, "older"));
    }
    if (!items.length) items.push(line("li", "no messages yet", "older"));
    element.replaceChildren(...items);
    element.scrollTop = element.scrollHeight;
  }

  function lineage(element, tree) {
    const node = (n) => {
      const item = line("li", "");
      const name = line("button", `${n.name} · ${words(n.state)}`, n.id === tree.focus ? "node focus" : "node");
      name.type = "button";
      // A subagent has no sheet of its own.
      if (listed.some((r) => r.id === n.id)) name.addEventListener("click", () => select(n.id));
      else name.disabled = true;
      item.append(name);
      if (n.edge && n.edge !== "root" && n.edge !== "child") item.append(line("span", ` ${words(n.edge)}`, "edge"));
      if (n.children && n.children.length) {
        const list = document.createElement("ul");
        list.append(...n.children.map(node));
        item.append(list);
      }
      return item;
    };
    const top = document.createElement("ul");
    top.append(node(tree.root));
    element.replaceChildren(top);
    if (tree.truncated) element.append(line("p", `${tree.truncated} more left out`, "older"));
  }

  return { wire, show };
})();
