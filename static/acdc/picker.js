// The Files panel, drawn by the server: rows come with the page; choices and redraws go on
// the socket, whose frames the server takes in order (rows drawn for a tab follow the choices
// it sent before), and it refuses a redraw naming the sets it holds. Left here: a row's look
// from its carrier (`s` + key; a box in three states), the dialog, the filter, the keyboard.
const listen = (type, handler, capture) => document.addEventListener(type, handler, capture);
const byId = (id) => document.getElementById(id);
const panel = () => byId("files-panel");
const tree = () => byId("file-tree-root");
const rowOf = (path) => tree()?.querySelector(`[data-row="${CSS.escape(path)}"]`);
// A file's selection as the server last drew it ("off" when its row is not on the page).
const query = () => byId("file-filter")?.value.trim() || "";
const held = (path) => rowOf(path)?.querySelector("i[data-sel]")?.dataset.sel || "off";
// The repository's paths (files.json), which the filter ranks and mention.js offers.
const paths = { files: [], locked: {}, refused: new Set(), coming: true };
let [asking, openBefore] = [null, []]; // the dialog's file; the tree's open folders, kept

const FILE_OUTLINE = ["Sent as its outline (signatures only): press for off",
  "Send only its outline (signatures)"];
const FOLDER_OUTLINE = ["Its files go as outlines: press for off",
  "Send its files as outlines (those acdc has a grammar for)"];

function press(button, on, [onTitle, offTitle]) {
  if (!button) return;
  button.classList.toggle("on", on);
  button.setAttribute("aria-pressed", String(on));
  button.title = on ? onTitle : offTitle;
}

function lookFolder(row, carrier) {
  const [box, sel] = [row.querySelector("input[data-folder]"), carrier.dataset.sel];
  box.dataset.sel = sel;
  box.checked = sel === "all";
  box.indeterminate = sel === "some";
  const outline = row.querySelector("[data-outline-folder]");
  press(outline, carrier.hasAttribute("data-outline"), FOLDER_OUTLINE);
}

function lookFile(row, carrier) {
  const [sel, on] = [carrier.dataset.sel, carrier.dataset.sel !== "off"];
  row.querySelector("input[data-path]").checked = on;
  press(row.querySelector(".outline-file[aria-pressed]"), sel === "outline", FILE_OUTLINE);
  row.querySelector(".tokens")?.classList.toggle("unsent", sel === "outline");
  row.classList.toggle("will-shed", carrier.hasAttribute("data-shed"));
  const pin = row.querySelector("[data-pin]"); // a locked file's shows while it is sent
  if (pin && row.classList.contains("locked")) {
    pin.hidden = !on && pin.getAttribute("aria-pressed") !== "true";
  }
}

const look = (carrier) =>
  (carrier.dataset.folder === undefined ? lookFile : lookFolder)(carrier.parentElement, carrier);

htmx.onLoad((element) => {
  if (element.id === "picker-update") return news(element);
  if (!element.closest("#file-tree-root") && !element.contains(tree())) return;
  if (element.matches("i[data-sel]")) return look(element);
  element.querySelectorAll("i[data-sel]").forEach(look);
});

function ask(fields) {
  const [holder, form] = [byId("file-tree-selection"), byId("file-tree")];
  if (!holder || !form) return;
  const hidden = ([name, value]) =>
    Object.assign(document.createElement("input"), { type: "hidden", name, value });
  holder.replaceChildren(...fields.map(hidden));
  htmx.trigger(form, "change");
}

function send(choose, path, on, confirm = false) {
  const fields = [["action", "select"], ["choose", choose], ["path", path], ["on", on ? 1 : 0]];
  ask(confirm ? [...fields, ["confirm", path]] : fields);
}

