/* The DOM helpers of the paste page and the entry pages' "For your values": elements built with
 * textContent (catalogue text and pasted text are never parsed as HTML), and catalogue prose as
 * nodes: `code spans` become <code>, *x* <em> and **x** <strong>, as site.py's prose() renders
 * them on the entry pages; everything else stays text. And a size as a reader reads it: bytes with
 * binary units beside them (31415337 bytes (29.96 MiB)).
 */
(function (root, factory) {
  if (typeof module === "object" && module.exports) module.exports = factory();
  else root.ErrkitDom = factory();
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      if (name === "text") node.textContent = attrs[name];
      else if (name === "className") node.className = attrs[name];
      else node.setAttribute(name, attrs[name]);
    });
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  var EMPHASIS = /(?<![\w*\\])(\*\*?)(?=[^\s*])(.+?)(?<=[^\s*\\])\1(?![\w*])/g;

  function emphasis(text) {
    var nodes = [], pos = 0, m;
    EMPHASIS.lastIndex = 0;
    while ((m = EMPHASIS.exec(text)) !== null) {
      if (m.index > pos) nodes.push(document.createTextNode(text.slice(pos, m.index)));
      nodes.push(el(m[1] === "**" ? "strong" : "em", { text: m[2] }));
      pos = m.index + m[0].length;
    }
    if (pos < text.length) nodes.push(document.createTextNode(text.slice(pos)));
    return nodes;
  }

  function prose(text) {
    var nodes = [];
    String(text).split(/(`[^`]+`)/).forEach(function (part) {
      if (!part) return;
      if (part.length > 2 && part[0] === "`" && part[part.length - 1] === "`") nodes.push(el("code", { text: part.slice(1, -1) }));
      else nodes = nodes.concat(emphasis(part));
    });
    return nodes;
  }

  // A count of bytes in binary units (KiB, MiB, ... with two decimals); under 1 KiB, as bytes.
  function binary(n) {
    var units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"], x = Number(n), u = 0;
    while (Math.abs(x) >= 1024 && u < units.length - 1) { x /= 1024; u++; }
    return u ? x.toFixed(2) + " " + units[u] : String(n) + " bytes";
  }

  // A value as R.show writes it, and a size (a bytes param, or a suggestion labelled with bytes)
  // as "31415337 bytes (29.96 MiB)".
  function sized(shown, value, isBytes) {
    if (!isBytes || typeof value !== "bigint") return shown;
    var units = binary(value);
    return /bytes$/.test(units) ? units : shown + " bytes (" + units + ")";
  }

  // A suggestion's values in the cases its message cannot show (errkit/core/suggest.py's `cases`), as
  // a list under it ("with segment_ids, under jax.grad: 256"), or null; `show` writes a value.
  // core/runtime.py case_groups: cases with the same value together, in the order first met; the
  // group of the value most of them share, when it is at least MANY, last as "the other N cases"; a case
  // not computed, or a kernel's, is its own
  var MANY = 4;
  function caseGroups(cases, show) {
    var keys = [], groups = {};
    cases.forEach(function (c, n) {
      var key = "value" in c && !("kernel" in c) ? "v" + show(c.value) : "n" + n;
      if (!Object.prototype.hasOwnProperty.call(groups, key)) { groups[key] = [[], c]; keys.push(key); }
      groups[key][0].push(c.when);
    });
    var rows = keys.map(function (k) { return groups[k]; }), most = null;
    rows.forEach(function (row) { if (!("kernel" in row[1]) && (most === null || row[0].length > most[0].length)) most = row; });
    if (most === null || most[0].length < MANY || 2 * most[0].length <= cases.length || rows.length === 1) {
      return rows.map(function (row) { return [row[0], row[1], false]; });
    }
    return rows.filter(function (row) { return row !== most; }).map(function (row) { return [row[0], row[1], false]; })
      .concat([[most[0], most[1], true]]);
  }

  function caseList(suggestion, show) {
    if (!suggestion.cases || !suggestion.cases.length) return null;
    var list = el("ul", { className: "errkit-cases" });
    caseGroups(suggestion.cases, show).forEach(function (row) {
      var c = row[1], when = row[2] ? "in the other " + row[0].length + " cases" : row[0].join("; ");
      var none = "value" in c && (c.value === null || (Array.isArray(c.value) && !c.value.length));
      list.appendChild(el("li", { className: "errkit-case" }, "not_computed" in c ? [when + ": not computed: " + c.not_computed]
        : none ? [when + (/none:/.test(suggestion.label) ? ": none" : ": none satisfies every constraint")] // render.none_said
        : [when + ": ", el("code", { text: show(c.value) })]));
    });
    return list;
  }

  // core/runtime.py valued: a suggestion's label beside a value, without the note saying what an empty one means
  function valued(label) {
    var at = label.indexOf("none: "), opened = at < 0 ? -1 : label.lastIndexOf("(", at), closed = at < 0 ? -1 : label.indexOf(")", at);
    if (at < 0 || opened < 0 || closed < 0 || label.slice(opened + 1, at).indexOf("(") >= 0 || label.slice(at, closed).indexOf("(") >= 0) return label;
    if (!label.slice(opened + 1, at).trim()) return (label.slice(0, opened).replace(/\s+$/, "") + label.slice(closed + 1)).trim();
    var semicolon = label.lastIndexOf(";", at);
    return semicolon < opened ? label : label.slice(0, semicolon) + label.slice(closed);
  }

  return { el: el, prose: prose, binary: binary, sized: sized, caseList: caseList, valued: valued };
});
