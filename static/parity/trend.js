// The trend page: each backend's daily score as a dated line, from the page's JSON data block
// (#trend-data), with its coverage drops and attribute changes drawn as marked points that say
// what happened on hover, and each target with its forecast as markers.
(function () {
  "use strict";
  var el = document.getElementById("trend-chart");
  var data = document.getElementById("trend-data");
  if (!el || !data) return;
  var body = JSON.parse(data.textContent);
  // Colour-blind-safe qualitative palette (Okabe-Ito), as the skip reasons chart.
  var palette = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"];
  var drawn = body.series.filter(function (s) { return s.at.length > 0; });
  if (drawn.length === 0) {
    el.textContent = "No run in this period.";
    el.classList.add("muted");
    return;
  }
  var narrow = el.clientWidth < 600;
  var traces = [];
  drawn.forEach(function (s, i) {
    var colour = palette[i % palette.length];
    traces.push({
      x: s.at, y: s.score, name: s.backend, type: "scatter", mode: "lines+markers",
      line: { color: colour, width: 2 }, marker: { size: 5 }, connectgaps: false,
      customdata: s.at.map(function (_, k) { return [s.passing[k], s.compared[k], s.run[k]]; }),
      hovertemplate: s.backend + "<br>%{x|%Y-%m-%d}: %{y:.1f} %" +
        "<br>%{customdata[0]} of %{customdata[1]}, run %{customdata[2]}<extra></extra>",
    });
    // A mark sits on the line at its day's point (or the nearest before it).
    ["coverage drop", "attributes"].forEach(function (kind) {
      var marks = s.marks.filter(function (m) { return m.kind === kind; });
      if (marks.length === 0) return;
      traces.push({
        x: marks.map(function (m) { return m.at; }),
        y: marks.map(function (m) { return scoreAt(s, m.at); }),
        text: marks.map(function (m) { return m.text; }),
        name: s.backend + ": " + kind, type: "scatter", mode: "markers",
        marker: kind === "coverage drop"
          ? { symbol: "triangle-down", size: 13, color: "#cf222e" }
          : { symbol: "diamond", size: 12, color: colour, line: { color: "#24292f", width: 1 } },
        hovertemplate: s.backend + " · " + kind + "<br>%{x|%Y-%m-%d}: %{text}<extra></extra>",
      });
    });
  });
  // Targets: a star at (date, score), and a hollow circle where the forecast lands. No line
  // joins them or extends the trend: a forecast is a date, not a path (docs/targets.md).
  // The legend names each kind once, in a neutral colour (the hover names the backend): one
  // entry per target repeated "target" and "forecast" as many times as there were targets.
  var shown = {};
  function legendOnce(group, marker) {
    if (shown[group]) return;
    shown[group] = true;
    traces.push({
      x: [null], y: [null], name: group, legendgroup: group, type: "scatter", mode: "markers",
      marker: Object.assign({}, marker, { color: "#57606a" }), hoverinfo: "skip",
    });
  }
  (body.targets || []).forEach(function (t) {
    var index = drawn.findIndex(function (s) { return s.backend === t.backend; });
    if (index < 0) return;
    var colour = palette[index % palette.length];
    legendOnce("target", { symbol: "star", size: 15, line: { color: "#24292f", width: 1 } });
    traces.push({
      x: [t.due], y: [t.score], name: t.backend + ": target", type: "scatter", mode: "markers",
      legendgroup: "target", showlegend: false,
      marker: { symbol: "star", size: 15, color: colour, line: { color: "#24292f", width: 1 } },
      hovertemplate: t.backend + " · target %{y:.1f} % by %{x|%Y-%m-%d}<br>" + t.hover +
        (t.at_risk ? "<br>at risk" : "") + "<extra></extra>",
    });
    if (!t.drawn) return;
    legendOnce("forecast", { symbol: "circle-open", size: 13, line: { width: 2 } });
    traces.push({
      x: [t.forecast], y: [t.score], name: t.backend + ": forecast", type: "scatter", mode: "markers",
      legendgroup: "forecast", showlegend: false,
      marker: { symbol: "circle-open", size: 13, color: t.at_risk ? "#cf222e" : colour, line: { width: 2 } },
      hovertemplate: t.backend + " · forecast: %{y:.1f} % on %{x|%Y-%m-%d}<extra></extra>",
    });
  });
  var entries = traces.filter(function (tr) { return tr.showlegend !== false; }).length;
  if (narrow) el.style.height = (300 + 21 * entries) + "px";
  // Daily points: ticks on whole days (midnight), never twice the same day's label.
  var times = [].concat.apply([], drawn.map(function (s) { return s.at.map(Date.parse); }));
  (body.targets || []).forEach(function (t) {
    times.push(Date.parse(t.due));
    if (t.drawn) times.push(Date.parse(t.forecast));
  });
  var span = (Math.max.apply(null, times) - Math.min.apply(null, times)) / 86400000;
  var day = 86400000 * Math.max(1, Math.ceil(span / (narrow ? 4 : 10)));
  Plotly.newPlot(el, traces, {
    margin: { l: 52, r: 8, t: 8, b: 40 },
    yaxis: { ticksuffix: " %", rangemode: "normal", automargin: true },
    xaxis: { type: "date", tickformat: "%b %-d", tickangle: 0, dtick: day, tick0: "2000-01-01" },
    legend: { orientation: "h", y: -0.15, font: { size: 11 } },
    hovermode: "closest",
  }, { displayModeBar: false, responsive: true });

  function scoreAt(series, at) {
    var found = null;
    for (var k = 0; k < series.at.length; k++) {
      if (series.at[k] <= at || found === null) found = series.score[k];
      if (series.at[k] >= at) break;
    }
    return found;
  }
})();
