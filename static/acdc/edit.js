// Edit and resend the last message the person sent: its Edit button puts the text back in
// the message box, and sending then replaces that message and its reply (the frame names
// it as "replaces"; the server sets both aside, kept in History). Cancel, or Esc in the
// box, gives the box back what it held. No Edit while a reply streams (the stylesheet).
// Retry (newest exchange only) writes the reply again in place; the server sets it aside.
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
  // Retry is offered on the newest exchange only (the server refuses any other): a reply
  // that failed before a newer message was sent loses its Retry, as its Edit went.
  function dropStaleRetries() {
    const last = lastMine();
    document.querySelectorAll("#conversation .retry-form").forEach((form) => {
      const reply = form.closest("article");
      if (!last || !reply || reply.dataset.turn !== last.dataset.turn) form.remove();
    });
  }

  function refresh() {
    placeButton();
    dropStaleRetries();
  }

  document.addEventListener("DOMContentLoaded", refresh);
  document.addEventListener("htmx:wsAfterMessage", refresh);
  document.addEventListener("htmx:afterSettle", refresh);
})();
