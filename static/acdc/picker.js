// The Files panel's behaviour. The server owns the panel: it draws the rows, holds the
// selection, resolves each choice and answers with hx-swap-oob pieces on the rows' stable
// ids (chat.web.panels: tree, selection, fileupdates); a row holds its state in a hidden
// carrier (`s` + row key). Left here is what htmx cannot do: the look a carrier gives its row,
// sending a box's choice over the session's socket (its frames are taken in order, so answers
// come in the order chosen), the question before a locked file goes, the filter, the keyboard.
(function () {
  "use strict";
  const state = { files: [], locked: {}, refused: new Set(), ready: false, filter: "", open: null, listed: false, paths: "coming" };
  let [drawn, waiting, again, asking, totalAsked, chosen] = [0, false, false, null, false, 0];
  // Choices not yet answered, by the name each carries (its answer echoes it): rows asked
  // for meanwhile could be drawn before the server saved them, so they wait for it.
  const [unanswered, tab] = [new Set(), Math.random().toString(36).slice(2, 8)];
  const panel = () => document.getElementById("files-panel");
  const tree = () => document.getElementById("file-tree-root");
  const csrf = () => JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"];
  const rowOf = (path) => tree() && tree().querySelector(`[data-row="${CSS.escape(path)}"]`);
  // The selection of a file as the server last drew it ("off" when its row is not on the page).
  const held = (path) => rowOf(path)?.querySelector("i[data-sel]")?.dataset.sel || "off";
  const refused = (path) => state.refused.has(path) || Boolean(rowOf(path)?.classList.contains("refused"));

  // -- the look of the state the server holds ----------------------------------------------
  const FILE_OUTLINE = ["Sent as its outline (signatures only): press for off", "Send only its outline (signatures)"];
  const FOLDER_OUTLINE = ["Its files go as outlines: press for off", "Send its files as outlines (those acdc has a grammar for)"];
  function press(button, on, [onTitle, offTitle], mark = "on") {
    if (!button) return;
    button.classList.toggle(mark, on);
    button.setAttribute("aria-pressed", String(on));
    button.title = on ? onTitle : offTitle;
  }
  function look(carrier) {
    const [row, sel] = [carrier.parentElement, carrier.dataset.sel];
    if (carrier.dataset.folder !== undefined) {
      const box = row.querySelector("input[data-folder]");
      box.dataset.sel = sel;
      box.checked = sel === "all";
      box.indeterminate = sel === "some";
      press(row.querySelector("[data-outline-folder]"), carrier.hasAttribute("data-outline"), FOLDER_OUTLINE);
      return;
    }
    const on = sel !== "off";
    row.querySelector("input[data-path]").checked = on;
    press(row.querySelector(".outline-file[aria-pressed]"), sel === "outline", FILE_OUTLINE);
    row.querySelector(".tokens")?.classList.toggle("unsent", sel === "outline");
    row.classList.toggle("will-shed", carrier.hasAttribute("data-shed"));
    const pin = row.querySelector("[data-pin]");  // a locked file's pin shows while it is sent
    if (pin && row.classList.contains("locked")) pin.hidden = !on && pin.getAttribute("aria-pressed") !== "true";
  }
  htmx.onLoad((element) => {
    if (!(element instanceof Element)) return;
    if (element.id === "picker-update") return news(element);
    if (!element.closest("#file-tree-root")) return;
    const carriers = element.matches("i[data-sel]") ? [element] : element.querySelectorAll("i[data-sel]");
    for (const carrier of carriers) look(carrier);
  });

  // -- a choice goes to the server ---------------------------------------------------------
  function send(choose, path, on, confirm = false) {
    const [holder, form] = [document.getElementById("file-tree-selection"), document.getElementById("file-tree")];
    if (!holder || !form) return;
    const hidden = (name, value) => Object.assign(document.createElement("input"), { type: "hidden", name, value });
    const name = `${tab}-${++chosen}`;
    unanswered.add(name);
    holder.replaceChildren(hidden("choose", choose), hidden("path", path), hidden("on", on ? "1" : "0"), hidden("selection", name));
    if (confirm) holder.append(hidden("confirm", path));
    htmx.trigger(form, "change");
    // Rows on their way were drawn before this choice: asked again once it is answered.
    if (waiting) [drawn, waiting, again] = [drawn + 1, false, true];
  }

  document.addEventListener("change", (event) => {
    const box = event.target;
    if (!(box instanceof HTMLInputElement) || !box.closest("#file-tree-root")) return;
    event.stopPropagation();
    const path = box.dataset.path;
    if (path !== undefined) {
      // A locked file goes only after the dialog; one already selected was confirmed then.
      if (box.checked && box.closest(".locked") && held(path) === "off") {
        box.checked = false;
        askToSend(path);
      } else send("file", path, box.checked);
    } else if (box.dataset.folder !== undefined) send("folder", box.dataset.folder, box.checked);
  }, true);

  document.addEventListener("click", (event) => {
    const control = event.target.closest && event.target.closest("#file-tree-root button");
    if (!control) return;
    const data = control.dataset;
    const pressed = control.getAttribute("aria-pressed") === "true";
    if (data.toggle !== undefined) toggle(control);
    else if (data.outline !== undefined && control.getAttribute("aria-disabled") !== "true") send("outline", data.outline, !pressed);
    else if (data.outlineFolder !== undefined) send("outline-folder", data.outlineFolder, !pressed);
    else if (data.pin !== undefined) setPin(data.pin, !pressed);
  });

  // Opening a folder: its rows come from the server the first time (hx-get, once).
  function toggle(control) {
    const row = control.closest("[data-folder-row]");
    const open = row.getAttribute("aria-expanded") !== "true";
    row.setAttribute("aria-expanded", String(open));
    row.nextElementSibling.hidden = !open;
    control.textContent = open ? "▾" : "▸";
    control.setAttribute("aria-label", (open ? "Collapse " : "Expand ") + control.dataset.toggle);
  }
  const PIN = ["Pinned: never dropped to make room", "Pin: never drop this file to make room"];
  async function setPin(path, pinned) {
    const body = new URLSearchParams({ path, pinned: String(pinned) });
    const response = await fetch(panel().dataset.pinUrl, { method: "POST", body, headers: { "X-CSRFToken": csrf() } });
    const answer = await response.json(), pins = new Set(answer.pinned || []);
    // The sets' new name: the follower's news naming it finds this tab drawn from them.
    if (answer.sets) document.getElementById("picker-total").dataset.sets = answer.sets;
    for (const pin of response.ok ? tree().querySelectorAll("[data-pin]") : []) {
      press(pin, pins.has(pin.dataset.pin), PIN, "pinned");
      pin.setAttribute("aria-label", (pins.has(pin.dataset.pin) ? "Unpin " : "Pin ") + pin.dataset.pin);
    }
  }
  // The question before a locked (secret-shaped) file goes.
  function askToSend(path) {
    const dialog = document.getElementById("secret-confirm");
    if (!dialog || typeof dialog.showModal !== "function") return;
    const provider = (panel()?.dataset.model || "").split("/")[0];
    dialog.querySelector("[data-provider]").textContent = provider || "the model provider";
    dialog.querySelector("[data-secret-path]").textContent = path;
    [dialog.returnValue, asking] = ["", path];
    dialog.showModal();
    dialog.querySelector("[data-cancel]").focus();
  }
  function watchDialog() {
    const dialog = document.getElementById("secret-confirm");
    dialog?.addEventListener("close", () => {
      const path = asking;
      asking = null;
      if (!path) return;
      if (dialog.returnValue === "send") {
        const box = rowOf(path)?.querySelector("input[data-path]");
        if (box) box.checked = true;
        send("file", path, true, true);
      }
      focusControl("path", path);
    });
    // Escape closes the dialog as Cancel, and not also the page's own Escape (which stops a reply).
    dialog?.addEventListener("keydown", (event) => event.key === "Escape" && event.stopPropagation());
  }

  // The tree again (open folders stay open) or the filter's list; scroll and focus stay.
  const FOUND_AT_MOST = 200;  // rows the filter asks the server for
  async function refresh() {
    const root = tree();
    if (!root) return;
    if (unanswered.size) return void (again = true);
    const ask = ++drawn;
    waiting = true;
    const url = panel().dataset.rowsUrl;
    let response;
    if (state.filter) {
      const ranked = window.acdcFilter.rankFiles(state.files, state.filter);
      const found = ranked.slice(0, FOUND_AT_MOST);
      const body = new URLSearchParams([["matched", ranked.length], ["paths", state.paths], ...found.map((p) => ["found", p])]);
      if (!found.length) body.append("found", "");
      response = await fetch(url, { method: "POST", body, headers: { "X-CSRFToken": csrf() } });
    } else {
      const open = state.open || openFolders();
      const query = new URLSearchParams([["opened", "1"], ...[...open].map((f) => ["open", f])]);
      response = await fetch(`${url}?${query}`);
    }
    const html = await response.text();
    if (ask !== drawn) return;
    waiting = false;
    if (!response.ok) return;
    const [scroll, focused] = [root.scrollTop, focusKey(root)];
    htmx.swap(root, html, { swapStyle: "innerHTML" });
    // The tree is on the page again: its own rows say which folders are open from now on.
    state.listed = Boolean(state.filter);
    if (!state.listed) state.open = null;
    root.scrollTop = scroll;
    if (focused) focusControl(...focused);
  }
  const openFolders = () => new Set([...tree().querySelectorAll('[data-folder-row][aria-expanded="true"]')].map((r) => r.dataset.folderRow));

  function focusKey(root) {
    const active = document.activeElement;
    if (!(active instanceof HTMLElement) || !root.contains(active)) return null;
    const kind = ["path", "folder", "toggle", "pin", "outline", "outlineFolder"].find((k) => active.dataset[k] !== undefined);
    return kind ? [kind, active.dataset[kind]] : null;
  }
  function focusControl(kind, value) {
    const attr = kind.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());
    const control = document.querySelector(`#file-tree-root [data-${attr}="${CSS.escape(value)}"]`);
    if (control) control.focus();
  }

  // The news carrier (#picker-update, swapped by htmx): the files that came or went join the
  // filter's list; the tree is drawn again when the server says a folder came or went, or
  // when the sets the session holds (data-sets, the follower's) are not those the running
  // total was drawn from; the total comes again once counts of a selected file came.
  function news(carrier) {
    const answered = carrier.dataset.selection;
    if (answered !== undefined) unanswered.delete(answered);
    if (answered !== undefined && again && !unanswered.size) { again = false; return refresh(); }
    const [added, removed] = [JSON.parse(carrier.dataset.added || "[]"), new Set(JSON.parse(carrier.dataset.removed || "[]"))];
    const listed = new Set(state.files);
    const moved = added.some((p) => !listed.has(p)) || [...removed].some((p) => listed.has(p));
    if (moved) state.files = [...new Set([...state.files.filter((p) => !removed.has(p)), ...added])].sort();
    const [total, sets] = [document.getElementById("picker-total"), carrier.dataset.sets];
    if (carrier.hasAttribute("data-redraw") || (sets && sets !== total?.dataset.sets) || (moved && state.filter)) refresh();
    else if (carrier.dataset.added !== undefined && total?.textContent.includes("≥") && !totalAsked) {
      totalAsked = true;
      htmx.ajax("GET", `${panel().dataset.rowsUrl}?total=1`, { swap: "none" }).finally(() => { totalAsked = false; });
    }
  }

  document.addEventListener("input", (event) => event.target.id === "file-filter" && filterBy(event.target.value.trim()));
  // The tree comes back as it was left: its open folders are kept when the filter's list
  // first replaces it, and only then (a quick clear and retype leaves the list on the page
  // a moment longer, whose rows have no open folders to read).
  function filterBy(query) {
    if (query && !state.filter && !state.listed) state.open = openFolders();
    state.filter = query;
    refresh();
  }
  // "/" filters the files unless it would type into something. The message box has the
  // focus from the start, and "/compact" typed there is a command, so "/" never leaves it;
  // Ctrl/Cmd+K filters from anywhere.
  document.addEventListener("keydown", (event) => {
    const filter = document.getElementById("file-filter");
    if (!filter) return;
    const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement || event.target.isContentEditable;
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

  // The panel's pieces whose place is not on the page (a row in a closed folder), and new
  // rows the page drew already, are left out before htmx swaps them (it would report each).
  function present(text) {
    if (!text.startsWith('<div id="picker-update"')) return text;
    const holder = document.createElement("template");
    holder.innerHTML = text;
    for (const node of [...holder.content.children]) {
      const where = (node.getAttribute("hx-swap-oob") || "").split(":")[1];
      const drawn = node.id[0] === "n" && document.getElementById(`r${node.id.slice(1)}`);
      if (drawn || !(where ? document.querySelector(where) : document.getElementById(node.id))) node.remove();
    }
    return holder.innerHTML;
  }
  htmx.defineExtension("files-oob", { transformResponse: present });
  // News that comes before the rows waits for them (htmx swaps it then).
  const early = [];
  document.addEventListener("htmx:wsBeforeMessage", (event) => {
    const text = event.detail.message;
    if (state.ready || typeof text !== "string" || !text.startsWith('<div id="picker-update"')) return;
    event.preventDefault();
    early.push(text);
  });

  // The rows come as HTML (the news waits for them), the paths as JSON; a filter typed before either came runs again then.
  async function load() {
    const host = panel();
    if (!host) return;
    try {
      htmx.ajax("GET", host.dataset.rowsUrl, { target: "#file-tree-root", swap: "innerHTML" }).then(() => {
        state.ready = true;
        for (const text of early.splice(0)) htmx.swap(document.body, present(text), { swapStyle: "none" });
        if (state.filter) refresh();
      });
      const response = await fetch(host.dataset.url, { headers: { Accept: "application/json" } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const data = await response.json();
      Object.assign(state, { files: data.files, locked: data.locked || {}, refused: new Set(data.refused || []), paths: "in" });
      if (state.filter) refresh();
      document.dispatchEvent(new Event("acdc:files"));
    } catch (error) {
      const total = document.getElementById("picker-total");
      if (total) total.textContent = `The file tree could not be loaded (${error.message}). Reload to try again.`;
    }
  }

  // What the message box's @-mentions (mention.js) may offer and do: the same choices the
  // boxes send. A locked (secret-shaped) or refused file is not offered.
  window.acdcPicker = {
    files: () => state.files,
    offered: (path) => !state.locked[path] && !refused(path),
    // Each returns whether it changed the selection (so taking the mention back undoes it);
    // the server sends as an outline only what has one.
    addFile: (path) => held(path) !== "on" && (send("file", path, true), true),
    addOutline: (path) => held(path) === "off" && (send("outline", path, true), true),
    drop: (path) => send("file", path, false),
  };

  // A choice sent on a socket that closed is answered on none (one not saved: its name alone).
  document.addEventListener("htmx:wsOpen", () => unanswered.clear());
  document.addEventListener("DOMContentLoaded", () => (watchDialog(), load()));
})();
