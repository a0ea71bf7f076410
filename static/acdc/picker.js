// The Files panel: the repository tree with checkboxes per file and folder (a folder is all
// its files; partly selected shows as indeterminate), token counts and folder totals, git
// badges, pins, a fuzzy filter, and the running total of the selection against the budget.
// The tree arrives as JSON (files.json) and is drawn folder by folder as folders open, so
// a huge repository is on screen at once. Checking sends the whole selection over the
// session's websocket (the hidden #file-tree form); the server answers with HUD frames and
// with JSON messages of type "picker" (active, pinned, uncheck, flash, counts, progress,
// changed, added, removed) that this script applies — from this tab, other tabs, or the
// model's tools.
(function () {
  "use strict";

  const state = {
    files: [], badges: {}, counts: {}, active: new Set(), pinned: new Set(),
    changed: new Set(), open: new Set([""]), budget: 0, filter: "", root: null,
  };
  const panel = () => document.getElementById("files-panel");
  const PIN_ICON = '<svg aria-hidden="true" width="12" height="12" viewBox="0 0 24 24" fill="currentColor" stroke="currentColor" stroke-width="2" stroke-linejoin="round"><path d="M12 17v5"/><path d="M9 10.8V4h6v6.8l3 3.2v2H6v-2z"/></svg>';
  const fmt = (n) => n.toLocaleString("en-US");

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
  function refusal(path) {
    const count = state.counts[path];
    return Array.isArray(count) ? count[1] : "";
  }

  // Fuzzy subsequence match: "apy" matches "src/app.py".
  function matches(path, query) {
    if (!query) return true;
    const hay = path.toLowerCase();
    let at = 0;
    for (const ch of query.toLowerCase()) {
      at = hay.indexOf(ch, at);
      if (at < 0) return false;
      at += 1;
    }
    return true;
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

  function folderState(dir) {
    const files = allFiles(dir).filter((p) => !refusal(p));
    const on = files.filter((p) => state.active.has(p)).length;
    let tokens = 0;
    let known = true;
    for (const p of allFiles(dir)) {
      const c = countOf(p);
      if (c === null && !refusal(p)) known = false;
      tokens += c || 0;
    }
    return { all: files.length > 0 && on === files.length, some: on > 0 && on < files.length, tokens, known };
  }

  function fileRow(path) {
    const name = path.split("/").pop();
    const reason = refusal(path);
    const count = countOf(path);
    const badge = state.badges[path];
    const box = el("input", {
      type: "checkbox", checked: state.active.has(path), disabled: Boolean(reason),
      "aria-label": path, "data-path": path,
    });
    const pin = el("button", {
      type: "button", className: "pin-file" + (state.pinned.has(path) ? " pinned" : ""),
      "data-pin": path, "aria-pressed": state.pinned.has(path) ? "true" : "false",
      "aria-label": (state.pinned.has(path) ? "Unpin " : "Pin ") + path,
      title: state.pinned.has(path) ? "Pinned: never dropped to make room" : "Pin: never drop this file to make room",
    });
    pin.innerHTML = PIN_ICON;
    const row = el("div", {
      className: "picker-row file" + (reason ? " refused" : "") + (state.changed.has(path) ? " changed" : ""),
      role: "treeitem", "data-row": path, title: reason ? `${path}: ${reason}` : path,
    },
      box,
      el("span", { className: "name", text: name }),
      state.changed.has(path) ? el("span", { className: "badge edited", text: "edited", title: "Changed on disk since it was read" }) : null,
      badge ? el("span", { className: `badge git git-${badge}`, text: badge, title: { M: "modified", S: "staged", U: "untracked", D: "deleted" }[badge] }) : null,
      el("span", { className: "tokens", text: reason ? (reason.startsWith("binary") ? "binary" : "too large") : count === null ? "…" : fmt(count) }),
      reason ? null : pin,
    );
    return row;
  }

  function folderRow(dir, filtering) {
    const s = folderState(dir);
    const open = filtering || state.open.has(dir.path);
    const box = el("input", { type: "checkbox", checked: s.all, "aria-label": `folder ${dir.path}`, "data-folder": dir.path });
    box.indeterminate = s.some;
    const row = el("div", { className: "picker-row folder", role: "treeitem", "aria-expanded": open ? "true" : "false", "data-folder-row": dir.path },
      el("button", { type: "button", className: "twisty", "data-toggle": dir.path, "aria-label": (open ? "Collapse " : "Expand ") + dir.path, text: open ? "▾" : "▸" }),
      box,
      el("span", { className: "name", text: dir.name + "/" }),
      el("span", { className: "tokens", text: (s.known ? "" : "≥ ") + fmt(s.tokens) }),
    );
    return row;
  }

  function drawNode(dir, container, query) {
    const filtering = Boolean(query);
    const dirs = [...dir.dirs.values()].sort((a, b) => a.name.localeCompare(b.name));
    for (const sub of dirs) {
      const files = filtering ? allFiles(sub).filter((p) => matches(p, query)) : null;
      if (filtering && files.length === 0) continue;
      const group = el("div", { className: "picker-group", role: "group" });
      container.append(folderRow(sub, filtering));
      if (filtering || state.open.has(sub.path)) {
        drawNode(sub, group, query);
        container.append(group);
      }
    }
    for (const path of dir.files) {
      if (!filtering || matches(path, query)) container.append(fileRow(path));
    }
  }

  function draw() {
    const root = document.getElementById("file-tree-root");
    if (!root || !state.root) return;
    const scroll = root.scrollTop;
    const fresh = el("div");
    drawNode(state.root, fresh, state.filter);
    if (!fresh.childElementCount) {
      fresh.append(el("p", { className: "muted small", text: state.files.length ? "No file matches the filter." : "No files found in this repository." }));
    }
    root.replaceChildren(...fresh.childNodes);
    root.scrollTop = scroll;
    drawTotal();
  }

  function drawTotal() {
    const total = document.getElementById("picker-total");
    if (!total) return;
    let tokens = 0;
    let unknown = 0;
    for (const p of state.active) {
      const c = countOf(p);
      if (c === null) unknown += 1;
      tokens += c || 0;
    }
    const share = state.budget ? Math.round((100 * tokens) / state.budget) : 0;
    total.textContent = `${state.active.size} selected · ${unknown ? "≥ " : ""}${fmt(tokens)} of ${fmt(state.budget)} tokens (${share}%)`;
    total.classList.toggle("over", state.budget > 0 && tokens > 0.9 * state.budget);
  }

  // -- sending the selection --------------------------------------------------------------
  function sendSelection() {
    const holder = document.getElementById("file-tree-selection");
    const form = document.getElementById("file-tree");
    if (!holder || !form) return;
    holder.replaceChildren(...[...state.active].sort().map((p) => el("input", { type: "hidden", name: "path", value: p })));
    htmx.trigger(form, "change");
  }

  function setFiles(paths, on) {
    for (const p of paths) {
      if (refusal(p)) continue;
      if (on) state.active.add(p); else state.active.delete(p);
    }
    draw();
    sendSelection();
  }

  async function setPin(path, pinned) {
    const url = panel().dataset.pinUrl;
    const body = new URLSearchParams({ path, pinned: pinned ? "true" : "false" });
    const token = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"];
    const response = await fetch(url, { method: "POST", body, headers: { "X-CSRFToken": token } });
    const data = await response.json();
    if (data.pinned) state.pinned = new Set(data.pinned);
    draw();
  }

  // -- events -----------------------------------------------------------------------------
  document.addEventListener("change", (event) => {
    const target = event.target;
    if (!(target instanceof HTMLInputElement) || !target.closest("#file-tree-root")) return;
    event.stopPropagation();
    if (target.dataset.path) setFiles([target.dataset.path], target.checked);
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
  document.addEventListener("keydown", (event) => {
    const filter = document.getElementById("file-filter");
    if (!filter) return;
    const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement;
    if (event.key === "/" && !typing) {
      event.preventDefault();
      filter.focus();
    } else if (event.key === "Escape" && event.target === filter) {
      filter.value = "";
      state.filter = "";
      draw();
    }
  });

  // Updates pushed by the server (this or another tab, the model's tools, the watcher).
  function applyUpdate(data) {
    if (data.active) state.active = new Set(data.active);
    if (data.pinned) state.pinned = new Set(data.pinned);
    for (const p of data.uncheck || []) state.active.delete(p);
    for (const p of data.changed || []) state.changed.add(p);
    if ((data.added || []).length || (data.removed || []).length) {
      // Files created or deleted on disk while the page is open.
      const files = new Set(state.files);
      for (const p of data.added || []) files.add(p);
      for (const p of data.removed || []) {
        files.delete(p);
        state.active.delete(p);
      }
      state.files = [...files].sort();
      state.root = buildTree(state.files);
    }
    if (data.counts) Object.assign(state.counts, data.counts);
    if (data.progress) {
      const [done, total] = data.progress;
      const box = document.getElementById("picker-progress");
      if (box) {
        box.hidden = done >= total;
        box.querySelector("progress").max = total || 1;
        box.querySelector("progress").value = done;
        box.querySelector("span").textContent = `Counting tokens… ${fmt(done)} / ${fmt(total)} files`;
      }
    }
    draw();
    for (const p of data.flash || []) {
      const row = document.querySelector(`[data-row="${CSS.escape(p)}"]`);
      if (row) row.classList.add("flash");
    }
  }
  // Files-panel changes are JSON messages of their own on the session's websocket; they
  // are taken here, before the ws extension would try to swap them in as HTML.
  document.addEventListener("htmx:wsBeforeMessage", (event) => {
    const text = event.detail.message;
    if (typeof text !== "string" || !text.startsWith("{")) return;
    event.preventDefault();
    try {
      const message = JSON.parse(text);
      if (message.type === "picker") applyUpdate(message.update);
    } catch (error) { console.error(error); }
  });

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
      state.pinned = new Set(data.pinned);
      state.budget = data.budget;
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
      if (!data.complete) applyUpdate({ progress: [Object.keys(state.counts).length, data.files.length] });
      draw();
    } catch (error) {
      const total = document.getElementById("picker-total");
      if (total) total.textContent = `The file tree could not be loaded (${error.message}). Reload to try again.`;
    }
  }
  document.addEventListener("DOMContentLoaded", load);
})();
