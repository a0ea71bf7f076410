// The Files panel's width: drag its right edge, or focus the edge and use the arrow keys
// (Home and End for the narrowest and widest). The width is remembered in localStorage
// and applied as the --files-width custom property of .workspace.
(function () {
  "use strict";
  const KEY = "acdc.filesWidth";
  const MIN = 180;
  const STEP = 16;
  const widest = () => Math.max(MIN, Math.min(720, Math.round(window.innerWidth * 0.5)));
  const clamp = (px) => Math.max(MIN, Math.min(widest(), Math.round(px)));

  function apply(px, save) {
    const workspace = document.querySelector(".workspace");
    const handle = document.getElementById("files-resizer");
    if (!workspace || !handle) return;
    const width = clamp(px);
    workspace.style.setProperty("--files-width", `${width}px`);
    handle.setAttribute("aria-valuenow", String(width));
    handle.setAttribute("aria-valuemax", String(widest()));
    if (save) {
      try { localStorage.setItem(KEY, String(width)); } catch (error) { /* private mode: not kept */ }
    }
  }

  function current() {
    const panel = document.getElementById("files-panel");
    return panel ? panel.getBoundingClientRect().width : MIN;
  }

  document.addEventListener("pointerdown", (event) => {
    const handle = event.target.closest && event.target.closest("#files-resizer");
    if (!handle || event.button !== 0) return;
    event.preventDefault();
    const panel = document.getElementById("files-panel");
    const { left, right } = panel.getBoundingClientRect();
    const grab = right - event.clientX;  // where on the edge it was taken: it stays under the pointer
    handle.setPointerCapture(event.pointerId);
    handle.classList.add("dragging");
    const move = (e) => apply(e.clientX - left + grab, false);
    const end = (e) => {
      handle.removeEventListener("pointermove", move);
      handle.classList.remove("dragging");
      apply(e.clientX - left + grab, true);
    };
    handle.addEventListener("pointermove", move);
    handle.addEventListener("pointerup", end, { once: true });
    handle.addEventListener("pointercancel", end, { once: true });
  });

  document.addEventListener("keydown", (event) => {
    if (!event.target || event.target.id !== "files-resizer") return;
    const moves = { ArrowLeft: -STEP, ArrowRight: STEP };
    let width = null;
    if (event.key in moves) width = current() + moves[event.key];
    else if (event.key === "Home") width = MIN;
    else if (event.key === "End") width = widest();
    if (width === null) return;
    event.preventDefault();
    apply(width, true);
  });

  document.addEventListener("DOMContentLoaded", () => {
    let saved = null;
    try { saved = Number(localStorage.getItem(KEY)); } catch (error) { saved = null; }
    apply(saved || current(), false);
  });
})();
