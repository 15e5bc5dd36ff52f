/* errkit matcher for the browser: what `errkit explain` does with errkit/_index.json, in JavaScript.
 *
 * A line-by-line port of errkit/explain/matching/ (one regex of every wording's key picks the lines, the
 * keys present in a line pick the wordings to try, `SomeError: msg` header extraction, fullmatch
 * of the message, then of the line, then a search anchored at the line end, then anywhere;
 * tie-break by literal_chars; typed values as values.parse; empty messages recognised by their
 * raise site) and of errkit/explain/command.py (distinct matches, most recent first; closest wordings,
 * from a shortlist of those sharing the rarest words, when nothing matches exactly; concrete
 * suggestions).
 * It reads assets/errkit/index.json, which `errkit generate` builds from the same index with
 * every regex translated to JavaScript, and FORMAT below: the index format's limits, marks and
 * patterns (errkit/core/index_format.py), which `errkit generate` writes into this file;
 * tests/site/test_paste_page_js.py runs both sides on the catalogue.
 */
(function (root, factory) {
  "use strict";
  var own = function (table, code) { return table && Object.prototype.hasOwnProperty.call(table, code) ? table[code] : undefined; };
  if (typeof module === "object" && module.exports) {
    var table = require("./suggest.js");
    module.exports = factory(require("./runtime.js"), function (code) { return own(table, code); });
  } else {
    // an entry's compiled fixes: suggest.js's (the paste page loads it whole), else the entry's own
    // part (suggest/<code>.js, which an entry page loads with values.bundle.js), made once
    var made = {};
    root.ErrkitMatch = factory(root.ErrkitRuntime, function (code) {
      if (root.ErrkitSuggest) return own(root.ErrkitSuggest, code);
      var part = own(root.ErrkitSuggestParts, code);
      if (!own(made, code) && typeof part === "function") made[code] = part(root.ErrkitRuntime);
      return own(made, code);
    });
  }
})(typeof self !== "undefined" ? self : this, function (R, suggestOf) {
  "use strict";

  var FORMAT = {}; // errkit/core/index_format.py: `errkit generate` writes its names here, no copy by hand
  var SPLITLINES = new RegExp("\r\n|[" + FORMAT.LINE_BREAKS.join("") + "]", "u"); // str.splitlines()
  var NOTE = new RegExp(FORMAT.NOTE, "u"), DOCS_LINK = new RegExp(FORMAT.DOCS_LINK, "u");
  var RELEASE_SEEN = new RegExp(FORMAT.RELEASE_SEEN, "u");
  var TRAILING_SPACE = new RegExp(FORMAT.SPACE + "+$", "u");

  function escapeRegex(text) {
    return text.replace(/[.*+?^${}()|[\]\\\/]/g, "\\$&"); // what the u flag allows to escape
  }

  // matching.keys.key_pattern: a key's words with any run of whitespace between them
  function keyPattern(key) {
    return key.split(" ").map(escapeRegex).join(FORMAT.SPACE + "+");
  }

  function byString(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  function Index(data) {
    this.data = data;
    this.entries = data.entries;
    this.wordings = data.wordings;
    // index_format.plan, made by `errkit generate` (errkit/generate/assets.py site_index)
    this.keys = data.plan[0];
    this.keyed = data.plan[1];
    this.located = data.plan[2];
    this.always = data.plan[3];
    this.keyRegexes = this.keys.map(function (k) { return new RegExp(keyPattern(k), "u"); });
    var alternatives = this.keys.map(keyPattern);
    if (this.always.length) alternatives = alternatives.concat(FORMAT.MARKERS);
    if (this.located.length) alternatives.push(escapeRegex(FORMAT.FRAME_MARK));
    this.locator = alternatives.length ? new RegExp(alternatives.concat(FORMAT.LOOKUP_MARKS).join("|"), "gu") : null;
    this.postings = null;
    this.skeletons = {};
    this.compiled = {};
    this.header = new RegExp(FORMAT.HEADER, "du"); // d: where the message starts
    this.frame = new RegExp(FORMAT.FRAME, "u");
    this.ansi = new RegExp(FORMAT.ANSI, "gu");
    this.word = new RegExp(FORMAT.WORD, "gu");
    this.lineEnd = FORMAT.LINE_END; // index_format.at_line_end
    this.maxLine = FORMAT.MAX_LINE;
  }

  Index.prototype.regex = function (i) {
    var c = this.compiled[i];
    if (!c) {
      var source = this.wordings[i].regex;
      c = this.compiled[i] = {
        any: new RegExp(source, "u"),
        end: new RegExp("(?:" + source + ")" + this.lineEnd, "u"),
        full: new RegExp("^(?:" + source + ")$", "u"),
        start: new RegExp("^(?:" + source + ")", "u"),
        stopped: source.endsWith(FINAL_STOP) ? new RegExp("^(?:" + source.slice(0, -FINAL_STOP.length) + "\\.+[ \\t])", "u") : null,
      };
    }
    return c;
  };

  Index.prototype.words = function (text) {
    return text.match(this.word) || [];
  };

  Index.prototype.clean = function (line) {
    if (line.indexOf("\x1b") >= 0) line = line.replace(this.ansi, "");
    return line.replace(/[\r\n]+$/, "");
  };

  Index.prototype.lookup = function (key) {
    key = R.strip(key);
    if (Object.prototype.hasOwnProperty.call(this.entries, key.toUpperCase())) return key.toUpperCase();
    for (var code in this.entries) if (this.entries[code].slug === key.toLowerCase()) return code;
    var name = key.split(".").pop().replace(/:+$/, "");
    if (/^[A-Za-z_][A-Za-z0-9_]*Error$/.test(name)) {
      for (var c in this.entries) if (className(this.entries[c].slug).toLowerCase() === name.toLowerCase()) return c;
    }
    return null;
  };

  // matching.index.class_name: the exception class generated for an entry
  function className(slug) {
    return slug.split("-").map(function (part) { return part.charAt(0).toUpperCase() + part.slice(1).toLowerCase(); }).join("") + "Error";
  }

  // matching.index.Index.named: a lookup's answer, the entry named by `text`, no values
  Index.prototype.named = function (code, text, lineNo) {
    var wording = null;
    for (var i = 0; i < this.wordings.length && wording === null; i++) {
      if (this.wordings[i].code === code && this.wordings[i].variant === 0) wording = this.wordings[i];
    }
    for (var j = 0; j < this.wordings.length && wording === null; j++) if (this.wordings[j].code === code) wording = this.wordings[j];
    return newMatch(code, wording, {}, lineNo === undefined ? 1 : lineNo, { text: text, weak: true });
  };

  function newMatch(code, wording, params, lineNo, extra) {
    var m = { code: code, wording: wording, params: params, line: lineNo, exact: true, score: 1.0, text: "", span: null, weak: false, ties: [], offset: 0, kernel: null, context: null, undecided: [], repaired: null };
    for (var k in extra || {}) m[k] = extra[k];
    return m;
  }

  // -- exact matching ---------------------------------------------------------------------------

  Index.prototype.candidates = function (line) {
    var ids = [];
    for (var k = 0; k < this.keys.length; k++) {
      if (this.keyRegexes[k].test(line)) ids.push.apply(ids, this.keyed[k]);
    }
    return this.always.length ? ids.concat(this.always) : ids;
  };

  Index.prototype.extract = function (i, groups) {
    return captured(this.wordings[i].captures, groups);
  };

  // matching.index.captured: the typed values of a match's captures (null when one is no value after all)
  function captured(captures, groups) {
    var out = {};
    for (var k = 0; k < captures.length; k++) {
      var group = captures[k][0], param = captures[k][1], type = captures[k][2];
      var text = groups[group];
      if (text === undefined) return null;
      var value;
      try {
        value = R.parseValue(type, text);
      } catch (err) {
        return null; // Python's explain stops on such a value; the page passes over the wording
      }
      if (gone(value)) continue; // retyped: the text no longer shows the value
      if (Object.prototype.hasOwnProperty.call(out, param) && !R.eq(out[param], value)) return null;
      out[param] = value;
    }
    return out;
  }

  // matching.index.gone: `...`, `<V>`, a list cut short (`a, b, ...`), an issue title's `{...9.4.0..}`
  function gone(value) {
    var text = typeof value === "string" ? R.strip(value) : "";
    if (text === "..." || text === "\u2026" || /^<[A-Z]>$/.test(text)) return true;
    return /, (?:\.\.\.|\u2026)$/.test(text) || (text.startsWith("{...") && text.endsWith("..}"));
  }

  // matching.text.message_forms: the readings of a message worth a full match, the likeliest first:
  // without a traceback or comment after it, a closing `quote`, a leading tag; then as it is
  var TRAILERS = [", Traceback (most recent call last)", " -- "], QUOTES = "\"'`";
  function leadingTag(text) {
    if (text.charAt(0) === "[") {
      var end = text.indexOf("]", 1);
      if (end > 1 && end < FORMAT.TAG_REACH) {
        var at = end + 1 + (text.charAt(end + 1) === ":" ? 1 : 0);
        return at < text.length ? at + (text.charAt(at) === " " ? 1 : 0) : 0;
      }
      return 0;
    }
    var colon = text.indexOf(": ");
    var head = colon >= 0 && colon + 2 <= FORMAT.TAG_REACH ? text.slice(0, colon) : "";
    return colon > 2 && /^[A-Z_]+$/.test(head) && /[A-Z]/.test(head) ? colon + 2 : 0;
  }
  function messageForms(text, quote) {
    var end = text.length;
    TRAILERS.forEach(function (trailer) { var at = text.indexOf(trailer); if (at > 0 && at < end) end = at; });
    if (quote) {
      var q = text.lastIndexOf(quote, end - 1);
      if (q > 0) end = q;
    }
    var lead = leadingTag(text), forms = [], seen = {};
    [[lead, end], [0, end], [lead, text.length], [0, text.length]].forEach(function (c) {
      var part = rstrip(text.slice(c[0], c[1]));
      if (part && !seen[c[0] + "\u0000" + part]) { seen[c[0] + "\u0000" + part] = true; forms.push([c[0], part]); }
    });
    return forms;
  }
  // matching.text.quoted_message: [start, end] of a message quoted in prose (after the quote before `SomeError`)
  Index.prototype.quotedMessage = function (line) {
    for (var k = 0; k < QUOTES.length; k++) {
      var quote = QUOTES.charAt(k), at = line.indexOf(quote);
      while (at >= 0 && at < line.length - 1) {
        var header = this.header.exec(line.slice(at + 1, at + 201));
        if (header && header.indices.groups.exc[0] === 0 && header.groups.msg) {
          var end = line.lastIndexOf(quote);
          return [at + 1, end > at + 1 ? end : line.length];
        }
        at = line.indexOf(quote, at + 1);
      }
    }
    return null;
  };
  // matching.line.LineReader._full: the wording matching a reading of `text` whole, the most fixed text
  Index.prototype.full = function (ids, text, quote, lineNo) {
    var best = null, forms = messageForms(text, quote);
    for (var f = 0; f < forms.length; f++) {
      var hit = this.best(ids, forms[f][1], "full", lineNo);
      if (hit !== null && (best === null || hit.wording.literal_chars > best.wording.literal_chars)) {
        best = hit;
        best.span = [hit.span[0] + forms[f][0], hit.span[1] + forms[f][0]];
        best.ties.forEach(function (t) { t.span = best.span; });
      }
    }
    var worded = best !== null && Object.keys(best.params).some(function (k) { return typeof best.params[k] === "string" && best.params[k].indexOf(" ") >= 0; });
    if (worded) { // line._full: a longer wording the message starts with, text written after it
      var self = this, shortest = best.wording.literal_chars;
      var longer = ids.filter(function (i) { return self.wordings[i].literal_chars > shortest; });
      var start = longer.length ? this.best(longer, text, "start", lineNo) : null;
      if (start !== null) return start;
      if (best.wording.regex.endsWith(FINAL_STOP) && !(best.text || "").endsWith(".")) return this.stoppedAt(ids, best, text, lineNo) || best;
    }
    return best;
  };

  // line._stopped_at: the best wording read up to its own full stop where one ends its last value and text
  // follows after a space
  var FINAL_STOP = "(?:\\.)?";
  Index.prototype.stoppedAt = function (ids, best, text, lineNo) {
    var self = this, i = ids.filter(function (j) { return self.wordings[j] === best.wording; })[0];
    var m = this.regex(i).stopped.exec(text);
    var params = m ? this.extract(i, m.groups || {}) : null;
    if (params === null) return null;
    var end = m[0].length - 1; // the space after the stop is not the message's
    return newMatch(best.code, best.wording, params, lineNo, { text: text.slice(0, end), span: [0, end] });
  };

  // matching.around.Around.read_on: the params of the entry's `reads` from the lines after the message, and
  // the kernel they name when the wording is raised by several
  // records.shape: each run of digits written as one 0 (a timestamp's shape)
  function shape(text) {
    return text.replace(/[0-9]+/g, "0");
  }

  var RECORD_STAMP = new RegExp("^" + FORMAT.RECORD_STAMP, "u");
  var recordFinders = {};

  // records.record_end: the start of the first line in text[lineEnd:high] that begins a log record
  // like the one at `start` (its prefix ending at `prefixEnd`) from another place, else `high`
  function recordEnd(text, start, lineEnd, prefixEnd, high) {
    var prefix = shape(text.slice(start, prefixEnd));
    // records.stamp: the first words that hold a digit and no letter but T, Z or a first one
    var stamped = RECORD_STAMP.exec(prefix)[0];
    if (!stamped || !/^[\x00-\x7f]*$/.test(stamped)) return high;
    var finder = recordFinders[stamped];
    if (!finder) { // records._finder_source: each 0 any digits, a word's first letter any letter
      var source = "\n", wordStart = true;
      for (var i = 0; i < stamped.length; i++) {
        var c = stamped.charAt(i);
        source += c === "0" ? "[0-9]+" : wordStart && /[A-Za-z]/.test(c) ? "[A-Za-z]" : escapeRegex(c);
        wordStart = c === " " || c === "\t";
      }
      finder = recordFinders[stamped] = new RegExp(source, "gu");
    }
    var window = text.slice(0, high); // searched as Python's search(data, pos, high) is
    var pos = lineEnd, reach = prefixEnd - start + FORMAT.RECORD_SLACK;
    while (pos < high) {
      finder.lastIndex = pos;
      var found = finder.exec(window);
      if (!found) return high;
      var begin = found.index + 1;
      if (shape(text.slice(begin, begin + reach)).indexOf(prefix) !== 0) return begin;
      pos = window.indexOf("\n", begin);
      if (pos < 0) return high;
    }
    return high;
  }

  // matching.around.Around.read_on; `record`: the strings of the JSON log line the match was found in
  // (jsonRecord), read alone
  Index.prototype.readOn = function (match, text, start, prefixEnd, record) {
    var entry = this.entries[match.code];
    var reads = (entry && entry.reads) || [];
    var kernels = this.data.kernels || {};
    var candidates = (match.wording.kernels || []).filter(function (k) {
      return kernels[k] && kernels[k].names && kernels[k].names.length;
    });
    if (!reads.length && !candidates.length) return;
    var ownRecord = record !== null && record !== undefined;
    if (ownRecord) { text = record; start = 0; } // a JSON log line: its strings, alone
    var end = Math.min(text.length, start + FORMAT.READ_WINDOW);
    var firstLineEnd = ownRecord ? -1 : text.indexOf("\n", start);
    if (firstLineEnd >= 0 && firstLineEnd < end) {
      var cut = text.indexOf(FORMAT.NEXT_TRACEBACK, firstLineEnd);
      if (cut >= 0 && cut + FORMAT.NEXT_TRACEBACK.length <= end) end = cut;
      if (prefixEnd !== null && prefixEnd !== undefined) end = recordEnd(text, start, firstLineEnd, prefixEnd, end);
    }
    var window = text.slice(start, end);
    var has = function (o, p) { return Object.prototype.hasOwnProperty.call(o, p); };
    var extra = {}, any = false;
    for (var k = 0; k < reads.length; k++) {
      var key = "read " + match.code + " " + k;
      var pattern = this.compiled[key] || (this.compiled[key] = new RegExp(reads[k].regex, "u"));
      var m = pattern.exec(window);
      var found = m ? captured(reads[k].captures, m.groups || {}) : null;
      for (var param in found || {}) {
        if (!has(match.params, param) && !has(extra, param)) { extra[param] = found[param]; any = true; }
      }
    }
    if (any) match.params = Object.assign({}, match.params, extra); // the message's own may be shared
    if (candidates.length) {
      var words = this.words(window); // identifiers
      var named = candidates.filter(function (k) {
        return words.some(function (w) { return kernels[k].names.some(function (n) { return w.startsWith(n); }); });
      });
      if (named.length === 1) match.kernel = named[0];
    }
  };

  // matching.line.cut_short: the params less each str value shown as the start of a list cut short
  function cutShort(params, text) {
    var out = {};
    for (var k in params) {
      var v = params[k];
      if (!(typeof v === "string" && v && (text.indexOf(v + ", ...") >= 0 || text.indexOf(v + ", \u2026") >= 0))) out[k] = v;
    }
    return out;
  }

  // matching.line.apart: another entry's wording, or the same text raised at another site
  function apart(wording, best) {
    return wording.code !== best.code || (wording.template === best.wording.template && raiseFile(wording) !== raiseFile(best.wording));
  }

  // matching.line.LineReader._best: the wording that matches `text` with the most fixed text; ties kept (apart)
  Index.prototype.best = function (ids, text, how, lineNo) {
    var best = null;
    for (var k = 0; k < ids.length; k++) {
      var i = ids[k];
      var m = this.regex(i)[how].exec(text);
      if (!m) continue;
      var params = this.extract(i, m.groups || {});
      if (params === null) continue;
      if (text.indexOf(", ...") >= 0 || text.indexOf(", \u2026") >= 0) params = cutShort(params, text);
      var wording = this.wordings[i];
      if (best !== null && wording.literal_chars === best.wording.literal_chars && apart(wording, best)) {
        best.ties.push(newMatch(wording.code, wording, params, lineNo, { text: best.text, span: best.span }));
      } else if (best === null || wording.literal_chars > best.wording.literal_chars) {
        var a = m.index, whole = m[0];
        if (how === "end") whole = whole.replace(TRAILING_SPACE, ""); // the regex takes trailing spaces too
        var span = [a, a + whole.length];
        best = newMatch(wording.code, wording, params, lineNo, { text: text.slice(span[0], span[1]), span: span });
      }
    }
    return best;
  };

  // matching.line.LineReader.match_line: a JSON log line is read as the strings it holds, each line of each
  Index.prototype.matchLine = function (line, lineNo) {
    line = this.clean(line);
    var ids = this.candidates(line);
    if (!ids.length) return null;
    if (R.strip(line).charAt(0) === "{") {
      var strings = jsonStrings(line);
      for (var s = 0; s < strings.length; s++) {
        var parts = strings[s].split(SPLITLINES);
        if (parts.length && parts[parts.length - 1] === "") parts.pop(); // str.splitlines() drops a final empty line
        for (var q = 0; q < parts.length; q++) {
          var found = this.matchText(this.clean(parts[q]), lineNo);
          if (found !== null) {
            found.span = null; // in the unescaped string, not in the line
            return found;
          }
        }
      }
    }
    return this.matchText(line, lineNo, ids);
  };

  // matching.text.json_record: the strings of a JSON log line, one after another (null: not one)
  function jsonRecord(line) {
    if (lstrip(line).charAt(0) !== "{") return null;
    var strings = jsonStrings(line);
    return strings.length ? strings.join("\n") : null;
  }

  // matching.text.json_strings: the string values of a JSON object or array (two levels deep), in order
  function jsonStrings(line) {
    var doc;
    try {
      doc = JSON.parse(line);
    } catch (err) {
      return [];
    }
    var out = [];
    (function walk(value, depth) {
      if (typeof value === "string") {
        out.push(value);
      } else if (depth < 2 && value !== null && typeof value === "object") {
        var items = Array.isArray(value) ? value : Object.keys(value).map(function (k) { return value[k]; });
        items.forEach(function (item) { walk(item, depth + 1); });
      }
    })(doc, 0);
    return out;
  }

  Index.prototype.matchText = function (line, lineNo, ids) {
    ids = ids === undefined ? this.candidates(line) : ids;
    if (!ids.length) return null;
    var header = this.header.exec(line);
    if (!header) {
      var quoted = this.quotedMessage(line);
      if (quoted !== null) { // `I get "ValueError: ..." when I run it`: the quoted text first
        var inner = this.matchText(line.slice(quoted[0], quoted[1]), lineNo);
        if (inner !== null) {
          if (inner.span !== null) inner.span = [inner.span[0] + quoted[0], inner.span[1] + quoted[0]];
          inner.ties.forEach(function (t) { t.span = inner.span; });
          return inner;
        }
      }
    }
    // Most specific first: the message after `SomeError: `, the whole line, the line's end, anywhere.
    var start = null, msgAt = 0;
    if (header && header.groups.msg !== undefined) {
      var raw = header.groups.msg;
      var msg = R.strip(raw);
      var excAt = header.indices.groups.exc[0];
      msgAt = header.indices.groups.msg[0] + raw.length - lstrip(raw).length;
      var hit = this.full(ids, msg, excAt > 0 && QUOTES.indexOf(line.charAt(excAt - 1)) >= 0 ? line.charAt(excAt - 1) : "", lineNo);
      if (hit !== null) {
        hit.span = [msgAt + hit.span[0], msgAt + hit.span[1]];
        hit.ties.forEach(function (t) { t.span = hit.span; });
        return hit;
      }
      start = this.started(ids, msg, lineNo);
    }
    var stripped = R.strip(line);
    if (raiseStatement(stripped)) return null; // a traceback's source line: its message comes on the exception line
    var offset = line.length - lstrip(line).length;
    var hows = ["full", "end", "any"];
    for (var h = 0; h < hows.length; h++) {
      var found = hows[h] === "full" ? this.full(ids, stripped, "", lineNo) : this.best(ids, stripped, hows[h], lineNo);
      if (found !== null) {
        if (start !== null && start.wording.literal_chars >= found.wording.literal_chars) break;
        found.span = [found.span[0] + offset, found.span[1] + offset];
        found.ties.forEach(function (t) { t.span = found.span; });
        return found;
      }
    }
    if (start === null) return null;
    start.span = [msgAt + start.span[0], msgAt + start.span[1]];
    start.ties.forEach(function (t) { t.span = start.span; });
    return start;
  };

  // line.LineReader._started: the wording the message after `SomeError: ` starts with, text after
  // it that no wording reads; only a reading that ends where a word does
  Index.prototype.started = function (ids, msg, lineNo) {
    var start = this.best(ids, msg, "start", lineNo);
    if (start === null) return null;
    var end = start.span[1];
    return ALNUM.test(msg.charAt(end)) && ALNUM.test(msg.charAt(end - 1)) ? null : start;
  };
  var ALNUM = /^[A-Za-z0-9]$/;

  // matching.text.raise_statement: a Python `raise SomeError(...)` line
  function raiseStatement(line) {
    var code = line.replace(/^[|+ \t]+/, "");
    return code.indexOf("raise ") === 0 && code.indexOf("(") >= 0;
  }

  function lstrip(s) { // str.lstrip()
    return s.replace(/^[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/, "");
  }
  function rstrip(s) { // str.rstrip()
    return s.replace(/[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/, "");
  }

  // matching.line.match_note: the entry named by our exceptions' note line or a link to its page
  Index.prototype.matchNote = function (line, lineNo) {
    var found = line.indexOf("] ") >= 0 ? NOTE.exec(line) : null;
    var link = line.indexOf("/errors/") >= 0 ? DOCS_LINK.exec(line) : null;
    var hit = found || link;
    var code = hit ? hit.groups.code : null;
    if (code === null || !Object.prototype.hasOwnProperty.call(this.entries, code)) return null;
    var params = {};
    if (link !== null && link.groups.code === code && link.groups.query) {
      var types = {};
      var declared = this.entries[code].params || {};
      for (var name in declared) types[name] = declared[name].type;
      link.groups.query.split("&").forEach(function (pair) {
        var cut = pair.indexOf("=");
        var key = cut >= 0 ? pair.slice(0, cut) : pair;
        var raw = cut >= 0 ? pair.slice(cut + 1) : "";
        if (!Object.prototype.hasOwnProperty.call(types, key)) return;
        try {
          params[key] = R.parseValue(types[key], unquote(raw));
        } catch (err) {
          // a value that does not read as its type is left out, as by the CLI
        }
      });
    }
    var match = this.named(code, line.slice(hit.index, hit.index + hit[0].length), lineNo);
    match.params = params;
    match.span = [hit.index, hit.index + hit[0].length];
    return match;
  };

  function unquote(text) { // matching.line._unquote
    text = text.replace(/\+/g, " ");
    if (text.indexOf("%") < 0) return text;
    var parts = text.split("%");
    var bytes = Array.from(new TextEncoder().encode(parts[0]));
    for (var k = 1; k < parts.length; k++) {
      var code = parts[k].slice(0, 2);
      if (code.length === 2 && /^[0-9a-fA-F]{2}$/.test(code)) {
        bytes.push(parseInt(code, 16));
        bytes = bytes.concat(Array.from(new TextEncoder().encode(parts[k].slice(2))));
      } else {
        bytes = bytes.concat(Array.from(new TextEncoder().encode("%" + parts[k])));
      }
    }
    return new TextDecoder("utf-8").decode(new Uint8Array(bytes)); // invalid bytes become U+FFFD, as errors="replace"
  }

  // matching.around.Around.match_location: the most specific location first, the same exception class, then
  // the wording's regex on the message
  Index.prototype.matchLocation = function (framePath, func, lineNo, exception, message) {
    framePath = framePath.replace(/\\/g, "/");
    var raised = (exception || "").split(".").pop();
    var ranked = [];
    for (var k = 0; k < this.located.length; k++) {
      var i = this.located[k];
      var wording = this.wordings[i];
      var loc = wording.location;
      var cut = loc.indexOf(" in ");
      var place = cut >= 0 ? loc.slice(0, cut) : loc;
      var where = cut >= 0 ? loc.slice(cut + 4) : "";
      var path = place.split(":")[0];
      if (!framePath.endsWith(path) || (where && where !== func)) continue;
      if (raised && wording.exception && wording.exception !== raised) continue;
      ranked.push([where ? 0 : 1, i]);
    }
    ranked.sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    message = message || "";
    for (var r = 0; r < ranked.length; r++) {
      var j = ranked[r][1];
      var m = this.regex(j).full.exec(message);
      var params = m ? this.extract(j, m.groups || {}) : null;
      if (params !== null) {
        var w = this.wordings[j];
        return newMatch(w.code, w, params, lineNo, { text: message || framePath + " in " + func });
      }
    }
    return null;
  };

  // matching.blocks.scan: every match in a text, in order. A traceback is read at its exception line;
  // a text of PASTE_SIZE UTF-8 bytes or fewer is a paste: every line naming an exception is read
  // too, and a line that matches nothing is tried joined with its neighbours (hard wraps).
  Index.prototype.scan = function (text, firstLine) {
    firstLine = firstLine === undefined ? 1 : firstLine;
    var out = [];
    if (this.locator === null) return out;
    var paste = utf8Length(text) <= FORMAT.PASTE_SIZE;
    var lineNo = firstLine, counted = 0, pos = 0, size = text.length, taken = 0;
    while (pos < size) {
      var start, end, where, hit;
      if (paste) { // every line; a huge one is read around its first hit
        start = pos;
        end = text.indexOf("\n", pos);
        end = end < 0 ? size : end;
        hit = null;
        if (end - start > this.maxLine) {
          this.locator.lastIndex = start;
          hit = this.locator.exec(text);
          if (hit !== null && hit.index >= end) hit = null;
        }
        where = hit ? hit.index : start;
      } else {
        this.locator.lastIndex = pos;
        hit = this.locator.exec(text);
        if (hit === null) break;
        where = hit.index;
        start = where === 0 ? 0 : text.lastIndexOf("\n", where - 1) + 1;
        end = text.indexOf("\n", where);
        end = end < 0 ? size : end;
      }
      var traceback = false;
      if (this.located.length && isFrame(text, start, end)) {
        var tb = this.tracebackEnd(text, end + 1);
        if (tb !== null) {
          start = tb[0]; end = tb[1]; where = start; traceback = true;
        }
      }
      pos = end + 1;
      var line = this.readLine(text, start, end, where);
      if (paste && !traceback && !this.worthReading(line)) continue;
      lineNo += countNewlines(text, counted, start);
      counted = start;
      var match = this.examine(text, start, line, lineNo, traceback);
      if (match === null && paste && !traceback) {
        var joined = this.joined(text, start, end, lineNo, pos, taken);
        match = joined[0];
        pos = joined[1];
      }
      if (match !== null) {
        taken = pos;
        match.offset = start;
        out.push(match);
      }
    }
    return out;
  };

  function utf8Length(text) {
    return new TextEncoder().encode(text).length;
  }

  // matching.blocks._is_frame: whether the line start:end is a traceback frame
  function isFrame(text, start, end) {
    var body = start;
    while (body < end && (text.charAt(body) === " " || text.charAt(body) === "\t")) body++;
    return text.startsWith(FORMAT.FRAME_MARK, body);
  }

  // matching.blocks._traceback_end: the exception line that ends the traceback whose frames go on at `pos`
  Index.prototype.tracebackEnd = function (text, pos) {
    var size = text.length;
    for (var n = 0; n < FORMAT.TRACEBACK_LINES; n++) {
      if (pos >= size) return null;
      var end = text.indexOf("\n", pos);
      end = end < 0 ? size : end;
      var first = text.charAt(pos);
      if (first !== " " && first !== "\t" && end > pos) {
        if (text.startsWith(FORMAT.NEXT_TRACEBACK, pos)) return null;
        if (this.header.exec(this.clean(text.slice(pos, Math.min(end, pos + this.maxLine))))) return [pos, end];
      }
      pos = end + 1;
    }
    return null;
  };

  // matching.blocks._read_line: a line longer than maxLine characters (code points) is cut around `where`
  Index.prototype.readLine = function (text, start, end, where) {
    var half = Math.floor(this.maxLine / 2);
    var line = end - start <= 4 * this.maxLine ? text.slice(start, end) : null;
    if (line !== null && line.length > this.maxLine && Array.from(line).length > this.maxLine) line = null;
    if (line === null) {
      var before = Array.from(text.slice(Math.max(start, where - 4 * half), where));
      var after = Array.from(text.slice(where, Math.min(end, where + 4 * half)));
      line = before.slice(Math.max(0, before.length - half)).join("") + after.slice(0, half).join("");
    }
    return line;
  };

  // matching.blocks._worth_reading: in a paste, a line holding a key, naming an exception or linking an entry
  Index.prototype.worthReading = function (line) {
    var text = normaliseLine(line)[0];
    return this.candidates(text).length > 0 || this.header.test(text) || text.indexOf("/errors/") >= 0;
  };

  // matching.around._prefix_end: where the log record's prefix of `line` ends in `text`: before the exception
  // named ahead of the match's text, else before that text (null: not known)
  Index.prototype.prefixEnd = function (text, start, line, norm, match, origin) {
    if (match.span === null || match.span === undefined) return null;
    var cut = match.span[0];
    var header = norm.indexOf("Error") >= 0 || norm.indexOf("Exception") >= 0 ? this.header.exec(norm) : null;
    if (header && header.indices.groups.exc[0] < cut) cut = header.indices.groups.exc[0];
    var before = line.slice(0, origin ? origin[cut] : cut);
    return text.startsWith(before, start) ? start + before.length : null;
  };

  // matching.blocks.examine: one line read as pasted, normalised first, reported on the original text
  Index.prototype.examine = function (text, start, line, lineNo, traceback) {
    var normalised = normaliseLine(line);
    var norm = normalised[0], origin = normalised[1];
    var match = this.matchLine(norm, lineNo);
    if (match === null && traceback) match = this.locatedMatch(text, start, norm, lineNo);
    if (match === null) match = this.matchNote(norm, lineNo);
    if (match !== null && match.ties.length) match = breakTie(match, text.slice(Math.max(0, start - FORMAT.TIE_CONTEXT), start) + norm, this.data.kernels || {});
    if (match !== null && (match.wording.kernels || []).length > 1) {
      match.kernel = shownKernel(match.wording.kernels, this.data.kernels || {}, text.slice(Math.max(0, start - FORMAT.TIE_CONTEXT), start) + norm);
    }
    if (match !== null) {
      var record = match.span === null && !traceback ? jsonRecord(norm) : null;
      this.readOn(match, text, start, this.prefixEnd(text, start, line, norm, match, origin), record);
    }
    if (match !== null && this.readsContext(match.code)) this.readContext(match, text, start);
    if (match !== null && (this.entries[match.code] || {}).needs_context && !this.showsContext(text, start)) {
      match.exact = false; // another compiler's, as likely: approximate, saying why
      match.context = Object.assign({}, match.context || {}, { unconfirmed: FORMAT.UNCONFIRMED });
    }
    if (match !== null && match.span !== null && origin !== null) match.text = line.slice(origin[match.span[0]], origin[match.span[1]]);
    return match;
  };

  // matching.around.Around.shows_context: JAX's side shown around the line at `start` (CONTEXT_MARKS, a kernel)
  Index.prototype.showsContext = function (text, start) {
    var window = text.slice(Math.max(0, start - FORMAT.FRAME_REACH), start + FORMAT.FRAME_REACH);
    var kernels = this.data.kernels || {}, marks = FORMAT.CONTEXT_MARKS.slice();
    Object.keys(kernels).forEach(function (k) {
      marks = marks.concat(kernels[k].names || []);
      if (kernels[k].source) marks.push(kernels[k].source);
    });
    return marks.some(function (mark) { return window.indexOf(mark) >= 0; });
  };

  // matching.around.Around.reads_context: whether the entry has fixes the context orders or leaves out
  Index.prototype.readsContext = function (code) {
    this.contextCodes = this.contextCodes || {};
    if (!Object.prototype.hasOwnProperty.call(this.contextCodes, code)) {
      var kernels = this.data.kernels || {};
      var entry = this.entries[code];
      this.contextCodes[code] = ((entry && entry.fixes) || []).some(function (fix) {
        return Boolean(fix.site) || Boolean(fix.kernel && kernels[fix.kernel] && kernels[fix.kernel].framework);
      });
    }
    return this.contextCodes[code];
  };

  // matching.around.Around.read_context: the framework and the raise site the text around the match shows
  Index.prototype.readContext = function (match, text, start) {
    var lineEnd = text.indexOf("\n", start);
    if (lineEnd < 0) lineEnd = text.length;
    var end = Math.min(text.length, lineEnd + FORMAT.FRAME_REACH);
    var cut = text.indexOf(FORMAT.NEXT_TRACEBACK, lineEnd);
    if (cut >= 0 && cut < end) end = cut;
    var before = text.slice(Math.max(0, start - FORMAT.FRAME_REACH), start);
    var line = text.slice(start, lineEnd), after = text.slice(lineEnd, Math.max(lineEnd, end));
    var fw = contextFramework(before, line, after);
    var where = contextSite(toldKernel(match), line, after);
    match.context = { framework: fw[0], framework_from: fw[1], site: where[0], site_from: where[1] };
  };

  // context._last / _first: the last (first) of `marks` in `text`, [-1, ""] if none
  function lastMark(text, marks) {
    var best = -1, which = "";
    marks.forEach(function (mark) { var at = text.lastIndexOf(mark); if (at > best) { best = at; which = mark; } });
    return [best, which];
  }
  function firstMark(text, marks) {
    var best = -1, which = "";
    marks.forEach(function (mark) {
      var at = text.indexOf(mark);
      if (at >= 0 && (best < 0 || at < best || (at === best && mark < which))) { best = at; which = mark; }
    });
    return [best, which];
  }

  // context.framework: PyTorch's or JAX's marks (the nearest the match when both), else Triton's
  function contextFramework(before, line, after) {
    var text = before + "\n" + line + "\n" + after;
    var shown = [["pytorch", lastMark(text, FORMAT.PYTORCH_MARKS)], ["jax", lastMark(text, FORMAT.JAX_MARKS)]]
      .filter(function (item) { return item[1][0] >= 0; });
    if (shown.length === 1) return [shown[0][0], shown[0][1][1]];
    if (shown.length > 1) {
      var cut = before.length + 1 + line.length;
      var nearness = function (item) { var at = item[1][0]; return at < cut ? cut - at : 0; };
      var best = shown[0];
      if (nearness(shown[1]) < nearness(best)) best = shown[1];
      return [best[0], best[1][1]];
    }
    var triton = lastMark(text, FORMAT.TRITON_MARKS);
    return triton[0] >= 0 ? ["triton", triton[1]] : [null, null];
  }

  // context.site: the kernel told, else a kernel's custom call or one of XLA's own operations, the first named
  function contextSite(told, line, after) {
    if (told) return ["kernel", told];
    var text = line + "\n" + after;
    var kernel = firstMark(text, FORMAT.PALLAS_MARKS), xla = firstMark(text, FORMAT.FUSION_MARKS);
    if (kernel[0] >= 0 && (xla[0] < 0 || kernel[0] <= xla[0] || text.slice(xla[0], kernel[0]).indexOf("\n") < 0)) {
      return ["pallas-call", kernel[1]];
    }
    if (xla[0] >= 0) return ["xla-fusion", xla[1]];
    return [null, null];
  }

  // context.ordered: another framework's kernels' fixes left out (and every kernel's at an XLA
  // operation); this framework's kernels' fixes and the site's first
  function contextOrdered(fixes, kernels, framework, site) {
    var fixFramework = function (fix) {
      return fix.kernel ? ((kernels[fix.kernel] && kernels[fix.kernel].framework) || "jax") : null;
    };
    if (framework) fixes = fixes.filter(function (f) { var w = fixFramework(f); return w === null || w === framework; });
    if (site === "xla-fusion") fixes = fixes.filter(function (f) { return !f.kernel; });
    var rank = function (fix, n) {
      var first = (framework && fix.kernel && fixFramework(fix) === framework && framework !== "jax") || (site && fix.site === site);
      return [first ? 0 : 1, fix.alternative ? 1 : 0, n];
    };
    return fixes.map(function (fix, n) { return [rank(fix, n), fix]; }).sort(function (a, b) {
      for (var k = 0; k < 3; k++) if (a[0][k] !== b[0][k]) return a[0][k] - b[0][k];
      return 0;
    }).map(function (item) { return item[1]; });
  }

  // matching.around._names_a_dist: the context names a distribution whose releases a candidate has
  function namesADist(candidates, context) {
    var lowered = null;
    for (var k = 0; k < candidates.length; k++) {
      var dist = (candidates[k].wording.releases || {}).dist;
      if (dist) {
        if (lowered === null) lowered = context.toLowerCase();
        if (lowered.indexOf(dist.toLowerCase()) >= 0) return true;
      }
    }
    return false;
  }

  // matching.around.break_tie: the entry whose raise site (a frame's file) the context shows, else the
  // only one whose kernel's source files it shows, else the one whose release range holds the release
  // the context names; else the first (then `undecided` holds the kernels any of them may be)
  function breakTie(match, context, kernels) {
    context = context.replace(/\\/g, "/");
    var candidates = [match].concat(match.ties);
    var chosen = null;
    for (var k = 0; k < candidates.length && chosen === null; k++) {
      var place = raiseFile(candidates[k].wording);
      if (place && context.indexOf(place) >= 0) chosen = candidates[k];
    }
    if (chosen === null && kernels) { // the only one whose kernel's source files the context shows
      var shown = candidates.filter(function (c) {
        return (c.wording.kernels || []).some(function (k) { return sourcesShown(kernels[k] || {}, context); });
      });
      if (shown.length === 1) chosen = shown[0];
    }
    if (chosen === null && namesADist(candidates, context)) {
      var seen = releasesIn(context);
      if (Object.keys(seen).length) {
        for (var c = 0; c < candidates.length && chosen === null; c++) if (inRange(candidates[c].wording.releases, seen)) chosen = candidates[c];
      }
      if (chosen === null) chosen = match; // (as the Python: a distribution named decides it, the first by default)
    }
    var undecided = chosen === null;
    if (chosen === null) chosen = match;
    if (chosen !== match) {
      chosen.span = match.span;
      chosen.text = match.text;
    }
    if (undecided) { // the first wording, by default: any of its entry's tied wordings' kernels may have raised it
      var kernelsOf = [];
      candidates.forEach(function (c) {
        if (c.code === chosen.code) (c.wording.kernels || []).forEach(function (k) { if (kernelsOf.indexOf(k) < 0) kernelsOf.push(k); });
      });
      chosen.undecided = kernelsOf.length > 1 ? kernelsOf : [];
    }
    chosen.ties = [];
    return chosen;
  }

  // matching.around._sources_shown: whether the context shows one of a kernel's source files (comma-separated)
  function sourcesShown(kernel, context) {
    return (kernel.source || "").split(",").some(function (part) {
      part = R.strip(part);
      return part && context.indexOf(part) >= 0;
    });
  }

  // matching.around.shown_kernel: of the kernels raising a shared wording, the one whose source file the
  // context shows, when exactly one is shown
  function shownKernel(candidates, kernels, context) {
    context = context.replace(/\\/g, "/");
    var shown = candidates.filter(function (k) { return kernels[k] && kernels[k].source && context.indexOf(kernels[k].source) >= 0; });
    return shown.length === 1 ? shown[0] : null;
  }

  // matching.around.decide_kernel: the wording's only kernel, else the one its context showed
  function toldKernel(match) {
    var kernels = match.wording.kernels || [];
    return kernels.length === 1 ? kernels[0] : match.kernel || null;
  }

  // answer.raisers: [the kernel told to have raised the match, or null; else those that may have, or null]
  function raisers(match) {
    if (match.weak) return [null, null];
    if (match.undecided && match.undecided.length) return [null, match.undecided.slice()];
    var told = toldKernel(match);
    var may = (match.wording.kernels || []).slice();
    return [told, told ? null : (may.length ? may : null)];
  }

  // explain.offered: a fix for another kernel is left out when the kernel is told, or when none of
  // the kernels raising the wording is the fix's
  function offered(fixes, wording, told) {
    var candidates = told ? [told] : wording.kernels || [];
    return fixes.filter(function (fix) { return !fix.kernel || !candidates.length || candidates.indexOf(fix.kernel) >= 0; });
  }

  function kernelRef(index, kernel) {
    if (!kernel) return null;
    var known = ((index.data && index.data.kernels) || {})[kernel];
    return { id: kernel, title: known ? known.title : kernel };
  }

  function raiseFile(wording) {
    return (wording.location || "").split(" in ")[0].split(":")[0];
  }

  // matching.around._releases_in: distribution -> the release the context names for it (the last one named)
  function releasesIn(context) {
    var seen = {};
    var re = new RegExp(RELEASE_SEEN.source, "gu");
    for (var m = re.exec(context); m !== null; m = re.exec(context)) {
      seen[m.groups.dist.toLowerCase()] = m.groups.version.split(".").map(Number);
      if (m[0].length === 0) re.lastIndex++;
    }
    return seen;
  }

  // matching.around._in_range: whether a wording's release range holds the release the context names
  function inRange(record, seen) {
    if (!record || !Object.prototype.hasOwnProperty.call(seen, (record.dist || "").toLowerCase())) return false;
    var version = seen[record.dist.toLowerCase()];
    var width = record.bounds.reduce(function (w, b) { return Math.max(w, b[1].length); }, version.length);
    function pad(v) { v = v.slice(); while (v.length < width) v.push(0); return v; }
    function cmp(a, b) { for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1; return 0; }
    return record.bounds.every(function (b) {
      var c = cmp(pad(version), pad(b[1]));
      return { ">=": c >= 0, ">": c > 0, "<=": c <= 0, "<": c < 0, "==": c === 0, "!=": c !== 0 }[b[0]];
    });
  }

  // errkit/core/lifespan.life: what a releases record says of its wording's life, in the same words
  // ("raised since jax 0.4.29; no longer raised since jax 0.4.36"); null for no record
  function life(record) {
    if (!record) return null;
    function key(nums) { nums = nums.slice(); while (nums.length > 1 && nums[nums.length - 1] === 0) nums.pop(); return nums; }
    function cmp(a, b) {
      for (var i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
      return a.length - b.length;
    }
    function release(nums) { return nums.join("."); }
    var dist = record.dist, bounds = record.bounds;
    var lows = bounds.filter(function (b) { return b[0] === ">=" || b[0] === ">"; });
    var highs = bounds.filter(function (b) { return b[0] === "<" || b[0] === "<="; });
    var pins = bounds.filter(function (b) { return b[0] === "=="; });
    var excluded = bounds.filter(function (b) { return b[0] === "!="; });
    var since = null, until = null, parts = [];
    if (pins.length) {
      since = release(pins[0][1]);
      parts.push("raised in " + dist + " " + since + " only");
    } else {
      if (lows.length) {  // the highest lower bound; of two equal ones, ">" is the tighter
        var low = lows.reduce(function (a, b) { var c = cmp(key(b[1]), key(a[1])); return c > 0 || (c === 0 && b[0] === ">" && a[0] !== ">") ? b : a; });
        if (low[0] === ">=") { since = release(low[1]); parts.push("raised since " + dist + " " + since); }
        else parts.push("raised after " + dist + " " + release(low[1]));
      }
      if (highs.length) {  // the lowest upper bound; of two equal ones, "<" is the tighter
        var high = highs.reduce(function (a, b) { var c = cmp(key(b[1]), key(a[1])); return c < 0 || (c === 0 && b[0] === "<" && a[0] !== "<") ? b : a; });
        if (high[0] === "<") { until = release(high[1]); parts.push("no longer raised since " + dist + " " + until); }
        else parts.push("no longer raised after " + dist + " " + release(high[1]));
      }
      if (!parts.length) parts.push("raised in every " + dist + " release");
    }
    if (excluded.length) {
      var skipped = excluded.map(function (b) { return dist + " " + release(b[1]); }).join(", ");
      if (parts[0].indexOf("raised in every") === 0) parts[0] += " except " + skipped;
      else parts.splice(1, 0, "not in " + skipped);
    }
    return { since: since, until: until, text: parts.join("; ") };
  }

  // matching.blocks._joined: the line joined with the one before or after it, as a hard wrap split it
  // The line before is not joined when it is part of a match already (taken: where that match's
  // text ends), and a joined match must use text of both lines (across).
  Index.prototype.joined = function (text, start, end, lineNo, pos, taken) {
    var size = text.length;
    var windows = [];
    if (start && start > (taken || 0)) {
      var before = start - 1 > 0 ? text.lastIndexOf("\n", start - 2) + 1 : 0;
      windows.push([before, start - 1, end, -1]);
    }
    if (end < size) {
      var after = text.indexOf("\n", end + 1);
      windows.push([start, end, after < 0 ? size : after, 0]);
    }
    for (var w = 0; w < windows.length; w++) {
      var first = windows[w][0], cut = windows[w][1], last = windows[w][2], shift = windows[w][3];
      var head = text.slice(first, cut), tail = text.slice(cut + 1, last);
      if (!R.strip(head) || !R.strip(tail) || Array.from(head).length + Array.from(tail).length > this.maxLine) continue;
      var globs = /[,;:]$/.test(head.replace(/\r+$/, "")) ? [" ", ""] : ["", " "]; // blocks._glues
      for (var g = 0; g < globs.length; g++) {
        var kept = head.replace(/\r+$/, ""), joinedText = kept + globs[g] + tail;
        var match = this.examine(text, first, joinedText, lineNo + shift, false);
        if (match !== null && across(match, joinedText, kept.length, globs[g].length)) return [match, Math.max(pos, last + 1)];
      }
    }
    return [null, pos];
  };

  // matching.blocks._across: whether a match of two lines joined uses text of both (a hard wrap split it)
  function across(match, joined, cut, glue) {
    if (match.span === null) return true; // a JSON line's string: no span in the joined text to tell by
    var origin = normaliseLine(joined)[1];
    var a = origin === null ? match.span[0] : origin[match.span[0]];
    var b = origin === null ? match.span[1] : origin[match.span[1]];
    return a < cut && b > cut + glue;
  }

  function countNewlines(text, from, end) {
    var n = 0;
    for (var i = text.indexOf("\n", from); i >= 0 && i < end; i = text.indexOf("\n", i + 1)) n++;
    return n;
  }

  // matching.around.Around.located_match: the raise site is the traceback's last frame, the nearest above
  Index.prototype.locatedMatch = function (text, start, line, lineNo) {
    var header = this.header.exec(this.clean(line));
    if (!header) return null;
    var low = Math.max(0, start - FORMAT.FRAME_REACH), end = start, last = null;
    while (last === null) {
      var at = text.lastIndexOf(FORMAT.FRAME_MARK, end - 1);
      if (at < low || at < 0 || end <= low) return null;
      var lineStart = at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
      var lineEnd = text.indexOf("\n", at);
      if (lineEnd < 0 || lineEnd > start) lineEnd = start;
      last = this.frame.exec(text.slice(lineStart, lineEnd));
      end = at;
    }
    return this.matchLocation(last.groups.path, last.groups.func, lineNo, header.groups.exc, R.strip(header.groups.msg || ""));
  };

  // -- text as pasted (errkit/core/normalise.py) -----------------------------------------------------

  var CHARS = FORMAT.NORMALISED_CHARS, ENTITIES = FORMAT.HTML_ENTITIES; // normalise.CHARS, normalise.ENTITIES

  function mapped(ch) {
    return Object.prototype.hasOwnProperty.call(CHARS, ch) ? CHARS[ch] : ch;
  }

  // normalise.normalise: [the line as matched, where each of its characters starts in `line` plus its end]
  function normaliseLine(line) {
    if (/^[\x00-\x7f]*$/.test(line) && line.indexOf("&") < 0 && line.indexOf("\x1b") < 0) return [line, null];
    var out = [], origin = [];
    var i = 0, n = line.length;
    while (i < n) {
      var ch = String.fromCodePoint(line.codePointAt(i));
      if (ch === "\x1b" && line.charAt(i + 1) === "[") { // an ANSI colour code
        var j = i + 2;
        while (j < n && /[0-9;?]/.test(line.charAt(j))) j++;
        if (j < n && /[A-Za-z]/.test(line.charAt(j))) {
          i = j + 1;
          continue;
        }
      }
      if (ch === "&") {
        var entity = decodeEntity(line, i);
        if (entity[1]) {
          out.push(entity[0]);
          for (var e = 0; e < entity[0].length; e++) origin.push(i);
          i += entity[1];
          continue;
        }
      }
      var to = mapped(ch);
      if (to) {
        out.push(to);
        for (var u = 0; u < to.length; u++) origin.push(i); // code units of the output point back at the char
      }
      i += ch.length;
    }
    var text = out.join("");
    if (text === line) return [line, null];
    origin.push(n);
    return [text, origin];
  }

  function decodeEntity(line, at) { // normalise._entity
    var end = line.indexOf(";", at + 1);
    if (end < 0 || end >= at + 12) return ["", 0];
    var name = line.slice(at + 1, end);
    if (Object.prototype.hasOwnProperty.call(ENTITIES, name)) return [ENTITIES[name], end + 1 - at];
    var code;
    if (/^#[xX][0-9a-fA-F]+$/.test(name)) code = parseInt(name.slice(2), 16);
    else if (/^#[0-9]+$/.test(name)) code = parseInt(name.slice(1), 10);
    else return ["", 0];
    if (!(code <= 0x10ffff)) return ["", 0];
    var ch = String.fromCodePoint(code);
    if (ch === "\n" || ch === "\r" || (ch !== " " && /^[\p{C}\p{Z}]$/u.test(ch))) ch = " "; // a line stays a line
    return [mapped(ch) || " ", end + 1 - at];
  }

  // matching.approximate.Closest.shortlist: the wordings sharing the rarest words with `text`, bounded work
  Index.prototype.shortlist = function (text) {
    var self = this;
    if (this.postings === null) {
      var postings = new Map();
      this.wordings.forEach(function (wording, i) {
        // a wording tried only at its raise site (no key, a location) is not a closest wording either
        if (!wording.template || (!wording.key && wording.location)) return;
        new Set(self.words(wording.skeleton)).forEach(function (word) {
          if (!postings.has(word)) postings.set(word, []);
          postings.get(word).push(i);
        });
      });
      this.postings = postings;
    }
    var post = this.postings;
    var words = Array.from(new Set(this.words(text))).filter(function (w) { return post.has(w); });
    words.sort(function (a, b) { return post.get(a).length - post.get(b).length || byString(a, b); });
    var scores = new Map();
    var budget = FORMAT.POSTINGS_BUDGET;
    for (var k = 0; k < words.length && budget > 0; k++) {
      var ids = post.get(words[k]);
      var weight = 1.0 / ids.length;
      var n = Math.min(ids.length, budget);
      for (var j = 0; j < n; j++) scores.set(ids[j], (scores.get(ids[j]) || 0) + weight);
      budget -= ids.length;
    }
    return Array.from(scores.keys()).sort(function (a, b) { return scores.get(b) - scores.get(a) || a - b; }).slice(0, FORMAT.SHORTLIST);
  };

  Index.prototype.normalisedSkeleton = function (i) {
    if (!(i in this.skeletons)) this.skeletons[i] = normalise(this.wordings[i].skeleton);
    return this.skeletons[i];
  };

  // -- explain ----------------------------------------------------------------------------------

  function key(match) {
    var names = Object.keys(match.params).sort();
    return match.code + "\u0000" + names.map(function (n) { return n + "=" + R.repr(match.params[n]); }).join("\u0000");
  }

  // matching.together.same_block: the next match of the same entry, both exact, within TIE_CONTEXT with only a
  // traceback's lines between them, values agreeing, the one before holding a value this one lacks
  function sameBlock(before, match, text) {
    if (before.code !== match.code || before.weak || match.weak || !(before.exact && match.exact)) return false;
    var distance = match.offset - before.offset;
    if (distance < 0 || distance > FORMAT.TIE_CONTEXT) return false;
    var has = function (o, p) { return Object.prototype.hasOwnProperty.call(o, p); };
    var extra = false;
    for (var name in before.params) {
      if (!has(before.params, name)) continue;
      if (has(match.params, name)) {
        if (R.repr(before.params[name]) !== R.repr(match.params[name])) return false;
      } else {
        extra = true;
      }
    }
    if (!extra) return false;
    var low = text.indexOf("\n", before.offset);
    return insideOneError(text, low < 0 || low >= match.offset ? match.offset : low + 1, match.offset);
  }

  // matching.together.same_raise: the error `before` already counted, printed again within one error's
  // printout: its note line under its message (`[RA105] ... - see <page>`: a weak match after the strong
  // one), or its message printed twice by one failure (logged, then its traceback ending in it; a
  // chained traceback repeating it); two tracebacks of one error back to back are two raises
  function sameRaise(before, match, text) {
    if (before.code !== match.code || before.weak || !before.exact || key(before) !== key(match)) return false;
    var distance = match.offset - before.offset;
    if (distance <= 0 || distance > FORMAT.TIE_CONTEXT) return false;
    var end = text.indexOf("\n", before.offset);
    var after = end < 0 || end >= match.offset ? match.offset : end + 1; // the line after `before`'s
    if (!insideOneError(text, after, match.offset)) return false;
    if (match.weak) return true; // the note line of the raise whose message matched
    var between = text.slice(after, match.offset);
    if (between.indexOf(FORMAT.CHAINED_NOTE) >= 0) return true;
    var head = FORMAT.NEXT_TRACEBACK;
    if (!between.replace(/^[ \t\n\r\f\v]+/, "").startsWith(head) || between.split(head).length !== 2) return false;
    var low = before.offset; // where `before`'s line starts
    var above = low ? text.slice(text.lastIndexOf("\n", low - 2) + 1, low - 1) : "";
    return !(above.startsWith(" ") || above.startsWith("\t") || above.replace(/^[ \t\n\r\f\v]+/, "").startsWith(FORMAT.FRAME_MARK)); // not a traceback's end
  }

  // matching.together._inside_one_error: a traceback's lines between low and high, at most BLOCK_GAP others
  function insideOneError(text, low, high) {
    var others = 0, afterFrame = false, pos = low;
    while (pos < high) {
      var end = text.indexOf("\n", pos);
      end = end < 0 || end > high ? high : end;
      var line = text.slice(pos, end);
      var frame = line.startsWith(FORMAT.FRAME_MARK);
      if (!(frame || afterFrame || inTraceback(line))) {
        others += 1;
        if (others > FORMAT.BLOCK_GAP) return false;
      }
      afterFrame = frame;
      pos = end + 1;
    }
    return true;
  }

  // matching.together._in_traceback: blank or indented, a chaining note, a separator, an IPython frame
  // (bytes.strip: ASCII whitespace only)
  function inTraceback(line) {
    var stripped = line.replace(/^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g, "");
    var first = line.charAt(0);
    if (!stripped || first === " " || first === "\t" || !stripped.replace(/^[-_= ]+|[-_= ]+$/g, "")) return true;
    if (stripped.charAt(0) === "-" && stripped.replace(/^-+/, "").charAt(0) === ">") return true;
    if (line.indexOf(".py in ") >= 0 || line.indexOf("> in ") >= 0) return true;
    return FORMAT.TRACEBACK_NOTES.some(function (note) { return line.indexOf(note) >= 0; });
  }

  // explain.explain_chunks for one text: distinct exact matches, most recent first (a note line or a
  // page link under a message that matched says nothing more)
  function findAll(index, text) {
    var found = new Map();
    var previous = null; // [the match before, its key]
    index.scan(text, 1).forEach(function (match) {
      if (previous !== null && sameBlock(previous[0], match, text)) {
        // one error printed over several lines: one answer with every value, counted once
        match.params = Object.assign({}, previous[0].params, match.params);
        var before = found.get(previous[1]);
        before.count -= 1;
        if (!before.count) found.delete(previous[1]);
      } else if (previous !== null && found.has(previous[1]) && sameRaise(previous[0], match, text)) {
        // the same raise printed again (its note line, its traceback's last line): counted once
        if (!match.weak) {
          found.get(previous[1]).lastLine = match.line;
          previous = [match, previous[1]];
        }
        return;
      }
      var k = key(match);
      var item = found.get(k);
      if (!item) {
        item = { match: match, count: 0, lastLine: match.line };
        found.set(k, item);
      }
      item.count += 1;
      item.lastLine = match.line;
      previous = [match, k];
    });
    var strong = new Set();
    found.forEach(function (f) { if (!f.match.weak) strong.add(f.match.code); });
    var kept = Array.from(found.values()).filter(function (f) { return !(f.match.weak && strong.has(f.match.code)); });
    // the entries seen last first; of one entry's answers, the first failure's first; of answers whose
    // values agree (one failure over lines), the one with the most values (matching.chunks.explain_chunks)
    var latest = {}, first = new Map();
    var agree = function (a, b) {
      return Object.keys(a).every(function (k) { return !Object.prototype.hasOwnProperty.call(b, k) || R.repr(a[k]) === R.repr(b[k]); });
    };
    kept.forEach(function (f) { latest[f.match.code] = Math.max(latest[f.match.code] || 0, f.lastLine); });
    kept.forEach(function (f) {
      first.set(f, Math.min.apply(null, kept.filter(function (g) { return g.match.code === f.match.code && agree(g.match.params, f.match.params); })
        .map(function (g) { return g.match.line; })));
    });
    var size = function (f) { return Object.keys(f.match.params).length; };
    return kept.sort(function (a, b) {
      return latest[b.match.code] - latest[a.match.code] || first.get(a) - first.get(b) || size(b) - size(a);
    });
  }

  function normalise(text) { // explain._normalise
    text = text.replace(/<[^<>]*>/g, "#");
    text = text.replace(/\([-0-9, ]*\)|'[^']*'|-?[0-9][0-9.e+-]*/g, "#");
    return R.strip(text).split(/[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/).filter(Boolean).join(" ");
  }

  // difflib.SequenceMatcher(None, a, b, autojunk=False).ratio(), on code points
  function ratio(a, b) {
    a = Array.from(a);
    b = Array.from(b);
    var b2j = new Map();
    b.forEach(function (ch, j) {
      var list = b2j.get(ch);
      if (!list) b2j.set(ch, list = []);
      list.push(j);
    });
    function longest(alo, ahi, blo, bhi) {
      var besti = alo, bestj = blo, bestsize = 0;
      var j2len = new Map();
      for (var i = alo; i < ahi; i++) {
        var newj2len = new Map();
        var js = b2j.get(a[i]) || [];
        for (var k = 0; k < js.length; k++) {
          var j = js[k];
          if (j < blo) continue;
          if (j >= bhi) break;
          var size = (j2len.get(j - 1) || 0) + 1;
          newj2len.set(j, size);
          if (size > bestsize) {
            besti = i - size + 1;
            bestj = j - size + 1;
            bestsize = size;
          }
        }
        j2len = newj2len;
      }
      while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
        besti--; bestj--; bestsize++;
      }
      while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
      return [besti, bestj, bestsize];
    }
    var queue = [[0, a.length, 0, b.length]];
    var matches = 0;
    while (queue.length) {
      var q = queue.pop();
      var m = longest(q[0], q[1], q[2], q[3]);
      var i = m[0], j = m[1], k = m[2];
      if (k) {
        matches += k;
        if (q[0] < i && q[2] < j) queue.push([q[0], i, q[2], j]);
        if (i + k < q[1] && j + k < q[3]) queue.push([i + k, q[1], j + k, q[3]]);
      }
    }
    var total = a.length + b.length;
    return total ? 2.0 * matches / total : 1.0;
  }

  // explain.approximate: the closest wordings to the error lines of the text
  function approximate(index, tail, limit, firstLine) {
    limit = limit === undefined ? 3 : limit;
    firstLine = firstLine === undefined ? 1 : firstLine;
    var lines = [];
    tail.split(SPLITLINES).forEach(function (l, n) { if (R.strip(l)) lines.push([firstLine + n, index.clean(l)]); });
    var segments = [];
    lines.forEach(function (pair) {
      var header = index.header.exec(pair[1]);
      if (header && R.strip(header.groups.msg || "")) segments.push([pair[0], R.strip(header.groups.msg)]);
    });
    if (!segments.length) segments = lines.slice(-20).map(function (pair) { return [pair[0], R.strip(pair[1])]; });
    // similarity is quadratic: compare a message-sized piece
    segments = segments.slice(-5).map(function (pair) { return [pair[0], pair[1].length > 2000 ? pair[1].slice(-2000) : pair[1], false]; });
    segments = segments.concat(quotedStarts(lines.slice(-20)));
    var scored = new Map(), quotes = new Map(); // code -> whether its best segment was a quoted start
    segments.forEach(function (pair) {
      var lineNo = pair[0], seg = pair[1], quoted = pair[2];
      var normSeg = normalise(seg);
      index.shortlist(seg).forEach(function (i) {
        var wording = index.wordings[i];
        var skeleton = index.normalisedSkeleton(i), score;
        if (quoted) { // the start of a message, quoted: compared with as much of the wording's start
          var a = Array.from(normSeg), b = Array.from(skeleton);
          if (a.length >= b.length) return;
          var start = ratio(normSeg, b.slice(0, a.length).join(""));
          score = Math.min(start * (1 - FORMAT.QUOTE_COVERAGE + FORMAT.QUOTE_COVERAGE * a.length / b.length), FORMAT.APPROXIMATE_MAX);
        } else {
          score = Math.min(ratio(normSeg, skeleton), FORMAT.APPROXIMATE_MAX);
        }
        var best = scored.get(wording.code);
        if (score >= 0.6 && (!best || score > best.score)) {
          scored.set(wording.code, newMatch(wording.code, wording, {}, lineNo, { exact: false, score: R.round(score, 3n), text: seg }));
          quotes.set(wording.code, quoted);
        }
      });
    });
    var found = Array.from(scored.values()).sort(function (x, y) { return y.score - x.score; }).slice(0, limit);
    // a misspelt message: the answer to its line put right, alone; of several, the wording with most fixed text
    var repaired = null;
    found.forEach(function (best) {
      if (best.score < FORMAT.TYPO_SIMILARITY || quotes.get(best.code)) return;
      if (repaired !== null && best.wording.literal_chars <= repaired.wording.literal_chars) return;
      var whole = "";
      lines.forEach(function (pair) { if (pair[0] === best.line) whole = pair[1]; });
      var again = misspelt(best.wording, whole);
      if (again === null) return;
      var exact = findAll(index, again).map(function (f) { return f.match; }).filter(function (m) { return m.code === best.code && !m.weak; });
      if (exact.length) {
        repaired = exact[0];
        repaired.exact = false;
        repaired.score = best.score;
        repaired.text = best.text;
        repaired.line = best.line;
        repaired.repaired = again;
      }
    });
    return repaired !== null ? [repaired] : found;
  }

  // matching.approximate.misspelt: `text` with each of the wording's fixed words it lacks (at most
  // TYPO_WORDS, of TYPO_LENGTH letters or more) put in for the one word of `text`, not of the
  // wording, one edit from it; null when there is none for each, or the text put right does not match
  function misspelt(wording, text) {
    var word = new RegExp(FORMAT.WORD, "gu");
    var unique = function (list) { return list.filter(function (w, k) { return list.indexOf(w) === k; }); };
    var fixed = wording.skeleton.replace(/<[^<>]*>/g, " ").match(word) || [];
    var words = text.match(word) || [];
    var missing = unique(fixed).filter(function (w) { return words.indexOf(w) < 0; });
    if (missing.length < 1 || missing.length > FORMAT.TYPO_WORDS || missing.some(function (w) { return w.length < FORMAT.TYPO_LENGTH; })) return null;
    var spare = unique(words).filter(function (w) { return fixed.indexOf(w) < 0; });
    for (var k = 0; k < missing.length; k++) {
      var want = missing[k];
      var near = spare.filter(function (w) { return oneEdit(w, want); });
      if (near.length !== 1) return null;
      text = text.replace(new RegExp("(?<![A-Za-z0-9_])" + escapeRegex(near[0]) + "(?![A-Za-z0-9_])", "u"), function () { return want; });
    }
    return new RegExp(wording.regex, "u").test(text) ? text : null;
  }

  // matching.approximate.one_edit: `a` becomes `b` by one letter left out, added or changed, or two neighbours swapped
  function oneEdit(a, b) {
    if (a === b || Math.abs(a.length - b.length) > 1) return false;
    if (a.length === b.length) {
      var diff = [];
      for (var k = 0; k < a.length; k++) if (a[k] !== b[k]) diff.push(k);
      return diff.length === 1 || (diff.length === 2 && diff[1] === diff[0] + 1 && a[diff[0]] === b[diff[1]] && a[diff[1]] === b[diff[0]]);
    }
    var short = a.length < b.length ? a : b, long = a.length < b.length ? b : a, n = 0;
    while (n < short.length && short[n] === long[n]) n += 1;
    return short.slice(n) === long.slice(n + 1);
  }

  // matching.approximate.quoted_starts: [line, fragment, true] for each fragment of QUOTE_WORDS words or more quoted
  // in these lines (the last five)
  function quotedStarts(lines) {
    var found = [];
    lines.forEach(function (pair) {
      var re = new RegExp(FORMAT.QUOTED, "gu"), m;
      while ((m = re.exec(pair[1])) !== null) {
        var fragment = R.strip(m[1] !== undefined ? m[1] : m[2] !== undefined ? m[2] : m[3] !== undefined ? m[3] : m[4]);
        if ((fragment.match(new RegExp(FORMAT.WORD, "gu")) || []).length >= FORMAT.QUOTE_WORDS) found.push([pair[0], fragment, true]);
      }
    });
    return found.slice(-5);
  }

  // errkit/core/suggest.suggestions: each `suggest` of a fix computed from the matched values,
  // within the bounds of `meter` (R.Meter: one per answer, shared by its fixes; a new one by default)
  function suggestions(index, code, fixIndex, params, meter, kernel, candidates) {
    var compiled = (suggestOf(code) || [])[fixIndex] || [];
    var record = index.entries[code].fixes[fixIndex];
    var sources = record.suggest;
    var out = [];
    meter = meter || new R.Meter();
    // the index's cases assuming raised_by are each kernel's values: the told one's are the answer
    var byKernel = function (c) { return c[1].raised_by; };
    var anyTold = false;
    compiled.forEach(function (item) {
      (item[3] || []).forEach(function (c) { if (kernel && byKernel(c) === kernel) anyTold = true; });
    });
    compiled.forEach(function (item) {
      var label = item[0], names = item[1], fn = item[2];
      var head = anyTold ? (item[3] || []).filter(function (c) { return byKernel(c) === kernel && Object.keys(c[1]).length === 1; })[0] : null;
      if (head) { names = head[2].filter(function (n) { return n !== "raised_by"; }); fn = head[3]; }
      var missing = names.filter(function (n) { return !Object.prototype.hasOwnProperty.call(params, n); });
      if (missing.length) { // the source it needs is the told kernel's own, as suggest.py's
        var own = head ? (record.cases || []).filter(function (c) {
          return c.assume && c.assume.raised_by === kernel && Object.keys(c.assume).length === 1 && c.suggest &&
            Object.prototype.hasOwnProperty.call(c.suggest, label);
        })[0] : null;
        out.push({ label: label, needs: own ? own.suggest[label] : sources[label] });
        return;
      }
      try {
        var value = fn(params, meter);
        var why = R.unshowable(value);
        if (why !== null) throw R.PyError("OverBound", why);
        var found = { label: label, value: value };
        var sets = index.entries[code].fixes[fixIndex].sets || {};
        if (Object.prototype.hasOwnProperty.call(sets, label)) found.sets = sets[label];
        out.push(found);
      } catch (err) {
        // over a bound: said, as by the CLI; a suggestion that cannot be computed for these values is left out
        if (err.pyType === "OverBound") out.push({ label: label, not_computed: err.message.slice("OverBound: ".length) });
      }
    });
    var kernelCases = [];
    compiled.forEach(function (item) {
      var found = out.filter(function (s) { return s.label === item[0]; })[0];
      if (!found || !item[3]) return;
      var partition = [];
      var take = function (c) { if (c[4]) partition.push(c); else addCase(found, c, params, meter); };
      item[3].forEach(function (c) {
        var by = byKernel(c);
        if (by === undefined) return take(c); // the entry's own case, or one of what the message cannot show
        if (anyTold) { if (by === kernel && Object.keys(c[1]).length > 1) take(c); return; }
        if (by === "") { // a case for every kernel of the fix at once: when nothing says which may have raised it
          if (candidates === null || candidates === undefined) take(c);
          return;
        }
        if (Object.keys(c[1]).length === 1) kernelCases.push([found, c]);
      });
      if (partition.length) addPartition(found, partition, params, meter);
    });
    if (!anyTold) addKernels(kernelCases, candidates, params, meter);
    var requires = record.requires || {};
    out.forEach(function (found) {
      var said = [];
      (requires[found.label] || []).forEach(function (rule) {
        var kernels = anyTold ? [kernel] : candidates;
        if ((kernels === null || kernels === undefined || kernels.indexOf(rule.kernel) >= 0) && said.indexOf(rule.says) < 0) said.push(rule.says);
      });
      if (said.length && "value" in found) found.requires = said;
    });
    return out;
  }

  // errkit/core/suggest._add_kernels: the raising kernel not told: each suggestion's value valid for
  // every kernel that may have raised it, and each kernel's own value where it differs
  function addKernels(kernelCases, candidates, params, meter) {
    var byFound = new Map();
    kernelCases.forEach(function (pair) {
      if (!byFound.has(pair[0])) byFound.set(pair[0], []);
      byFound.get(pair[0]).push(pair[1]);
    });
    byFound.forEach(function (cases, found) {
      if (!("value" in found)) return;
      var ids = cases.map(function (c) { return c[1].raised_by; });
      var considered = (candidates === null || candidates === undefined ? ids : candidates).filter(function (k) { return ids.indexOf(k) >= 0; });
      var values = [];
      considered.forEach(function (k) {
        var c = cases[ids.indexOf(k)];
        try {
          var value = c[3](Object.assign({}, params, c[1]), meter);
          if (R.unshowable(value) === null) values.push([k, c[0], value]);
        } catch (err) { /* not for these values: nothing to say of this kernel */ }
      });
      if (!values.length) return;
      if (candidates !== null && candidates !== undefined) {
        // what every candidate allows; where their own values share none (the nearest of each), the
        // value written for all of the fix's kernels, which satisfies each candidate's rules too
        var shared = common(values.map(function (v) { return v[2]; }));
        if (!isEmpty(shared) || isEmpty(found.value)) found.value = shared;
      }
      var differ = values.filter(function (v) { return !R.eq(v[2], found.value); });
      if (differ.length) found.kernels = values.map(function (v) { return v[0]; }); // each one's own below
      differ.forEach(function (v) { (found.cases = found.cases || []).push({ when: v[1], value: v[2], kernel: v[0] }); });
    });
  }

  function isEmpty(value) { return value === null || value === undefined || (Array.isArray(value) && !value.length); }

  // errkit/core/suggest._common: what every value allows
  function common(values) {
    var first = values[0];
    var lists = values.every(function (v) { return Array.isArray(v); });
    if (lists) return first.filter(function (item) { return values.slice(1).every(function (v) { return v.some(function (x) { return R.eq(x, item); }); }); });
    return values.slice(1).every(function (v) { return R.eq(v, first); }) ? first : null;
  }

  // errkit/core/suggest._case_value: {when, value} (or not_computed) of a suggestion in a case; null
  // when the case is not one to consider (the message printed a value it assumes) or says nothing
  function caseValue(c, params, meter) {
    var when = c[0], assume = c[1], names = c[2], fn = c[3];
    var has = Object.prototype.hasOwnProperty;
    if (Object.keys(assume).some(function (n) { return has.call(params, n) && params[n] !== null && params[n] !== undefined; })) return null;
    var assumed = Object.assign({}, params, assume);
    if (names.some(function (n) { return !has.call(assumed, n); })) return null;
    try {
      var value = fn(assumed, meter);
      var why = R.unshowable(value);
      if (why !== null) throw R.PyError("OverBound", why);
      return { when: when, value: value };
    } catch (err) {
      if (err.pyType !== "OverBound") return null;
      return { when: when, not_computed: err.message.slice("OverBound: ".length) };
    }
  }

  // errkit/core/suggest._add_case: a suggestion's value in a case the message cannot show, where it
  // differs from the value without it
  function addCase(found, c, params, meter) {
    var said = caseValue(c, params, meter);
    if (said === null || ("value" in said && "value" in found && R.eq(said.value, found.value))) return;
    (found.cases = found.cases || []).push(said);
  }

  // errkit/core/suggest._add_partition: the cases covering every combination of what the message
  // cannot show; where no value holds in all of them and no value fits those that take none whatever
  // the message shows (kind 2), the value that holds in every one where any does, and those as cases
  // with no value
  function addPartition(found, cases, params, meter) {
    var pairs = cases.map(function (c) { return [c, caseValue(c, params, meter)]; }).filter(function (p) { return p[1] !== null; });
    var said = pairs.map(function (p) { return p[1]; });
    var filled = said.filter(function (s) { return "value" in s && !isEmpty(s.value); }).map(function (s) { return s.value; });
    var empty = said.filter(function (s) { return "value" in s && isEmpty(s.value); });
    var nowhere = pairs.every(function (p) { return !("value" in p[1] && isEmpty(p[1].value)) || p[0][4] === 2; });
    if (filled.length && empty.length && nowhere && filled.length + empty.length === said.length && "value" in found && isEmpty(found.value)) {
      var shared = common(filled);
      if (!isEmpty(shared)) {
        found.value = shared;
        found.cases = (found.cases || []).concat(empty);
        return;
      }
    }
    var whole = filled.length > 0 && "value" in found && isEmpty(found.value); // (then each case, none too, for the whole picture)
    said.forEach(function (one) {
      if (whole || !("value" in one && "value" in found && R.eq(one.value, found.value))) (found.cases = found.cases || []).push(one);
    });
  }

  function result(index, match, count, lastLine) {
    var entry = index.entries[match.code];
    var wording = match.wording;
    var raised = raisers(match), told = raised[0], candidates = raised[1];
    var fixes = match.weak ? entry.fixes : offered(entry.fixes, { kernels: candidates || [] }, told);
    var context = match.context || null;
    if (context && !match.weak) fixes = contextOrdered(fixes, index.data.kernels || {}, context.framework, context.site);
    var meter = new R.Meter(); // the bounds of the answer's suggestions, all together (errkit/core/bounds.py)
    return {
      code: match.code,
      slug: entry.slug,
      title: entry.title,
      confidence: match.weak ? "lookup" : match.exact ? "exact" : "approximate",
      score: match.score,
      matched: {
        wording: wording.template,
        variant: wording.variant,
        source: wording.source,
        exception: wording.exception,
        releases: wording.releases ? wording.releases.shown : null,
        life: life(wording.releases),
        kernel: kernelRef(index, told),
        kernels: (candidates || []).map(function (k) { return kernelRef(index, k); }),
        text: match.text,
      },
      context: context ? Object.assign({}, context) : null,
      params: match.params,
      fixes: fixes.map(function (fix) {
        return {
          summary: fix.summary,
          alternative: Boolean(fix.alternative),
          unverified: fix.unverified || null,
          kernel: kernelRef(index, fix.kernel),
          suggestions: match.exact || match.weak || match.repaired !== null ? suggestions(index, match.code, entry.fixes.indexOf(fix), match.params, meter, told, candidates) : [],
          before: fix.before,
          after: fix.after,
        };
      }),
      explanation: entry.explanation,
      verified: entry.verified || [],
      docs_url: entry.docs_url,
      page: entry.page,
      line: lastLine === undefined ? match.line : lastLine,
      count: count === undefined ? 1 : count,
    };
  }

  // matching.chunks.unprefixed: a paste's tracebacks printed behind a prefix repeated on each line, read as
  // the process printed them (the prefix off the traceback's first line and each next one holding it)
  // matching.chunks._holds_message: the text before `Traceback (most recent call last)` is a message, not a prefix
  function holdsMessage(head) {
    if (/,[ \t\n\r\f\v]*$/.test(head)) return true;
    var header = new RegExp(FORMAT.HEADER, "u").exec(head);
    return header !== null && Boolean((header.groups.msg || "").replace(/^[ ,]+|[ ,]+$/g, ""));
  }

  // chunks._unquoted: a paste whose every line but the blank ones starts with a markdown quote's `>`, without it
  function unquoted(text) {
    if (text.charAt(0) !== ">" && text.indexOf("\n>") < 0) return text;
    var lines = text.split("\n");
    if (!lines.every(function (line) { return !R.strip(line) || line.charAt(0) === ">"; })) return text;
    return lines.map(function (line) {
      return line.startsWith("> ") ? line.slice(2) : line.charAt(0) === ">" ? line.slice(1) : line;
    }).join("\n");
  }

  function unprefixed(text) {
    text = unquoted(text);
    if (text.indexOf(FORMAT.NEXT_TRACEBACK) < 0) return text;
    var prefix = null;
    return text.split("\n").map(function (line) {
      var at = line.indexOf(FORMAT.NEXT_TRACEBACK), head = at > 0 ? line.slice(0, at) : "";
      if (head.replace(/^[ \t|+]+|[ \t|+]+$/g, "") && !head.endsWith("Group ") && !holdsMessage(head)) {
        prefix = head;
        return line.slice(at);
      }
      if (prefix !== null && line.startsWith(prefix)) return line.slice(prefix.length);
      prefix = null;
      return line;
    }).join("\n");
  }

  // -- a paste read again (errkit/explain/matching/rereading.py) ------------------------------------

  function collapse(s) { // " ".join(s.split())
    return R.strip(s).split(/[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/).filter(Boolean).join(" ");
  }

  // rereading.unwrapped: [the text with each run of wrapped lines joined by a space, the first line number of
  // each of its lines], or null when no line was joined; without `quotes` (false), a leading `>` is text
  function unwrapped(text, quotes) {
    var lines = text.split("\n"), out = [], numbers = [], before = null;
    for (var n = 0; n < lines.length; n++) {
      var line = lines[n].replace(/\r+$/, "");
      var quoted = quotes !== false && line.charAt(0) === ">";
      var body = quoted ? line.slice(1).replace(/^ +/, "") : line;
      var joinable = Boolean(R.strip(body)) && lstrip(body.charAt(0)) !== "" && !body.startsWith(FENCE);
      if (joinable && before !== null && before[0] && before[1] === quoted) {
        out[out.length - 1] = rstrip(out[out.length - 1]) + " " + body;
      } else {
        out.push(quoted && joinable ? body : line);
        numbers.push(n + 1);
      }
      before = [joinable, quoted];
    }
    return out.length === lines.length ? null : [out.join("\n"), numbers];
  }
  var FENCE = "```", FOLDED_HEADER = /(?:^|[ \t:\[\]|>(])[A-Za-z_][A-Za-z0-9_.]*(?:error|exception): ?/i;
  var CASED = { none: "None", "true": "True", "false": "False" };

  function fixed(f) { return f.match.weak ? 0 : f.match.wording.literal_chars; }
  // rereading._better: as many answers, the last holding the text the first one matched, with more fixed
  // text, or of the same entry going on past where the first one's text ends as no message does
  function better(again, found) {
    if (again.length < found.length) return false;
    var first = found[0].match, second = again[0].match, shorter = first.text || "", longer = second.text || "";
    var at = longer.indexOf(shorter);
    if (at < 0) return false;
    var after = longer.slice(at + shorter.length), lead = after.length - after.replace(/^[,;:]+/, "").length;
    return fixed(again[0]) > fixed(found[0]) || (second.code === first.code && R.strip(after) !== "" &&
      (continued(shorter + after.slice(0, lead)) || continues(after)));
  }
  var CONTINUED = "a an and are as at be by for from in is of on or than the to with".split(" ");
  // rereading.continued: whether a text ends as no message does (a comma, colon or semicolon; an article,
  // preposition or conjunction)
  function continued(text) {
    text = rstrip(text);
    if (/[,:;]$/.test(text)) return true;
    var words = R.strip(text).split(/\s+/);
    return CONTINUED.indexOf(words[words.length - 1].toLowerCase()) >= 0;
  }
  // rereading.continues: whether a text starts as only the rest of a sentence does (in lower case, or a conjunction)
  function continues(text) {
    var first = lstrip(text).charAt(0), word = R.strip(text).split(/\s+/)[0].toLowerCase();
    return (first !== first.toUpperCase() && first === first.toLowerCase()) || ["and", "or", "nor", "but"].indexOf(word) >= 0;
  }

  // rereading.reread: the matches of a paste, read again with its wrapped lines joined (when that finds a
  // wording with more fixed text), else, when nothing was found, each line without case
  function reread(index, text, found) {
    if (utf8Length(text) > FORMAT.PASTE_SIZE) return found;
    var joined = !found.length || countNewlines(R.strip(text), 0, Infinity) < FORMAT.REREAD_LINES ? unwrapped(text) : null;
    if (joined !== null) {
      var again = findAll(index, unprefixed(joined[0]));
      if (again.length && (!found.length || better(again, found))) {
        again.forEach(function (f) { f.lastLine = f.match.line = joined[1][Math.min(f.lastLine, joined[1].length) - 1]; });
        return again;
      }
    }
    if (!found.length && joined !== null && text.indexOf("\n>") >= 0) {
      var literal = unwrapped(text, false);
      var read = literal !== null ? findAll(index, unprefixed(literal[0])) : [];
      if (read.length) {
        read.forEach(function (f) { f.lastLine = f.match.line = literal[1][Math.min(f.lastLine, literal[1].length) - 1]; });
        return read;
      }
    }
    if (found.length) {
      var pasted = text.split("\n");
      found.forEach(function (f) { recased(index, f, pasted); });
      return found;
    }
    var lines = (joined !== null ? joined[0] : text).split("\n"), matches = [];
    for (var n = 0; n < lines.length; n++) {
      var m = index.foldedMatch(index.clean(lines[n]), joined !== null ? joined[1][n] : n + 1);
      if (m !== null && matches.every(function (x) { return x.code !== m.code; })) {
        index.readAfter(m, lines, n + 1);
        matches.push(m);
      }
    }
    return matches.reverse().map(function (m) { return { match: m, count: 1, lastLine: m.line }; });
  }

  // rereading._recased: a message retyped in another case whose start matched a shorter wording of its entry
  // exactly, answered with the entry's longer wording its line matches without case (approximate)
  function recased(index, f, lines) {
    var match = f.match;
    if (match.weak || match.line < 1 || match.line > lines.length) return;
    var longer = index.foldedMatch(index.clean(lines[match.line - 1]), match.line, match);
    if (longer !== null && Object.keys(longer.params).length > Object.keys(match.params).length) {
      index.readAfter(longer, lines, match.line);
      f.match = longer;
    }
  }

  // rereading.Folded.read_after: the values its entry `reads` that a case-folded match (of line n) lacks, read
  // without case from its line and the lines after it (READ_WINDOW characters at most, to the next traceback)
  Index.prototype.readAfter = function (match, lines, n) {
    var entry = this.entries[match.code], reads = (entry && entry.reads) || [];
    if (!reads.length) return;
    var window = lines.slice(n - 1).join("\n").slice(0, FORMAT.READ_WINDOW);
    var newline = window.indexOf("\n"), cut = newline >= 0 ? window.indexOf(FORMAT.NEXT_TRACEBACK, newline + 1) : -1;
    if (cut >= 0) window = window.slice(0, cut);
    var has = function (o, p) { return Object.prototype.hasOwnProperty.call(o, p); };
    var extra = {}, any = false;
    this.folded = this.folded || {};
    for (var k = 0; k < reads.length; k++) {
      var key = "read " + match.code + " " + k;
      var re = this.folded[key] || (this.folded[key] = new RegExp(reads[k].regex, "iu"));
      var m = re.exec(window);
      var found = m ? captured(reads[k].captures, recasedGroups(m)) : null;
      for (var param in found || {}) {
        if (!has(match.params, param) && !has(extra, param)) { extra[param] = found[param]; any = true; }
      }
    }
    if (any) match.params = Object.assign({}, match.params, extra);
  };

  // rereading._Recased: a match's groups, `None`, `True` and `False` read as written in their case
  function recasedGroups(m) {
    var groups = {};
    for (var g in m.groups || {}) {
      var v = m.groups[g];
      groups[g] = typeof v === "string" && Object.prototype.hasOwnProperty.call(CASED, R.strip(v).toLowerCase()) ? CASED[R.strip(v).toLowerCase()] : v;
    }
    return groups;
  }

  // rereading.Folded.match: the wording a line matches without case, the most fixed text first; approximate.
  // `longerThan`: only the wordings of that match's entry with more fixed text than its own
  Index.prototype.foldedMatch = function (line, lineNo, longerThan) {
    if (!this.foldedKeys) this.foldedKeys = this.keys.map(function (k) { return collapse(k).toLowerCase(); });
    var lowered = collapse(line).toLowerCase(), ids = [], self = this;
    for (var k = 0; k < this.foldedKeys.length; k++) if (lowered.indexOf(this.foldedKeys[k]) >= 0) ids.push.apply(ids, this.keyed[k]);
    if (longerThan) {
      ids = ids.filter(function (i) {
        return self.wordings[i].code === longerThan.code && self.wordings[i].literal_chars > longerThan.wording.literal_chars;
      });
    }
    if (!ids.length) return null;
    var header = FOLDED_HEADER.exec(line), stripped = R.strip(line);
    var texts = header ? messageForms(R.strip(line.slice(header.index + header[0].length)), "").map(function (f) { return f[1]; }) : [];
    var rounds = [["full", texts.concat([stripped])], ["any", [stripped]]], best = null;
    this.folded = this.folded || {};
    for (var r = 0; r < rounds.length; r++) {
      for (var t = 0; t < rounds[r][1].length; t++) {
        for (var q = 0; q < ids.length; q++) {
          var i = ids[q], how = rounds[r][0], key = how + " " + i;
          var source = this.wordings[i].regex;
          var re = this.folded[key] || (this.folded[key] = new RegExp(how === "full" ? "^(?:" + source + ")$" : source, "iu"));
          var m = re.exec(rounds[r][1][t]);
          var params = m ? captured(this.wordings[i].captures, recasedGroups(m)) : null;
          var w = this.wordings[i];
          if (params !== null && (best === null || w.literal_chars > best.wording.literal_chars)) {
            best = newMatch(w.code, w, params, lineNo, { exact: false, score: FORMAT.APPROXIMATE_MAX, text: m[0] });
          }
        }
      }
      if (best !== null) return best;
    }
    return null;
  };

  // `errkit explain --all` on a pasted text: every distinct match, most recent first; when there
  // is none, the closest wordings (approximate). [] when nothing is close either.
  // answer.read_again: nothing matched, several lines, or a match with text after it on its line
  function readAgain(found, text) {
    var stripped = R.strip(text);
    return !found.length || stripped.indexOf("\n") >= 0 || found.some(function (f) { return !stripped.endsWith(R.strip(f.match.text || "")); });
  }

  function explain(index, text, options) {
    options = options || {};
    if (utf8Length(text) <= FORMAT.PASTE_SIZE) text = unprefixed(text);
    var found = findAll(index, text);
    if (R.strip(text) && readAgain(found, text)) found = reread(index, text, found); // rereading.py
    var results = (options.all === false ? found.slice(0, 1) : found).map(function (f) {
      return result(index, f.match, f.count, f.lastLine);
    });
    if (!results.length) {
      var tail = text.slice(-FORMAT.TAIL);
      results = approximate(index, tail, 3, 1 + countNewlines(text, 0, text.length - tail.length)).map(function (m) { return result(index, m); });
    }
    return results;
  }

  function firstParagraph(text) {
    var para = R.strip(text).split("\n\n")[0];
    return R.strip(para).split(/\s+/).join(" ");
  }

  return {
    FORMAT: FORMAT,
    Index: Index,
    explain: explain,
    life: life,
    approximate: approximate,
    suggestions: suggestions,
    ratio: ratio,
    normalise: normalise,
    firstParagraph: firstParagraph,
  };
});
