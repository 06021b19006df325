// The board's live updates: on each "change" from the server's event stream, ask for what the page polls for at
// once (the htmx element's "bee:change" trigger). The poll stays as the fallback: if the stream cannot be opened or
// drops, the browser retries it and the page still refreshes every few seconds.
(function () {
  var script = document.currentScript;
  var url = script && script.getAttribute("data-events");
  if (!url || typeof EventSource === "undefined") return;
  var source = new EventSource(url);
  source.addEventListener("change", function () {
    document.body.dispatchEvent(new CustomEvent("bee:change"));
  });
})();
