// Heatmap: filter rows by name as the user types, and keep the filter in the URL (?q=) so the
// link can be shared. The server applies the same filter when the page is opened with ?q=.
// When the rows span several pages, this page holds only some of them: Enter sends the filter
// to the server (the form's GET), which filters every page.
(function () {
  "use strict";
  var input = document.getElementById("heatmap-q");
  var table = document.getElementById("heatmap");
  var form = document.getElementById("heatmap-filter");
  if (!input || !table || table.hasAttribute("data-paged")) return;
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var count = document.getElementById("heatmap-count");
  var none = document.getElementById("heatmap-none");

  function apply() {
    var needle = input.value.trim().toLowerCase();
    var shown = 0;
    rows.forEach(function (row) {
      var match = row.getAttribute("data-name").toLowerCase().indexOf(needle) !== -1;
      row.hidden = !match;
      if (match) shown += 1;
    });
    count.textContent = shown + " of " + count.getAttribute("data-total");
    if (none) none.hidden = shown !== 0;
    var url = new URL(window.location.href);
    if (needle) url.searchParams.set("q", input.value.trim());
    else url.searchParams.delete("q");
    window.history.replaceState(null, "", url);
  }

  var timer = null;
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(apply, 120);
  });
  // Enter filters in place too; without JS the form's GET does it on the server.
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    apply();
  });
})();
