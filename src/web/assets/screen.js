// A run's live screen in the web view: the cells its emulator holds, sent
// over a WebSocket (`/api/runs/RUN/screen`) whole and then as what changed,
// drawn as rows of styled text — set with `textContent`, never as HTML.
// Focused with "type into the screen", the keys typed go to the run as a
// terminal would send them.
"use strict";

const Screen = (() => {
  let socket = null;
  let watching = null;
  let key = null;
  let modes = {};
  let ended = false;

  const box = () => document.getElementById("screen");
  const rows = () => document.getElementById("rows");

  function watch(id, token) {
    stop();
    watching = id;
    key = token;
    ended = false;
    rows().replaceChildren();
    delete box().dataset.cols;
    document.getElementById("type-into").hidden = false;
    box().classList.remove("ended");
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const opened = new WebSocket(`${scheme}://${location.host}/api/runs/${encodeURIComponent(id)}/screen`);
    opened.onopen = () => opened.send(JSON.stringify({ token: key }));
    opened.onmessage = (message) => {
      const said = JSON.parse(message.data);
      if (said.screen && socket === opened) draw(said.screen);
    };
    opened.onclose = (closed) => {
      if (socket !== opened) return;
      socket = null;
      // Lost, not refused: watched again while its sheet is open.
      if (!ended && closed.code !== 4401 && closed.code !== 4404) {
        setTimeout(() => { if (watching === id && socket === null) watch(id, key); }, 2000);
      }
    };
    socket = opened;
  }

  function stop() {
    const open = socket;
    socket = null;
    watching = null;
    if (open) open.close();
  }

  // A message: the whole screen, or the rows that changed.
  function draw(screen) {
    const lines = rows();
    if (screen.rows !== undefined && (lines.children.length !== screen.rows || box().dataset.cols !== String(screen.cols))) {
      const fresh = [];
      for (let i = 0; i < screen.rows; i++) {
        const row = document.createElement("div");
        row.className = "row";
        fresh.push(row);
      }
      lines.replaceChildren(...fresh);
      box().dataset.cols = String(screen.cols);
      fit(screen.cols);
    }
    for (const [index, runs] of screen.lines || []) {
      const row = lines.children[index];
      if (row) row.replaceChildren(...runs.map(([text, style]) => styled(text, screen.styles[style])));
    }
    modes = { app_cursor: screen.app_cursor, bracketed_paste: screen.bracketed_paste };
    const cursor = document.getElementById("cursor");
    if (screen.cursor) {
      cursor.style.top = `calc(${screen.cursor[0]} * var(--row))`;
      cursor.style.left = `${screen.cursor[1]}ch`;
    }
    cursor.hidden = !screen.cursor_shown || screen.ended;
    if (screen.ended) {
      ended = true;
      box().classList.add("ended");
      document.getElementById("type-into").hidden = true;
    }
  }

  // The font size at which the screen's columns fit the sheet's width,
  // down to a size still read on a phone (a wider screen scrolls inside
  // its box, never the page).
  function fit(cols) {
    const width = box().clientWidth || 360;
    const size = Math.max(8, Math.min(13, Math.floor(width / (cols * 0.62))));
    box().style.fontSize = `${size}px`;
  }

  function styled(text, style) {
    const span = document.createElement("span");
    span.textContent = text;
    if (!style) return span;
    let fg = style.fg;
    let bg = style.bg;
    if (style.inverse) [fg, bg] = [bg || "var(--screen-bg)", fg || "var(--screen-fg)"];
    if (fg) span.style.color = fg;
    if (bg) span.style.backgroundColor = bg;
    for (const attribute of ["bold", "dim", "italic", "underline", "strike", "hidden"]) {
      if (style[attribute]) span.classList.add(attribute);
    }
    return span;
  }

  // The bytes a terminal sends for a key, or null for one it sends none.
  function bytesOf(e) {
    const arrows = { ArrowUp: "A", ArrowDown: "B", ArrowRight: "C", ArrowLeft: "D", Home: "H", End: "F" };
    if (arrows[e.key]) return (modes.app_cursor ? "\x1bO" : "\x1b[") + arrows[e.key];
    if (e.key === "Tab" && e.shiftKey) return "\x1b[Z";
    const named = {
      Enter: "\r", Backspace: "\x7f", Tab: "\t", Escape: "\x1b",
      Delete: "\x1b[3~", Insert: "\x1b[2~", PageUp: "\x1b[5~", PageDown: "\x1b[6~",
    };
    if (named[e.key]) return named[e.key];
    if ([...e.key].length !== 1 || e.metaKey) return null;
    if (e.ctrlKey) {
      if (e.key === " ") return "\x00";
      const code = e.key.toUpperCase().charCodeAt(0);
      return code >= 64 && code <= 95 ? String.fromCharCode(code - 64) : null;
    }
    return (e.altKey ? "\x1b" : "") + e.key;
  }

  function type(keys) {
    if (socket && socket.readyState === WebSocket.OPEN && keys) socket.send(JSON.stringify({ keys }));
  }

  // Keys go in only while "type into the screen" holds the focus: a
  // hidden text box, so a phone raises its keyboard too. Keys a terminal
  // sends as sequences come as key presses; what a keyboard types (a
  // phone's included, which tells no keys) comes as text put in the box.
  function wire() {
    const screen = box();
    const keys = document.getElementById("keys");
    window.addEventListener("resize", () => {
      if (screen.dataset.cols) fit(Number(screen.dataset.cols));
    });
    document.getElementById("type-into").addEventListener("click", () => keys.focus());
    keys.addEventListener("focus", () => screen.classList.add("typing"));
    keys.addEventListener("blur", () => screen.classList.remove("typing"));
    keys.addEventListener("keydown", (e) => {
      if (e.isComposing) return;
      const printable = [...e.key].length === 1 && !e.ctrlKey && !e.altKey && !e.metaKey;
      if (printable) return; // typed as text, below
      const bytes = bytesOf(e);
      if (bytes === null) return;
      e.preventDefault();
      type(bytes);
    });
    keys.addEventListener("input", (e) => {
      if (e.inputType === "deleteContentBackward") type("\x7f");
      else if (e.inputType === "insertLineBreak") type("\r");
      else if (e.data) type(e.data);
      keys.value = "";
    });
    keys.addEventListener("paste", (e) => {
      e.preventDefault();
      const text = e.clipboardData.getData("text/plain").replaceAll("\r\n", "\r").replaceAll("\n", "\r");
      type(modes.bracketed_paste ? `\x1b[200~${text}\x1b[201~` : text);
    });
  }

  // Whether keys typed now would reach a run (its screen is live).
  function live() {
    return socket !== null && !ended;
  }

  // The screen's rows as text, as `agents logs` ends.
  function text() {
    return Array.from(rows().children, (row) => row.textContent.trimEnd());
  }

  return { watch, stop, wire, text, live };
})();