// The tree (open as it is or was before the filter) or the filter's list, again.
const FOUND_AT_MOST = 200;
function redraw(shown = "") {
  const listed = Boolean(tree()?.querySelector("[data-list]"));
  const fields = [["action", "rows"], ["shown", shown]];
  if (!query()) {
    const open = listed ? openBefore : openFolders();
    return ask([...fields, ["view", "tree"], ...open.map((folder) => ["open", folder])]);
  }
  if (!listed) openBefore = openFolders();
  const ranked = window.acdcFilter.rankFiles(paths.files, query());
  const found = ranked.slice(0, FOUND_AT_MOST).map((path) => ["found", path]);
  fields.push(["view", "list"], ["matched", ranked.length], ["coming", paths.coming ? 1 : ""]);
  ask([...fields, ...found]);
}
const openFolders = () => [...tree().querySelectorAll('[data-folder-row][aria-expanded="true"]')]
  .map((row) => row.dataset.folderRow);

listen("change", (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || !box.closest("#file-tree-root")) return;
  event.stopPropagation();
  const path = box.dataset.path;
  if (path === undefined) return send("folder", box.dataset.folder, box.checked);
  // A locked file goes only after the dialog (a selected one was confirmed then).
  if (box.checked && box.closest(".locked") && held(path) === "off") {
    box.checked = false;
    return askToSend(path);
  }
  send("file", path, box.checked);
}, true);

listen("click", (event) => {
  const control = event.target.closest?.("#file-tree-root button");
  if (!control) return;
  const [data, pressed] = [control.dataset, control.getAttribute("aria-pressed") === "true"];
  const usable = control.getAttribute("aria-disabled") !== "true";
  if (data.toggle !== undefined) toggle(control);
  else if (data.outline !== undefined && usable) send("outline", data.outline, !pressed);
  else if (data.outlineFolder !== undefined) send("outline-folder", data.outlineFolder, !pressed);
  else if (data.pin !== undefined) setPin(data.pin, !pressed);
});

// A folder's rows come when it is first opened (hx-get, once).
function toggle(control) {
  const row = control.closest("[data-folder-row]");
  const open = row.getAttribute("aria-expanded") !== "true";
  row.setAttribute("aria-expanded", String(open));
  row.nextElementSibling.hidden = !open;
  control.textContent = open ? "▾" : "▸";
  control.setAttribute("aria-label", (open ? "Collapse " : "Expand ") + control.dataset.toggle);
}

// A pin is answered with itself drawn again and the total (tree.pin_update).
function setPin(path, pinned) {
  const values = { path, pinned: String(pinned) };
  htmx.ajax("POST", panel().dataset.pinUrl, { source: tree(), values, swap: "none" });
}

function askToSend(path) {
  const dialog = byId("secret-confirm");
  const provider = (panel()?.dataset.model || "").split("/")[0];
  dialog.querySelector("[data-provider]").textContent = provider || "the model provider";
  dialog.querySelector("[data-secret-path]").textContent = path;
  [dialog.returnValue, asking] = ["", path];
  dialog.showModal();
  dialog.querySelector("[data-cancel]").focus();
}

function answered(dialog) {
  const path = asking;
  asking = null;
  if (!path) return;
  if (dialog.returnValue === "send") {
    const box = rowOf(path)?.querySelector("input[data-path]");
    box && (box.checked = true);
    send("file", path, true, true);
  }
  focusControl("path", path);
}

function watchDialog() {
  const dialog = byId("secret-confirm");
  dialog.addEventListener("close", () => answered(dialog));
  // Escape is Cancel here, not also the page's Escape (which stops a reply).
  dialog.addEventListener("keydown", (event) => event.key === "Escape" && event.stopPropagation());
}

// Rows drawn again keep the scroll and focus.
function focusKey(root) {
  const active = document.activeElement;
  if (!root.contains(active)) return null;
  const kinds = "path folder toggle pin outline outline-folder".split(" ");
  const kind = kinds.find((k) => active.hasAttribute(`data-${k}`));
  return kind ? [kind, active.getAttribute(`data-${kind}`)] : null;
}
function focusControl(kind, value) {
  document.querySelector(`#file-tree-root [data-${kind}="${CSS.escape(value)}"]`)?.focus();
}
let kept = null;
listen("htmx:oobBeforeSwap", (event) => {
  const [root, target] = [tree(), event.detail.target];
  if (!root?.contains(target)) return;
  kept = [root === target ? root.scrollTop : null, focusKey(root)];
});
listen("htmx:oobAfterSwap", () => {
  if (!kept) return;
  const [[scroll, focused], root] = [kept, tree()];
  kept = null;
  if (scroll !== null) root.scrollTop = scroll;
  if (focused && !root.contains(document.activeElement)) focusControl(...focused);
});

