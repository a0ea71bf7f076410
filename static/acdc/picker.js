// The Files panel's behaviour; its rows are drawn on the server (chat.web.panels.tree):
// the first view comes in one GET, a closed folder's children come when it opens (an htmx
// GET on its twisty), the filter's list is the files filter.js ranks first, drawn there too.
// What is left here is what htmx cannot do:
// - the three-state boxes: checking a folder ticks its files (a locked file never goes
//   with its folder; refused ones cannot be ticked), and the whole selection goes over the
//   session's websocket (the hidden #file-tree form), each choice named ("selection");
// - the secret confirmation: a locked file asks first in #secret-confirm, and a confirmed
//   path travels as "confirm" in every select frame while it stays selected;
// - putting incoming fragments in place: token counts, progress and the watcher's news
//   (chat.web.panels.fileupdates) cell by cell on the rows' stable ids (`rowKey`); the
//   answer to a choice (chat.web.panels.selection) row by row, with the folders' three
//   states and the total figured on the server; the model's tools' news the same way,
//   with the rows it touched drawn whole. While a newer choice of this tab is
//   unanswered, answers to older ones (and other tabs' choices, and the tools' news)
//   leave the boxes alone.
// The page keeps only the selection it sends and the repository's flat list of paths (the
// filter ranks it, a folder's box takes its files from it): no copy of the tree.
(function () {
  "use strict";

  const state = {
    files: [], locked: {}, refused: new Set(), suffixes: new Set(), ready: false,
    active: new Set(), outlines: new Set(), confirmed: new Set(), asking: null,
    serverActive: new Set(), serverOutlines: new Set(),  // the selection the server holds
    pinned: new Set(), shed: new Set(),  // as the last rows drawn showed them
    sent: "", answered: "", stale: false, filter: "", open: null,
  };
  const tab = Math.random().toString(36).slice(2, 10);
  let choices = 0;
  const panel = () => document.getElementById("files-panel");
  const tree = () => document.getElementById("file-tree-root");
  const waiting = () => Boolean(state.sent) && state.answered !== state.sent;
  const fmt = (n) => n.toLocaleString("en-US");
  const plural = (n, one, many) => `${fmt(n)} ${n === 1 ? one : many}`;
  const csrf = () => JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"];

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

  // -- what a file may be -----------------------------------------------------------------
  // A locked file is not refused: the person may send it, after the dialog.
  const refused = (path) => state.refused.has(path) && !state.locked[path];
  function hasGrammar(path) {  // the suffix as the server's symbols.language_of reads it
    const name = path.slice(path.lastIndexOf("/") + 1);
    const dot = name.lastIndexOf(".");
    return dot > 0 && dot < name.length - 1 && state.suffixes.has(name.slice(dot).toLowerCase());
  }
  const outlinable = (path) => hasGrammar(path) && !state.locked[path] && !refused(path);
  const filesUnder = (folder) => state.files.filter((p) => p.startsWith(folder + "/"));

  // -- the rows on the page take the selection in place ------------------------------------
  const rowOf = (path) => tree() && tree().querySelector(`[data-row="${CSS.escape(path)}"]`);
  function showRow(row) {
    const path = row.dataset.row;
    const on = state.active.has(path);
    const outline = on && state.outlines.has(path);
    row.querySelector("[data-path]").checked = on;
    const button = row.querySelector(".outline-file[aria-pressed]");
    if (button) {
      button.classList.toggle("on", outline);
      button.setAttribute("aria-pressed", String(outline));
      button.title = outline ? "Sent as its outline (signatures only): press for off" : "Send only its outline (signatures)";
    }
    const tokens = row.querySelector(".tokens");
    if (tokens) tokens.classList.toggle("unsent", outline);
    const pin = row.querySelector("[data-pin]");
    if (pin && state.locked[path]) pin.hidden = !on && pin.getAttribute("aria-pressed") !== "true";
  }
  function showRows() {
    const root = tree();
    if (root) for (const row of root.querySelectorAll("[data-row]")) showRow(row);
  }
  // A folder box the person just ticked: the folders inside it follow at once (the
  // server's answer says what they and the folders above are).
  function showFolders(folder, on) {
    for (const box of tree().querySelectorAll("[data-folder]")) {
      if (box.dataset.folder.startsWith(folder + "/")) setBox(box, on ? "all" : "none");
    }
  }
  function setBox(box, sel) {
    box.dataset.sel = sel;
    box.checked = sel === "all";
    box.indeterminate = sel === "some";
  }
  // Rows the server drew: a folder's "some" is indeterminate (no HTML attribute says so),
  // and while a choice is on its way the files' boxes show it.
  htmx.onLoad((element) => {
    if (!(element instanceof Element) || !element.closest("#file-tree-root")) return;
    for (const box of element.querySelectorAll('[data-sel="some"]')) box.indeterminate = true;
    if (waiting()) showRows();
  });

  function showNote(text) {
    const note = document.getElementById("picker-note");
    if (!note) return;
    note.textContent = text;
    note.hidden = !text;
  }

  // -- sending the selection --------------------------------------------------------------
  function sendSelection() {
    const holder = document.getElementById("file-tree-selection");
    const form = document.getElementById("file-tree");
    if (!holder || !form) return;
    const selected = [...state.active].sort();
    const hidden = (name, value) => Object.assign(document.createElement("input"), { type: "hidden", name, value });
    state.sent = `${tab}-${++choices}`;
    holder.replaceChildren(
      hidden("selection", state.sent),
      ...selected.map((p) => hidden("path", p)),
      ...selected.filter((p) => state.confirmed.has(p)).map((p) => hidden("confirm", p)),
      ...selected.filter((p) => state.outlines.has(p)).map((p) => hidden("outline", p)),
    );
    htmx.trigger(form, "change");
    drawContext();
  }

  // -- the Context panel, from the same choice ---------------------------------------------
  // The server figures the Context panel again for each choice, which takes a while for a
  // big folder. Until its answer comes, the panel shows its last figures moved by what the
  // choice adds or takes away (the counts in the rows on the page), marked as an estimate;
  // the server's figures replace them.
  let served = { hud: null, html: "", estimated: false };
  function selectionTokens(active, outlines) {
    let tokens = 0;
    for (const p of active) {
      const cell = document.getElementById((outlines.has(p) ? "o" : "t") + rowKey(p));
      const count = cell ? Number(cell.textContent.replace(/[^0-9]/g, "")) : 0;
      if (cell && /\d/.test(cell.textContent)) tokens += count;
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
    if (!waiting()) {
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
    const span = (className, text) => Object.assign(document.createElement("span"), { className, textContent: text });
    const strong = Object.assign(document.createElement("strong"), { textContent: fmtTokens(total) });
    hud.querySelector(".hud-total").replaceChildren(
      strong, ` of ${fmtTokens(budget)} tokens `, span("hud-level", `${percent}%`), " ",
      span("hud-estimate muted small", "estimate, updating…"),
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
      if (refused(p)) continue;
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
    showRows();
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
    showRows();
    sendSelection();
  }

  // Selected locked files were confirmed when they were added (here, in another tab, or
  // before a reload): they stay confirmed while selected, so later frames keep them.
  function keepConfirmed() {
    for (const p of state.active) if (state.locked[p]) state.confirmed.add(p);
    for (const p of state.confirmed) if (!state.active.has(p)) state.confirmed.delete(p);
    for (const p of state.outlines) if (!state.active.has(p)) state.outlines.delete(p);
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
    const body = new URLSearchParams({ path, pinned: pinned ? "true" : "false" });
    const response = await fetch(panel().dataset.pinUrl, { method: "POST", body, headers: { "X-CSRFToken": csrf() } });
    const data = await response.json();
    if (!data.pinned) return;
    const pins = (state.pinned = new Set(data.pinned));
    for (const pin of tree().querySelectorAll("[data-pin]")) {
      const on = pins.has(pin.dataset.pin);
      pin.classList.toggle("pinned", on);
      pin.setAttribute("aria-pressed", String(on));
      pin.setAttribute("aria-label", (on ? "Unpin " : "Pin ") + pin.dataset.pin);
      pin.title = on ? "Pinned: never dropped to make room" : "Pin: never drop this file to make room";
    }
  }

  // -- the rows from the server -----------------------------------------------------------
  // The tree again (the folders open now stay open), or the filter's list: after the
  // model's tools changed the sets, or files came or went. Scroll and focus stay.
  let drawn = 0;
  const FOUND_AT_MOST = 200;  // rows the filter asks the server for
  async function refresh() {
    const root = tree();
    if (!root) return;
    const ask = ++drawn;
    const url = panel().dataset.rowsUrl;
    let response;
    let matched = 0;
    if (state.filter) {
      const ranked = window.acdcFilter.rankFiles(state.files, state.filter);
      matched = ranked.length;
      const found = ranked.slice(0, FOUND_AT_MOST);
      const body = new URLSearchParams(found.map((p) => ["found", p]));
      if (!found.length) body.append("found", "");
      response = await fetch(url, { method: "POST", body, headers: { "X-CSRFToken": csrf() } });
    } else {
      const open = state.open || openFolders();
      const query = new URLSearchParams([["opened", "1"], ...[...open].map((f) => ["open", f])]);
      response = await fetch(`${url}?${query}`);
    }
    const html = await response.text();
    if (ask !== drawn || !response.ok) return;
    const scroll = root.scrollTop;
    const focused = focusKey(root);
    htmx.swap(root, html, { swapStyle: "innerHTML" });
    // Drawn as the server saw the selection when it drew them: a choice this tab made
    // meanwhile (a box just ticked, a secret just confirmed) stays as the person left it.
    showRows();
    if (matched > FOUND_AT_MOST) {
      const note = document.createElement("p");
      note.className = "muted small found-more";
      note.textContent = `The best ${FOUND_AT_MOST} of ${fmt(matched)} matches: type more to narrow them.`;
      root.append(note);
    }
    root.scrollTop = scroll;
    if (focused) focusControl(...focused);
  }
  const openFolders = () => new Set([...tree().querySelectorAll('[data-folder-row][aria-expanded="true"]')].map((r) => r.dataset.folderRow));

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

  // -- events -----------------------------------------------------------------------------
  document.addEventListener("change", (event) => {
    const target = event.target;
    if (!(target instanceof HTMLInputElement) || !target.closest("#file-tree-root")) return;
    event.stopPropagation();
    // The rows can be on the page before the paths and locks they need: a box ticked then
    // is taken once they are (a folder's files, a secret's question).
    if (state.ready) choose(target);
    else loaded.then(() => choose(target));
  }, true);

  function choose(target) {
    const path = target.dataset.path;
    if (path && target.checked && state.locked[path] && !state.confirmed.has(path)) {
      target.checked = false;  // until the person says so in the dialog
      askToSend(path);
    } else if (path) setFiles([path], target.checked);
    else if (target.dataset.folder !== undefined) {
      showFolders(target.dataset.folder, target.checked);
      setFiles(filesUnder(target.dataset.folder), target.checked);
    }
  }

  document.addEventListener("click", (event) => {
    const control = event.target.closest && event.target.closest("#file-tree-root button");
    if (!control) return;
    if (control.dataset.toggle !== undefined) {
      // Opening: the group's rows come from the server the first time (hx-get, once).
      const row = control.closest("[data-folder-row]");
      const open = row.getAttribute("aria-expanded") !== "true";
      row.setAttribute("aria-expanded", String(open));
      row.nextElementSibling.hidden = !open;
      control.textContent = open ? "▾" : "▸";
      control.setAttribute("aria-label", (open ? "Collapse " : "Expand ") + control.dataset.toggle);
    } else if (control.dataset.outline !== undefined) {
      if (control.getAttribute("aria-disabled") === "true") return;
      const path = control.dataset.outline;
      loaded.then(() => setOutlines([path], !state.outlines.has(path)));
    } else if (control.dataset.outlineFolder !== undefined) {
      const on = control.getAttribute("aria-pressed") !== "true";
      loaded.then(() => setOutlines(filesUnder(control.dataset.outlineFolder), on));
    } else if (control.dataset.pin !== undefined) {
      setPin(control.dataset.pin, control.getAttribute("aria-pressed") !== "true");
    }
  });

  // The filter: the tree gives way to a flat list of the files found, best first.
  document.addEventListener("input", (event) => {
    if (event.target.id !== "file-filter") return;
    filterBy(event.target.value.trim());
  });
  function filterBy(query) {
    if (query && !state.filter) state.open = openFolders();  // the tree comes back as it was
    state.filter = query;
    refresh().then(() => { if (!query) state.open = null; });
  }
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
      filterBy("");
    }
  });

  // -- what the server pushes --------------------------------------------------------------
  // Another process's news (the follower's JSON "picker": active, outlines, pinned, shed,
  // after `acdc chat --add`; rare): the sets change here, the rows come again from the
  // server. Only news draws again: the follower repeats the sets after every HUD change.
  // (The model's tools' news comes as rows: takeSelection.)
  const earlyUpdates = [];  // news that came before the rows
  const same = (a, b) => a.size === b.size && [...a].every((item) => b.has(item));
  function applyUpdate(data) {
    if (!state.ready) return earlyUpdates.push(data);
    if (data.locked) Object.assign(state.locked, data.locked);
    const before = [state.serverActive, state.serverOutlines, state.pinned, state.shed];
    if (data.active) state.serverActive = new Set(data.active);
    if (data.outlines) state.serverOutlines = new Set(data.outlines);
    if (data.uncheck) state.serverActive = new Set([...state.serverActive].filter((p) => !data.uncheck.includes(p)));
    if (data.pinned) state.pinned = new Set(data.pinned);
    if (data.shed) state.shed = new Set(data.shed);
    const after = [state.serverActive, state.serverOutlines, state.pinned, state.shed];
    const flash = () => {
      for (const p of data.flash || []) rowOf(p)?.classList.add("flash");
    };
    if (!data.badges && before.every((set, i) => same(set, after[i]))) return flash();
    if (waiting()) {
      state.stale = true;  // drawn again once this tab's choice is answered
      return;
    }
    takeServers();
    refresh().then(flash);
  }
  function takeServers() {
    state.active = new Set(state.serverActive);
    state.outlines = new Set(state.serverOutlines);
    keepConfirmed();
  }

  // Counts, progress and the watcher's news: each cell is the new content of the element
  // of its id (an innerHTML out-of-band swap, without the attribute on every cell); a file
  // found unreadable cannot be ticked; files that came or went are put in or taken out.
  const early = [];  // fragments that came before the rows
  function takeFragments(text) {
    const holder = document.createElement("template");
    holder.innerHTML = text;
    const nodes = [...holder.content.children];
    if (nodes[0].dataset.selection !== undefined) return takeSelection(nodes);
    if (!state.ready || !tree().childElementCount) return early.push(text);
    const listed = new Set(state.files);
    const news = nodes.filter((n) => n.id[0] === "n" && !listed.has(n.dataset.path));
    const added = news.map((n) => n.dataset.path);
    const removed = nodes.filter((n) => n.id[0] === "x" && listed.has(n.dataset.path)).map((n) => n.dataset.path);
    let total = false;
    for (const node of nodes) {
      const path = node.id.length === 12 ? pathOfKey(node.id.slice(1)) : undefined;
      if (path !== undefined && node.id[0] === "t" && node.dataset.why !== undefined) refuse(path, node.dataset.why);
      if (path !== undefined && node.id[0] === "e") rowOf(path)?.classList.add("changed");
      total = total || (path !== undefined && state.active.has(path) && "to".includes(node.id[0]));
      // A locked file is never read to be counted: its cell keeps its "—".
      const locked = path !== undefined && node.dataset.why !== undefined && state.locked[path];
      const target = !locked && node.id !== "picker-update" && document.getElementById(node.id);
      if (target && node.hasAttribute("hx-swap-oob")) continue;
      if (target && node.id.length === 12) target.innerHTML = node.innerHTML;
      node.remove();
    }
    if (holder.content.childElementCount) htmx.swap(document.body, holder.innerHTML, { swapStyle: "none" });
    if (added.length || removed.length) {
      const gone = new Set(removed);
      state.files = [...state.files.filter((p) => !gone.has(p)), ...added].sort();
      const dropped = removed.filter((p) => state.active.delete(p));
      if (state.filter || !placeRows(news, removed)) refresh();
      else if (total || dropped.length) refreshTotal();
    } else if (total) refreshTotal();
  }
  // Files that came or went on disk: a new file's row (drawn on the server, inside its "n"
  // element) goes into its folder's group in name order, a gone file's row goes away.
  // False when only the tree drawn again will do: a new folder to show, an emptied one,
  // a new file without its row.
  function placeRows(news, removed) {
    for (const path of removed) {
      const row = rowOf(path);
      if (!row) continue;
      const group = row.parentElement;
      row.remove();
      if (group !== tree() && !group.childElementCount) return false;
    }
    for (const node of news) {
      const path = node.dataset.path;
      const row = node.querySelector("[data-row]");
      if (rowOf(path)) continue;
      const folder = path.slice(0, Math.max(0, path.lastIndexOf("/")));
      const group = folder ? document.getElementById(`g${rowKey(folder)}`) : tree();
      if (!group) {
        if (folderShown(folder)) return false;
        continue;  // inside a folder not drawn yet: opening it draws the row
      }
      if (group !== tree() && !group.childElementCount) continue;  // fetched when opened
      if (!row) return false;
      const next = [...group.children].find((c) => c.dataset.row !== undefined && c.dataset.row > path);
      if (next) next.before(row);
      else group.append(row);
      showRow(row);
    }
    return true;
  }
  // Whether `folder`'s row would be on the page: its nearest drawn folder has its rows.
  function folderShown(folder) {
    for (let f = folder; f; ) {
      f = f.slice(0, Math.max(0, f.lastIndexOf("/")));
      const group = f ? document.getElementById(`g${rowKey(f)}`) : tree();
      if (group) return group === tree() || group.childElementCount > 0;
    }
    return true;
  }
  function refuse(path, why) {
    state.refused.add(path);
    const row = rowOf(path);
    if (!row || state.locked[path]) return;
    row.classList.add("refused");
    row.title = `${path}: ${why}`;
    row.querySelector("[data-path]").disabled = true;
    for (const control of row.querySelectorAll("[data-pin], [data-outline]")) control.remove();
    row.querySelector(".tokens").removeAttribute("title");
  }
  // The total under the filter box, again from the server once counts of selected files
  // came (a choice's answer brings its own).
  let totalAsked = null;
  function refreshTotal() {
    if (totalAsked || waiting()) return;
    totalAsked = fetch(`${panel().dataset.rowsUrl}?total=1`).then((r) => r.text()).then((html) => {
      totalAsked = null;
      if (!waiting()) htmx.swap(document.body, html, { swapStyle: "none" });
    });
  }

  // The answer to a choice (this tab's, another tab's): an element per row whose state
  // changed, the folders' three states and the total as the server figured them. The
  // model's tools' news is the same naming no choice, with the rows it touched drawn
  // whole (pin, badge, flash): they take their place at once, their boxes showing this
  // tab's choice while one is on its way.
  function takeSelection([carrier, ...nodes]) {
    if (!state.ready) return;  // the rows and the selection come after it
    const news = !carrier.dataset.selection;
    if (!news) state.answered = carrier.dataset.selection;
    const shed = new Set();
    const folders = [];
    const totals = [];
    for (const node of nodes) {
      if (node.id === "picker-total" || node.id === "picker-shed") totals.push(node);
      else if (node.dataset.row !== undefined) putRow(node);
      else if (node.dataset.folder !== undefined) folders.push(node);
      else {
        const path = pathOfKey(node.id.slice(1));
        if (path === undefined) continue;
        const sel = node.dataset.sel;
        flip(state.serverActive, path, sel !== "off");
        flip(state.serverOutlines, path, sel === "outline");
        if (node.hasAttribute("data-shed")) shed.add(path);
      }
    }
    if (waiting()) {
      if (news) state.stale = true;  // its folders and total: once this tab's choice is answered
      return;
    }
    takeServers();
    showRows();
    state.shed = shed;  // each file sending would shed is named, whatever changed
    for (const row of tree().querySelectorAll("[data-row]")) row.classList.toggle("will-shed", state.shed.has(row.dataset.row));
    for (const node of folders) {
      const box = tree().querySelector(`[data-folder="${CSS.escape(node.dataset.folder)}"]`);
      if (box) setBox(box, node.dataset.sel);
      const outline = tree().querySelector(`[data-outline-folder="${CSS.escape(node.dataset.folder)}"]`);
      if (!outline) continue;
      outline.classList.toggle("on", node.hasAttribute("data-outline"));
      outline.setAttribute("aria-pressed", String(node.hasAttribute("data-outline")));
    }
    for (const node of totals) document.getElementById(node.id)?.replaceWith(node);
    if (state.stale) {
      state.stale = false;
      refresh();
    }
  }
  const flip = (set, item, on) => (on ? set.add(item) : set.delete(item));
  // A row drawn again by the server takes the place of the one on the page (a file not on
  // the page, in a closed folder, has none); in the filter's list it keeps its folder hint.
  function putRow(row) {
    const path = row.dataset.row;
    const old = rowOf(path);
    if (!old) return;
    const hint = old.querySelector(".folder-hint");
    if (hint) row.querySelector(".name").after(hint);
    const focused = focusKey(old);
    old.replaceWith(row);
    flip(state.pinned, path, row.querySelector('[data-pin][aria-pressed="true"]') !== null);
    if (waiting()) showRow(row);
    if (focused) focusControl(...focused);
  }

  // The fragments are recognised by their first element, the tools' news by its JSON;
  // both are taken before the ws extension swaps.
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

  // The flat list of paths and the selection come as JSON; the rows as HTML, in parallel.
  let markLoaded;
  const loaded = new Promise((resolve) => { markLoaded = resolve; });
  async function load() {
    const host = panel();
    if (!host) return;
    try {
      const rows = htmx.ajax("GET", host.dataset.rowsUrl, { target: "#file-tree-root", swap: "innerHTML" });
      const response = await fetch(host.dataset.url, { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const data = await response.json();
      state.files = data.files;
      state.locked = data.locked || {};
      state.refused = new Set(data.refused || []);
      state.suffixes = new Set(data.outline_suffixes || []);
      state.serverActive = new Set(data.active);
      state.serverOutlines = new Set(data.outlines || []);
      state.pinned = new Set(data.pinned || []);
      state.shed = new Set(data.shed || []);
      takeServers();
      await rows;
      state.ready = true;
      markLoaded();
      for (const text of early.splice(0)) takeFragments(text);
      for (const update of earlyUpdates.splice(0)) applyUpdate(update);
    } catch (error) {
      const total = document.getElementById("picker-total");
      if (total) total.textContent = `The file tree could not be loaded (${error.message}). Reload to try again.`;
    }
  }

  // What the message box's @-mentions (mention.js) may offer and do: the same selection
  // the boxes make. A locked (secret-shaped) or refused file is not offered.
  window.acdcPicker = {
    files: () => state.files,
    offered: (path) => !state.locked[path] && !refused(path),
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
