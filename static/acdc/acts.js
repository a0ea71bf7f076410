// What the person just did is not undone by a redraw drawn before it was saved.
//
// A part of the page is drawn again from the server in three ways: the answer to a request
// (an `hx-post` form swapping itself), a frame on the socket (another tab's change, or this
// tab's own echoed to every tab), and a refetch (panels.js asks for a panel whose version
// moved on). Each of those was drawn at some moment; if the person changed the part after
// that moment, drawing it would put back the old state — a switch clicked off shows on
// again, a choice made in a select goes back to the last one — and, worse, it replaces the
// element whose next request htmx holds in its queue, and htmx drops a queued request of an
// element no longer in the page: the click is lost, on the page and on the server.
//
// So every request that changes something (any verb but GET) is an act, numbered in the
// order the person made them, and counts for each part around it that says `data-acts`. Each
// request carries the number of the last act the tab had made when it left
// (`X-Acdc-Act: tab:number`); a frame the server draws for a request says so in its first
// line (`<!--acdc-act tab:number-->`, chat.web.broadcast). Then a redraw of an element is
// left out when
//   - it answers a request of this tab (a refetch too), or echoes an act of this tab, and an
//     act was made inside the element after that request left: the later act's answer,
//     drawn after it was saved, draws the element;
//   - it comes from elsewhere (another tab, a turn) while an act inside the element is still
//     unanswered: that answer draws the element as saved, the other change included.
// A refetch left out leaves a panel's version behind, and the next change note fetches it
// again (panels.js).
(() => {
  "use strict";

  const TAB = Math.random().toString(36).slice(2, 10);
  const HEADER = "X-Acdc-Act";
  const MARK = /^<!--acdc-act ([a-z0-9]{1,16}):(\d{1,15})-->/;
  let counter = 0;
  const made = new Map(); // element id -> number of the last act made inside it
  const answered = new Map(); // element id -> number of the last act answered inside it
  const around = new WeakMap(); // element -> the ids around it when its request left
  const waiting = new WeakSet(); // elements with a request out
  let drawing = null; // the act that drew what is being swapped: its number, or null

  // The parts this watches say so (`data-acts`): forms and panels the person sets and the
  // server draws whole. A stream's frames, which append, are never left out.
  function ids(element) {
    const out = [];
    for (let node = element; node && node.nodeType === 1; node = node.parentElement) {
      if (node.id && node.hasAttribute("data-acts")) out.push(node.id);
    }
    return out;
  }
  function changing(detail) {
    return ((detail && detail.verb) || "get").toLowerCase() !== "get";
  }
  function act(element) {
    counter += 1;
    for (const id of ids(element)) made.set(id, counter);
  }
  function unanswered(id) {
    return (made.get(id) || 0) > (answered.get(id) || 0);
  }
  function number(headers) {
    const value = headers && headers[HEADER];
    const found = typeof value === "string" && value.split(":");
    return found && found[0] === TAB ? Number(found[1]) : null;
  }
  // Whether drawing `target` now would undo an act: `from` is the number of the act that
  // drew it, in this tab, or null when it was drawn elsewhere.
  function stale(target, from) {
    const id = target && target.hasAttribute && target.hasAttribute("data-acts") && target.id;
    if (!id) return false;
    if (from === null) return unanswered(id);
    return from < (made.get(id) || 0);
  }

  // The act counts when the person makes it, before htmx queues its request behind one
  // still out. One that asks for confirmation counts when its request leaves; a change
  // htmx drops (hx-sync drop, a request already out) does not count.
  document.addEventListener("htmx:confirm", (event) => {
    const detail = event.detail || {};
    if (!changing(detail) || detail.question || !detail.elt) return;
    const sync = detail.elt.getAttribute("hx-sync");
    if (sync !== null && !/queue|replace|abort/.test(sync) && waiting.has(detail.elt)) return;
    act(detail.elt);
  });
  document.addEventListener("htmx:configRequest", (event) => {
    const detail = event.detail || {};
    const elt = detail.elt;
    if (changing(detail) && elt) {
      if (elt.closest("[hx-confirm]")) act(elt);
      waiting.add(elt);
      around.set(elt, ids(elt));
    }
    detail.headers[HEADER] = `${TAB}:${counter}`;
  });
  // An act is answered when its request ends, however it ends. (Not on htmx:afterRequest:
  // that goes to the element that sent it, which its own frame may have replaced by then,
  // and an event on an element out of the page never reaches the document.)
  function settle(config) {
    const elt = config.elt;
    if (!elt || !changing(config)) return;
    waiting.delete(elt);
    const was = number(config.headers) || 0;
    for (const id of around.get(elt) || ids(elt)) {
      if ((answered.get(id) || 0) < was) answered.set(id, was);
    }
  }
  document.addEventListener("htmx:beforeRequest", (event) => {
    const detail = event.detail || {};
    const config = detail.requestConfig;
    if (!detail.xhr || !config) return;
    detail.xhr.addEventListener("loadend", () => {
      settle(config);
      drawing = null; // its answer and out-of-band parts are swapped by now
    });
  });
  document.addEventListener("htmx:validation:halted", (event) => settle(event.detail || {}));

  // An answer, and the out-of-band parts it carries, were drawn by its own request.
  document.addEventListener("htmx:beforeSwap", (event) => {
    const detail = event.detail;
    if (!detail || !detail.requestConfig) return;
    drawing = number(detail.requestConfig.headers);
    if (detail.shouldSwap && stale(detail.target, drawing)) detail.shouldSwap = false;
  });
  // A frame on the socket says in its first line which act drew it, if one did.
  document.addEventListener("htmx:wsBeforeMessage", (event) => {
    const message = (event.detail && event.detail.message) || "";
    const found = typeof message === "string" && MARK.exec(message);
    drawing = found && found[1] === TAB ? Number(found[2]) : null;
  });
  document.addEventListener("htmx:wsAfterMessage", () => {
    drawing = null;
  });
  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const detail = event.detail;
    if (detail && stale(detail.target, drawing)) detail.shouldSwap = false;
  });
})();
