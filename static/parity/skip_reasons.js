// Skip reasons: the stacked area chart of skipped tests per category of reason (or per
// reason) and day, from the page's JSON endpoint (same filters as the page). Filters apply as soon as a select changes.
(function () {
  "use strict";
  var form = document.getElementById("reasons-filter");
  if (form) {
    form.querySelectorAll("select").forEach(function (select) {
      select.addEventListener("change", function () { form.submit(); });
    });
  }
  var el = document.getElementById("reason-chart");
  if (!el) return;
  // Colour-blind-safe qualitative palette (Okabe-Ito), then grey for "other".
  // Categories can number a dozen: Paul Tol's muted colours follow, so no two share one.
  var palette = ["#0072B2", "#E69F00", "#56B4E9", "#009E73", "#D55E00", "#CC79A7", "#F0E442",
                 "#000000", "#882255", "#44AA99", "#999933", "#332288"];
  fetch(el.getAttribute("data-url"), { headers: { Accept: "application/json" } })
    .then(function (response) { return response.json(); })
    .then(function (body) {
      if (body.series.length === 0) {
        el.textContent = "No skipped tests in this period.";
        el.classList.add("muted");
        return;
      }
      // A narrow screen: fewer date ticks, flat (rotated ones overlapped), and legend entries
      // short enough to fit its width (longer ones were cut mid-word by the chart's edge).
      var narrow = el.clientWidth < 600;
      var chars = Math.min(60, Math.max(24, Math.floor(el.clientWidth / 7.5)));
      var ticks = narrow ? 4 : 10;
      // Below the plot, one legend line a series on a phone: make room for all of them (a
      // legend taller than its share of the chart scrolls, and hides the last entries).
      if (narrow) el.style.height = (260 + 21 * body.series.length) + "px";
      var traces = body.series.map(function (s, i) {
        var other = s.rest;
        return {
          x: body.days,
          y: s.counts,
          name: s.name.length > chars ? s.name.slice(0, chars - 1) + "…" : s.name,
          meta: [s.name],
          type: "scatter",
          mode: "lines",
          stackgroup: "one",
          line: { width: 0.5, color: other ? "#9aa3ad" : palette[i % palette.length] },
          hovertemplate: "%{meta[0]}" + (s.disposition ? " (" + s.disposition.replace("_", " ") + ")" : "") +
            "<br>%{x|%Y-%m-%d}: %{y} tests<extra></extra>",
        };
      });
      Plotly.newPlot(el, traces, {
        margin: { l: 48, r: 8, t: 8, b: 40 },
        yaxis: { title: { text: "skipped tests" }, rangemode: "tozero" },
        // Daily data: ticks on whole days, never hours (a few days' history would show 06:00).
        xaxis: {
          type: "date", tickformat: "%b %-d", tickangle: 0,
          dtick: 86400000 * Math.max(1, Math.ceil(body.days.length / ticks)),
        },
        legend: { orientation: "h", y: -0.15, font: { size: 11 }, traceorder: "normal" },
        hovermode: "closest",
      }, { displayModeBar: false, responsive: true });
    });
})();
