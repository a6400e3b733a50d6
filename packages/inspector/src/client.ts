/**
 * The page's one script, served as `app.js` from the inspector's own path (the page's CSP allows scripts
 * from its origin only): it lists lifecycle events as they happen (Server-Sent Events from `events`, with
 * ids and sizes: a reload shows the content) and sends restores (a POST with a custom header, which a
 * cross-site form cannot send).
 */
export const CLIENT_SCRIPT = `"use strict";
(function () {
  var base = document.body.getAttribute("data-base") || "";
  var list = document.getElementById("live-events");
  var status = document.getElementById("live-status");
  function describe(event) {
    var parts = [event.type];
    if (event.sessionId) parts.push("session " + String(event.sessionId).slice(0, 8));
    if (event.label) parts.push(event.label + (event.key ? "/" + event.key : ""));
    if (event.action) parts.push(event.action);
    if (event.source) parts.push("by " + (typeof event.source === "string" ? event.source : event.source.name));
    if (event.version !== undefined) parts.push("v" + event.version);
    if (event.hash) parts.push("sha256 " + String(event.hash).slice(0, 12));
    if (event.labels) parts.push("blocks " + event.labels.join(", "));
    if (event.tokensBefore !== undefined) parts.push(event.messages + " messages, " + event.tokensBefore + " → " + event.tokensAfter + " tokens");
    if (event.name) parts.push(event.name);
    if (event.messageId) parts.push("message " + event.messageId + (event.role ? " (" + event.role + ")" : ""));
    if (event.compactionId) parts.push("overlay " + event.fromMessageId + " … " + event.toMessageId);
    if (event.messageIds) parts.push(event.messageIds.length + " messages");
    if (event.bytes !== undefined) parts.push(size(event.bytes));
    return parts.join(" · ");
  }
  // Events carry sizes, not bodies: a reload shows the content.
  function size(bytes) {
    return bytes < 1024 ? bytes + " B" : bytes < 1048576 ? (bytes / 1024).toFixed(1) + " KiB" : (bytes / 1048576).toFixed(1) + " MiB";
  }
  if (list && status && typeof EventSource === "function") {
    var source = new EventSource(base + "/events");
    source.addEventListener("open", function () { status.textContent = "Connected: events appear here as they happen. Reload to see their effect."; });
    source.addEventListener("error", function () { status.textContent = "Disconnected; retrying…"; });
    source.addEventListener("lifecycle", function (message) {
      var event = JSON.parse(message.data);
      var item = document.createElement("li");
      item.setAttribute("data-type", event.type);
      item.textContent = new Date().toISOString().slice(11, 19) + "  " + describe(event);
      list.insertBefore(item, list.firstChild);
    });
  }
  document.addEventListener("click", function (click) {
    var button = click.target && click.target.closest ? click.target.closest("button.restore") : null;
    if (!button) return;
    button.disabled = true;
    fetch(base + "/restore", {
      method: "POST",
      headers: { "content-type": "application/json", "x-contextblocks-inspector": "restore" },
      body: JSON.stringify({ label: button.getAttribute("data-label"), version: Number(button.getAttribute("data-version")) }),
    }).then(function (response) {
      if (response.ok) location.reload();
      else response.text().then(function (text) { button.disabled = false; alert("Restore failed: " + text); });
    });
  });
})();
`;
