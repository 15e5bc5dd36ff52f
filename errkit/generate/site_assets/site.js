/* errkit site, every page: names the theme's search dialog for assistive technology (axe-core's
 * aria-dialog-name). Kept tiny: the paste page's scripts load only on the pages that use them. */
(function () {
  "use strict";
  var dialogs = document.querySelectorAll(".md-search[role=dialog]:not([aria-label]):not([aria-labelledby])");
  for (var i = 0; i < dialogs.length; i++) dialogs[i].setAttribute("aria-label", "Search");
})();
