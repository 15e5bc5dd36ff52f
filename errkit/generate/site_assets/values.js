/* The gate of an entry page's "For your values" (`errors/RA105/?num_q_heads=12&num_kv_heads=8`, as
 * the exception's note links it). Loaded by a <script> tag right after the page's #errkit-values
 * box, before the message and the example are parsed, so what it decides is in the first paint:
 *
 *   - no value of the entry in the address: nothing more is loaded, the box stays hidden and the
 *     page shows the entry's example;
 *   - values: the box is shown (data-for-reader: values.css hides the entry's example at the top,
 *     whose numbers may be the reader's failing ones) and values.bundle.js (the runtime, the
 *     suggestions, the matcher's suggestions() and values_box.js, one file) is written in as a
 *     parser-blocking script, so the box is filled before the rest of the page is laid out: the
 *     page does not jump. After Material's instant navigation (the document already parsed) the
 *     bundle is appended instead, or, when it is already loaded, run at once.
 */
(function () {
  "use strict";
  var BASE = (document.currentScript && document.currentScript.src || "").replace(/[^/]*$/, "");
  var root = document.getElementById("errkit-values");
  if (!root || root.getAttribute("data-ready")) return;
  var params;
  try {
    params = JSON.parse(root.getAttribute("data-entry")).params || {};
  } catch (err) {
    root.setAttribute("data-ready", "failed");
    return;
  }
  var any = false;
  new URLSearchParams(window.location.search).forEach(function (text, name) {
    if (Object.prototype.hasOwnProperty.call(params, name)) any = true;
  });
  if (!any) {
    root.setAttribute("data-ready", "no-values");
    return;
  }
  // the bundle missing: the box hidden again, the entry's example shown
  function failed() {
    root.setAttribute("data-ready", "failed");
    root.removeAttribute("data-for-reader");
    root.hidden = true;
  }
  root.setAttribute("data-ready", "loading");
  root.setAttribute("data-for-reader", "");
  root.hidden = false;
  if (window.ErrkitValues) {
    window.ErrkitValues.init(root);
  } else if (document.readyState === "loading") {
    // while the page is parsed: a parser-inserted script, run before what follows the box is laid out
    window.ErrkitValuesFailed = failed;
    document.write('<script src="' + encodeURI(BASE + "values.bundle.js") + '" onerror="ErrkitValuesFailed()"><\/script>');
  } else {
    var script = document.createElement("script");
    script.src = BASE + "values.bundle.js";
    script.onerror = failed;
    document.head.appendChild(script);
  }
})();
