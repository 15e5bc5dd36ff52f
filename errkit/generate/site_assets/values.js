/* An entry page with the reader's values in its address (`errors/RA105/?num_q_heads=12&num_kv_heads=8`,
 * as the exception's note links it): "For your values", each fix with what it suggests for them.
 * The same code as the paste page and `errkit explain`: values read as match.js reads them from a
 * message (runtime.js parseValue, by the param's type), suggestions computed by match.js
 * suggestions() over suggest.js. The entry's params and fixes are in the page itself
 * (#errkit-values data-entry, generated): no index is loaded. Every text is put in the page with
 * textContent, never parsed as HTML.
 *
 * Loaded by a <script> tag at the end of each entry page (Material's instant navigation runs it
 * again on every visit); runtime.js, suggest.js, match.js and dom.js are loaded only when the address
 * has values, from the folder this script came from.
 */
(function () {
  "use strict";
  var R, M, el, prose;
  var BASE = (document.currentScript && document.currentScript.src || "").replace(/[^/]*$/, "");
  var HELPERS = [["ErrkitRuntime", "runtime.js"], ["ErrkitSuggest", "suggest.js"], ["ErrkitMatch", "match.js"],
                 ["ErrkitDom", "dom.js"]];

  // each helper once per document, in order (suggest.js and match.js use runtime.js)
  function loadHelpers(done) {
    var missing = HELPERS.filter(function (h) { return !window[h[0]]; });
    if (!missing.length) return done();
    var script = document.createElement("script");
    script.src = BASE + missing[0][1];
    script.onload = function () { loadHelpers(done); };
    script.onerror = function () { done(new Error("cannot load " + script.src)); };
    document.head.appendChild(script);
  }

  // The params of the entry read from a query string; names that are not its params, and values
  // that do not read as their type, are reported rather than used.
  function readValues(search, params) {
    var values = {}, unread = [], names = [];
    new URLSearchParams(search).forEach(function (text, name) {
      if (!Object.prototype.hasOwnProperty.call(params, name)) {
        unread.push(name);
        return;
      }
      try {
        values[name] = R.parseValue(params[name].type, text);
        if (names.indexOf(name) < 0) names.push(name);
      } catch (err) {
        unread.push(name);
      }
    });
    return { values: values, names: names, unread: unread };
  }

  function render(root, data, read) {
    var index = { entries: {} };
    index.entries[data.code] = data;
    root.textContent = "";
    root.appendChild(el("h2", { id: "for-your-values", className: "errkit-values__title", text: "For your values" }));
    var shown = el("p", { className: "errkit-values__given" }, ["From the address: "]);
    read.names.forEach(function (name, n) {
      if (n) shown.appendChild(document.createTextNode(", "));
      shown.appendChild(el("code", { "data-param": name, text: name + "=" + R.show(read.values[name]) }));
    });
    root.appendChild(shown);
    if (read.unread.length) {
      root.appendChild(el("p", { className: "errkit-values__unread", text: "Not read (not a value of " + data.code +
        ", or not a value of its type): " + read.unread.join(", ") }));
    }
    var fixes = el("ol", { className: "errkit-fixes errkit-values__fixes" });
    var any = false;
    var meter = new R.Meter(); // the bounds of the page's suggestions, all together, as of one answer
    data.fixes.forEach(function (fix, n) {
      var scope = [];
      if (fix.alternative) scope.push(el("em", { text: "Alternative, outside this library: " }));
      if (fix.kernel) scope.push(el("em", { text: "For " + ((data.kernels || {})[fix.kernel] || fix.kernel) + ": " }));
      var item = el("li", { "data-fix": String(n + 1) }, scope.concat(prose(fix.summary)));
      var computed = M.suggestions(index, data.code, n, read.values, meter).filter(function (s) { return "value" in s || "not_computed" in s; });
      if (computed.length) {
        any = true;
        var list = el("ul", { className: "errkit-suggestions" });
        computed.forEach(function (s) {
          var none = s.value === null || (Array.isArray(s.value) && !s.value.length);
          list.appendChild(el("li", { className: "errkit-suggestion", "data-label": s.label }, "not_computed" in s ? [s.label + ": not computed: " + s.not_computed]
            : none ? [s.label + ": none satisfies every constraint"]
            : [s.label + ": ", el("code", { className: "errkit-value", text: R.show(s.value) })]));
        });
        item.appendChild(list);
      }
      fixes.appendChild(item);
    });
    if (!any) {
      root.appendChild(el("p", { className: "errkit-values__none", text: "No fix of " + data.code +
        " computes a value from these; the fixes below say what to change." }));
    }
    root.appendChild(fixes);
    root.hidden = false;
  }

  function init() {
    var root = document.getElementById("errkit-values");
    if (!root || root.getAttribute("data-ready")) return;
    var data;
    try {
      data = JSON.parse(root.getAttribute("data-entry"));
    } catch (err) {
      root.setAttribute("data-ready", "failed");
      return;
    }
    if (!new URLSearchParams(window.location.search).toString()) {
      root.setAttribute("data-ready", "no-values");
      return;
    }
    root.setAttribute("data-ready", "loading");
    loadHelpers(function (err) {
      if (err) {
        root.setAttribute("data-ready", "failed");
        return;
      }
      R = window.ErrkitRuntime;
      M = window.ErrkitMatch;
      el = window.ErrkitDom.el;
      prose = window.ErrkitDom.prose;
      var read = readValues(window.location.search, data.params || {});
      if (!read.names.length) {
        root.setAttribute("data-ready", "no-values");
        return;
      }
      render(root, data, read);
      root.setAttribute("data-ready", "yes");
    });
  }

  // This script sits at the end of the page's content: the element is there (on a first load, and
  // after each instant navigation, which runs the page's scripts again).
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
