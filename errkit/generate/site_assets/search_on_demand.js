// Material's search fetches the whole search index (search/search_index.json, most of a page's
// bytes) as soon as any page loads; this holds that request back until the reader reaches for
// search: the search field focused or its label clicked (the "/", "s" and "f" shortcuts focus the
// field). An address that opens search itself (?q=...) sends it at once. Loaded before Material's
// bundle (overrides/main.html), which requests the index with XMLHttpRequest.
(function () {
  "use strict";
  var INDEX = /\/search\/search_index\.json(?:[?#]|$)/;
  if (/[?&]q=/.test(location.search) || typeof XMLHttpRequest === "undefined") return;
  var open = XMLHttpRequest.prototype.open;
  var send = XMLHttpRequest.prototype.send;
  var held = [];
  var released = false;

  function release() {
    if (released) return;
    released = true;
    document.removeEventListener("focusin", onFocus, true);
    document.removeEventListener("click", onClick, true);
    held.splice(0).forEach(function (call) { send.apply(call.xhr, call.args); });
  }
  function onFocus(event) {
    if (event.target && event.target.matches && event.target.matches("input[data-md-component=search-query]")) release();
  }
  function onClick(event) {
    if (event.target && event.target.closest && event.target.closest("label[for=__search], .md-search")) release();
  }

  XMLHttpRequest.prototype.open = function (method, url) {
    this.errkitSearchIndex = INDEX.test(String(url));
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    if (this.errkitSearchIndex && !released) {
      held.push({ xhr: this, args: arguments });
      return undefined;
    }
    return send.apply(this, arguments);
  };
  document.addEventListener("focusin", onFocus, true);
  document.addEventListener("click", onClick, true);
})();
