// Sorting and filtering for the report's tables, offline: no library, no request, works from file://.
// Every <table class="sortable"> gets a filter box above it (rows whose text holds every word typed
// stay shown) and headers that sort on click (again: the other way). Cells are compared as numbers
// when both start with one ("62.5 ± 4.1", "$0.0200", "+12.5 [...]"), as text otherwise.
(function () {
  "use strict";

  function key(cell) {
    var text = (cell ? cell.textContent : "").trim();
    var number = parseFloat(text.replace(/^\$/, ""));
    return isNaN(number) ? { text: text.toLowerCase() } : { number: number, text: text.toLowerCase() };
  }

  function compare(a, b) {
    if (a.number !== undefined && b.number !== undefined) return a.number - b.number;
    if (a.number !== undefined) return -1; // numbers before text ("-" for a missing value)
    if (b.number !== undefined) return 1;
    return a.text < b.text ? -1 : a.text > b.text ? 1 : 0;
  }

  function sortBy(table, column, header) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var up = header.getAttribute("aria-sort") !== "ascending";
    rows.sort(function (x, y) {
      var order = compare(key(x.cells[column]), key(y.cells[column]));
      return up ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", up ? "ascending" : "descending");
  }

  function filter(table, text) {
    var words = text.toLowerCase().split(/\s+/).filter(Boolean);
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
      var seen = row.textContent.toLowerCase();
      row.hidden = !words.every(function (word) { return seen.indexOf(word) >= 0; });
    });
  }

  function prepare(table) {
    if (!table.tHead || !table.tBodies.length) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.title = "sort";
      th.addEventListener("click", function () { sortBy(table, column, th); });
    });
    var box = document.createElement("input");
    box.type = "search";
    box.className = "filter";
    box.placeholder = "filter rows";
    box.addEventListener("input", function () { filter(table, box.value); });
    table.parentNode.insertBefore(box, table);
  }

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), prepare);
  });
})();
