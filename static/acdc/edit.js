// Edit and resend the last message the person sent: its Edit button puts the text back in
// the message box, and sending then replaces that message and its reply (the frame names
// it as "replaces"; the server sets both aside, kept in History). Cancel, or Esc in the
// box, gives the box back what it held. No Edit while a reply streams (the stylesheet).
// Retry on the newest reply replaces the failed exchange the same way.
(function () {
  "use strict";
  const input = () => document.getElementById("message-input");
  let editing = null;  // { id, before }: the message edited, and what the box held

  function lastMine() {
    const mine = Array.from(
      document.querySelectorAll("#conversation article.message.user[data-message-id]"),
    ).filter((article) => !article.closest("details.folded"));
    return mine[mine.length - 1] || null;
  }

  function placeButton() {
    const last = lastMine();
    document.querySelectorAll("#conversation .edit-button").forEach((button) => {
      if (button.closest("article") !== last) button.remove();
    });
    if (!last || last.querySelector(".edit-button")) return;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "edit-button";
    button.textContent = "Edit";
    button.setAttribute("aria-label", "Edit your last message");  // no "send" in it: the Send button is found by name
    button.title = "Put this message back in the box: sending replaces it and its reply";
    last.querySelector(".message-meta").append(button);
  }

  function setReplaces(id) {
    const form = document.getElementById("composer");
    let field = form && form.querySelector("input[name=replaces]");
    if (!id) {
      if (field) field.remove();
      return;
    }
    if (!field) {
      field = document.createElement("input");
      field.type = "hidden";
      field.name = "replaces";
      form.prepend(field);
    }
    field.value = id;
  }

  function showNote(on) {
    const note = document.getElementById("edit-note");
    if (note) note.hidden = !on;
  }

  function start(article) {
    const box = input();
    const text = article.querySelector(".body .plain").innerText.trim();
    editing = { id: article.dataset.messageId, before: editing ? editing.before : box.value };
    setReplaces(editing.id);
    showNote(true);
    box.value = text;
    box.focus();
    box.setSelectionRange(text.length, text.length);
  }

  function finish(restore) {
    if (!editing) return;
    if (restore) input().value = editing.before;
    editing = null;
    setReplaces("");
    showNote(false);
  }

  document.addEventListener("click", (event) => {
    const edit = event.target.closest && event.target.closest(".edit-button");
    if (edit) start(edit.closest("article"));
    else if (event.target.closest && event.target.closest("[data-cancel-edit]")) {
      finish(true);
      input().focus();
    }
  });
  document.addEventListener("keydown", (event) => {
    if (editing && event.key === "Escape" && event.target === input()) finish(true);
  });
  document.addEventListener("htmx:wsAfterSend", (event) => {
    if (event.target && event.target.id === "composer") finish(false);
  });
  // Retry on the newest reply replaces the exchange that failed, as an edit would (an
  // older Retry sends the question again as a new message). Capture: before htmx sends.
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.classList.contains("retry-form")) return;
    const last = lastMine();
    const reply = form.closest("article");
    const newest = last && reply && reply.dataset.turn && reply.dataset.turn === last.dataset.turn;
    let field = form.querySelector("input[name=replaces]");
    if (newest && !field) {
      field = document.createElement("input");
      field.type = "hidden";
      field.name = "replaces";
      form.append(field);
    }
    if (newest) field.value = last.dataset.messageId;
    else if (field) field.remove();
  }, true);

  document.addEventListener("DOMContentLoaded", placeButton);
  document.addEventListener("htmx:wsAfterMessage", placeButton);
  document.addEventListener("htmx:afterSettle", placeButton);
})();
