// Edit and resend a message the person sent: its Edit button puts the text back in the
// message box, and sending then makes a new version of that message (the frame names it
// as "branch"): the old version and what followed it are set aside, kept, and ‹ › under
// the message switches back. Cancel, or Esc in the box, gives the box back what it held.
// No Edit while a reply streams (the stylesheet). Retry (newest exchange only) writes
// the reply again in place; the server sets it aside.
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

  function mineInView() {
    return Array.from(
      document.querySelectorAll("#conversation article.message.user[data-message-id]"),
    ).filter((article) => !article.closest("details.folded"));
  }

  function placeButton() {
    const mine = mineInView();
    const last = mine[mine.length - 1] || null;
    document.querySelectorAll("#conversation .edit-button").forEach((button) => {
      if (!mine.includes(button.closest("article"))) button.remove();
    });
    mine.forEach((article) => {
      const isLast = article === last;
      // No "send" in the names: the Send button is found by name.
      const label = isLast ? "Edit your last message" : "Edit this message";
      let button = article.querySelector(".edit-button");
      if (!button) {
        button = document.createElement("button");
        button.type = "button";
        button.className = "edit-button";
        button.textContent = "Edit";
        article.querySelector(".message-meta").append(button);
      }
      if (button.getAttribute("aria-label") === label) return;
      button.setAttribute("aria-label", label);
      button.title = isLast
        ? "Put this message back in the box: sending makes a new version of it and its reply"
        : "Put this message back in the box: sending makes a new version of it";
    });
  }

  function setEdited(id) {
    const form = document.getElementById("composer");
    form.querySelectorAll("input[name=branch]").forEach((f) => f.remove());
    if (!id) return;
    const field = document.createElement("input");
    field.type = "hidden";
    field.name = "branch";
    field.value = id;
    form.prepend(field);
  }

  function showNote(on, earlier) {
    const note = document.getElementById("edit-note");
    if (!note) return;
    note.hidden = !on;
    note.querySelectorAll("[data-edit-kind]").forEach((text) => {
      text.hidden = text.dataset.editKind !== (earlier ? "earlier" : "last");
    });
  }

  function start(article) {
    const box = input();
    const text = article.querySelector(".body .plain").innerText.trim();
    const earlier = article !== lastMine();
    editing = { id: article.dataset.messageId, before: editing ? editing.before : box.value };
    setEdited(editing.id);
    showNote(true, earlier);
    box.value = text;
    box.focus();
    box.setSelectionRange(text.length, text.length);
  }

  function finish(restore) {
    if (!editing) return;
    if (restore) input().value = editing.before;
    editing = null;
    setEdited("");
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
