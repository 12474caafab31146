/* wtrack's HTML report, the kernel trace's part (doc/report-html.md,
 * "Kernel trace"): embedded after report.js only when the check joined a
 * trace (wtrack check --trace), so a page without one is unchanged. For
 * each bad page with a story: its finding, a strip on the timeline's time
 * axis (the kernel's events above; below, the disk's writes in the
 * timeline row that holds the page's sector, and the MARKs), and the
 * events as a list. */
"use strict";
(function () {
  var data = JSON.parse(document.getElementById("wtdata").textContent);
  if (data.kind !== "run" || !data.trace) return;
  var K = data.trace, T = data.timeline, app = document.getElementById("app");
  var KIND_COLOURS = {
    mark: "#555555", dirty: "#ff7f0e", writeback_inode: "#1f77b4", writepages: "#1f77b4",
    range_op: "#9467bd", page_cache_add: "#2ca02c", page_cache_delete: "#d62728",
    bio_queue: "#17becf", rq_complete: "#8c564b", other: "#999999"
  };
  var WRITES = [31, 80, 160];

  /* report.js's helpers: this script is embedded after it. */
  var el = window.wtrackHtml.el, typed = window.wtrackHtml.typed;
  function fmtT(x) { return x === null ? "?" : "t=" + (x / 1e9).toFixed(6); }

  var tlWrites = typed(T.writes, Uint16Array, T.cols * T.rows);
  var usedCols = Math.max(1, Math.min(T.cols, Math.floor(T.x_max / T.col_width) + 1));
  var xspan = usedCols * T.col_width;

  /* The strip: x is the timeline's; the kernel's events as ticks above,
   * the evidence taller; the writes of the page's disk row below. */
  function drawStrip(canvas, p) {
    var W = 900, H = 64, L = 8, R = 8, pw = W - L - R;
    canvas.width = W; canvas.height = H;
    var ctx = canvas.getContext("2d");
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
    function px(x) { return L + (x - T.x0) / xspan * pw; }
    ctx.fillStyle = "#888"; ctx.font = "10px sans-serif";
    ctx.fillText("kernel", L, 10); ctx.fillText("disk writes here", L, H - 3);
    ctx.strokeStyle = "#555"; ctx.setLineDash([3, 3]);
    T.marks.forEach(function (m) {
      if (m[0] < T.x0 || m[0] > T.x0 + xspan || T.x !== "ns") return;
      ctx.beginPath(); ctx.moveTo(px(m[0]) + 0.5, 12); ctx.lineTo(px(m[0]) + 0.5, H - 12); ctx.stroke();
    });
    ctx.setLineDash([]);
    if (p.ds !== null && T.x === "ns") {
      var row = Math.min(T.rows - 1, Math.floor(p.ds / T.row_sectors)), max = 1;
      for (var c = 0; c < usedCols; c++) max = Math.max(max, tlWrites[row * T.cols + c]);
      for (c = 0; c < usedCols; c++) {
        var w = tlWrites[row * T.cols + c];
        if (!w) continue;
        ctx.fillStyle = "rgba(" + WRITES.join(",") + "," + (0.3 + 0.7 * w / max) + ")";
        ctx.fillRect(L + c / usedCols * pw, H - 26, Math.max(1, pw / usedCols), 12);
      }
    }
    p.ev.forEach(function (e) {
      if (e[0] === null) return;
      var x = Math.max(L, Math.min(L + pw, px(e[0])));
      ctx.fillStyle = KIND_COLOURS[e[1]] || "#999";
      ctx.fillRect(x - (e[4] ? 1.5 : 0.5), e[4] ? 12 : 18, e[4] ? 3 : 2, e[4] ? 24 : 14);
    });
  }

  function renderStory(sec, p) {
    var file = data.files[p.f] ? data.files[p.f].path : "?";
    var div = el("div", { class: "story", "data-rule": p.rule }, [
      el("h3", { text: "page " + p.page + " of " + file + ": " + p.rule }),
      el("p", { class: "finding", text: p.finding })]);
    var canvas = el("canvas", { class: "storystrip" });
    div.appendChild(canvas);
    drawStrip(canvas, p);
    var list = el("ul", { class: "events" });
    p.ev.forEach(function (e) {
      var li = el("li", { text: fmtT(e[0]) + " " + e[2] + ": " + e[3] });
      li.style.color = KIND_COLOURS[e[1]] || "#999";
      if (e[4]) li.style.fontWeight = "bold";
      list.appendChild(li);
    });
    if (p.more) list.appendChild(el("li", { text: "... " + p.more + " more events (report.json)" }));
    div.appendChild(list);
    sec.appendChild(div);
  }

  var sec = el("section", { id: "trace" }, [el("h2", { text: "Kernel trace: each bad page's story" })]);
  var notes = ["kernel " + (K.kernel || "?"), K.events + " events",
    K.marks_matched + " of " + K.marks + " MARKs found in the channel"];
  if (!K.clocks_tied) notes.push("the trace's clock is not tied to the log's: no strip");
  if (K.lost_events) notes.push("the trace lost " + K.lost_events + " events");
  if (K.malformed_lines) notes.push(K.malformed_lines + " lines not events");
  if (K.pages.length < K.pages_total) notes.push("the first " + K.pages.length + " of " + K.pages_total + " pages");
  sec.appendChild(el("p", { class: "note", text: notes.join("; ") }));
  var legend = el("p", { class: "legend" });
  Object.keys(KIND_COLOURS).forEach(function (k) {
    var sw = el("span", { class: "swatch" });
    sw.style.background = KIND_COLOURS[k];
    legend.appendChild(el("span", { class: "item" }, [sw, k.replace(/_/g, " ")]));
  });
  sec.appendChild(legend);
  K.pages.forEach(function (p) { renderStory(sec, p); });
  app.appendChild(sec);
  document.body.setAttribute("data-trace-rendered", String(K.pages.length));
})();
