// @-mentions in the message box. Typing "@" after a space (or at the start) opens a list of
// the files and symbols whose names hold the letters typed, ranked by the Files panel's
// own filter (filter.js), at most MAX_FILES files then MAX_SYMBOLS symbols. The files are
// the picker's list (already in the page, so a 10k-file repository is ranked without a
// request); the symbols are the repository map's definitions (symbols.json), fetched when
// "@" is first typed and again on a later "@" once they are FRESH_MS old (files change). The box keeps its textbox role (the keyboard and every
// other script know it so): it owns the listbox through aria-controls and
// aria-activedescendant. Up/Down move, Enter or Tab choose, Escape closes, a click chooses.
// Choosing a file ticks it in the Files panel (acdcPicker.addFile), a symbol sends its
// file as an outline (acdcPicker.addOutline) unless the file is already there; with Shift
// (Shift+Enter, Shift+click) a symbol goes as its body instead, which the server reads and
// adds as a tool output when the message is sent (chat/repo/mentions.py); a chip
// above the box names the mention and travels with the message as a "mention" field;
// removing the chip before sending takes back what choosing it added.
(function () {
  "use strict";

  const MAX_FILES = 8;
  const MAX_SYMBOLS = 6;
  const TRIGGER = /(?:^|[\s([{"'])@([^\s@]*)$/;
  const input = () => document.getElementById("message-input");
  const popup = () => document.getElementById("mention-popup");
  const listbox = () => document.getElementById("mention-list");
  const tray = () => document.getElementById("mention-chips");
  const FRESH_MS = 30_000;  // the symbols are asked for again on a later "@" after this
  let symbols = { rows: null, names: [], byName: new Map(), loading: null, warming: false, at: 0 };
  let shown = [];  // the options on screen
  let active = -1;
  let typed = null;  // { start, end } of "@query" in the box

  // -- the completion source (no DOM): what a query offers, best first ---------------------
  function complete(query, files, defs, offered = () => true) {
    const rank = window.acdcFilter.rankFiles;
    const found = [];
    for (const path of rank(files, query)) {
      if (found.length >= MAX_FILES) break;
      if (offered(path)) found.push({ kind: "file", path });
    }
    if (!query) return found;
    let taken = 0;
    for (const name of rank(defs.names, query)) {
      for (const [kind, path, line] of defs.byName.get(name)) {
        if (taken >= MAX_SYMBOLS) return found;
        if (!offered(path)) continue;
        found.push({ kind: "symbol", name, symbolKind: kind, path, line });
        taken += 1;
      }
    }
    return found;
  }

  function indexSymbols(rows) {
    const byName = new Map();
    for (const [name, kind, path, line] of rows) {
      if (!byName.has(name)) byName.set(name, []);
      byName.get(name).push([kind, path, line]);
    }
    return { names: [...byName.keys()], byName };
  }

  async function loadSymbols() {
    const url = popup() && popup().dataset.symbolsUrl;
    const fresh = symbols.rows && !symbols.warming && Date.now() - symbols.at < FRESH_MS;
    if (!url || symbols.loading || fresh) return;
    symbols.loading = (async () => {
      try {
        const response = await fetch(url, { headers: { Accept: "application/json" } });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const data = await response.json();
        symbols = { rows: data.symbols, ...indexSymbols(data.symbols), loading: symbols.loading, warming: data.warming, at: Date.now() };
      } catch (error) {
        console.error("symbols for @-mentions:", error);
      }
      symbols.loading = null;
      // The map is still being built at start-up: ask again while the list is open.
      if (symbols.warming && typed) setTimeout(loadSymbols, 1500);
      if (typed) refresh();
    })();
  }

  // -- the list ------------------------------------------------------------------------------
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (key === "text") node.textContent = value;
      else if (key === "className") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  const folderOf = (path) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/") + 1) : "");
  const nameOf = (path) => path.slice(path.lastIndexOf("/") + 1);
  const label = (o) => (o.kind === "file" ? o.path : `${o.name} (${o.symbolKind} in ${o.path}, line ${o.line})`);

  function option(o, n) {
    const main = o.kind === "file"
      ? [el("span", { className: "mention-name", text: nameOf(o.path) }), el("span", { className: "mention-where", text: folderOf(o.path) })]
      : [el("span", { className: "mention-name", text: o.name }), el("span", { className: "mention-where", text: `${o.path}:${o.line}` })];
    const kind = el("span", { className: "mention-kind", text: o.kind === "file" ? "file" : o.symbolKind, "aria-hidden": "true" });
    return el("li", { role: "option", id: `mention-option-${n}`, "aria-selected": String(n === active), "aria-label": label(o), title: label(o), "data-index": String(n) }, kind, ...main);
  }

  function draw(query) {
    const list = listbox();
    shown = complete(query, window.acdcPicker ? window.acdcPicker.files() : [], symbols, window.acdcPicker ? window.acdcPicker.offered : undefined);
    active = shown.length ? Math.min(Math.max(active, 0), shown.length - 1) : -1;
    list.replaceChildren(...shown.map(option));
    const empty = popup().querySelector(".mention-empty");
    const waiting = symbols.loading || symbols.warming ? " (symbols are still being read)" : "";
    empty.textContent = shown.length ? "" : `No file or symbol matches “${query}”${waiting}.`;
    empty.hidden = Boolean(shown.length);
    popup().hidden = false;
    mark();
  }

  function mark() {
    const box = input();
    listbox().querySelectorAll("[role=option]").forEach((node, n) => {
      node.setAttribute("aria-selected", String(n === active));
      if (n === active) node.scrollIntoView({ block: "nearest" });
    });
    if (active >= 0) box.setAttribute("aria-activedescendant", `mention-option-${active}`);
    else box.removeAttribute("aria-activedescendant");
  }

  function close() {
    typed = null;
    shown = [];
    active = -1;
    if (popup()) popup().hidden = true;
    if (input()) input().removeAttribute("aria-activedescendant");
  }

  // The "@query" right before the caret, if the caret is in one.
  function refresh() {
    const box = input();
    if (!box || box.selectionStart !== box.selectionEnd) return close();
    const before = box.value.slice(0, box.selectionStart);
    const match = TRIGGER.exec(before);
    if (!match) return close();
    const query = match[1];
    if (!typed || typed.query !== query) active = 0;
    typed = { start: before.length - query.length - 1, end: before.length, query };
    draw(query);
  }

  // -- choosing ------------------------------------------------------------------------------
  function choose(n, body = false) {
    const o = shown[n] && { ...shown[n], body: body && shown[n].kind === "symbol" };
    const box = input();
    if (!o || !typed) return;
    const text = "@" + (o.kind === "file" ? o.path : o.name).replace(/\n/g, "\\n") + " ";
    box.setRangeText(text, typed.start, typed.end, "end");
    const picker = window.acdcPicker;
    const add = o.kind === "file" ? picker && picker.addFile : !o.body && picker && picker.addOutline;
    const added = add ? add(o.path) : false;
    addChip(o, added);
    close();
    box.focus();
  }

  function addChip(o, added) {
    const value = JSON.stringify(o.kind === "file" ? { path: o.path } : { path: o.path, symbol: o.name, line: o.line, body: o.body });
    const holder = tray();
    if ([...holder.querySelectorAll("input[name=mention]")].some((i) => i.value === value)) return;
    const what = o.kind === "file" ? `file ${o.path}` : `${o.body ? "body of " : ""}symbol ${o.name} in ${o.path}`;
    const chip = el("span", { className: `mention-chip composer-chip ${o.body ? "body" : o.kind}`, title: o.kind === "file" ? o.path : `${o.name} in ${o.path}, line ${o.line}`, "data-added": added ? "true" : "false", "data-path": o.path, role: "listitem" },
      el("span", { className: "at", text: "@", "aria-hidden": "true" }),
      el("span", { className: "mention-name", text: o.kind === "file" ? o.path : o.name }),
      o.kind === "symbol" ? el("span", { className: "mention-where", text: `${o.path}:${o.line}` }) : null,
      o.kind === "symbol" ? el("span", { className: "mention-tag", text: o.body ? "body" : "outline" }) : null,
      el("input", { type: "hidden", name: "mention", value }),
      el("button", { type: "button", className: "secondary mention-remove", "data-remove-mention": "", "aria-label": `Remove mention ${what}`, title: "Remove" }, "×"),
    );
    holder.append(chip);
  }

  // Taking a chip back takes back the file it added, unless another chip still needs it (a
  // body does not: the server reads it when the message goes).
  function removeChip(chip) {
    const path = chip.dataset.path;
    const added = chip.dataset.added === "true";
    chip.remove();
    const still = [...tray().querySelectorAll(".mention-chip:not(.body)")].some((c) => c.dataset.path === path);
    if (added && !still && window.acdcPicker) window.acdcPicker.drop(path);
    input().focus();
  }

  // -- events --------------------------------------------------------------------------------
  document.addEventListener("input", (event) => {
    if (event.target !== input()) return;
    refresh();
    if (typed) loadSymbols();
  });
  document.addEventListener("click", (event) => {
    const remove = event.target.closest && event.target.closest("[data-remove-mention]");
    if (remove) return removeChip(remove.closest(".mention-chip"));
    const picked = event.target.closest && event.target.closest("#mention-list [role=option]");
    if (picked) return choose(Number(picked.dataset.index), event.shiftKey);
    if (typed && event.target !== input() && !(popup() && popup().contains(event.target))) close();
  });
  // A press on an option must not take the focus from the box (the caret marks the query).
  document.addEventListener("mousedown", (event) => {
    if (event.target.closest && event.target.closest("#mention-popup")) event.preventDefault();
  });

  function onKey(event) {
    if (!typed || event.isComposing) return;
    const keys = { ArrowDown: 1, ArrowUp: -1 };
    if (event.key in keys) {
      if (!shown.length) return;
      active = (active + keys[event.key] + shown.length) % shown.length;
      mark();
    } else if (event.key === "Enter" || (event.key === "Tab" && !event.shiftKey)) {
      if (active < 0) return;
      choose(active, event.key === "Enter" && event.shiftKey);
    } else if (event.key === "Escape") close();
    else return;
    // The page's own keys (Enter sends, Escape stops a reply, Up recalls) wait.
    event.preventDefault();
    event.stopPropagation();
  }
  document.addEventListener("keydown", (event) => {
    if (event.target === input()) onKey(event);
  }, true);
  // The open list is drawn again when the caret moves, and when the Files panel's list of
  // paths came (an "@" typed as the page opened offered none of them).
  const redraw = () => typed && document.activeElement === input() && refresh();
  document.addEventListener("selectionchange", redraw);
  document.addEventListener("acdc:files", redraw);
  document.addEventListener("focusout", (event) => {
    if (event.target === input() && typed) close();
  });

  // Sent: the chips went with the message. They are kept aside until the server shows the
  // message; if it refuses it instead (chat.js puts the text back), they come back too.
  let sentChips = [];
  document.addEventListener("htmx:wsAfterSend", (event) => {
    if (!(event.target && event.target.id === "composer" && tray())) return;
    sentChips = [...tray().children];
    tray().replaceChildren();
  });
  document.addEventListener("htmx:wsAfterMessage", (event) => {
    if (!sentChips.length || typeof event.detail.message !== "string") return;
    const frame = document.createElement("template");
    frame.innerHTML = event.detail.message;
    if (frame.content.querySelector("article.message.user")) sentChips = [];
    else if (frame.content.querySelector('.notice.error[data-turn=""]')) {
      tray().prepend(...sentChips);
      sentChips = [];
    }
  });

  window.acdcMention = { complete, indexSymbols };
})();
