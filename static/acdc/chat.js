// What htmx does not cover on the chat page: keyboard shortcuts, clearing the box after
// a send (and filling it again if the server refuses the message), refusing a message too
// large to send before it leaves (it stays in the box, with the reason), recalling the last
// message, keeping the newest message in view while the user has not scrolled up, and
// pasting images into the composer (uploaded to the same endpoint as "Attach image").
// While a reply streams the input row's button is Stop (the stylesheet swaps it for Send
// while the server keeps #stop-button enabled): nothing typed meanwhile is sent or lost.
(function () {
  "use strict";
  const conversation = () => document.getElementById("conversation");
  const input = () => document.getElementById("message-input");
  let followTail = true;
  let sendWhenConnected = false;
  let lastSent = "";  // what Up-arrow in an empty box recalls
  let unconfirmed = "";  // sent, not yet shown back by the server as the user's message
  let ownReply = false;  // the reply streaming now answers a message sent from this tab

  function streaming() {
    const stop = document.getElementById("stop-button");
    return Boolean(stop && !stop.disabled);
  }

  document.addEventListener("keydown", (event) => {
    if (event.target === input() && event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      const send = document.getElementById("send-button");
      if (!input().value.trim()) return;
      if (streaming()) {
        refuseWhileStreaming();
        return;
      }
      if (send && send.title.startsWith("Compacting")) return;
      if (send && !send.disabled) {
        document.getElementById("composer").requestSubmit();
      } else {
        // Typed before the socket opened (or while it reconnects): send once it is open.
        sendWhenConnected = true;
        const status = document.getElementById("status-line");
        if (status) status.textContent = "Connecting… the message is sent as soon as it can be.";
      }
    } else if (event.target === input() && event.key === "ArrowUp" && input().value === "" && !event.isComposing) {
      const recalled = lastSent || lastUserMessage();
      if (recalled) {
        event.preventDefault();
        putInBox(recalled);
      }
    } else if (event.key === "Escape" && streaming()) {
      document.getElementById("stop-button").click();
    }
  });

  // A send while a reply streams stays in the box, and the tab says why (the server would
  // refuse it the same way): another tab's reply looks the same as this tab's otherwise.
  function refuseWhileStreaming() {
    const status = document.getElementById("status-line");
    const where = ownReply ? "" : " in another tab";
    if (status) status.textContent = `A reply is still being written${where}; wait for it or press Stop.`;
  }

  function lastUserMessage() {
    const mine = document.querySelectorAll("#conversation article.message.user .body .plain");
    return mine.length ? mine[mine.length - 1].innerText.trim() : "";
  }

  function putInBox(text) {
    const box = input();
    box.value = text;
    box.focus();
    box.setSelectionRange(text.length, text.length);
  }

  // A message never leaves while a reply streams, whatever asked for it.
  document.addEventListener("htmx:wsConfigSend", (event) => {
    if (event.target && event.target.id === "composer" && streaming()) {
      event.preventDefault();
      refuseWhileStreaming();
      if (event.detail.triggeringEvent) event.detail.triggeringEvent.preventDefault();
    }
  });

  document.addEventListener("htmx:wsAfterSend", (event) => {
    if (event.target && event.target.id === "composer") {
      lastSent = unconfirmed = input().value;
      input().value = "";
      clearAttachments();
      composerAlert("");
      followTail = true;
    }
  });

  // The server puts a sent message back (an error frame of no turn, or a socket closed
  // because the frame was too large): what was typed since stays after it.
  function putBackUnconfirmed() {
    const typed = input().value.trim();
    putInBox(typed ? `${unconfirmed}\n${typed}` : unconfirmed);
    unconfirmed = "";
  }

  // -- the size limits ----------------------------------------------------------------------
  // The server's limits as the page was drawn (acdc.settings): characters in a message
  // (ACDC_MAX_MESSAGE_CHARS) and bytes in the frame that carries it (ACDC_MAX_FRAME_BYTES).
  // A message over either never leaves: it stays in the box and the composer says why. A
  // frame Daphne still refuses (code 1009: the server restarted with smaller limits since
  // this page was drawn) comes back to the box, and the socket connects again.
  const MESSAGE_TOO_BIG = 1009;
  const counted = (n) => n.toLocaleString("en-US");

  function composerAlert(text) {
    const alert = document.getElementById("composer-alert");
    if (!alert) return;
    alert.textContent = text;
    alert.hidden = !text;
  }

  function tooLarge(detail) {
    const form = document.getElementById("composer");
    const text = input().value.trim();
    const most = Number(form.dataset.maxMessageChars || 0);
    // UTF-16 units are never fewer than characters: count those only when it matters.
    const chars = most && text.length > most ? Array.from(text).length : 0;
    if (chars > most) {
      return `The message is too long to send (${counted(chars)} characters; at most ${counted(most)}). It is still in the box.`;
    }
    const limit = Number(form.dataset.maxFrameBytes || 0);
    const frame = Object.assign({}, detail.parameters);  // as htmx's ws extension sends it
    if (detail.headers) frame.HEADERS = detail.headers;
    const size = limit ? new TextEncoder().encode(JSON.stringify(frame)).length : 0;
    if (size > limit) {
      const kB = (bytes) => counted(Math.floor(bytes / 1000));
      return `The message is too large to send (${kB(size)} kB; at most ${kB(limit)} kB). It is still in the box.`;
    }
    return "";
  }

  document.addEventListener("htmx:wsConfigSend", (event) => {
    if (!event.target || event.target.id !== "composer" || event.defaultPrevented) return;
    const refusal = tooLarge(event.detail);
    if (!refusal) return;
    event.preventDefault();
    if (event.detail.triggeringEvent) event.detail.triggeringEvent.preventDefault();
    composerAlert(refusal);
  });

  document.addEventListener("input", (event) => {
    if (event.target === input()) composerAlert("");
  });

  document.addEventListener("htmx:wsClose", (event) => {
    const closed = event.detail && event.detail.event;
    if (!closed || closed.code !== MESSAGE_TOO_BIG) return;
    if (unconfirmed) putBackUnconfirmed();
    composerAlert("The server refused the message as too large and closed the connection; the message is back in the box.");
    event.detail.socketWrapper.reconnect();  // htmx reconnects after 1006 and 1011-1013 only
  });

  // -- images: the pending tray ---------------------------------------------------------
  function clearAttachments() {
    const chips = document.getElementById("attachment-chips");
    const errors = document.getElementById("attachment-errors");
    if (chips) chips.replaceChildren();
    if (errors) errors.replaceChildren();
  }

  function pendingImages() {
    return Array.from(document.querySelectorAll("#composer input[name=image]"), (el) => el.value);
  }

  // A refused upload answers 400 with a fragment that explains why: show it in the tray.
  document.addEventListener("htmx:beforeSwap", (event) => {
    const target = event.detail.target;
    if (event.detail.xhr.status === 400 && target && target.id === "attachment-chips") {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  // A proposal answered twice, or gone, answers 409/404/400 with its card saying so.
  document.addEventListener("htmx:beforeSwap", (event) => {
    const target = event.detail.target;
    if ([400, 404, 409].includes(event.detail.xhr.status) && target && target.classList.contains("proposal")) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  document.addEventListener("htmx:afterRequest", (event) => {
    if (event.target && event.target.id === "attach-input") event.target.value = "";
  });

  document.addEventListener("click", (event) => {
    const remove = event.target.closest && event.target.closest("[data-remove-attachment]");
    if (remove) {
      remove.closest(".attachment-chip").remove();
      input().focus();
    }
  });

  // A button that stands for another (the HUD's "Compact now" for the session tools' one):
  // a listener, as the Content-Security-Policy runs no inline onclick.
  document.addEventListener("click", (event) => {
    const proxy = event.target.closest && event.target.closest("[data-clicks]");
    const button = proxy && document.getElementById(proxy.dataset.clicks);
    if (button) button.click();
  });

  document.addEventListener("paste", (event) => {
    if (event.target !== input() || !event.clipboardData) return;
    const files = Array.from(event.clipboardData.files || []).filter((f) => f.type.startsWith("image/"));
    if (!files.length) return;
    event.preventDefault();
    uploadPasted(files);
  });

  async function uploadPasted(files) {
    const form = document.getElementById("attach-form");
    const body = new FormData();
    files.forEach((file, n) => body.append("file", file, file.name || `pasted-${n + 1}.png`));
    pendingImages().forEach((sha) => body.append("image", sha));
    const headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
    headers["HX-Request"] = "true";
    try {
      const response = await fetch(form.dataset.uploadUrl, { method: "POST", body, headers });
      htmx.swap("#attachment-chips", await response.text(), { swapStyle: "beforeend" });
    } catch (error) {
      const errors = document.getElementById("attachment-errors");
      if (errors) errors.textContent = "The image could not be uploaded: " + error;
    }
  }

  document.addEventListener("scroll", () => {
    const log = conversation();
    if (log) followTail = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  }, true);

  document.addEventListener("htmx:wsAfterMessage", () => {
    const log = conversation();
    if (log && followTail) log.scrollTop = log.scrollHeight;
  });

  // Send works only over an open socket: until then (and while reconnecting) it is disabled,
  // so a message typed early is never lost to a plain form submission.
  function setConnected(connected) {
    const send = document.getElementById("send-button");
    const status = document.getElementById("status-line");
    if (send) {
      send.disabled = !connected;
      send.title = connected ? "Send (Enter)" : "Connecting…";
    }
    const told = status && status.dataset.cause;  // the probe's line stays until it opens
    if (status && connected && told) delete status.dataset.cause;
    if (status && (connected ? told || status.textContent.trim().startsWith("Connect") : !told) && !sendWhenConnected) {
      status.textContent = connected ? "Connected." : "Connection lost, reconnecting…";
    }
  }

  // A socket refused or closed by the server gives the page no reason: ask the server
  // whether it reaches its live channel (Redis); while it does not, the status line says
  // so in the server's words until a try of the socket opens.
  let socketOpen = false;
  async function whyClosed() {
    const workspace = document.querySelector("[data-live-url]");
    const status = document.getElementById("status-line");
    if (!workspace || !status) return;
    let line = "";
    try {
      const answer = await fetch(workspace.dataset.liveUrl, { headers: { "HX-Request": "true" } });
      if (answer.status === 503) line = (await answer.text()).trim();
    } catch (error) {
      line = "The server is not answering; the page reconnects when it is back.";
    }
    if (socketOpen) return;  // a try opened meanwhile
    if (line) {
      status.dataset.cause = "live";
      status.textContent = line;
    } else if (status.dataset.cause) {
      delete status.dataset.cause;
      status.textContent = "Connection lost, reconnecting…";
    }
  }
  document.addEventListener("htmx:wsOpen", () => {
    socketOpen = true;
    setConnected(true);
    if (sendWhenConnected && input() && input().value.trim() && !streaming()) {
      sendWhenConnected = false;
      const status = document.getElementById("status-line");
      if (status) status.textContent = "Connected.";  // not "Connecting…" for the whole reply
      document.getElementById("composer").requestSubmit();
    }
  });
  document.addEventListener("htmx:wsClose", (event) => {
    socketOpen = false;
    setConnected(false);
    const closed = event.detail && event.detail.event;
    if (closed && [1006, 1011, 1012, 1013].includes(closed.code)) whyClosed();
  });

  // While the history is being compacted the composer waits: the next message would be
  // answered from a history that is about to change.
  document.addEventListener("htmx:wsAfterMessage", () => {
    const status = document.getElementById("compaction-status");
    const busy = status && status.dataset.state === "start";
    const send = document.getElementById("send-button");
    const box = input();
    if (box) box.readOnly = busy;
    if (send && busy) {
      send.disabled = true;
      send.title = "Compacting the history…";
    } else if (send && send.title.startsWith("Compacting")) {
      send.disabled = false;
      send.title = "Send (Enter)";
    }
  });

  // The sent text is kept until the server shows it as the user's message; a refusal
  // (an error frame of no turn, e.g. another tab's reply started first) puts it back.
  document.addEventListener("htmx:wsAfterMessage", () => {
    if (!streaming()) ownReply = false;
  });
  document.addEventListener("htmx:wsAfterMessage", (event) => {
    if (!unconfirmed || typeof event.detail.message !== "string") return;
    const frame = document.createElement("template");
    frame.innerHTML = event.detail.message;
    const shown = Array.from(frame.content.querySelectorAll("article.message.user .plain"));
    if (shown.some((p) => sameText(p.textContent, unconfirmed))) {
      unconfirmed = "";
      ownReply = true;
    } else if (frame.content.querySelector('.notice.error[data-turn=""]')) {
      putBackUnconfirmed();
    }
  });

  // The server shows line breaks as <br>: compare the words, not the spacing.
  const sameText = (a, b) => a.replace(/\s+/g, "") === b.replace(/\s+/g, "");

  // The tab's title follows the session's, which the first message names (the server
  // swaps #session-title in).
  document.addEventListener("htmx:wsAfterMessage", () => {
    const title = document.getElementById("session-title");
    const repo = document.querySelector("header .repo");
    if (!title || !title.textContent.trim()) return;
    const wanted = [title.textContent.trim(), repo ? repo.textContent.trim() : "", "acdc"].filter(Boolean).join(" · ");
    if (document.title !== wanted) document.title = wanted;
  });

  // A provider retry counts down in the page: the frame says how many seconds from now, the
  // tab turns that into its own deadline (no clock shared with the server) and ticks.
  let retryTimer = null;
  function tickRetries() {
    const notes = document.querySelectorAll(".retry-note[data-retry-seconds]:not([hidden])");
    for (const note of notes) {
      if (!note.dataset.deadline) {
        note.dataset.deadline = String(Date.now() + Number(note.dataset.retrySeconds) * 1000);
      }
      const left = Math.ceil((Number(note.dataset.deadline) - Date.now()) / 1000);
      const countdown = note.querySelector(".retry-countdown");
      if (countdown) countdown.textContent = left > 0 ? `in ${left} s` : "now";
    }
    if (!notes.length && retryTimer) {
      clearInterval(retryTimer);
      retryTimer = null;
    } else if (notes.length && !retryTimer) {
      retryTimer = setInterval(tickRetries, 1000);
    }
  }
  document.addEventListener("htmx:wsAfterMessage", tickRetries);

  document.addEventListener("DOMContentLoaded", () => {
    const log = conversation();
    if (log) log.scrollTop = log.scrollHeight;
    const box = input();
    if (!box) return;
    // Without preventScroll a narrow window would open scrolled past the header to the box.
    box.focus({ preventScroll: true });
  });
})();
