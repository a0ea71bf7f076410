// The Files panel: the repository tree with checkboxes per file and folder (a folder is all
// its files; partly selected shows as indeterminate), token counts and folder totals, git
// badges, pins, a ranked filter (filter.js), and the running total of the selection against the budget.
// The tree arrives as JSON (files.json) and is drawn folder by folder as folders open, so
// a huge repository is on screen at once. Checking sends the whole selection over the
// session's websocket (the hidden #file-tree form); the server answers every tab with a
// HUD frame and a fragment of the rows whose state the choice changed (the folders' three
// states figured there: `takeSelection`). The model's tools and other programs' changes
// still come as JSON messages of type "picker" (active, pinned, uncheck, flash, badges). Token counts, the
// counting progress and the watcher's changes come as server-rendered fragments on the
// rows' stable ids (`rowKey`), put in place cell by cell: no redraw of the tree; a
// choice or an answer draws again only the rows whose state changed (`patch`).
// Secret-shaped files (the payload's "locked") are drawn with a lock; checking one asks
// first in the #secret-confirm dialog, and a confirmed path travels as "confirm" in every
// select frame while it stays selected (the server refuses it otherwise). A folder's
// checkbox never takes a locked file with it.
// Over budget nothing is unticked here: the total turns red and names the files that
// sending would shed (the server's list, "shed"); they are shed at send time, with a notice.
// A file of a language acdc has a grammar for has a third state beside off and full: its
// outline (signatures only; the ≡ button). Outlines travel as "outline" in the select frame,
// their counts arrive as fragments too; a folder's ≡ sends its files as outlines.
// Each choice sent is named ("selection"); while a newer one is unanswered, answers to
// older ones (and other tabs' choices) do not overwrite the boxes the person just ticked.
(function () {
  "use strict";

  const state = {
    files: [], badges: {}, counts: {}, active: new Set(), pinned: new Set(),
    changed: new Set(), open: new Set([""]), budget: 0, filter: "", root: null,
    locked: {}, confirmed: new Set(), asking: null, shed: [], sent: "", answered: "",
    outlines: new Set(), outlineCounts: {}, suffixes: new Set(),
    serverActive: new Set(), serverOutlines: new Set(),  // the selection the server holds
  };
  const tab = Math.random().toString(36).slice(2, 10);
  let choices = 0;
  const panel = () => document.getElementById("files-panel");
  const PIN_ICON = '<svg aria-hidden="true" width="12" height="12" viewBox="0 0 24 24" fill="currentColor" stroke="currentColor" stroke-width="2" stroke-linejoin="round"><path d="M12 17v5"/><path d="M9 10.8V4h6v6.8l3 3.2v2H6v-2z"/></svg>';
  const LOCK_ICON = '<svg aria-hidden="true" width="12" height="12" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round"><rect x="5" y="11" width="14" height="10" rx="2"/><path d="M8 11V7a4 4 0 0 1 8 0v4"/></svg>';
  const OUTLINE_ICON = '<svg aria-hidden="true" width="12" height="12" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round"><path d="M4 6h16"/><path d="M8 12h12"/><path d="M8 18h12"/></svg>';
  const NO_GRAMMAR = "No outline: acdc has no grammar for this kind of file";
  const fmt = (n) => n.toLocaleString("en-US");
  const plural = (n, one, many) => `${fmt(n)} ${n === 1 ? one : many}`;
  let lockIds = 0;

  // A row's stable id part, as the server writes it (chat.web.panels.fileupdates.row_key):
  // two 32-bit FNV-1a hashes of the path's UTF-8, as 11 base64url characters.
  const encoder = new TextEncoder();
  const keys = new Map();
  function rowKey(path) {
    let key = keys.get(path);
    if (key !== undefined) return key;
    const bytes = encoder.encode(path);
    let raw = "";
    for (const basis of [0x811c9dc5, 0x050c5d1f]) {
      let h = basis;
      for (const byte of bytes) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
      raw += String.fromCharCode(h >>> 24, (h >>> 16) & 255, (h >>> 8) & 255, h & 255);
    }
    key = btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    keys.set(path, key);
    return key;
  }
  let byKey = { files: null, map: new Map() };
  function pathOfKey(key) {
    if (byKey.files !== state.files) byKey = { files: state.files, map: new Map(state.files.map((p) => [rowKey(p), p])) };
    return byKey.map.get(key);
  }

  // -- the tree model ---------------------------------------------------------------------
  function buildTree(paths) {
    const root = { name: "", path: "", dirs: new Map(), files: [] };
    for (const path of paths) {
      const parts = path.split("/");
      let node = root;
      for (let i = 0; i < parts.length - 1; i++) {
        const dirPath = parts.slice(0, i + 1).join("/");
        if (!node.dirs.has(parts[i])) {
          node.dirs.set(parts[i], { name: parts[i], path: dirPath, dirs: new Map(), files: [] });
        }
        node = node.dirs.get(parts[i]);
      }
      node.files.push(path);
    }
    return root;
  }

  function allFiles(node, out = []) {
    out.push(...node.files);
    for (const dir of node.dirs.values()) allFiles(dir, out);
    return out;
  }

  function countOf(path) {
    const count = state.counts[path];
    return typeof count === "number" ? count : null;
  }
  // Why a file cannot be selected at all. A locked file is not refused: the server never
  // reads it to count it (its "count" is the lock's reason), but the person may send it.
  function refusal(path) {
    const count = state.counts[path];
    return Array.isArray(count) && !state.locked[path] ? count[1] : "";
  }
  // The suffix as the server's symbols.language_of reads it.
  function hasGrammar(path) {
    const name = path.slice(path.lastIndexOf("/") + 1);
    const dot = name.lastIndexOf(".");
    return dot > 0 && dot < name.length - 1 && state.suffixes.has(name.slice(dot).toLowerCase());
  }
  function outlinable(path) {
    return hasGrammar(path) && !state.locked[path] && !refusal(path);
  }
  // What a selected file costs: its outline's count when it goes as one.
  function sentCount(path) {
    if (!state.outlines.has(path)) return countOf(path);
    const count = state.outlineCounts[path];
    return typeof count === "number" ? count : null;
  }
  function uncounted(path) {
    return countOf(path) === null && !refusal(path) && !state.locked[path];
  }

  // What the filter finds, best first (filter.js ranks): computed once per query.
  let found = { query: null, paths: [], set: new Set() };
  function filtered(query) {
    if (found.query !== query || found.files !== state.files) {
      const paths = window.acdcFilter.rankFiles(state.files, query);
      found = { query, files: state.files, paths, set: new Set(paths) };
    }
    return found.paths;
  }
  function matches(path, query) {
    if (!query) return true;
    filtered(query);
    return found.set.has(path);
  }

  // -- drawing ----------------------------------------------------------------------------
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === false || value === null || value === undefined) continue;
      if (key === "text") node.textContent = value;
      else if (key.startsWith("data-") || key.startsWith("aria-") || key === "role" || key === "title")
        node.setAttribute(key, value);
      else node[key] = value;
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  // A long name wraps after "_", "-" or "." before it wraps anywhere.
  function breakable(name) {
    const nodes = [];
    for (const part of name.split(/(?<=[_.-])/)) {
      if (nodes.length) nodes.push(document.createElement("wbr"));
      nodes.push(document.createTextNode(part));
    }
    return nodes;
  }

  function folderState(dir) {
    const files = allFiles(dir).filter((p) => !refusal(p) && (!state.locked[p] || state.active.has(p)));
    const on = files.filter((p) => state.active.has(p)).length;
    let tokens = 0;
    let known = true;
    let outline = 0;
    let outlineKnown = true;
    const outlined = allFiles(dir).filter(outlinable);
    for (const p of allFiles(dir)) {
      const c = countOf(p);
      if (uncounted(p)) known = false;
      tokens += c || 0;
    }
    for (const p of outlined) {
      const c = state.outlineCounts[p];
      if (typeof c !== "number") outlineKnown = false;
      outline += c || 0;
    }
    const asOutline = outlined.length > 0 && outlined.every((p) => state.outlines.has(p));
    return { all: files.length > 0 && on === files.length, some: on > 0 && on < files.length, tokens, known, outline, outlineKnown, outlined: outlined.length, asOutline };
  }

  function fileRow(path) {
    const name = path.split("/").pop();
    const reason = refusal(path);
    const count = countOf(path);
    const badge = state.badges[path];
    const locked = state.locked[path];
    const lockId = locked ? `picker-lock-${++lockIds}` : null;
    const box = el("input", {
      type: "checkbox", checked: state.active.has(path), disabled: Boolean(reason),
      "aria-label": path, "data-path": path, "aria-describedby": lockId,
    });
    const lock = locked ? el("span", {
      className: "lock", role: "img", id: lockId, "aria-label": `locked: ${locked}`,
      title: `Locked: ${locked}. Checking it asks before it is sent.`,
    }) : null;
    if (lock) lock.innerHTML = LOCK_ICON;
    const pin = el("button", {
      type: "button", className: "pin-file" + (state.pinned.has(path) ? " pinned" : ""),
      "data-pin": path, "aria-pressed": state.pinned.has(path) ? "true" : "false",
      "aria-label": (state.pinned.has(path) ? "Unpin " : "Pin ") + path,
      title: state.pinned.has(path) ? "Pinned: never dropped to make room" : "Pin: never drop this file to make room",
    });
    pin.innerHTML = PIN_ICON;
    const outline = locked || reason ? null : outlineButton(path, state.outlineCounts[path]);
    const row = el("div", {
      className: "picker-row file" + (reason ? " refused" : "") + (locked ? " locked" : "") + (state.changed.has(path) ? " changed" : "") + (state.shed.includes(path) ? " will-shed" : ""),
      role: "treeitem", "data-row": path, "data-sig": fileSig(path),
      title: reason ? `${path}: ${reason}` : locked ? `${path}: locked, ${locked}` : state.shed.includes(path) ? `${path}: over budget, shed when you send (pin it to keep it)` : path,
    },
      box,
      lock,
      el("span", { className: "name", title: path }, ...breakable(name)),
      el("span", { className: "row-end" },
      el("span", { id: `e${rowKey(path)}` }, state.changed.has(path) ? el("span", { className: "badge edited", text: "edited", title: "Changed on disk since it was read" }) : null),
      badge ? el("span", { className: `badge git git-${badge}`, text: badge, title: { M: "modified", S: "staged", U: "untracked", D: "deleted" }[badge] }) : null,
      outline,
      el("span", {
        className: "tokens" + (state.outlines.has(path) ? " unsent" : ""), id: `t${rowKey(path)}`,
        title: locked && count === null ? "Not counted: acdc reads a locked file only once it is sent" : reason ? false : "Tokens of the whole file",
        text: reason ? (reason.startsWith("binary") ? "binary" : "too large") : count !== null ? fmt(count) : locked ? "—" : "…",
      }),
      reason || (locked && !state.active.has(path) && !state.pinned.has(path)) ? null : pin,
      ),
    );
    return row;
  }

  // What a row shows, in short: a row whose signature has not changed is left as it is.
  function fileSig(path) {
    const has = (set) => (set.has(path) ? 1 : 0);
    const count = state.counts[path];
    return JSON.stringify([has(state.active), has(state.outlines), has(state.pinned), has(state.changed),
      state.shed.includes(path) ? 1 : 0, state.badges[path] || "", count === undefined ? null : count,
      state.outlineCounts[path] ?? null, state.locked[path] || ""]);
  }
  // The folder's box is left out: its three states are set in place (syncBox).
  function folderSig(s) {
    return JSON.stringify([s.asOutline, s.outlined, s.outline, s.outlineKnown, s.tokens, s.known]);
  }
  function syncBox(box, s) {
    box.checked = s.all;
    box.indeterminate = s.some;
  }

  // After a choice or a selection answer: the rows whose state changed are drawn again,
  // the folders' boxes take their three states in place, the rest stays as it is (and
  // the focus with it).
  function patch() {
    const root = document.getElementById("file-tree-root");
    if (!root || !state.root) return;
    const focused = focusKey(root);
    for (const row of root.querySelectorAll("[data-row]")) {
      if (row.dataset.sig !== fileSig(row.dataset.row)) row.replaceWith(withHint(fileRow(row.dataset.row), row));
    }
    for (const row of root.querySelectorAll("[data-folder-row]")) {
      const dir = findDir(row.dataset.folderRow);
      if (!dir) continue;
      const s = folderState(dir);
      if (row.dataset.sig !== folderSig(s)) row.replaceWith(folderRow(dir));
      else syncBox(row.querySelector("[data-folder]"), s);
    }
    if (focused && !root.contains(document.activeElement)) focusControl(...focused);
    drawTotal();
  }
  // A row of the filter's list keeps its folder hint.
  function withHint(fresh, old) {
    const hint = old.querySelector(".folder-hint");
    if (hint) fresh.querySelector(".name").after(hint);
    return fresh;
  }

  function folderRow(dir) {
    const s = folderState(dir);
    const open = state.open.has(dir.path);
    const box = el("input", { type: "checkbox", checked: s.all, "aria-label": `folder ${dir.path}`, "data-folder": dir.path });
    box.indeterminate = s.some;
    const row = el("div", { className: "picker-row folder", role: "treeitem", "aria-expanded": open ? "true" : "false", "data-folder-row": dir.path, "data-sig": folderSig(s) },
      el("button", { type: "button", className: "twisty", "data-toggle": dir.path, "aria-label": (open ? "Collapse " : "Expand ") + dir.path, text: open ? "▾" : "▸" }),
      box,
      el("span", { className: "name", text: dir.name + "/" }),
      el("span", { className: "row-end" },
        s.outlined ? folderOutlineButton(dir.path, s) : null,
        el("span", { className: "tokens", id: `d${rowKey(dir.path)}`, text: (s.known ? "" : "≥ ") + fmt(s.tokens) }),
      ),
    );
    return row;
  }

  // The ≡ toggle, with the outline's count in it: pressed, the file goes as its outline; a
  // file without a grammar gets a bare button that says so on hover (aria-disabled, so
  // the hint is still reachable).
  function outlineButton(path, count) {
    const can = hasGrammar(path);
    const on = state.outlines.has(path);
    const button = el("button", {
      type: "button", className: "outline-file" + (on ? " on" : ""), "data-outline": path,
      "aria-pressed": can ? String(on) : false, "aria-disabled": can ? false : "true",
      "aria-label": "Outline " + path,
      title: can ? (on ? "Sent as its outline (signatures only): press for off" : "Send only its outline (signatures)") : NO_GRAMMAR,
    });
    button.innerHTML = OUTLINE_ICON;
    if (can) button.append(outlineTokens(count, true, `o${rowKey(path)}`));
    return button;
  }
  function folderOutlineButton(path, s) {
    const on = s.asOutline;
    const button = el("button", {
      type: "button", className: "outline-file" + (on ? " on" : ""), "data-outline-folder": path,
      "aria-pressed": String(on), "aria-label": `Outline folder ${path}`,
      title: on ? "Its files go as outlines: press for off" : "Send its files as outlines (those acdc has a grammar for)",
    });
    button.innerHTML = OUTLINE_ICON;
    button.append(outlineTokens(s.outline, s.outlineKnown, `f${rowKey(path)}`));
    return button;
  }
  function outlineTokens(count, known, id) {
    const shown = typeof count === "number" ? fmt(count) : "…";
    return el("span", { className: "outline-tokens", id, title: "Tokens as an outline", text: (known ? "" : "≥ ") + shown });
  }

  // While filtering, the tree gives way to a flat list of the files found, best first, each
  // with its folder in small type after the name.
  function drawFound(container, query) {
    for (const path of filtered(query)) {
      const row = fileRow(path);
      const folder = path.includes("/") ? path.slice(0, path.lastIndexOf("/") + 1) : "";
      if (folder) row.querySelector(".name").after(el("span", { className: "folder-hint", text: folder, "aria-hidden": "true" }));
      container.append(row);
    }
  }

  function drawNode(dir, container) {
    const dirs = [...dir.dirs.values()].sort((a, b) => a.name.localeCompare(b.name));
    for (const sub of dirs) {
      container.append(folderRow(sub));
      if (state.open.has(sub.path)) {
        const group = el("div", { className: "picker-group", role: "group" });
        drawNode(sub, group);
        container.append(group);
      }
    }
    for (const path of dir.files) container.append(fileRow(path));
  }

  function draw() {
    const root = document.getElementById("file-tree-root");
    if (!root || !state.root) return;
    const scroll = root.scrollTop;
    const focused = focusKey(root);
    lockIds = 0;
    const fresh = el("div");
    if (state.filter) drawFound(fresh, state.filter);
    else drawNode(state.root, fresh);
    if (!fresh.childElementCount) {
      fresh.append(el("p", { className: "muted small", text: state.files.length ? "No file matches the filter." : "No files found in this repository." }));
    }
    root.replaceChildren(...fresh.childNodes);
    root.scrollTop = scroll;
    if (focused) focusControl(...focused);
    drawTotal();
  }

  // Redrawing replaces the rows: the control that had the focus gets it back, so the
  // keyboard stays where it was (Space on a checkbox, Enter on a twisty or pin).
  const CONTROLS = ["path", "folder", "toggle", "pin", "outline", "outlineFolder"];
  function focusKey(root) {
    const active = document.activeElement;
    if (!(active instanceof HTMLElement) || !root.contains(active)) return null;
    const kind = CONTROLS.find((k) => active.dataset[k] !== undefined);
    return kind ? [kind, active.dataset[kind]] : null;
  }
  function focusControl(kind, value) {
    const attr = kind.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());
    const control = document.querySelector(`#file-tree-root [data-${attr}="${CSS.escape(value)}"]`);
    if (control) control.focus();
  }

  function showNote(text) {
    const note = document.getElementById("picker-note");
    if (!note) return;
    note.textContent = text;
    note.hidden = !text;
  }

  function drawTotal() {
    const total = document.getElementById("picker-total");
    if (!total) return;
    let tokens = 0;
    let unknown = 0;
    for (const p of state.active) {
      const c = sentCount(p);
      if (c === null) unknown += 1;
      tokens += c || 0;
    }
    const share = state.budget ? Math.round((100 * tokens) / state.budget) : 0;
    const outlined = [...state.active].filter((p) => state.outlines.has(p)).length;
    const as = outlined ? ` (${fmt(outlined)} as outline)` : "";
    total.textContent = `${state.active.size} selected${as} · ${unknown ? "≥ " : ""}${fmt(tokens)} of ${fmt(state.budget)} tokens (${share}%)`;
    const shed = state.shed.filter((p) => state.active.has(p));
    total.classList.toggle("over", shed.length > 0 || (state.budget > 0 && tokens > state.budget));
    const over = document.getElementById("picker-shed");
    if (!over) return;
    over.hidden = !shed.length;
    over.textContent = shed.length
      ? `Over budget: sending now would shed ${plural(shed.length, "file", "files")} (largest first, pinned files stay): ${shed.join(", ")}`
      : "";
  }

  // -- sending the selection --------------------------------------------------------------
  function sendSelection() {
    const holder = document.getElementById("file-tree-selection");
    const form = document.getElementById("file-tree");
    if (!holder || !form) return;
    const selected = [...state.active].sort();
    const confirmed = selected.filter((p) => state.confirmed.has(p));
    const outlines = selected.filter((p) => state.outlines.has(p));
    state.sent = `${tab}-${++choices}`;
    holder.replaceChildren(
      el("input", { type: "hidden", name: "selection", value: state.sent }),
      ...selected.map((p) => el("input", { type: "hidden", name: "path", value: p })),
      ...confirmed.map((p) => el("input", { type: "hidden", name: "confirm", value: p })),
      ...outlines.map((p) => el("input", { type: "hidden", name: "outline", value: p })),
    );
    htmx.trigger(form, "change");
    drawContext();
  }

  // -- the Context panel, from the same choice ---------------------------------------------
  // The server figures the Context panel again for each choice, which takes a while for a
  // big folder. Until its answer comes, the panel shows its last figures moved by what the
  // choice adds or takes away (the picker's own counts), marked as an estimate; the
  // server's figures replace them.
  let served = { hud: null, html: "", estimated: false };
  function selectionTokens(active, outlines) {
    let tokens = 0;
    for (const p of active) {
      const count = outlines.has(p) ? state.outlineCounts[p] : state.counts[p];
      if (typeof count === "number") tokens += count;
    }
    return tokens;
  }
  const fmtTokens = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : fmt(n));
  const levelOf = (percent) => (percent <= 75 ? "green" : percent <= 90 ? "amber" : "red");
  const levelClass = (hud) => [...hud.classList].find((c) => c.startsWith("level-")) || "";
  function drawContext() {
    const hud = document.getElementById("hud");
    const line = hud && hud.querySelector(".hud-total");
    if (!line || !line.dataset.total) return;
    if (served.hud !== hud) served = { hud, html: hud.innerHTML, level: levelClass(hud), estimated: false };
    const waiting = state.sent && state.answered !== state.sent;
    if (!waiting) {
      if (served.estimated) {
        hud.innerHTML = served.html;
        hud.classList.replace(levelClass(hud), served.level);
        hud.removeAttribute("aria-busy");
        served.estimated = false;
      }
      return;
    }
    const moved = selectionTokens(state.active, state.outlines) - selectionTokens(state.serverActive, state.serverOutlines);
    const total = Math.max(0, Number(line.dataset.total) + moved);
    const budget = Number(line.dataset.window) || 0;
    const percent = budget ? Math.round((1000 * total) / budget) / 10 : 0;
    if (served.estimated) hud.innerHTML = served.html;  // moved from the server's figures
    const fresh = hud.querySelector(".hud-total");
    fresh.replaceChildren(
      el("strong", { text: fmtTokens(total) }),
      ` of ${fmtTokens(budget)} tokens `,
      el("span", { className: "hud-level", text: `${percent}%` }),
      " ",
      el("span", { className: "hud-estimate muted small", text: "estimate, updating…" }),
    );
    const row = hud.querySelector(".hud-sections .seg-active_files");
    const count = row && row.parentElement.querySelector(".num");
    const bar = hud.querySelector(".budget-bar .seg-active_files");
    const files = count ? Number(count.textContent.replaceAll(",", "")) : NaN;
    if (count && !Number.isNaN(files)) {
      const now = Math.max(0, files + moved);
      count.textContent = fmtTokens(now);
      if (bar && budget) bar.style.width = `${Math.min(100, (100 * now) / budget)}%`;
    }
    const level = levelClass(hud);
    if (level) hud.classList.replace(level, `level-${levelOf(percent)}`);
    hud.setAttribute("aria-busy", "true");
    served.estimated = true;
  }
  document.addEventListener("htmx:wsAfterMessage", drawContext);

  // Locked files are only ever added one by one, after the dialog: a folder (or any batch)
  // skips those not already selected and says how many it skipped.
  function setFiles(paths, on) {
    let skipped = 0;
    for (const p of paths) {
      if (refusal(p)) continue;
      if (on && state.locked[p] && !state.confirmed.has(p)) {
        if (!state.active.has(p)) skipped += 1;
        continue;
      }
      state.outlines.delete(p);
      if (on) state.active.add(p);
      else {
        state.active.delete(p);
        state.confirmed.delete(p);
      }
    }
    const them = skipped === 1 ? "it" : "each one";
    showNote(skipped ? `${plural(skipped, "locked file was", "locked files were")} skipped (shaped like a secret): check ${them} on its own to send it.` : "");
    patch();
    sendSelection();
  }

  // Outline on: selected as outlines; off: out of the selection (the checkbox gives full).
  function setOutlines(paths, on) {
    for (const p of paths.filter(outlinable)) {
      if (on) {
        state.active.add(p);
        state.outlines.add(p);
      } else if (state.outlines.has(p)) {
        state.active.delete(p);
        state.outlines.delete(p);
      }
    }
    showNote("");
    patch();
    sendSelection();
  }

  // Selected locked files were confirmed when they were added (here, in another tab, or
  // before a reload): they stay confirmed while selected, so later frames keep them.
  function keepConfirmed() {
    for (const p of state.active) if (state.locked[p]) state.confirmed.add(p);
    for (const p of state.confirmed) if (!state.active.has(p)) state.confirmed.delete(p);
  }

  // -- the confirmation for a locked file --------------------------------------------------
  function provider() {
    const model = (panel() && panel().dataset.model) || "";
    const cut = model.indexOf("/");
    return cut > 0 ? model.slice(0, cut) : model || "the model provider";
  }

  function askToSend(path) {
    const dialog = document.getElementById("secret-confirm");
    if (!dialog || typeof dialog.showModal !== "function") return;
    dialog.querySelector("[data-provider]").textContent = provider();
    dialog.querySelector("[data-secret-path]").textContent = path;
    dialog.returnValue = "";
    state.asking = path;
    dialog.showModal();
    dialog.querySelector("[data-cancel]").focus();
  }

  function answered(dialog) {
    const path = state.asking;
    state.asking = null;
    if (!path) return;
    if (dialog.returnValue === "send") {
      state.confirmed.add(path);
      setFiles([path], true);
    }
    focusControl("path", path);
  }

  function watchDialog() {
    const dialog = document.getElementById("secret-confirm");
    if (!dialog) return;
    dialog.addEventListener("close", () => answered(dialog));
    // Escape closes the dialog as Cancel; it must not also reach the page's own Escape
    // (which stops a streaming reply).
    dialog.addEventListener("keydown", (event) => {
      if (event.key === "Escape") event.stopPropagation();
    });
  }

  async function setPin(path, pinned) {
    const url = panel().dataset.pinUrl;
    const body = new URLSearchParams({ path, pinned: pinned ? "true" : "false" });
    const token = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"];
    const response = await fetch(url, { method: "POST", body, headers: { "X-CSRFToken": token } });
    const data = await response.json();
    if (data.pinned) state.pinned = new Set(data.pinned);
    patch();
  }

  // -- events -----------------------------------------------------------------------------
  document.addEventListener("change", (event) => {
    const target = event.target;
    if (!(target instanceof HTMLInputElement) || !target.closest("#file-tree-root")) return;
    event.stopPropagation();
    const path = target.dataset.path;
    if (path && target.checked && state.locked[path] && !state.confirmed.has(path)) {
      target.checked = false;  // until the person says so in the dialog
      askToSend(path);
    } else if (path) setFiles([path], target.checked);
    else if (target.dataset.folder !== undefined) {
      const dir = findDir(target.dataset.folder);
      let files = dir ? allFiles(dir) : [];
      if (state.filter) files = files.filter((p) => matches(p, state.filter));
      setFiles(files, target.checked);
    }
  }, true);

  document.addEventListener("click", (event) => {
    const toggle = event.target.closest && event.target.closest("[data-toggle]");
    if (toggle && toggle.closest("#file-tree-root")) {
      const path = toggle.dataset.toggle;
      if (state.open.has(path)) state.open.delete(path); else state.open.add(path);
      draw();
      return;
    }
    const outline = event.target.closest && event.target.closest("[data-outline], [data-outline-folder]");
    if (outline && outline.closest("#file-tree-root")) {
      if (outline.getAttribute("aria-disabled") === "true") return;
      const path = outline.dataset.outline;
      if (path !== undefined) setOutlines([path], !state.outlines.has(path));
      else {
        const dir = findDir(outline.dataset.outlineFolder);
        let files = dir ? allFiles(dir) : [];
        if (state.filter) files = files.filter((p) => matches(p, state.filter));
        setOutlines(files, outline.getAttribute("aria-pressed") !== "true");
      }
      return;
    }
    const pin = event.target.closest && event.target.closest("[data-pin]");
    if (pin && pin.closest("#file-tree-root")) setPin(pin.dataset.pin, !state.pinned.has(pin.dataset.pin));
  });

  function findDir(path) {
    let node = state.root;
    if (!path) return node;
    for (const part of path.split("/")) {
      node = node && node.dirs.get(part);
    }
    return node;
  }

  document.addEventListener("input", (event) => {
    if (event.target.id !== "file-filter") return;
    state.filter = event.target.value.trim();
    draw();
  });
  // "/" filters the files unless it would type into something. The message box has the
  // focus from the start, and "/compact" typed there is a command, so "/" never leaves it;
  // Ctrl/Cmd+K filters from anywhere.
  document.addEventListener("keydown", (event) => {
    const filter = document.getElementById("file-filter");
    if (!filter) return;
    const target = event.target;
    const typing = target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement
      || target.isContentEditable;
    const modifier = event.ctrlKey || event.metaKey;
    const slash = event.key === "/" && !typing && !modifier && !event.altKey;
    if (slash || (modifier && !event.altKey && event.key.toLowerCase() === "k")) {
      event.preventDefault();
      filter.focus();
      filter.select();
    } else if (event.key === "Escape" && event.target === filter) {
      filter.value = "";
      state.filter = "";
      draw();
    }
  });

  // Updates pushed by the server (this or another tab, the model's tools, the watcher).
  function applyUpdate(data) {
    if (data.locked) Object.assign(state.locked, data.locked);
    // The sets as another program left them (the follower), while this tab's newest
    // choice is still on its way: the boxes keep what the person ticked.
    const waiting = state.sent && state.answered !== state.sent;
    if (data.active) state.serverActive = new Set(data.active);
    if (data.outlines) state.serverOutlines = new Set(data.outlines);
    if (data.active && !waiting) state.active = new Set(data.active);
    if (data.outlines && !waiting) state.outlines = new Set(data.outlines);
    if (data.outline_counts) Object.assign(state.outlineCounts, data.outline_counts);
    if (data.shed && !waiting) state.shed = data.shed;
    if (data.budget) state.budget = data.budget;
    if (data.pinned) state.pinned = new Set(data.pinned);
    for (const p of data.uncheck || []) {
      state.active.delete(p);
      state.serverActive.delete(p);
    }
    for (const [p, b] of Object.entries(data.badges || {})) b ? (state.badges[p] = b) : delete state.badges[p];
    keepConfirmed();
    for (const p of state.outlines) if (!state.active.has(p)) state.outlines.delete(p);
    patch();
    for (const p of data.flash || []) {
      const row = document.querySelector(`[data-row="${CSS.escape(p)}"]`);
      if (row) row.classList.add("flash");
    }
  }

  // Counts, progress and the watcher's changes come as fragments the server rendered on
  // the rows' stable ids (chat.web.panels.fileupdates). What the totals and rows drawn
  // later need is read from them here; then the cells whose row is on the page (a closed
  // folder's files are not) take their new content: only the cells that changed. A file found
  // unreadable is drawn again alone; files that appear or go redraw the tree.
  const number = (text) => Number(text.replace(/[^0-9]/g, ""));
  let early = [];  // fragments that came before the tree
  function takeFragments(text) {
    const holder = document.createElement("template");
    holder.innerHTML = text;
    const nodes = [...holder.content.children];
    if (nodes[0].dataset.selection !== undefined) return takeSelection(nodes);
    if (!state.root) {
      early.push(text);
      return;
    }
    // The watcher names every file present or gone; only those new to this page matter.
    const listed = new Set(state.files);
    const added = nodes.filter((n) => n.id.startsWith("n") && !listed.has(n.dataset.path)).map((n) => n.dataset.path);
    const removed = nodes.filter((n) => n.id.startsWith("x") && listed.has(n.dataset.path)).map((n) => n.dataset.path);
    if (added.length || removed.length) changeFiles(added, removed);
    const refused = [];
    const touched = new Set();
    for (const node of nodes) {
      const kind = node.id[0];
      const path = pathOfKey(node.id.slice(1));
      if (path === undefined) continue;
      touched.add(path);
      if (kind === "t" && node.dataset.why !== undefined) {
        state.counts[path] = [null, node.dataset.why];
        refused.push(path);
      } else if (kind === "t") state.counts[path] = number(node.textContent);
      else if (kind === "o") state.outlineCounts[path] = number(node.textContent);
      else if (kind === "e") state.changed.add(path);
    }
    if (added.length || removed.length) draw();
    else for (const path of refused) redrawRow(path);
    // A cell is the new content of the element of its id (what an innerHTML out-of-band
    // swap does, without the attribute on every cell); the progress bar swaps by htmx.
    for (const node of nodes) {
      const target = node.id !== "picker-update" && document.getElementById(node.id);
      if (target && node.hasAttribute("hx-swap-oob")) continue;
      if (target && node.id.length === 12) target.innerHTML = node.innerHTML;
      node.remove();
    }
    if (holder.content.childElementCount) htmx.swap(document.body, holder.innerHTML, { swapStyle: "none" });
    resign(touched);
    drawTotal();
  }

  // The swapped cells show the new state: the rows' signatures say so too (so a later
  // patch does not draw them again), and an edited file's row takes its mark.
  function resign(paths) {
    const folders = new Set();
    for (const path of paths) {
      const row = document.querySelector(`#file-tree-root [data-row="${CSS.escape(path)}"]`);
      if (row) {
        row.dataset.sig = fileSig(path);
        row.classList.toggle("changed", state.changed.has(path));
      }
      const parts = path.split("/");
      for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join("/"));
    }
    for (const folder of folders) {
      const row = document.querySelector(`#file-tree-root [data-folder-row="${CSS.escape(folder)}"]`);
      const dir = row && findDir(folder);
      if (dir) row.dataset.sig = folderSig(folderState(dir));
    }
  }

  // The answer to a choice (this tab's, another tab's): an element per row whose state
  // changed (chat.web.panels.selection), a file's selection and a folder's three states
  // as the server figured them. An answer to an older choice of this tab, or another
  // tab's, while this tab's newest choice is on its way: the boxes keep what was ticked.
  function takeSelection([carrier, ...nodes]) {
    if (carrier.dataset.selection) state.answered = carrier.dataset.selection;
    if (carrier.dataset.budget) state.budget = Number(carrier.dataset.budget);
    const waiting = state.sent && state.answered !== state.sent;
    const shed = [];
    const folders = [];
    for (const node of nodes) {
      if (node.dataset.folder !== undefined) {
        folders.push(node);
        continue;
      }
      const path = pathOfKey(node.id.slice(1));
      if (path === undefined) continue;
      const sel = node.dataset.sel;
      flip(state.serverActive, path, sel !== "off");
      flip(state.serverOutlines, path, sel === "outline");
      if (node.hasAttribute("data-shed")) shed.push(path);
    }
    if (!waiting) {
      state.active = new Set(state.serverActive);
      state.outlines = new Set(state.serverOutlines);
      state.shed = shed;
    }
    keepConfirmed();
    patch();
    if (waiting) return;
    for (const node of folders) {
      const box = document.querySelector(`#file-tree-root [data-folder="${CSS.escape(node.dataset.folder)}"]`);
      if (!box) continue;
      box.checked = node.dataset.sel === "all";
      box.indeterminate = node.dataset.sel === "some";
    }
  }
  const flip = (set, item, on) => (on ? set.add(item) : set.delete(item));

  // Files created or deleted on disk while the page is open.
  function changeFiles(added, removed) {
    const files = new Set(state.files);
    for (const p of added) files.add(p);
    for (const p of removed) {
      files.delete(p);
      state.active.delete(p);
    }
    state.files = [...files].sort();
    state.root = buildTree(state.files);
  }

  // One file's row again, and the boxes of the folders that hold it.
  function redrawRow(path) {
    const row = document.querySelector(`#file-tree-root [data-row="${CSS.escape(path)}"]`);
    if (!row) return;
    const focused = focusKey(document.getElementById("file-tree-root"));
    row.replaceWith(fileRow(path));
    syncFolders(path);
    if (focused) focusControl(...focused);
  }

  // The three states of the folder boxes above `path` (all, none, some: indeterminate).
  function syncFolders(path) {
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join("/");
      const box = document.querySelector(`#file-tree-root [data-folder="${CSS.escape(folder)}"]`);
      const dir = box && findDir(folder);
      if (dir) syncBox(box, folderState(dir));
    }
  }

  // The model's tools' news (pins, unticks, flashes, badges) are JSON messages of their
  // own ("picker"); the fragments above are recognised by their first element. Both are
  // taken before the ws extension swaps.
  document.addEventListener("htmx:wsBeforeMessage", (event) => {
    const text = event.detail.message;
    if (typeof text !== "string") return;
    const fragments = text.startsWith('<div id="picker-update"');
    if (!fragments && !text.startsWith("{")) return;
    event.preventDefault();
    try {
      if (fragments) takeFragments(text);
      else {
        const message = JSON.parse(text);
        if (message.type === "picker") applyUpdate(message.update);
      }
    } catch (error) { console.error(error); }
  });

  function showProgress(done, total) {
    const box = document.getElementById("picker-progress");
    if (!box) return;
    box.hidden = done >= total;
    box.querySelector("progress").max = total || 1;
    box.querySelector("progress").value = done;
    box.querySelector("span").textContent = `Counting tokens… ${fmt(done)} / ${fmt(total)} files`;
  }

  async function load() {
    const host = panel();
    if (!host) return;
    try {
      const response = await fetch(host.dataset.url, { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const data = await response.json();
      state.files = data.files;
      state.badges = data.badges || {};
      // Counts pushed over the websocket may have arrived before this answer: keep them.
      state.counts = Object.assign(data.counts || {}, state.counts);
      state.active = new Set(data.active);
      state.serverActive = new Set(data.active);
      state.serverOutlines = new Set(data.outlines || []);
      state.pinned = new Set(data.pinned);
      state.budget = data.budget;
      state.shed = data.shed || [];
      state.locked = data.locked || {};
      state.outlines = new Set(data.outlines || []);
      state.outlineCounts = Object.assign(data.outline_counts || {}, state.outlineCounts);
      state.suffixes = new Set(data.outline_suffixes || []);
      keepConfirmed();
      state.root = buildTree(data.files);
      // A small repository opens fully; a large one shows its top level, plus the
      // folders that hold selected files, so the selection is in view.
      if (data.files.length <= 300) {
        for (const p of data.files) {
          const parts = p.split("/");
          for (let i = 1; i < parts.length; i++) state.open.add(parts.slice(0, i).join("/"));
        }
      }
      for (const p of state.active) {
        const parts = p.split("/");
        for (let i = 1; i < parts.length; i++) state.open.add(parts.slice(0, i).join("/"));
      }
      if (!data.complete) showProgress(Object.keys(state.counts).length, data.files.length);
      draw();
      for (const text of early.splice(0)) takeFragments(text);
    } catch (error) {
      const total = document.getElementById("picker-total");
      if (total) total.textContent = `The file tree could not be loaded (${error.message}). Reload to try again.`;
    }
  }
  // What the message box's @-mentions (mention.js) may offer and do: the same selection
  // the boxes make, so a mention and a ticked box are one thing. A locked (secret-shaped)
  // or refused file is not offered; the panel's own box and dialog are where it is sent.
  window.acdcPicker = {
    files: () => state.files,
    offered: (path) => !state.locked[path] && !refusal(path),
    // Each returns whether it changed the selection (so taking the mention back undoes it).
    addFile(path) {
      if (state.active.has(path) && !state.outlines.has(path)) return false;
      setFiles([path], true);
      return true;
    },
    addOutline(path) {
      if (state.active.has(path) || !outlinable(path)) return false;
      setOutlines([path], true);
      return true;
    },
    drop(path) {
      if (state.active.has(path)) setFiles([path], false);
    },
  };

  document.addEventListener("DOMContentLoaded", () => {
    watchDialog();
    load();
  });
})();
