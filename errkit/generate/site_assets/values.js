/* The gate of an entry page's "For your values" (`errors/RA105/?num_q_heads=12&num_kv_heads=8`, as
 * the exception's note links it). Loaded by a <script> tag right after the page's #errkit-values
 * box, before the message and the example are parsed, so what it decides is in the first paint:
 *
 *   - no value of the entry in the address: nothing more is loaded, the box stays hidden and the
 *     page shows the entry's example;
 *   - values: the box is shown (data-for-reader: values.css hides the entry's example at the top,
 *     whose numbers may be the reader's failing ones) and two parser-blocking scripts are written
 *     in: the entry's part of suggest.js (suggest/<code>.js, its fixes' compiled expressions) and
 *     values.bundle.js (the runtime, the matcher's suggestions() and values_box.js, one file), so
 *     the box is filled before the rest of the page is laid out: the page does not jump. After
 *     Material's instant navigation (the document already parsed) what is missing is appended in
 *     order instead, and the box filled once it has run.
 *
 * The page loads this file a second time, with data-fold, right after its fixes: then it only asks
 * values_box.js to fold each fix's example under a label (no inline script: an entry page's
 * article holds none, tests/site/test_site_payloads.py).
 */
(function () {
  "use strict";
  var tag = document.currentScript;
  // the page's second tag, right after its fixes (already loaded: run from the cache): each fix's
  // example folded now, before the fixes are laid out, when the box was filled (values_box.js)
  if (tag && tag.hasAttribute("data-fold")) {
    if (window.ErrkitValues) window.ErrkitValues.fold();
    return;
  }
  var BASE = (tag && tag.src || "").replace(/[^/]*$/, "");
  var root = document.getElementById("errkit-values");
  if (!root || root.getAttribute("data-ready")) return;
  var data;
  try {
    data = JSON.parse(root.getAttribute("data-entry"));
  } catch (err) {
    root.setAttribute("data-ready", "failed");
    return;
  }
  var params = data.params || {};
  var any = false;
  new URLSearchParams(window.location.search).forEach(function (text, name) {
    if (Object.prototype.hasOwnProperty.call(params, name)) any = true;
  });
  if (!any) {
    root.setAttribute("data-ready", "no-values");
    return;
  }
  // a script missing: the box hidden again, the entry's example shown
  function failed() {
    root.setAttribute("data-ready", "failed");
    root.removeAttribute("data-for-reader");
    root.hidden = true;
  }
  function has(table, key) { return !!table && Object.prototype.hasOwnProperty.call(table, key); }
  root.setAttribute("data-ready", "loading");
  root.setAttribute("data-for-reader", "");
  root.hidden = false;
  var missing = [];
  if (!window.ErrkitSuggest && !has(window.ErrkitSuggestParts, data.code)) missing.push("suggest/" + data.code + ".js");
  if (!window.ErrkitValues) missing.push("values.bundle.js");
  if (!missing.length) {
    window.ErrkitValues.init(root);
  } else if (document.readyState === "loading") {
    // while the page is parsed: parser-inserted scripts, run in order before what follows the box
    // is laid out; the bundle fills the box when it runs
    window.ErrkitValuesFailed = failed;
    document.write(missing.map(function (name) {
      return '<script src="' + encodeURI(BASE + name) + '" onerror="ErrkitValuesFailed()"><\/script>';
    }).join(""));
  } else {
    missing.forEach(function (name, n) {
      var script = document.createElement("script");
      script.src = BASE + name;
      script.async = false; // run in the order appended
      script.onerror = failed;
      if (n === missing.length - 1) script.onload = function () { if (window.ErrkitValues) window.ErrkitValues.init(root); };
      document.head.appendChild(script);
    });
  }
})();
