// Overview: draw each backend's parity-score sparkline (last 30 days) from /overview.json.
(function () {
  "use strict";
  var script = document.currentScript;
  var url = script.getAttribute("data-url");
  fetch(url, { headers: { Accept: "application/json" } })
    .then(function (response) { return response.json(); })
    .then(function (body) {
      document.querySelectorAll(".spark").forEach(function (el) {
        var project = body.projects[el.getAttribute("data-project")] || {};
        var series = project[el.getAttribute("data-backend")];
        if (!series || series.at.length === 0) return;
        var scores = series.score.map(function (s) { return s === null ? null : s * 100; });
        // At least 4 points of height, so a flat line stays flat and small wobbles stay small.
        var known = scores.filter(function (s) { return s !== null; });
        var low = Math.min.apply(null, known), high = Math.max.apply(null, known);
        var middle = (low + high) / 2, half = Math.max((high - low) / 2, 2) * 1.15;
        Plotly.newPlot(
          el,
          [{
            x: series.at,
            y: scores,
            type: "scatter",
            mode: series.at.length > 1 ? "lines" : "markers",
            line: { color: "#2f5fb3", width: 1.5 },
            hovertemplate: "%{x|%Y-%m-%d}: %{y:.1f} %<extra></extra>",
          }],
          {
            margin: { l: 0, r: 0, t: 2, b: 2 },
            xaxis: { visible: false },
            yaxis: { visible: false, range: [middle - half, middle + half] },
            paper_bgcolor: "rgba(0,0,0,0)",
            plot_bgcolor: "rgba(0,0,0,0)",
            showlegend: false,
          },
          { displayModeBar: false, responsive: true }
        );
      });
    });
})();
