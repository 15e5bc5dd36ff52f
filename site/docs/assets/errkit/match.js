/* errkit matcher for the browser: what `errkit explain` does with errkit/_index.json, in JavaScript.
 *
 * A line-by-line port of errkit/match.py (one regex of every wording's key picks the lines, the
 * keys present in a line pick the wordings to try, `SomeError: msg` header extraction, fullmatch
 * of the message, then of the line, then a search anchored at the line end, then anywhere;
 * tie-break by literal_chars; typed values as values.parse; empty messages recognised by their
 * raise site) and of errkit/explain.py (distinct matches, most recent first; closest wordings,
 * from a shortlist of those sharing the rarest words, when nothing matches exactly; concrete
 * suggestions).
 * It reads assets/errkit/index.json, which `errkit generate` builds from the same index with
 * every regex translated to JavaScript; tests/test_site.py runs both sides on the catalogue.
 */
(function (root, factory) {
  "use strict";
  if (typeof module === "object" && module.exports) {
    module.exports = factory(require("./runtime.js"), require("./suggest.js"));
  } else {
    root.ErrkitMatch = factory(root.ErrkitRuntime, root.ErrkitSuggest);
  }
})(typeof self !== "undefined" ? self : this, function (R, SUGGEST) {
  "use strict";

  var TAIL = 256 * 1024; // explain.TAIL
  var SPLITLINES = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/; // str.splitlines()

  var SHORTLIST = 40; // match.SHORTLIST
  var POSTINGS_BUDGET = 4000; // match.POSTINGS_BUDGET
  var MARKERS = ["Error", "Exception"]; // match.MARKERS

  function escapeRegex(text) {
    return text.replace(/[.*+?^${}()|[\]\\\/]/g, "\\$&"); // what the u flag allows to escape
  }

  // match.key_pattern: a key's words with any run of whitespace between them
  function keyPattern(key) {
    return key.split(" ").map(escapeRegex).join("\\s+");
  }

  function byString(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  function Index(data) {
    this.data = data;
    this.entries = data.entries;
    this.wordings = data.wordings;
    var keyed = new Map();
    this.located = [];
    this.always = [];
    for (var i = 0; i < this.wordings.length; i++) {
      var w = this.wordings[i];
      if (w.key) {
        if (!keyed.has(w.key)) keyed.set(w.key, []);
        keyed.get(w.key).push(i);
      } else if (w.location) {
        this.located.push(i);
      } else if (w.template) {
        this.always.push(i);
      }
    }
    this.keys = Array.from(keyed.keys()).sort(byString);
    this.keyed = this.keys.map(function (k) { return keyed.get(k); });
    this.keyRegexes = this.keys.map(function (k) { return new RegExp(keyPattern(k), "u"); });
    var alternatives = this.keys.map(keyPattern);
    if (this.always.length || this.located.length) alternatives = alternatives.concat(MARKERS);
    this.locator = alternatives.length ? new RegExp(alternatives.join("|"), "gu") : null;
    this.postings = null;
    this.skeletons = {};
    this.compiled = {};
    var p = data.patterns;
    this.header = new RegExp(p.header, "u");
    this.frame = new RegExp(p.frame, "u");
    this.ansi = new RegExp(p.ansi, "gu");
    this.word = new RegExp(p.word, "gu");
    this.lineEnd = p.line_end;
    this.maxLine = data.max_line;
  }

  Index.prototype.regex = function (i) {
    var c = this.compiled[i];
    if (!c) {
      var source = this.wordings[i].regex;
      c = this.compiled[i] = {
        any: new RegExp(source, "u"),
        end: new RegExp("(?:" + source + ")" + this.lineEnd, "u"),
        full: new RegExp("^(?:" + source + ")$", "u"),
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
    return null;
  };

  // -- exact matching ---------------------------------------------------------------------------

  Index.prototype.candidates = function (line) {
    var ids = [];
    for (var k = 0; k < this.keys.length; k++) {
      if (this.keyRegexes[k].test(line)) ids.push.apply(ids, this.keyed[k]);
    }
    return this.always.length ? ids.concat(this.always) : ids;
  };

  Index.prototype.extract = function (i, groups) {
    var out = {};
    var captures = this.wordings[i].captures;
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
      if (Object.prototype.hasOwnProperty.call(out, param) && !R.eq(out[param], value)) return null;
      out[param] = value;
    }
    return out;
  };

  Index.prototype.best = function (ids, text, how, lineNo) {
    var best = null;
    for (var k = 0; k < ids.length; k++) {
      var i = ids[k];
      var m = this.regex(i)[how].exec(text);
      if (!m) continue;
      var params = this.extract(i, m.groups || {});
      if (params === null) continue;
      var wording = this.wordings[i];
      if (best === null || wording.literal_chars > best.wording.literal_chars) {
        best = { code: wording.code, wording: wording, params: params, line: lineNo, exact: true, score: 1.0, text: text };
      }
    }
    return best;
  };

  // match.Index.match_line: a JSON log line is read as the strings it holds, each line of each
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
          if (found !== null) return found;
        }
      }
    }
    return this.matchText(line, lineNo, ids);
  };

  // match._json_strings: the string values of a JSON object or array (two levels deep), in order
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
    // Most specific first: the message after `SomeError: `, the whole line, the line's end, anywhere.
    if (header && header.groups.msg !== undefined) {
      var hit = this.best(ids, R.strip(header.groups.msg), "full", lineNo);
      if (hit !== null) return hit;
    }
    var stripped = R.strip(line);
    var hows = ["full", "end", "any"];
    for (var h = 0; h < hows.length; h++) {
      var found = this.best(ids, stripped, hows[h], lineNo);
      if (found !== null) return found;
    }
    return null;
  };

  // match.Index.match_location: the most specific location first, the same exception class, then
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
        return { code: w.code, wording: w, params: params, line: lineNo, exact: true, score: 1.0, text: message || framePath + " in " + func };
      }
    }
    return null;
  };

  // Every match in a block of text, in order: the lines holding a key (or, when some wordings have
  // none, naming an exception) are the only ones read further.
  Index.prototype.scan = function (text, firstLine) {
    firstLine = firstLine === undefined ? 1 : firstLine;
    var out = [];
    if (this.locator === null) return out;
    var lineNo = firstLine, counted = 0, pos = 0;
    var half = Math.floor(this.maxLine / 2);
    while (pos < text.length) {
      this.locator.lastIndex = pos;
      var hit = this.locator.exec(text);
      if (hit === null) break;
      var where = hit.index;
      var start = text.lastIndexOf("\n", where - 1) + 1;
      if (where === 0) start = 0;
      var end = text.indexOf("\n", where);
      end = end < 0 ? text.length : end;
      pos = end + 1;
      // lengths in code points, as Python counts them; a huge line: the maxLine characters around the hit
      var line = end - start <= 4 * this.maxLine ? text.slice(start, end) : null;
      if (line !== null && line.length > this.maxLine && Array.from(line).length > this.maxLine) line = null;
      if (line === null) {
        var before = Array.from(text.slice(Math.max(start, where - 4 * half), where));
        var after = Array.from(text.slice(where, Math.min(end, where + 4 * half)));
        line = before.slice(Math.max(0, before.length - half)).join("") + after.slice(0, half).join("");
      }
      lineNo += countNewlines(text, counted, start);
      counted = start;
      var match = this.matchLine(line, lineNo);
      if (match === null && this.located.length) match = this.locatedMatch(text, start, line, lineNo);
      if (match !== null) out.push(match);
    }
    return out;
  };

  function countNewlines(text, from, end) {
    var n = 0;
    for (var i = text.indexOf("\n", from); i >= 0 && i < end; i = text.indexOf("\n", i + 1)) n++;
    return n;
  }

  Index.prototype.locatedMatch = function (text, start, line, lineNo) {
    var header = this.header.exec(this.clean(line));
    if (!header) return null;
    var window = text.slice(Math.max(0, start - 4000), start).split(SPLITLINES);
    var last = null;
    for (var k = 0; k < window.length; k++) {
      var m = this.frame.exec(window[k]);
      if (m) last = m;
    }
    if (!last) return null;
    return this.matchLocation(last.groups.path, last.groups.func, lineNo, header.groups.exc, R.strip(header.groups.msg || ""));
  };

  // match.Index.shortlist: the wordings sharing the rarest words with `text`, bounded work
  Index.prototype.shortlist = function (text) {
    var self = this;
    if (this.postings === null) {
      var postings = new Map();
      this.wordings.forEach(function (wording, i) {
        if (!wording.template) return;
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
    var budget = POSTINGS_BUDGET;
    for (var k = 0; k < words.length && budget > 0; k++) {
      var ids = post.get(words[k]);
      var weight = 1.0 / ids.length;
      var n = Math.min(ids.length, budget);
      for (var j = 0; j < n; j++) scores.set(ids[j], (scores.get(ids[j]) || 0) + weight);
      budget -= ids.length;
    }
    return Array.from(scores.keys()).sort(function (a, b) { return scores.get(b) - scores.get(a) || a - b; }).slice(0, SHORTLIST);
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

  // explain.explain_chunks for one text: distinct exact matches, most recent first
  function findAll(index, text) {
    var found = new Map();
    index.scan(text, 1).forEach(function (match) {
      var k = key(match);
      var item = found.get(k);
      if (!item) {
        item = { match: match, count: 0, lastLine: match.line };
        found.set(k, item);
      }
      item.count += 1;
      item.lastLine = match.line;
    });
    return Array.from(found.values()).sort(function (a, b) { return b.lastLine - a.lastLine; });
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
  function approximate(index, tail, limit) {
    limit = limit === undefined ? 3 : limit;
    var lines = tail.split(SPLITLINES).filter(function (l) { return R.strip(l); }).map(function (l) { return index.clean(l); });
    var segments = [];
    lines.forEach(function (l) {
      var header = index.header.exec(l);
      if (header && R.strip(header.groups.msg || "")) segments.push(R.strip(header.groups.msg));
    });
    if (!segments.length) segments = lines.slice(-20).map(R.strip);
    // similarity is quadratic: compare a message-sized piece
    segments = segments.slice(-5).map(function (seg) { return seg.length > 2000 ? seg.slice(-2000) : seg; });
    var scored = new Map();
    segments.forEach(function (seg) {
      var normSeg = normalise(seg);
      index.shortlist(seg).forEach(function (i) {
        var wording = index.wordings[i];
        var score = ratio(normSeg, index.normalisedSkeleton(i));
        var best = scored.get(wording.code);
        if (score >= 0.6 && (!best || score > best.score)) {
          scored.set(wording.code, { code: wording.code, wording: wording, params: {}, line: 0, exact: false, score: R.round(score, 3n), text: seg });
        }
      });
    });
    return Array.from(scored.values()).sort(function (x, y) { return y.score - x.score; }).slice(0, limit);
  }

  // explain.suggestions: each `suggest` of a fix computed from the matched values
  function suggestions(index, code, fixIndex, params) {
    var compiled = (SUGGEST && SUGGEST[code] && SUGGEST[code][fixIndex]) || [];
    var sources = index.entries[code].fixes[fixIndex].suggest;
    var out = [];
    compiled.forEach(function (item) {
      var label = item[0], names = item[1], fn = item[2];
      var missing = names.filter(function (n) { return !Object.prototype.hasOwnProperty.call(params, n); });
      if (missing.length) {
        out.push({ label: label, needs: sources[label] });
        return;
      }
      try {
        out.push({ label: label, value: fn(params) });
      } catch (err) {
        // a suggestion that cannot be computed for these values is left out, as by the CLI
      }
    });
    return out;
  }

  function result(index, match, count, lastLine) {
    var entry = index.entries[match.code];
    var wording = match.wording;
    return {
      code: match.code,
      slug: entry.slug,
      title: entry.title,
      confidence: match.exact ? "exact" : "approximate",
      score: match.score,
      matched: {
        wording: wording.template,
        variant: wording.variant,
        source: wording.source,
        exception: wording.exception,
        text: match.text,
      },
      params: match.params,
      fixes: entry.fixes.map(function (fix, n) {
        return {
          summary: fix.summary,
          suggestions: match.exact ? suggestions(index, match.code, n, match.params) : [],
          before: fix.before,
          after: fix.after,
        };
      }),
      explanation: entry.explanation,
      docs_url: entry.docs_url,
      page: entry.page,
      line: lastLine === undefined ? match.line : lastLine,
      count: count === undefined ? 1 : count,
    };
  }

  // `errkit explain --all` on a pasted text: every distinct match, most recent first; when there
  // is none, the closest wordings (approximate). [] when nothing is close either.
  function explain(index, text, options) {
    options = options || {};
    var found = findAll(index, text);
    var results = (options.all === false ? found.slice(0, 1) : found).map(function (f) {
      return result(index, f.match, f.count, f.lastLine);
    });
    if (!results.length) {
      results = approximate(index, text.slice(-TAIL)).map(function (m) { return result(index, m); });
    }
    return results;
  }

  function firstParagraph(text) {
    var para = R.strip(text).split("\n\n")[0];
    return R.strip(para).split(/\s+/).join(" ");
  }

  return {
    Index: Index,
    explain: explain,
    approximate: approximate,
    suggestions: suggestions,
    ratio: ratio,
    normalise: normalise,
    firstParagraph: firstParagraph,
  };
});
