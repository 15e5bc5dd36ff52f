/* An entry page's "For your values": each fix with what it suggests for the values in the address
 * (`errors/RA105/?num_q_heads=12&num_kv_heads=8`). The same code as the paste page and `errkit
 * explain`: values read as match.js reads them from a message (runtime.js parseValue, by the
 * param's type), suggestions computed by match.js suggestions() over the entry's part of
 * suggest.js. The entry's params and fixes are in the page itself (#errkit-values data-entry,
 * generated): no index is loaded. Every text is put in the page with textContent, never parsed as
 * HTML.
 *
 * The last part of values.bundle.js (after runtime.js, match.js and dom.js), which the gate
 * (values.js) loads, after the entry's part of suggest.js, only when the address holds a value of
 * the entry. The box is filled at once (the bundle runs while the page is parsed: nothing below it
 * is laid out yet); once the fixes are parsed (values.js, data-fold, calls fold()), each fix's
 * worked example under "Fixes" is folded under a label saying whose values it uses, after the
 * suggestions for the reader's values.
 */
(function () {
  "use strict";
  var R = window.ErrkitRuntime, M = window.ErrkitMatch, el = window.ErrkitDom.el, prose = window.ErrkitDom.prose;
  var ASCII_NUMBER = /^[\x00-\x7f]*$/;

  // Why a value of the address is not read, or null when it reads as its type.
  function unreadable(type, text) {
    if (!ASCII_NUMBER.test(text) && /^(int|float|shape|bytes|bool)$/.test(type)) {
      return "not ASCII digits (write it as 0-9)";
    }
    var value;
    try {
      value = R.parseValue(type, text);
    } catch (err) {
      return "not a value of type " + type;
    }
    return value === undefined ? "not a value of type " + type : null;
  }

  // The params of the entry read from a query string; names that are not its params, and values
  // that do not read as their type, are reported with the reason rather than used.
  function readValues(search, params, code) {
    var values = {}, unread = [], names = [];
    new URLSearchParams(search).forEach(function (text, name) {
      if (!Object.prototype.hasOwnProperty.call(params, name)) {
        unread.push({ name: name, text: text, why: "not a value of " + code });
        return;
      }
      var why = unreadable(params[name].type, text);
      if (why) {
        unread.push({ name: name, text: text, why: why });
        return;
      }
      values[name] = R.parseValue(params[name].type, text);
      if (names.indexOf(name) < 0) names.push(name);
    });
    return { values: values, names: names, unread: unread, lists: {} };
  }

  // A size as bytes with its binary units beside it (31415337 -> "31415337 bytes (29.96 MiB)").
  function shownValue(value, type) {
    return window.ErrkitDom.sized(R.show(value), value, type === "bytes");
  }

  // The suggestions of fix n for the reader's values, as a list (null when none is computed):
  // computed once a page (read.lists), a copy for the second place that shows it (under "Fixes").
  function suggestionList(data, n, read, meter) {
    if (!Object.prototype.hasOwnProperty.call(read.lists, n)) read.lists[n] = computedList(data, n, read, meter);
    var list = read.lists[n];
    if (list && list.parentNode) return list.cloneNode(true);
    return list;
  }

  function computedList(data, n, read, meter) {
    var index = { entries: {} };
    index.entries[data.code] = data;
    var computed = M.suggestions(index, data.code, n, read.values, meter).filter(function (s) { return "value" in s || "not_computed" in s; });
    if (!computed.length) return null;
    var sets = data.fixes[n].sets || {};
    var list = el("ul", { className: "errkit-suggestions" });
    computed.forEach(function (s) {
      var none = s.value === null || (Array.isArray(s.value) && !s.value.length);
      var type = sets[s.label] && data.params[sets[s.label]] ? data.params[sets[s.label]].type
        : /bytes\b/i.test(s.label) ? "bytes" : null;
      var item = el("li", { className: "errkit-suggestion", "data-label": s.label }, "not_computed" in s ? [s.label + ": not computed: " + s.not_computed]
        : none ? [s.label + ": " + noneWhy(data, read)]
        : [window.ErrkitDom.valued(s.label) + ": ", el("code", { className: "errkit-value", text: shownValue(s.value, type) })]);
      var cases = window.ErrkitDom.caseList(s, function (v) { return shownValue(v, type); });
      if (cases) item.appendChild(cases);
      list.appendChild(item);
    });
    return list;
  }

  // An empty suggestion: an int below 1 or over the helpers' limit (2^64, runtime.js LIMIT)
  // leaves nothing to compute with; else no value fits every rule.
  function noneWhy(data, read) {
    var ints = read.names.filter(function (name) { return typeof read.values[name] === "bigint"; });
    var why = ints.filter(function (name) { return read.values[name] < 1n; }).map(function (name) {
      return name + "=" + R.show(read.values[name]) + " is below 1";
    }).concat(ints.filter(function (name) { return read.values[name] > R.LIMIT; }).map(function (name) {
      return name + "=" + R.show(read.values[name]) + " is over 2^64, the largest value the fixes compute with";
    }));
    return why.length ? "none computed: " + why.join("; ") : "none satisfies every constraint";
  }

  function givenLine(data, read) {
    var shown = el("p", { className: "errkit-values__given" }, ["From the address: "]);
    read.names.forEach(function (name, n) {
      if (n) shown.appendChild(document.createTextNode(", "));
      shown.appendChild(el("code", { "data-param": name, text: name + "=" + shownValue(read.values[name], data.params[name].type) }));
    });
    return shown;
  }

  function render(root, data, read) {
    root.textContent = "";
    root.appendChild(el("h2", { id: "for-your-values", className: "errkit-values__title", text: "For your values" }));
    if (read.names.length) root.appendChild(givenLine(data, read));
    if (read.unread.length) {
      var unread = el("ul", { className: "errkit-values__unread" });
      read.unread.forEach(function (u) {
        unread.appendChild(el("li", { "data-param": u.name }, ["Not read: ", el("code", { text: u.name + "=" + u.text }), " (" + u.why + ")"]));
      });
      root.appendChild(unread);
    }
    if (!read.names.length) {
      root.appendChild(el("p", { className: "errkit-values__none", text: "No value of " + data.code +
        " read from the address; the entry's example below shows its fixes." }));
      return false;
    }
    var fixes = el("ol", { className: "errkit-fixes errkit-values__fixes" });
    var any = false;
    var meter = new R.Meter(); // the bounds of the page's suggestions, all together, as of one answer
    data.fixes.forEach(function (fix, n) {
      var scope = [];
      if (fix.alternative) scope.push(el("em", { text: "Alternative, outside this library: " }));
      if (fix.kernel) scope.push(el("em", { text: "For " + ((data.kernels || {})[fix.kernel] || fix.kernel) + ": " }));
      var item = el("li", { "data-fix": String(n + 1) }, scope.concat(prose(fix.summary)));
      var list = suggestionList(data, n, read, meter);
      if (list) {
        any = true;
        item.appendChild(list);
      }
      fixes.appendChild(item);
    });
    if (!any) {
      root.appendChild(el("p", { className: "errkit-values__none", text: "No fix of " + data.code +
        " computes a value from these; the fixes below say what to change." }));
    }
    root.appendChild(fixes);
    return true;
  }

  // Under "Fixes", each fix's worked example (the example's values, its before and after) folded
  // under a label naming the example's values, after what the fix suggests for the reader's.
  function foldExamples(data, read) {
    var meter = new R.Meter(); // for a fix render() did not compute
    var examples = document.querySelectorAll(".errkit-example[data-fix]");
    Array.prototype.forEach.call(examples, function (example) {
      if (example.parentNode && example.parentNode.tagName === "DETAILS") return;
      var n = Number(example.getAttribute("data-fix")) - 1;
      var yours = el("div", { className: "errkit-example-yours", "data-fix": String(n + 1) });
      var list = data.fixes[n] ? suggestionList(data, n, read, meter) : null;
      if (list) {
        yours.appendChild(el("p", { text: "For your values (from the address):" }));
        yours.appendChild(list);
        example.parentNode.insertBefore(yours, example);
      }
      var fold = el("details", { className: "errkit-example-fold" }, [
        el("summary", { text: "The entry's example (" + (example.getAttribute("data-values") || "its own values") + "), not your values" })]);
      example.parentNode.insertBefore(fold, example);
      fold.appendChild(example);
    });
  }

  function init(root) {
    root = root || document.getElementById("errkit-values");
    if (!root || root.getAttribute("data-ready") === "yes") return;
    var data;
    try {
      data = JSON.parse(root.getAttribute("data-entry"));
    } catch (err) {
      root.setAttribute("data-ready", "failed");
      return;
    }
    var read = readValues(window.location.search, data.params || {}, data.code);
    root.hidden = false;
    root.setAttribute("data-for-reader", "");
    if (!render(root, data, read)) {
      root.removeAttribute("data-for-reader"); // nothing read: the entry's example stays
      root.setAttribute("data-ready", "unread");
      return;
    }
    root.setAttribute("data-ready", "yes");
    shown = { root: root, data: data, read: read };
    // while the page is parsed, its own call right after the fixes folds them (values.js data-fold), before
    // they are laid out; no DOMContentLoaded listener: Lighthouse's simulated phone places a task
    // that runs one after this bundle's late download, past the first paint (total blocking time).
    // After instant navigation that call ran before this box was filled: folded now.
    if (document.readyState !== "loading") fold();
  }

  // Each fix's example folded, once, on the page whose box init() filled last.
  var shown = null;
  function fold() {
    if (!shown || shown.root.getAttribute("data-folded") === "yes" || !document.body.contains(shown.root)) return;
    foldExamples(shown.data, shown.read);
    shown.root.setAttribute("data-folded", "yes");
  }

  window.ErrkitValues = { init: init, fold: fold };
  var box = document.getElementById("errkit-values");
  if (box && box.getAttribute("data-ready") === "loading") init(box);
})();