// News (#picker-update): files came or went; rows again when a folder came or went, news
// names sets (refused if this tab shows them) or the filter's list may change.
function news(carrier) {
  const data = carrier.dataset;
  const added = JSON.parse(data.added || "[]");
  const removed = new Set(JSON.parse(data.removed || "[]"));
  const listed = new Set(paths.files);
  const moved = added.some((p) => !listed.has(p)) || [...removed].some((p) => listed.has(p));
  if (moved) {
    const kept = paths.files.filter((p) => !removed.has(p));
    paths.files = [...new Set([...kept, ...added])].sort();
  }
  const total = byId("picker-total");
  if (data.sets) redraw(total?.dataset.sets);
  else if (data.redraw !== undefined || (moved && query())) redraw();
  else if (data.added !== undefined && total?.textContent.includes("≥")) {
    const url = `${panel().dataset.rowsUrl}?total=1`; // one at a time: hx-sync on the total
    htmx.ajax("GET", url, { source: total, swap: "none" });
  }
}

// Pieces with no place on the page (a closed folder's row) or drawn already are left out.
function present(text) {
  if (!text.startsWith('<div id="picker-update"')) return text;
  const holder = document.createElement("template");
  holder.innerHTML = text;
  for (const node of [...holder.content.children]) {
    const where = (node.getAttribute("hx-swap-oob") || "").split(":")[1];
    const drawn = node.id[0] === "n" && byId(`r${node.id.slice(1)}`);
    if (drawn || !(where ? document.querySelector(where) : byId(node.id))) node.remove();
  }
  return holder.innerHTML;
}
htmx.defineExtension("files-oob", { transformResponse: present });

listen("input", (event) => event.target.id === "file-filter" && redraw());
// "/" (unless it types: "/compact" in the message box is a command) or Ctrl/Cmd+K
// filters; Escape in the filter clears it.
listen("keydown", (event) => {
  const [filter, target] = [byId("file-filter"), event.target];
  const typing = target.matches?.("input, textarea") || target.isContentEditable;
  const modifier = event.ctrlKey || event.metaKey;
  const slash = event.key === "/" && !typing && !modifier && !event.altKey;
  if (slash || (modifier && !event.altKey && event.key.toLowerCase() === "k")) {
    event.preventDefault();
    filter.focus();
    filter.select();
  } else if (event.key === "Escape" && event.target === filter) {
    filter.value = "";
    redraw();
  }
});

// The paths come after the page; a filter typed before them runs again then.
async function load() {
  try {
    const response = await fetch(panel().dataset.url);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const data = await response.json();
    Object.assign(paths, { files: data.files, locked: data.locked || {}, coming: false });
    paths.refused = new Set(data.refused || []);
    if (query()) redraw();
    document.dispatchEvent(new Event("acdc:files"));
  } catch (error) {
    byId("picker-total").textContent = `The list of files did not come (${error.message}).`;
  }
}

// What @-mentions (mention.js) offer and do: the boxes' choices; no locked or refused file.
const refused = (path) => paths.refused.has(path) || Boolean(rowOf(path)?.matches(".refused"));
window.acdcPicker = {
  files: () => paths.files,
  offered: (path) => !paths.locked[path] && !refused(path),
  // Each says whether it changed the selection (so taking the mention back undoes it).
  addFile: (path) => held(path) !== "on" && (send("file", path, true), true),
  addOutline: (path) => held(path) === "off" && (send("outline", path, true), true),
  drop: (path) => send("file", path, false),
};

listen("DOMContentLoaded", () => (watchDialog(), load()));
