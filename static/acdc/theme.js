// Light or dark, on every page. Loaded without `defer` in <head>, so <html data-theme> is set
// before the first paint (no flash of the wrong theme). The system's prefers-color-scheme
// decides until the person presses the header's "Dark mode" toggle; that choice is kept in
// localStorage and wins from then on, in every tab. theme.css does the colouring.
(function () {
  "use strict";
  const KEY = "acdc-theme";
  const system = window.matchMedia("(prefers-color-scheme: dark)");

  function stored() {
    try {
      const value = window.localStorage.getItem(KEY);
      return value === "dark" || value === "light" ? value : "";
    } catch (error) {
      return "";  // storage refused (private mode, policy): follow the system
    }
  }

  let choice = stored();

  function current() {
    return choice || (system.matches ? "dark" : "light");
  }

  function apply() {
    const theme = current();
    document.documentElement.dataset.theme = theme;
    const toggle = document.getElementById("theme-toggle");
    if (toggle) {
      toggle.setAttribute("aria-pressed", theme === "dark" ? "true" : "false");
      toggle.title = choice
        ? "Dark mode: your choice, remembered in this browser"
        : "Dark mode: following the system setting until you choose";
    }
  }

  function choose(theme) {
    choice = theme;
    try {
      window.localStorage.setItem(KEY, theme);
    } catch (error) {
      // Not remembered, but still applied to this page.
    }
    apply();
  }

  apply();
  system.addEventListener("change", apply);
  window.addEventListener("storage", (event) => {
    if (event.key !== KEY) return;
    choice = stored();
    apply();
  });
  document.addEventListener("DOMContentLoaded", apply);
  document.addEventListener("click", (event) => {
    const toggle = event.target.closest && event.target.closest("#theme-toggle");
    if (toggle) choose(current() === "dark" ? "light" : "dark");
  });
})();
