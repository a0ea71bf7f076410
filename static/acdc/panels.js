// Panels that follow changes made elsewhere (another tab, a worker, `acdc chat`): the
// server sends a note (#panels-stale) naming the session tools' new version and the
// session's model; a panel that shows something else is fetched again. A panel the person
// is typing in is left alone (their next action answers with the fresh one anyway).
// At phone widths the Files and Context panels fold below the chat: each `.panel-fold`
// button shows or hides the panel it controls (the panel keeps `data-folded`, so its
// contents may be redrawn from the socket without unfolding it).
(() => {
  "use strict";

  const PHONE = window.matchMedia("(max-width: 700px)");
  function fold(button, folded) {
    const panel = document.getElementById(button.getAttribute("aria-controls"));
    if (!panel) return;
    panel.toggleAttribute("data-folded", folded);
    button.setAttribute("aria-expanded", String(!folded));
  }
  function foldAll() {
    if (!PHONE.matches) return;
    document.querySelectorAll(".panel-fold").forEach((button) => fold(button, true));
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", foldAll);
  else foldAll();
  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest(".panel-fold");
    if (button) fold(button, button.getAttribute("aria-expanded") === "true");
  });

  function refetch(element, url) {
    if (!element || !url || element.contains(document.activeElement)) return;
    htmx.ajax("GET", url, { target: element, swap: "outerHTML" });
  }

  // A panel redrawn from the socket (an out-of-band swap: another tab's change, or this
  // one's seen by the follower) keeps the keyboard focus where it was: the control that
  // had it is found again by its id.
  let focused = "";
  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const active = document.activeElement;
    const target = event.detail && event.detail.target;
    focused = active && active.id && target && target.contains(active) ? active.id : "";
  });
  document.addEventListener("htmx:oobAfterSwap", () => {
    const again = focused && document.getElementById(focused);
    focused = "";
    if (again && again !== document.activeElement) again.focus({ preventScroll: true });
  });

  document.addEventListener("htmx:wsAfterMessage", () => {
    const note = document.getElementById("panels-stale");
    if (!note || note.dataset.seen) return;
    note.dataset.seen = "1";
    const tools = document.getElementById("session-tools");
    if (note.dataset.tools && tools && tools.dataset.version !== note.dataset.tools) {
      refetch(tools, tools.dataset.url);
    }
    const chooser = document.getElementById("model-chooser");
    const shown = chooser && chooser.querySelector('input[name="shown"]');
    if (note.dataset.model && shown && shown.value !== note.dataset.model) {
      refetch(chooser, chooser.getAttribute("hx-post"));
    }
  });
})();
