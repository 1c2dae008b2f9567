// Draws each metric of one series page of `scripts/history html` (plots/history_html.py) with Chart.js.
// After drawing, each canvas carries data-points (how many runs the chart plots) and data-changes
// (how many change points it marks), so a headless browser's DOM shows what was drawn.
"use strict";
window.addEventListener("error", function (e) {
  document.body.setAttribute("data-error", String(e.message));
});
(function () {
  var series = JSON.parse(document.getElementById("series").textContent);
  series.forEach(function (s) {
    var points = s.points;
    var changes = {};
    s.changes.forEach(function (i) { changes[i] = true; });
    var labels = points.map(function (p, i) { return (i + 1) + " " + p.sha; });
    var pick = function (key) { return points.map(function (p) { return p[key]; }); };
    var median = {
      label: "median", data: pick("median"), borderColor: "#36c", backgroundColor: "#36c",
      pointRadius: points.map(function (p, i) { return changes[i] ? 7 : (p.status === "ok" ? 3 : 6); }),
      pointStyle: points.map(function (p, i) { return changes[i] ? "triangle" : (p.status === "ok" ? "circle" : "crossRot"); }),
      pointBackgroundColor: points.map(function (p, i) { return changes[i] || p.status !== "ok" ? "#d00" : "#36c"; }),
      pointBorderColor: points.map(function (p, i) { return changes[i] || p.status !== "ok" ? "#d00" : "#36c"; }),
      spanGaps: true
    };
    var spread = function (key, fill) {
      return { label: key === "max" ? "spread of repetitions" : "", data: pick(key), borderColor: "rgba(54,102,204,0.2)",
               backgroundColor: "rgba(54,102,204,0.15)", pointRadius: 0, fill: fill, spanGaps: true };
    };
    var chart = new Chart(document.getElementById(s.canvas), {
      type: "line",
      data: { labels: labels, datasets: [median, spread("max", false), spread("min", "-1")] },
      options: {
        animation: false, maintainAspectRatio: false,
        interaction: { mode: "index", intersect: false },
        scales: { y: { title: { display: true, text: s.metric } }, x: { title: { display: true, text: "run, commit" } } },
        plugins: {
          legend: { labels: { filter: function (item) { return item.text !== ""; } } },
          tooltip: {
            filter: function (item) { return item.datasetIndex === 0; },
            callbacks: {
              title: function (items) {
                var p = points[items[0].dataIndex];
                return "commit " + p.sha + ", " + p.date + (changes[items[0].dataIndex] ? " (change point)" : "");
              },
              afterBody: function (items) {
                var p = points[items[0].dataIndex];
                var lines = p.status === "ok" ? [] : [p.status + ": " + p.reason];
                if (p.min !== null) lines.push("repetitions " + p.min.toPrecision(4) + " .. " + p.max.toPrecision(4));
                return lines.concat(p.context);
              }
            }
          }
        }
      }
    });
    var canvas = document.getElementById(s.canvas);
    canvas.setAttribute("data-points", String(chart.data.datasets[0].data.filter(function (v) { return v !== null; }).length));
    canvas.setAttribute("data-changes", String(s.changes.length));
  });
  document.body.setAttribute("data-drawn", String(series.length));
})();
