/* The "Paste your error" page: runs errkit's matcher (match.js) on what the reader pastes and shows
 * the entry, the values read from the message, the concrete fixes and the link to the entry page.
 * No server: the index is assets/errkit/index.json, generated from the catalogue. Every text from
 * the catalogue or the paste is put in the page with textContent, never parsed as HTML.
 */
(function () {
  "use strict";

  // errkit/core/titles.in_sentence: a leading capitalised This, The, A, An or Our lowercased
  function inSentence(title) {
    return title.replace(/^(This|The|An?|Our)(?=\s)/, function (word) { return word.toLowerCase(); });
  }
  var R = window.ErrkitRuntime;
  var M = window.ErrkitMatch;
  var el = window.ErrkitDom.el, prose = window.ErrkitDom.prose;
  var script = document.currentScript;
  var BASE = new URL("../../", script ? script.src : window.location.href); // the site root
  var INDEX_URL = new URL("assets/errkit/index.json", BASE);
  var loading = null;

  function loadIndex() {
    if (!loading) {
      loading = fetch(INDEX_URL.href, { credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status);
          return response.json();
        })
        .then(function (data) { return new M.Index(data); });
      loading.catch(function () { loading = null; });
    }
    return loading;
  }

  function pageUrl(entry, params) {
    var url = new URL(entry.page, BASE);
    var query = params ? queryString(params) : "";
    return url.href + (query ? "?" + query : "");
  }

  // runtime.query_string: the values as an entry page's query string, each written as a message
  // writes it, a list or shape as its items joined by commas (what values.js reads back)
  function queryText(value) {
    var k = R.kind(value);
    if (k === "list" || k === "tuple") return value.map(queryText).join(",");
    return R.str(value);
  }

  function queryString(params) {
    return Object.keys(params).map(function (name) {
      return encodeURIComponent(name) + "=" + encodeURIComponent(queryText(params[name])).replace(/%2C/g, ",");
    }).join("&");
  }

  // The pasted text lives in the address fragment (#text=...): a result can be shared, and Back
  // from an entry page restores the paste and its result.
  var FRAGMENT = "#text=";

  function textFromAddress() {
    var hash = window.location.hash;
    if (hash.indexOf(FRAGMENT) !== 0) return null;
    try {
      return decodeURIComponent(hash.slice(FRAGMENT.length));
    } catch (err) {
      return null;
    }
  }

  // A paste longer than this (as the address writes it) is not copied into the address on its own
  // (the address is kept in history and synced): a "Make a share link" button puts it there on request.
  var ADDRESS_LIMIT = 8192;
  var shared = null; // the long paste the reader made a share link for

  function setFragment(want) {
    if (window.location.hash === want || (!want && !window.location.hash)) return;
    var url = window.location.pathname + window.location.search + want;
    window.history.replaceState(window.history.state, "", url);
  }

  // The paste into the address; false (and the address cleared of an older paste) when it is over the limit.
  function keepInAddress(text) {
    var want = R.strip(text) ? FRAGMENT + encodeURIComponent(text) : "";
    if (want.length > ADDRESS_LIMIT && text !== shared) {
      setFragment("");
      return false;
    }
    setFragment(want);
    return true;
  }

  function shareButton(text) {
    var box = el("p", { className: "errkit-share" });
    var size = Math.ceil((FRAGMENT + encodeURIComponent(text)).length / 1024);
    var button = el("button", { type: "button", className: "md-button errkit-share__button",
      text: "Make a share link (" + size + " KB in the address)" });
    button.addEventListener("click", function () {
      shared = text;
      setFragment(FRAGMENT + encodeURIComponent(text));
      var link = el("input", { type: "text", readonly: "", className: "errkit-share__link", "aria-label": "Share link", value: window.location.href });
      box.textContent = "";
      box.appendChild(el("span", { text: "The address now holds the paste; the link: " }));
      box.appendChild(link);
      link.select();
    });
    box.appendChild(el("span", { text: "This paste is too long to keep in the address on its own. " }));
    box.appendChild(button);
    return box;
  }

  function renderResult(result, index, primary) {
    var entry = index.entries[result.code];
    var card = el("section", { className: "errkit-result" + (primary ? " errkit-result--primary" : ""), "data-code": result.code });
    var link = el("a", { href: pageUrl(entry, result.params), className: "errkit-result__link", text: result.code });
    card.appendChild(el("h2", { className: "errkit-result__title" }, [link, " ", el("span", { text: result.title })]));

    var badge = result.confidence === "exact" ? "exact match" : "approximate match, similarity " + R.fixed(result.score, 2);
    if (result.count > 1) badge += " · seen " + result.count + " times, last at line " + result.line;
    else if (result.confidence === "exact") badge += " · line " + result.line;
    card.appendChild(el("p", { className: "errkit-result__badge errkit-result__badge--" + result.confidence, text: badge }));

    var names = Object.keys(result.params);
    var fixes = el("ol", { className: "errkit-fixes" });
    result.fixes.forEach(function (fix) {
      var scope = fix.kernel && !result.matched.kernel ? [el("em", { text: "For " + inSentence(fix.kernel.title) + ": " })] : [];
      var item = el("li", {}, (fix.alternative ? [el("em", { text: "Alternative, outside this library: " })] : []).concat(scope, prose(fix.summary)));
      var computed = fix.suggestions.filter(function (s) { return "value" in s || "not_computed" in s || (s.cases && s.cases.length); });
      if (computed.length) {
        var list = el("ul", { className: "errkit-suggestions" });
        computed.forEach(function (s) {
          var none = s.value === null || (Array.isArray(s.value) && !s.value.length);
          var item = el("li", { className: "errkit-suggestion" }, "needs" in s ? [s.label + ": depends on what the message does not show:"]
            : "not_computed" in s ? [s.label + ": not computed: " + s.not_computed]
            : none ? [s.label + (/none:/.test(s.label) ? ": none" : ": none satisfies every constraint")] // render.none_said
            : [window.ErrkitDom.valued(s.label) + ": ", el("code", { text: window.ErrkitDom.sized(R.show(s.value), s.value, /bytes\b/i.test(s.label)) })]);
          var cases = window.ErrkitDom.caseList(s, function (v) { return R.show(v); });
          if (cases) item.appendChild(cases);
          list.appendChild(item);
        });
        item.appendChild(list);
      }
      if (fix.unverified) item.appendChild(el("p", { className: "errkit-unverified", text: "Unverified: " + fix.unverified }));
      fixes.appendChild(item);
    });
    card.appendChild(el("p", { className: "errkit-result__fixes-title" }, [el("strong", { text: "Fixes" + (names.length ? " for your values" : "") })]));
    card.appendChild(fixes);

    if (names.length) {
      var table = el("table", { "data-errkit": "values" });
      table.appendChild(el("thead", {}, [el("tr", {}, [el("th", { text: "Value" }), el("th", { text: "Read from the message" }), el("th", { text: "Meaning" })])]));
      var body = el("tbody");
      names.forEach(function (name) {
        var param = entry.params[name] || { description: "" };
        body.appendChild(el("tr", { "data-param": name }, [
          el("td", {}, [el("code", { text: name })]),
          el("td", {}, [el("code", { className: "errkit-value", text: window.ErrkitDom.sized(R.show(result.params[name]), result.params[name], param.type === "bytes") })]),
          el("td", { text: param.description }),
        ]));
      });
      table.appendChild(body);
      card.appendChild(el("div", { className: "md-typeset__table" }, [table]));
    }

    var facts = el("dl", { className: "errkit-result__facts" });
    facts.appendChild(el("dt", { text: "Wording" }));
    facts.appendChild(el("dd", {}, [el("code", { text: result.matched.wording || "(empty message)" })]));
    facts.appendChild(el("dt", { text: "Raised as" }));
    facts.appendChild(el("dd", { text: result.matched.exception + ", by " + result.matched.source +
      (result.matched.releases ? ", " + result.matched.releases : "") +
      (result.matched.life ? " (" + result.matched.life.text + ")" : "") }));
    if (result.confidence === "approximate") {
      facts.appendChild(el("dt", { text: "You have" }));
      facts.appendChild(el("dd", {}, [el("code", { text: result.matched.text.slice(0, 200) })]));
    }
    card.appendChild(facts);

    card.appendChild(el("p", { className: "errkit-result__means" }, [el("strong", { text: "What it means: " })].concat(prose(M.firstParagraph(result.explanation)))));

    card.appendChild(el("p", { className: "errkit-result__links" }, [
      el("a", { href: pageUrl(entry, result.params), className: "md-button md-button--primary errkit-open", text: "Open " + result.code }),
      " ",
      el("span", { className: "errkit-result__url", text: result.docs_url }),
    ]));
    return card;
  }

  function renderEntry(code, index) {
    var entry = index.entries[code];
    var card = el("section", { className: "errkit-result errkit-result--primary", "data-code": code });
    card.appendChild(el("h2", { className: "errkit-result__title" }, [
      el("a", { href: pageUrl(entry), className: "errkit-result__link", text: code }), " ", el("span", { text: entry.title }),
    ]));
    card.appendChild(el("p", { className: "errkit-result__means" }, prose(M.firstParagraph(entry.explanation))));
    card.appendChild(el("p", {}, [el("a", { href: pageUrl(entry), className: "md-button md-button--primary errkit-open", text: "Open " + code })]));
    return card;
  }

  // The view moves to the first result: focused ("focus": after Explain, Ctrl+Enter or an
  // example; a screen reader reads it) or scrolled to ("scroll": after a paste, or a paste from the
  // address, the caret left where it was); while the reader types, it stays put.
  function reveal(results, how) {
    var first = results.firstElementChild;
    if (!how || !first) return;
    if (how === "focus") {
      first.setAttribute("tabindex", "-1");
      first.focus({ preventScroll: true });
    }
    first.scrollIntoView({ block: "start" });
  }

  function explainInto(root, index, how) {
    var input = root.querySelector("#errkit-input");
    var status = root.querySelector("#errkit-status");
    var results = root.querySelector("#errkit-results");
    var text = input.value;
    var kept = keepInAddress(text);
    results.textContent = "";
    explainText(index, text, status, results);
    if (!kept) results.appendChild(shareButton(text)); // after the results: they come first
    reveal(results, how);
  }

  function explainText(index, text, status, results) {
    if (!R.strip(text)) {
      status.textContent = "Paste an error message, a traceback or a log above.";
      return;
    }
    var single = R.strip(text);
    if (!/\s/.test(single)) {
      var code = index.lookup(single);
      if (code) {
        status.textContent = code + " is a catalogue code:";
        results.appendChild(renderEntry(code, index));
        return;
      }
    }
    var found = M.explain(index, text.replace(/\r\n/g, "\n"));
    if (!found.length) {
      status.textContent = "No catalogued error found in this text. Try the whole traceback, or search the site.";
      return;
    }
    if (found[0].confidence === "exact") {
      status.textContent = found.length === 1 ? "Found 1 catalogued error." :
        "Found " + found.length + " distinct catalogued errors, the most recent first.";
    } else {
      status.textContent = "No exact match; the closest wordings in the catalogue:";
    }
    found.forEach(function (result, n) { results.appendChild(renderResult(result, index, n === 0)); });
  }

  function fillExamples(root, index) {
    var select = root.querySelector("#errkit-example");
    if (!select || select.options.length > 1) return;
    Object.keys(index.entries).forEach(function (code) {
      var entry = index.entries[code];
      if (!entry.example) return;
      select.appendChild(el("option", { value: code, text: code + ": " + entry.title }));
    });
  }

  function init() {
    var root = document.getElementById("errkit-paste");
    if (!root || root.getAttribute("data-ready")) return;
    root.setAttribute("data-ready", "loading");
    var input = root.querySelector("#errkit-input");
    var status = root.querySelector("#errkit-status");
    var timer = null;
    status.textContent = "Loading the catalogue…";
    loadIndex().then(function (index) {
      root.setAttribute("data-ready", "yes");
      root.setAttribute("data-entries", String(Object.keys(index.entries).length));
      status.textContent = Object.keys(index.entries).length + " errors in the catalogue. Paste yours above.";
      fillExamples(root, index);
      var pasted = false;
      var run = function (how) {
        clearTimeout(timer); // an Explain, Ctrl+Enter or example replaces the run typing had scheduled
        explainInto(root, index, typeof how === "string" ? how : undefined);
      };
      root.querySelector("#errkit-explain").addEventListener("click", function () { run("focus"); });
      root.querySelector("#errkit-clear").addEventListener("click", function () {
        input.value = "";
        run();
        input.focus();
      });
      input.addEventListener("paste", function () { pasted = true; });
      input.addEventListener("input", function () {
        clearTimeout(timer);
        timer = setTimeout(function () {
          run(pasted ? "scroll" : undefined);
          pasted = false;
        }, 300);
      });
      input.addEventListener("keydown", function (event) {
        if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) run("focus");
      });
      var select = root.querySelector("#errkit-example");
      if (select) {
        select.addEventListener("change", function () {
          var entry = index.entries[select.value];
          if (entry && entry.example) {
            input.value = entry.example;
            run("focus");
          }
        });
      }
      var kept = textFromAddress();
      if (kept !== null && R.strip(kept)) {
        input.value = kept;
        shared = kept; // a share link's paste stays in its address, however long
        run("scroll");
      } else if (R.strip(input.value)) {
        run();
      }
    }, function (err) {
      root.setAttribute("data-ready", "failed");
      status.textContent = "Could not load the catalogue index (" + err.message + "). Use `errkit explain` instead.";
    });
  }

  // This script is loaded by a <script> tag at the end of the paste page, which Material's instant
  // navigation runs again on every visit: init once per run (a document$ subscription would pile
  // up one more per visit).
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
