// Copy buttons and starter suggestions on the chat page.
// Every finished user or assistant message gets a "Copy" button in its header, and every
// code block in a finished reply one of its own; they are added here (after page load and
// after each htmx or websocket swap) so that render.py's sanitized HTML stays as it is.
// Clicks are delegated from the document, so messages streamed in later work the same way.
// A message copies its raw Markdown when the page carries it (data-markdown), else the text
// as shown; the result is announced in one polite live region outside the conversation log.
// Starter buttons in an empty session only fill the message box: the person sends.
(function () {
  "use strict";
  const FEEDBACK_MS = 1500;
  const MESSAGES = "#conversation article.message.user:not(.system-event), " +
    "#conversation article.message.assistant:not(.status-streaming)";

  function copyButton(kind, name) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = `copy-button ${kind}`;
    button.setAttribute("aria-label", name);
    button.title = name;
    button.textContent = "Copy";
    return button;
  }

  function decorate() {
    document.querySelectorAll(MESSAGES).forEach((message) => {
      const meta = message.querySelector(":scope > .message-meta");
      if (meta && !meta.querySelector(".copy-message")) {
        meta.append(copyButton("copy-message", "Copy message"));
      }
      if (!message.classList.contains("assistant")) return;
      message.querySelectorAll(":scope > .body pre").forEach((pre) => {
        if (pre.parentElement.classList.contains("code-block")) return;
        const wrapper = document.createElement("div");
        wrapper.className = "code-block";
        pre.replaceWith(wrapper);
        wrapper.append(copyButton("copy-code", "Copy code"), pre);
      });
    });
  }

  function messageText(message) {
    if (message.dataset.markdown) return message.dataset.markdown;
    const body = message.querySelector(":scope > .body");
    if (!body) return "";
    if (message.classList.contains("user")) {
      const plain = body.querySelector(".plain");
      return (plain || body).innerText.trim();
    }
    // innerText keeps the line breaks as shown; the class hides the buttons, error notes and
    // Retry from it for this one synchronous read, so nothing flickers.
    body.classList.add("copy-reading");
    try {
      return body.innerText.trim();
    } finally {
      body.classList.remove("copy-reading");
    }
  }

  function codeText(button) {
    const pre = button.parentElement.querySelector("pre");
    return pre ? pre.textContent.replace(/\n$/, "") : "";
  }

  async function writeClipboard(text) {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return;
    }
    // Served over plain http to another machine the Clipboard API is absent.
    const scratch = document.createElement("textarea");
    scratch.value = text;
    scratch.setAttribute("readonly", "");
    scratch.className = "visually-hidden";
    document.body.append(scratch);
    scratch.select();
    const copied = document.execCommand("copy");
    scratch.remove();
    if (!copied) throw new Error("the browser refused to copy");
  }

  function announce(text) {
    let region = document.getElementById("copy-status");
    if (!region) {
      region = document.createElement("div");
      region.id = "copy-status";
      region.className = "visually-hidden";
      region.setAttribute("role", "status");
      region.setAttribute("aria-live", "polite");
      document.body.append(region);
    }
    region.textContent = text;
  }

  function showResult(button, label, announcement) {
    button.textContent = label;
    button.classList.toggle("copied", label === "Copied");
    announce(announcement);
    clearTimeout(button.copyTimer);
    button.copyTimer = setTimeout(() => {
      button.textContent = "Copy";
      button.classList.remove("copied");
    }, FEEDBACK_MS);
  }

  async function copyFrom(button) {
    const isCode = button.classList.contains("copy-code");
    const text = isCode ? codeText(button) : messageText(button.closest("article.message"));
    const what = isCode ? "Code" : "Message";
    try {
      await writeClipboard(text);
      showResult(button, "Copied", `${what} copied to the clipboard.`);
    } catch (error) {
      showResult(button, "Copy failed", `${what} could not be copied: ${error.message || error}`);
    }
  }

  function useStarter(button) {
    const box = document.getElementById("message-input");
    if (!box) return;
    box.value = button.dataset.starter;
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  }

  document.addEventListener("click", (event) => {
    const target = event.target.closest && event.target.closest(".copy-button, [data-starter]");
    if (!target) return;
    if (target.classList.contains("copy-button")) copyFrom(target);
    else useStarter(target);
  });

  document.addEventListener("DOMContentLoaded", decorate);
  document.addEventListener("htmx:afterSettle", decorate);
  document.addEventListener("htmx:wsAfterMessage", decorate);
})();
