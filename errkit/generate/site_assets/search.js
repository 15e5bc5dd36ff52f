/* Search for errors: what the reader types into the site's search box (Material for MkDocs' lunr
 * search) is rewritten before the search worker sees it, and a query that looks like an error
 * message is offered to the paste page ("Explain this"). The home page's paste box sends its text
 * to the paste page the same way: paste/#text=<the text, URL-encoded>.
 *
 * The rewrite (transform below):
 *  - splits the query into words on the punctuation of identifiers and messages, the same
 *    characters as the `separator` of mkdocs.yml's search plugin (so `q_seq_len=1000` is the words
 *    q, seq, len and 1000, as on the page), and drops lunr's query syntax (`:`, `~`, `^`, `+`, `-`,
 *    `*`), which a pasted message is full of (`-1`, `a^b`, `dtype: float32`);
 *  - asks for every word exactly (`word^1`: Material adds a trailing wildcard to every other term,
 *    which makes `a` or `be` match half the words of the site); only the last word, still being
 *    typed, keeps the wildcard;
 *  - for a short query, also asks for each longer word with one typo (`divisble~1`).
 * It is installed on Worker.prototype.postMessage for the search worker's query messages
 * ({type: 2, data: "<query>"}); a theme without that worker (Zensical) simply never calls it.
 * Only text nodes and attributes are set here, never HTML.
 */
(function () {
  "use strict";
  // the `separator` of the search plugin in mkdocs.yml, as a class of characters
  var SEPARATOR = /[\s\-.,:;=!?'"`/\\()[\]{}<>|+*%&#@~^$]+/;
  var QUERY = 2; // Material's SearchMessageType.QUERY
  var FUZZY_MIN = 5; // words this long or longer may carry one typo...
  var FUZZY_WORDS = 3; // ...in a query of at most this many words
  var PREFIX_MIN = 3; // the word being typed is a prefix when it has this many characters...
  var PREFIX_WORDS = 4; // ...in a query of at most this many words (longer ones were pasted)

  function words(query) {
    return String(query).split(SEPARATOR).filter(function (w) { return w.length > 0; });
  }

  function transform(query) {
    var list = words(query);
    var typing = list.length <= PREFIX_WORDS && !SEPARATOR.test(String(query).slice(-1));
    var out = [];
    list.forEach(function (word, i) {
      var last = i === list.length - 1;
      out.push(last && typing && word.length >= PREFIX_MIN ? word : word + "^1");
      if (list.length <= FUZZY_WORDS && word.length >= FUZZY_MIN && /^[A-Za-z]+$/.test(word)) out.push(word + "~1");
    });
    return out.join(" ");
  }

  // Does the query look like an error message rather than a few words?
  function looksLikeError(query) {
    var text = String(query).trim();
    if (!text) return false;
    if (/(^|[\s.])[A-Za-z_][A-Za-z0-9_]*(Error|Exception|Warning)\s*:/.test(text)) return true; // SomeError:
    if (/[A-Za-z_][A-Za-z0-9_.]*\s*=\s*[^\s=]/.test(text)) return true; // name=value
    if (/^Traceback \(most recent call last\)/m.test(text)) return true;
    return text.length >= 60 || words(text).length >= 8;
  }

  var script = document.currentScript;
  var BASE = new URL("../../", script ? script.src : window.location.href); // the site root

  function pasteUrl(text) {
    return new URL("paste/#text=" + encodeURIComponent(text), BASE).href;
  }

  var api = { transform: transform, looksLikeError: looksLikeError, pasteUrl: pasteUrl, words: words };
  window.ErrkitSearch = api;

  // -- the search worker's queries -------------------------------------------------------------
  if (typeof Worker !== "undefined" && Worker.prototype && !Worker.prototype.__errkitSearch) {
    var post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (message) {
      if (message && message.type === QUERY && typeof message.data === "string") {
        var rewritten = transform(message.data);
        arguments[0] = { type: QUERY, data: rewritten };
      }
      return post.apply(this, arguments);
    };
    Worker.prototype.__errkitSearch = true;
  }

  // -- "Explain this" in the search results ----------------------------------------------------
  function offer() {
    var input = document.querySelector(".md-search__input");
    var result = document.querySelector(".md-search-result");
    if (!input || !result) return;
    var box = document.getElementById("errkit-search-explain");
    if (!box) {
      box = document.createElement("div");
      box.id = "errkit-search-explain";
      box.className = "md-typeset errkit-search-explain"; // md-typeset: Material's button style
      box.hidden = true;
      box.style.padding = "0.6rem 0.8rem"; // kept here: site.css belongs to every page's layout
      var link = document.createElement("a");
      link.className = "md-button md-button--primary errkit-search-explain__link";
      link.textContent = "Explain this";
      link.style.margin = "0 0.6rem 0.3rem 0";
      var note = document.createElement("span");
      note.className = "errkit-search-explain__note";
      note.textContent = " This looks like an error message: the paste page reads the values out of it and computes the fixes.";
      box.appendChild(link);
      box.appendChild(note);
      link.addEventListener("click", function () {
        var toggle = document.getElementById("__search");
        if (toggle) toggle.checked = false; // close the search dialog
      });
      result.insertBefore(box, result.firstChild);
    }
    var update = function () {
      var value = input.value;
      if (looksLikeError(value)) {
        box.querySelector("a").setAttribute("href", pasteUrl(value));
        box.hidden = false;
      } else {
        box.hidden = true;
      }
    };
    if (!input.__errkitOffer) {
      input.__errkitOffer = true;
      ["input", "keyup", "focus"].forEach(function (name) { input.addEventListener(name, update); });
    }
    update();
  }

  // -- the home page's paste box ---------------------------------------------------------------
  function pasteBox() {
    var form = document.getElementById("errkit-home-paste");
    if (!form || form.__errkitPaste) return;
    form.__errkitPaste = true;
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var text = form.querySelector("textarea").value;
      window.location.assign(pasteUrl(text));
    });
    var area = form.querySelector("textarea");
    area.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        window.location.assign(pasteUrl(area.value));
      }
    });
  }

  function init() {
    offer();
    pasteBox();
  }

  // Material's instant navigation swaps pages without reloading scripts: document$ emits per page
  if (typeof window.document$ !== "undefined" && window.document$.subscribe) {
    window.document$.subscribe(init);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
