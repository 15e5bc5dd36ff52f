/* The site's 404 page (site/overrides/404.html): sends an address on, or says what was meant.
 *
 *   - an address without a version (…/errors/RA105/), or with a version the site does not have
 *     (…/0.2/errors/RA105/), goes to the same page of the latest release, its query and fragment
 *     kept (versions.json, mike's, one folder above this build);
 *   - an entry's address with a code the catalogue does not have (…/errors/ra105/, RA1055) lists
 *     the nearest codes (codes.json: case ignored, then the fewest letters changed), each link
 *     keeping the reader's values (the query) and the version of the address.
 *
 * Loaded by the 404 page with data-base, the root of the build it belongs to (mkdocs' base_url).
 * Every text is put in the page with textContent.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  var here = new URL(script.getAttribute("data-base"), window.location.href);
  var root = new URL("../", here);
  var path = window.location.pathname;
  var kept = window.location.search + window.location.hash;
  var VERSIONISH = /^v?[0-9]+(\.[0-9]+)*([a-z]+[0-9]*)?$/i; // 0.2, v1.0, 1.0rc1

  // Levenshtein distance between two short strings (codes).
  function distance(a, b) {
    var row = [], i, j;
    for (j = 0; j <= b.length; j++) row.push(j);
    for (i = 1; i <= a.length; i++) {
      var prev = row[0];
      row[0] = i;
      for (j = 1; j <= b.length; j++) {
        var cur = row[j];
        row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
        prev = cur;
      }
    }
    return row[b.length];
  }

  // The codes nearest a mistyped one: case ignored; then those the fewest edits away (two at most), five at most.
  function nearest(word, codes) {
    var upper = word.toUpperCase(), best = 3, found = [];
    Object.keys(codes).forEach(function (code) {
      var d = code.toUpperCase() === upper ? 0 : distance(upper, code.toUpperCase());
      if (d < best) { best = d; found = []; }
      if (d === best) found.push(code);
    });
    return found.sort().slice(0, 5);
  }

  function didYouMean() {
    var m = /^(.*\/)errors\/([^/]+)\/?(index\.html)?$/.exec(path);
    var box = document.getElementById("errkit-did-you-mean");
    if (!m || !box) return;
    var word;
    try {
      word = decodeURIComponent(m[2]);
    } catch (err) {
      return;
    }
    fetch(new URL("assets/errkit/codes.json", here).href).then(function (r) {
      return r.ok ? r.json() : { codes: {} };
    }).then(function (data) {
      var codes = data.codes || {};
      var found = nearest(word, codes);
      if (!found.length) return;
      var list = document.createElement("ul");
      found.forEach(function (code) {
        var item = document.createElement("li");
        var link = document.createElement("a");
        link.href = m[1] + "errors/" + encodeURIComponent(code) + "/" + kept;
        link.textContent = code;
        item.appendChild(link);
        item.appendChild(document.createTextNode(": " + codes[code]));
        list.appendChild(item);
      });
      var title = document.createElement("h2");
      title.id = "did-you-mean";
      title.textContent = "Did you mean";
      box.textContent = "";
      box.appendChild(title);
      if (window.location.search) {
        var note = document.createElement("p");
        note.textContent = "Each link keeps the values of your address.";
        box.appendChild(note);
      }
      box.appendChild(list);
      box.hidden = false;
      box.setAttribute("data-ready", "yes");
    }, function () {});
  }

  if (root.href === here.href || path.indexOf(root.pathname) !== 0) return didYouMean();
  var rest = path.slice(root.pathname.length);
  var first = decodeURIComponent(rest.split("/")[0]);
  fetch(new URL("versions.json", root).href).then(function (r) {
    return r.ok ? r.json() : [];
  }).then(function (versions) {
    var known = false, target = versions.length ? versions[0].version : null;
    versions.forEach(function (v) {
      var aliases = v.aliases || [];
      if (v.version === first || aliases.indexOf(first) >= 0) known = true;
      if (aliases.indexOf("latest") >= 0) target = v.version;
    });
    if (!known && target) {
      // an unknown version is dropped; an address without one keeps all it has
      var after = VERSIONISH.test(first) ? rest.slice(first.length + 1) : rest;
      window.location.replace(root.pathname + encodeURIComponent(target) + "/" + after + kept);
      return;
    }
    didYouMean(); // a mistyped address inside a version stays here
  }, didYouMean);
})();
