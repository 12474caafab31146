/* wtrack's HTML report: draws the data of the #wtdata element
 * (doc/report-html.md). Written for this page: no framework, nothing
 * fetched, so the file opens from a mail attachment or a CI artifact. */
"use strict";
(function () {
  var CLASS_COLOURS = ["#7b4173", "#ff7f0e", "#8c564b", "#e377c2", "#d62728"];
  var COLOUR = {
    never: "#ececec", written: "#9aa5b1", uncheckable: "#333333",
    writes: [31, 80, 160], zeroes: [44, 160, 44], flush: "rgba(120,120,120,0.35)",
    fua: "#9467bd", mark: "#555555", fault: "#ff00aa", op: "#d62728",
    last: "#1f77b4", expected: "#2ca02c", select: "#000000"
  };
  var FILE_COLOURS = ["#4c9be8", "#5fb8a6", "#86b85b", "#c9a227", "#9b8bd4", "#6aa6c4", "#b0a07c", "#58c0d8"];
  var data = JSON.parse(document.getElementById("wtdata").textContent);
  var app = document.getElementById("app");
  var tip;
  /* Shared with the kernel trace's script, embedded after this one when the
   * check joined a kernel trace (function declarations are hoisted). */
  window.wtrackHtml = { el: el, typed: typed };
  /* Only a run's data feeds the variables below: other kinds are drawn
   * here and stop (function declarations are hoisted). */
  if (data.kind !== "run") {
    if (data.kind === "campaign") renderCampaign();
    else app.appendChild(el("p", { text: "unknown report kind: " + data.kind }));
    return;
  }

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs)
      for (var k in attrs) {
        if (k === "text") e.textContent = attrs[k];
        else if (k === "class") e.className = attrs[k];
        else e.setAttribute(k, attrs[k]);
      }
    (children || []).forEach(function (c) {
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }
  /* A typed array of count elements from base64 ("" : all zero). */
  function typed(b64, Type, count) {
    var buf = new ArrayBuffer(count * Type.BYTES_PER_ELEMENT), u = new Uint8Array(buf);
    var s = atob(b64), n = Math.min(s.length, u.length);
    for (var i = 0; i < n; i++) u[i] = s.charCodeAt(i);
    return new Type(buf);
  }
  function fmtBytes(n) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(n < 10 ? 1 : 0) : n) + " " + units[i];
  }
  function fmtX(x) {
    if (x === null || x === undefined || x < 0) return "?";
    if (data.timeline && data.timeline.x === "seq") return "seq " + x;
    return (x / 1e9).toFixed(6) + " s";
  }
  function swatch(colour) {
    var s = el("span", { class: "swatch" });
    s.style.background = colour;
    return s;
  }
  function showTip(ev, text) {
    tip.textContent = text;
    tip.style.display = "block";
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = ev.clientX - tip.offsetWidth - 10;
    if (y + tip.offsetHeight > window.innerHeight) y = ev.clientY - tip.offsetHeight - 10;
    tip.style.left = Math.max(0, x) + "px";
    tip.style.top = Math.max(0, y) + "px";
  }
  function hideTip() { tip.style.display = "none"; }
  function fileColour(i) { return FILE_COLOURS[i % FILE_COLOURS.length]; }
  function className(c) { return data.classes[c] || "?"; }
  function pageX(e) { var r = e.getBoundingClientRect(); return r.left + window.scrollX; }
  function pageY(e) { var r = e.getBoundingClientRect(); return r.top + window.scrollY; }

  /* The header. */
  function renderHeader() {
    var g = data.guest, log = data.log;
    var v = data.inputs_complete ? data.verdict : data.verdict + " (inputs incomplete)";
    var h1 = el("h1", {}, ["wtrack report: ",
      el("span", { id: "verdict", class: "verdict " + (data.inputs_complete ? data.verdict : "incomplete"), text: v })]);
    app.appendChild(h1);
    var rows = [
      ["kernel", g.kernel],
      ["architecture", (g.arch || "?") + (g.page_size ? ", " + fmtBytes(g.page_size) + " pages" : "")],
      ["file system", g.fs === null ? null : g.fs + (g.block_size ? ", " + fmtBytes(+g.block_size) + " blocks" : "")],
      ["workload", g.workload], ["seed", g.seed],
      ["guest result", "status " + (g.status === null ? "?" : g.status) +
        (g.readback ? ", read-back " + g.readback : "") +
        (g.readback_bad_sectors && g.readback_bad_sectors !== "0" ? " (" + g.readback_bad_sectors + " bad sectors)" : "") +
        (g.error ? ", error: " + g.error : "")],
      ["after a reboot (cold)", data.cold ? data.cold.line : "not run"],
      ["page cache", g.page_cache],
      ["log", log.records + " records, " + log.end + (log.error ? ": " + log.error : "") +
        ", disk " + fmtBytes(log.disk_size) + (log.data ? ", with data" : ", hashes only")],
      ["log started", log.start + (log.creator ? " by " + log.creator : "")],
      ["run parameters", data.hello.join("  ")]
    ];
    if (data.channel_error) rows.push(["channel", data.channel_error]);
    var t = el("table", { class: "facts" });
    rows.forEach(function (r) {
      if (r[1] === null || r[1] === undefined || r[1] === "") return;
      t.appendChild(el("tr", {}, [el("td", { text: r[0] }), el("td", { text: String(r[1]) })]));
    });
    app.appendChild(t);
    var counts = el("p", { id: "counts" }, [el("span", { text: data.bad_sectors + " bad sectors: " })]);
    data.classes.forEach(function (name, i) {
      counts.appendChild(el("span", { class: "chip" }, [swatch(CLASS_COLOURS[i]), name + " " + data.by_class[name]]));
    });
    app.appendChild(counts);
    data.warnings.forEach(function (w) { app.appendChild(el("p", { class: "warn", text: "warning: " + w })); });
    if (data.picture_error)
      app.appendChild(el("p", { class: "warn", text: "pictures incomplete: " + data.picture_error }));
  }

  /* The disk map: the view [lo, hi) of the disk in cells of whole sectors. */
  var disk = data.disk, map = { lo: 0, hi: disk.sectors, sel: -1 };
  var written = typed(disk.written, Uint8Array, Math.ceil(disk.nfine / 8));
  var bucketWrites = typed(disk.writes, Uint32Array, disk.n);
  var bucketSeq = typed(disk.last_seq, Float64Array, disk.n);
  var bucketT = typed(disk.last_t, Float64Array, disk.n);
  var extents = [];   /* {file, first, n, logical, flags, bad} in disk sectors */
  data.files.forEach(function (f, fi) {
    f.extents.forEach(function (e) {
      if (e[3] & 2) return;   /* unmappable: no disk bytes */
      var misaligned = e[0] % 512 !== 0 || e[1] % 512 !== 0;
      var first = Math.floor(e[1] / 512), n = Math.ceil(e[2] / 512);
      var off = first >= disk.sectors;
      if (first + n > disk.sectors) n = Math.max(0, disk.sectors - first);
      extents.push({ file: fi, first: first, n: n, logical: e[0], physical: e[1], flags: e[3],
                     uncheckable: misaligned || off });
    });
  });

  function writtenCount(a, b) {   /* fine bits set in sectors [a, b), and the bits */
    var f0 = Math.floor(a / disk.fine), f1 = Math.floor((b - 1) / disk.fine), set = 0;
    for (var i = f0; i <= f1; i++) if (written[i >> 3] & (1 << (i & 7))) set++;
    return [set, f1 - f0 + 1];
  }

  function mapLayout(canvasWidth) {
    var n = map.hi - map.lo;
    var px = Math.max(4, Math.min(32, Math.floor(Math.sqrt(canvasWidth * 512 / n))));
    var cols = Math.floor(canvasWidth / px);
    var per = Math.max(1, Math.ceil(n / (cols * 128)));
    var cells = Math.ceil(n / per);
    return { px: px, cols: cols, per: per, cells: cells, rows: Math.ceil(cells / cols) };
  }

  function paint(arr, L, first, n, fn) {
    var a = Math.max(first, map.lo), b = Math.min(first + n, map.hi);
    if (a >= b) return;
    var c0 = Math.floor((a - map.lo) / L.per), c1 = Math.floor((b - 1 - map.lo) / L.per);
    for (var c = c0; c <= c1; c++) fn(c, Math.min(b, map.lo + (c + 1) * L.per) - Math.max(a, map.lo + c * L.per));
  }

  function drawMap() {
    var canvas = document.getElementById("mapcanvas");
    var L = mapLayout(canvas.parentNode.clientWidth > 300 ? Math.min(1024, canvas.parentNode.clientWidth) : 1024);
    map.L = L;
    canvas.width = L.cols * L.px;
    canvas.height = L.rows * L.px;
    var owner = new Int32Array(L.cells).fill(-1), unch = new Uint8Array(L.cells);
    var dmg = new Float64Array(L.cells * 5);
    extents.forEach(function (e) {
      paint(owner, L, e.first, e.n, function (c) { if (e.uncheckable) unch[c] = 1; else if (owner[c] < 0) owner[c] = e.file; });
    });
    data.runs.forEach(function (r) {
      if (r.ds === null) return;
      paint(dmg, L, r.ds, r.n, function (c, k) { dmg[c * 5 + r.c] += k; });
    });
    var ctx = canvas.getContext("2d");
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    for (var c = 0; c < L.cells; c++) {
      var a = map.lo + c * L.per, b = Math.min(map.hi, a + L.per);
      var best = -1, most = 0;
      for (var k = 4; k >= 0; k--) if (dmg[c * 5 + k] > most) { most = dmg[c * 5 + k]; best = k; }
      var colour;
      if (best >= 0) colour = CLASS_COLOURS[best];
      else if (unch[c]) colour = COLOUR.uncheckable;
      else {
        var w = writtenCount(a, b);
        if (owner[c] >= 0) colour = w[0] ? fileColour(owner[c]) : lighten(fileColour(owner[c]));
        else colour = w[0] ? COLOUR.written : COLOUR.never;
      }
      ctx.fillStyle = colour;
      ctx.fillRect((c % L.cols) * L.px, Math.floor(c / L.cols) * L.px, L.px, L.px);
    }
    if (map.sel >= 0) {
      var r = data.runs[map.sel];
      if (r.ds !== null) {
        ctx.strokeStyle = COLOUR.select;
        ctx.lineWidth = 2;
        paint(null, L, r.ds, r.n, function (c) {
          ctx.strokeRect((c % L.cols) * L.px - 1, Math.floor(c / L.cols) * L.px - 1, L.px + 2, L.px + 2);
        });
      }
    }
    document.getElementById("maprange").textContent = "sectors " + map.lo + "-" + (map.hi - 1) + " of " +
      disk.sectors + " (" + fmtBytes((map.hi - map.lo) * 512) + "); a cell is " + L.per + " sector" +
      (L.per > 1 ? "s" : "") + " (" + fmtBytes(L.per * 512) + ")";
    /* Where cells are, for tests and tools reading the page. */
    canvas.setAttribute("data-lo", map.lo);
    canvas.setAttribute("data-cell-sectors", L.per);
    canvas.setAttribute("data-cols", L.cols);
    canvas.setAttribute("data-cell-px", L.px);
    canvas.setAttribute("data-rows", L.rows);
    canvas.setAttribute("data-page-x", Math.round(pageX(canvas)));
    canvas.setAttribute("data-page-y", Math.round(pageY(canvas)));
  }

  function lighten(hex) {
    var v = parseInt(hex.slice(1), 16), r = v >> 16, g = (v >> 8) & 255, b = v & 255;
    function m(x) { return Math.round(x + (255 - x) * 0.6); }
    return "rgb(" + m(r) + "," + m(g) + "," + m(b) + ")";
  }

  function mapCellAt(ev) {
    var canvas = document.getElementById("mapcanvas"), L = map.L, r = canvas.getBoundingClientRect();
    var x = Math.floor((ev.clientX - r.left) / L.px), y = Math.floor((ev.clientY - r.top) / L.px);
    var c = y * L.cols + x;
    if (x < 0 || x >= L.cols || c < 0 || c >= L.cells) return null;
    var a = map.lo + c * L.per;
    return [a, Math.min(map.hi, a + L.per)];
  }

  function describeSectors(a, b) {
    var lines = ["disk sectors " + a + (b - a > 1 ? "-" + (b - 1) : "") + "  (bytes " + a * 512 + "-" + (b * 512 - 1) + ")"];
    var w = writtenCount(a, b);
    lines.push(w[0] ? "written by the log" + (w[1] > 1 ? " (" + w[0] + " of " + w[1] + " parts)" : "") : "never written by the log");
    var b0 = Math.floor(a / disk.bucket), b1 = Math.floor((b - 1) / disk.bucket), writes = 0, ls = 0, lt = 0;
    for (var i = b0; i <= b1; i++) {
      writes += bucketWrites[i];
      if (bucketSeq[i] > ls) { ls = bucketSeq[i]; lt = bucketT[i]; }
    }
    if (ls) lines.push("last write: seq " + ls + " at " + fmtX(data.timeline.x === "seq" ? ls : lt) + "; " + writes +
      " write" + (writes > 1 ? "s" : "") + (disk.bucket > 1 ? " (sectors " + b0 * disk.bucket + "-" + ((b1 + 1) * disk.bucket - 1) + ")" : ""));
    var shown = 0;
    extents.forEach(function (e) {
      if (e.first >= b || e.first + e.n <= a || shown >= 4) return;
      shown++;
      var fo = e.logical + (Math.max(a, e.first) * 512 - e.physical);
      lines.push(data.files[e.file].path + " at file offset " + fo + (e.flags & 1 ? " (unwritten extent)" : "") +
        (e.uncheckable ? " (not checkable)" : ""));
    });
    var runs = 0;
    data.runs.forEach(function (r) {
      if (r.ds === null || r.ds >= b || r.ds + r.n <= a) return;
      if (runs++ >= 4) return;
      var k = Math.max(0, a - r.ds), h = r.h[k];
      lines.push(className(r.c) + ": " + data.files[r.f].path + " sectors " + r.fs + "-" + (r.fs + r.n - 1) +
        (h ? "; expected " + h[0] + ", found " + h[1] : "") +
        (r.last ? "; last written seq " + r.last[0] : "; never written"));
    });
    if (runs > 4) lines.push("... " + (runs - 4) + " more damaged runs");
    return lines.join("\n");
  }

  function zoomTo(lo, hi) {
    lo = Math.max(0, Math.floor(lo));
    hi = Math.min(disk.sectors, Math.ceil(hi));
    if (hi - lo < 64) { var mid = (lo + hi) / 2; lo = Math.max(0, Math.floor(mid - 32)); hi = Math.min(disk.sectors, lo + 64); }
    map.lo = lo; map.hi = hi;
    drawMap();
  }

  function renderMap() {
    var sec = el("section", { id: "map" }, [el("h2", { text: "Disk map" })]);
    var legend = el("p", { class: "legend" });
    [["never written", COLOUR.never], ["written", COLOUR.written], ["not checkable", COLOUR.uncheckable]]
      .forEach(function (p) { legend.appendChild(el("span", { class: "item" }, [swatch(p[1]), p[0]])); });
    data.files.forEach(function (f, i) {
      if (i < 8) legend.appendChild(el("span", { class: "item" }, [swatch(fileColour(i)), f.path]));
    });
    data.classes.forEach(function (name, i) {
      legend.appendChild(el("span", { class: "item" }, [swatch(CLASS_COLOURS[i]), name]));
    });
    sec.appendChild(legend);
    var whole = el("button", { type: "button", text: "whole disk" }), out = el("button", { type: "button", text: "zoom out" });
    whole.onclick = function () { zoomTo(0, disk.sectors); };
    out.onclick = function () { var n = (map.hi - map.lo) * 16, mid = (map.lo + map.hi) / 2; zoomTo(mid - n / 2, mid + n / 2); };
    sec.appendChild(el("div", { class: "toolbar" }, [whole, out, el("span", { id: "maprange", class: "note" })]));
    sec.appendChild(el("p", { class: "note", text: "Click a cell to zoom in (down to single 512-byte sectors); hover for what it holds." }));
    var canvas = el("canvas", { id: "mapcanvas" });
    var holder = el("div", {}, [canvas]);
    sec.appendChild(holder);
    app.appendChild(sec);
    canvas.addEventListener("mousemove", function (ev) {
      var s = mapCellAt(ev);
      if (s) showTip(ev, describeSectors(s[0], s[1])); else hideTip();
    });
    canvas.addEventListener("mouseleave", hideTip);
    canvas.addEventListener("click", function (ev) {
      var s = mapCellAt(ev);
      if (!s) return;
      var n = Math.max(64, (map.hi - map.lo) / 16), mid = (s[0] + s[1]) / 2;
      zoomTo(mid - n / 2, mid + n / 2);
    });
  }

  /* Per file: a strip of its pages, its extents, its runs. */
  function selectRun(i, where) {
    map.sel = i;
    tl.sel = i;
    var rows = document.querySelectorAll("tr.run");
    for (var k = 0; k < rows.length; k++) rows[k].classList.toggle("selected", +rows[k].getAttribute("data-run") === i);
    var r = data.runs[i];
    if (where === "map" && r.ds !== null) zoomTo(r.ds - 4 * r.n - 32, r.ds + 5 * r.n + 32);
    else drawMap();
    drawTimeline();
    document.getElementById(where).scrollIntoView();
  }

  function runCells(r, i) {
    var f = data.files[r.f];
    var op = r.op ? "op " + r.op[0] + " " + r.op[1] + (r.op[2] !== null ? " at " + (r.op[3] ? "~" : "") + fmtX(r.op[2]) : "") : "-";
    var holds = r.holds === null ? "-" : r.holds === "pre-run" ? "pre-run content" : "seq " + r.holds[0];
    var story = r.last ? "seq " + r.last[0] + " at " + fmtX(r.last[1]) : "never";
    var extra = [];
    if (r.expected) extra.push("expected content: seq " + r.expected[0]);
    if (r.replaced) extra.push("replaced by seq " + r.replaced[0]);
    if (r.misplaced) extra.push("written to sector " + r.misplaced[0] + " (seq " + r.misplaced[1] + ")");
    if (r.unwritten) extra.push("unwritten extent");
    if (r.delalloc) extra.push("no disk sector: delayed allocation never written (extent DELALLOC after the sync): the kernel holds these bytes, no block was allocated");
    var toMap = el("a", { href: "#map", text: "map" }), toTl = el("a", { href: "#timeline", text: "timeline" });
    toMap.onclick = function (ev) { ev.preventDefault(); selectRun(i, "map"); };
    toTl.onclick = function (ev) { ev.preventDefault(); selectRun(i, "timeline"); };
    return [
      el("td", {}, [swatch(CLASS_COLOURS[r.c]), className(r.c)]),
      el("td", { text: String(r.fs * 512) }),
      el("td", { text: r.fs + "-" + (r.fs + r.n - 1) }),
      el("td", { text: r.ds === null ? "-" : r.ds + "-" + (r.ds + r.n - 1) }),
      el("td", { text: String(r.n) }),
      el("td", { text: op }),
      el("td", { text: story }),
      el("td", { text: holds }),
      el("td", { text: extra.join("; ") }),
      el("td", {}, [toMap, toTl])
    ];
  }

  function drawStrip(canvas, f, fi) {
    var pages = Math.max(1, Math.ceil(f.size / 4096)), w = canvas.width, h = canvas.height;
    var ctx = canvas.getContext("2d");
    ctx.fillStyle = fileColour(fi);
    ctx.fillRect(0, 0, w, h - 6);
    /* Extent boundaries under the strip. */
    ctx.fillStyle = "#555";
    f.extents.forEach(function (e) { ctx.fillRect(Math.floor(e[0] / 4096 / pages * w), h - 6, 1, 6); });
    f.pages.forEach(function (p) {
      ctx.fillStyle = CLASS_COLOURS[p[2]];
      var x = Math.floor(p[0] / pages * w), x2 = Math.max(x + 1, Math.floor((p[0] + 1) / pages * w));
      ctx.fillRect(x, 0, x2 - x, h - 6);
    });
    canvas.addEventListener("mousemove", function (ev) {
      var r = canvas.getBoundingClientRect(), page = Math.floor((ev.clientX - r.left) / w * pages);
      var lines = [f.path + " page " + page + " (bytes " + page * 4096 + "-" + (page * 4096 + 4095) + ")"];
      f.pages.forEach(function (p) {
        if (p[0] === page) {
          var s = [];
          for (var k = 0; k < 8; k++) if (p[1] & (1 << k)) s.push(k);
          lines.push("bad sectors " + s.join(",") + " of 8 (" + className(p[2]) + ")");
        }
      });
      f.extents.forEach(function (e) {
        if (e[0] <= page * 4096 && page * 4096 < e[0] + e[2])
          lines.push("on disk at sector " + Math.floor((e[1] + page * 4096 - e[0]) / 512));
      });
      showTip(ev, lines.join("\n"));
    });
    canvas.addEventListener("mouseleave", hideTip);
  }

  function renderFiles() {
    var sec = el("section", { id: "files" }, [el("h2", { text: "Files" })]);
    var runsOf = data.files.map(function () { return []; });
    data.runs.forEach(function (r, i) { runsOf[r.f].push(i); });
    data.files.forEach(function (f, fi) {
      sec.appendChild(el("h3", {}, [swatch(fileColour(fi)), f.path]));
      sec.appendChild(el("p", { text: fmtBytes(f.size) + ", " + f.sectors + " sectors: " + f.bad + " bad in " +
        f.pages_total + " page" + (f.pages_total === 1 ? "" : "s") + ", " + f.checked + " checked" +
        (f.uncheckable ? ", " + f.uncheckable + " not checkable" : "") + "; " + f.extents_total + " extent" +
        (f.extents_total === 1 ? "" : "s") }));
      var strip = el("canvas", { class: "strip", width: "1024", height: "22" });
      sec.appendChild(strip);
      drawStrip(strip, f, fi);
      if (f.pages.length < f.pages_total)
        sec.appendChild(el("p", { class: "note", text: "the strip marks the first " + f.pages.length + " of " + f.pages_total + " bad pages" }));
      var et = el("table", { class: "runs" }, [el("tr", {}, ["file offset", "disk byte", "disk sector", "length", "flags"].map(function (h) { return el("th", { text: h }); }))]);
      f.extents.slice(0, 500).forEach(function (e) {
        et.appendChild(el("tr", {}, [String(e[0]), String(e[1]), e[1] % 512 ? "-" : String(e[1] / 512), fmtBytes(e[2]),
          [e[3] & 1 ? "unwritten" : "", e[3] & 2 ? "unmappable" : ""].join(" ").trim() || "-"].map(function (t) { return el("td", { text: t }); })));
      });
      sec.appendChild(el("details", {}, [el("summary", { text: "extents (file offset -> disk)" +
        (f.extents_total > 500 ? ": the first 500 of " + f.extents_total : "") }), et]));
      if (!runsOf[fi].length) return;
      var t = el("table", { class: "runs" });
      t.appendChild(el("tr", {}, ["class", "file offset", "file sectors", "disk sectors", "n", "last op", "last write",
        "disk holds", "", ""].map(function (h) { return el("th", { text: h }); })));
      runsOf[fi].forEach(function (i) {
        t.appendChild(el("tr", { class: "run", "data-run": String(i) }, runCells(data.runs[i], i)));
      });
      sec.appendChild(t);
    });
    if (data.runs.length < data.runs_total)
      sec.appendChild(el("p", { class: "note", text: "the first " + data.runs.length + " of " + data.runs_total + " runs; report.json has them all" }));
    app.appendChild(sec);
  }

  /* The timeline: disk offset over log time, from the aggregated grid. */
  var T = data.timeline, tl = { sel: -1 };
  var tlWrites = typed(T.writes, Uint16Array, T.cols * T.rows), tlZeroes = typed(T.zeroes, Uint16Array, T.cols * T.rows);
  var tlFlush = typed(T.flush, Uint32Array, T.cols), tlFua = typed(T.fua, Uint32Array, T.cols);
  var M = { left: 70, top: 90, bottom: 34, right: 10 };

  function drawTimeline() {
    var canvas = document.getElementById("tlcanvas");
    var usedCols = Math.max(1, Math.min(T.cols, Math.floor(T.x_max / T.col_width) + 1));
    var pw = 1024, ph = 2 * T.rows;
    canvas.width = M.left + pw + M.right;
    canvas.height = M.top + ph + M.bottom;
    var ctx = canvas.getContext("2d");
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    var max = 1;
    for (var i = 0; i < tlWrites.length; i++) { if (tlWrites[i] > max) max = tlWrites[i]; if (tlZeroes[i] > max) max = tlZeroes[i]; }
    var img = ctx.createImageData(usedCols, T.rows), lm = Math.log(1 + max);
    for (var r = 0; r < T.rows; r++)
      for (var c = 0; c < usedCols; c++) {
        var w = tlWrites[r * T.cols + c], z = tlZeroes[r * T.cols + c], o = (r * usedCols + c) * 4;
        var base = w >= z ? COLOUR.writes : COLOUR.zeroes, v = Math.max(w, z);
        var a = v ? 0.25 + 0.75 * Math.log(1 + v) / lm : 0;
        img.data[o] = Math.round(255 - a * (255 - base[0]));
        img.data[o + 1] = Math.round(255 - a * (255 - base[1]));
        img.data[o + 2] = Math.round(255 - a * (255 - base[2]));
        img.data[o + 3] = 255;
      }
    var off = document.createElement("canvas");
    off.width = usedCols; off.height = T.rows;
    off.getContext("2d").putImageData(img, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(off, M.left, M.top, pw, ph);
    var xspan = usedCols * T.col_width;
    function px(x) { return M.left + (x - T.x0) / xspan * pw; }
    function inside(x) { return x >= T.x0 && x <= T.x0 + xspan; }
    function py(sector) { return M.top + sector / (T.rows * T.row_sectors) * ph; }
    /* FLUSH as grey rules, FUA as purple ticks on the top edge. */
    for (c = 0; c < usedCols; c++) {
      var x0 = Math.floor(M.left + c / usedCols * pw), wd = Math.max(1, Math.round(pw / usedCols));
      if (tlFlush[c]) { ctx.fillStyle = COLOUR.flush; ctx.fillRect(x0, M.top, wd, ph); }
      if (tlFua[c]) { ctx.fillStyle = COLOUR.fua; ctx.fillRect(x0, M.top - 6, wd, 6); }
    }
    /* MARKs: dashed rules, labels slanted above the plot. */
    ctx.font = "11px sans-serif";
    var lastLabel = -1e9;
    T.marks.forEach(function (m) {
      if (!inside(m[0])) return;
      var x = px(m[0]);
      ctx.strokeStyle = COLOUR.mark;
      ctx.setLineDash([3, 3]);
      ctx.beginPath(); ctx.moveTo(x + 0.5, M.top); ctx.lineTo(x + 0.5, M.top + ph); ctx.stroke();
      ctx.setLineDash([]);
      if (x - lastLabel < 12) return;
      lastLabel = x;
      ctx.save();
      ctx.translate(x + 3, M.top - 9);
      ctx.rotate(-Math.PI / 4);
      ctx.fillStyle = COLOUR.mark;
      ctx.fillText(m[1].length > 24 ? m[1].slice(0, 23) + "\u2026" : m[1], 0, 0);
      ctx.restore();
    });
    /* Injected faults: magenta triangles at their time and place. */
    T.faults.forEach(function (f) {
      if (f[5] === null || !inside(f[5])) return;
      var x = px(f[5]), y = py(f[3] / 512);
      ctx.fillStyle = COLOUR.fault;
      ctx.beginPath(); ctx.moveTo(x, y - 5); ctx.lineTo(x + 4, y + 3); ctx.lineTo(x - 4, y + 3); ctx.closePath(); ctx.fill();
    });
    /* The selected run: its op's time, and the writes it names. */
    if (tl.sel >= 0) {
      var run = data.runs[tl.sel], y = run.ds === null ? null : py(run.ds);
      if (run.op && run.op[2] !== null) {
        ctx.strokeStyle = COLOUR.op; ctx.lineWidth = 2;
        ctx.beginPath(); ctx.moveTo(px(run.op[2]), M.top); ctx.lineTo(px(run.op[2]), M.top + ph); ctx.stroke();
        ctx.lineWidth = 1;
      }
      [[run.last, COLOUR.last], [run.expected, COLOUR.expected]].forEach(function (p) {
        if (!p[0] || p[0][1] === null || y === null) return;
        ctx.strokeStyle = p[1]; ctx.lineWidth = 2;
        ctx.beginPath(); ctx.arc(px(p[0][1]), y, 7, 0, 2 * Math.PI); ctx.stroke();
        ctx.lineWidth = 1;
      });
      if (y !== null) { ctx.fillStyle = COLOUR.op; ctx.fillRect(M.left - 8, y - 1, 8, 3); }
    }
    /* Axes. */
    ctx.strokeStyle = "#888";
    ctx.strokeRect(M.left - 0.5, M.top - 0.5, pw + 1, ph + 1);
    ctx.fillStyle = "#444";
    ctx.textAlign = "right";
    for (var k = 0; k <= 4; k++) {
      var s = k / 4 * disk.sectors;
      ctx.fillText(fmtBytes(Math.round(s * 512)), M.left - 4, M.top + k / 4 * ph + 4);
    }
    ctx.textAlign = "center";
    for (k = 0; k <= 8; k++) ctx.fillText(fmtX(T.x0 + Math.round(k / 8 * xspan)), M.left + k / 8 * pw, M.top + ph + 16);
    ctx.textAlign = "left";
    canvas.onmousemove = function (ev) {
      var rc = canvas.getBoundingClientRect(), x = ev.clientX - rc.left - M.left, yy = ev.clientY - rc.top - M.top;
      if (x < 0 || x >= pw || yy < 0 || yy >= ph) { hideTip(); return; }
      var col = Math.floor(x / pw * usedCols), row = Math.floor(yy / ph * T.rows);
      var lines = [fmtX(T.x0 + col * T.col_width) + " - " + fmtX(T.x0 + (col + 1) * T.col_width),
        "disk " + fmtBytes(row * T.row_sectors * 512) + " - " + fmtBytes((row + 1) * T.row_sectors * 512),
        tlWrites[row * T.cols + col] + " write(s), " + tlZeroes[row * T.cols + col] + " zero/trim(s) here",
        tlFlush[col] + " flush(es), " + tlFua[col] + " FUA write(s) in this column"];
      function colOf(x) { return Math.floor((x - T.x0) / T.col_width); }
      T.marks.forEach(function (m) { if (colOf(m[0]) === col) lines.push("MARK " + m[1]); });
      T.faults.forEach(function (f) { if (f[5] !== null && colOf(f[5]) === col) lines.push("fault " + f[0] + (f[1] ? " seq " + f[1] : " after seq " + f[2]) + " at byte " + f[3]); });
      showTip(ev, lines.slice(0, 14).join("\n"));
    };
    canvas.onmouseleave = hideTip;
  }

  function renderTimeline() {
    var sec = el("section", { id: "timeline" }, [el("h2", { text: "Timeline: disk offset over log time" })]);
    var legend = el("p", { class: "legend" });
    [["writes", "rgb(" + COLOUR.writes.join(",") + ")"], ["zero/trim", "rgb(" + COLOUR.zeroes.join(",") + ")"],
     ["FLUSH", "#bbb"], ["FUA", COLOUR.fua], ["MARK", COLOUR.mark], ["injected fault", COLOUR.fault],
     ["selected run: op time", COLOUR.op], ["its last write", COLOUR.last], ["write of the expected content", COLOUR.expected]]
      .forEach(function (p) { legend.appendChild(el("span", { class: "item" }, [swatch(p[1]), p[0]])); });
    sec.appendChild(legend);
    var notes = [];
    if (T.marks.length < T.marks_total) notes.push("the first " + T.marks.length + " of " + T.marks_total + " MARKs");
    if (T.have_faults) notes.push(T.faults_total + " injected fault" + (T.faults_total === 1 ? "" : "s") +
      " (faults.txt)" + (T.faults.length < T.faults_total ? ", the first " + T.faults.length + " drawn" : ""));
    if (T.faults_error) notes.push(T.faults_error);
    if (T.x === "seq") notes.push("the log has no times: x is the record number");
    if (notes.length) sec.appendChild(el("p", { class: "note", text: notes.join("; ") }));
    sec.appendChild(el("p", { id: "runinfo", class: "note", text: "Choose \"timeline\" on a run to mark its op and its writes." }));
    sec.appendChild(el("canvas", { id: "tlcanvas" }));
    app.appendChild(sec);
  }

  /* The cold section: the disk as a freshly booted kernel read it, fsck,
   * the metadata writes the disk lacks and each file that changed. */
  function coldPlace(s, n) {
    if (s === null) return "no disk block";
    return n === 1 ? "disk sector " + s : "disk sectors " + s + "-" + (s + n - 1);
  }
  function coldWhat(r) {
    switch (r["class"]) {
      case "missing": return "past the file's end (or the file is gone) after the reboot";
      case "unreadable": return "the read failed (errno " + r.errno + ")";
      case "unmapped": return "the file has no disk block there now (reads zeros)";
      case "moved": return "the file system now points at " + coldPlace(r.cold_disk_sector, r.sectors) +
        " instead of " + coldPlace(r.warm_disk_sector, r.sectors) +
        (r.warm_place_holds_data ? " (which still hold the data)" : "");
      case "stale": return coldPlace(r.cold_disk_sector, r.sectors) + " hold their pre-run content (stale)";
      default: return coldPlace(r.cold_disk_sector, r.sectors) + " read other content than the file must hold";
    }
  }
  function coldLast(r) {
    if (r.cold_disk_sector === null) return "";
    return r.last_write_seq === null ? "never written during the run"
      : "seq " + r.last_write_seq + " at " + fmtX(r.last_write_ns);
  }
  function renderColdFile(sec, f) {
    var what = f.error ? "cannot be opened after the reboot (errno " + f.error + ")"
      : f.cold_size !== f.size ? "size changed: " + f.size + " bytes, now " + f.cold_size : "";
    if (f.bad_sectors) what += (what ? "; " : "") + f.bad_sectors + " sectors differ";
    sec.appendChild(el("h3", { class: "coldfile", text: f.path }));
    sec.appendChild(el("p", { text: what }));
    if (!f.runs.length) return;
    var t = el("table", { class: "runs" }, [el("tr", {}, ["class", "file offset", "sectors", "what the reboot shows",
      "last logged write there"].map(function (h) { return el("th", { text: h }); }))]);
    f.runs.forEach(function (r) {
      t.appendChild(el("tr", {}, [r["class"], String(r.file_offset), String(r.sectors), coldWhat(r), coldLast(r)]
        .map(function (v) { return el("td", { text: v }); })));
    });
    sec.appendChild(t);
  }
  function renderCold() {
    var k = data.cold && data.cold.detail;
    if (!k || !k.ran) return;
    var sec = el("section", { id: "cold" }, [el("h2", { text: "After a reboot: the cold pass" + (k.kernel ? " (kernel " + k.kernel + ")" : "") }),
      el("p", { id: "coldline", text: data.cold.line })]);
    if (k.error) sec.appendChild(el("p", { class: "warn", text: "the cold kernel reported no files: " + k.error }));
    if (k.fsck) {
      sec.appendChild(el("p", { id: "fsck", text: "fsck: " + k.fsck.verdict + " (" + k.fsck.command + ", exit " + k.fsck.status + ")" }));
      if (k.fsck.verdict !== "clean" && k.fsck.lines.length)
        sec.appendChild(el("pre", { class: "mono", text: k.fsck.lines.join("\n") }));
    }
    var meta = k.metadata_lacking;
    if (meta && meta.sectors) {
      sec.appendChild(el("p", { id: "coldmeta", text: "metadata: " + meta.sectors + " written sectors outside the files differ from their last " +
        "logged write (the disk lacks writes the kernel was told were done: lied or torn)" }));
      var ul = el("ul", { class: "mono" });
      meta.runs.forEach(function (r) {
        ul.appendChild(el("li", { text: coldPlace(r.disk_sector, r.sectors) + ": the disk lacks seq " + r.seq + " (" + r.type + ")" }));
      });
      sec.appendChild(ul);
    }
    k.files.forEach(function (f) { renderColdFile(sec, f); });
    if (k.runs_omitted)
      sec.appendChild(el("p", { class: "note", text: k.runs_omitted + " more runs: report.json's \"cold\" holds them all" }));
    app.appendChild(sec);
  }

  function render() {
    tip = el("div", { id: "tip" });
    document.body.appendChild(tip);
    renderHeader();
    renderCold();
    renderMap();
    renderFiles();
    renderTimeline();
    drawMap();
    drawTimeline();
    var prev = drawTimeline;
    drawTimeline = function () {
      prev();
      var info = document.getElementById("runinfo");
      if (tl.sel >= 0) {
        var r = data.runs[tl.sel];
        info.textContent = "run: " + className(r.c) + " " + data.files[r.f].path + " sectors " + r.fs + "-" + (r.fs + r.n - 1) +
          (r.op ? "; op " + r.op[0] + " at " + fmtX(r.op[2]) : "") + (r.last ? "; last write seq " + r.last[0] + " at " + fmtX(r.last[1]) : "") +
          (r.expected ? "; expected content written by seq " + r.expected[0] + " at " + fmtX(r.expected[1]) : "");
      }
    };
    document.body.setAttribute("data-rendered", "yes");
  }

  /* A campaign's summary.html: {"kind": "campaign", "summary": summary.json}.
   * The grid of kernels x columns (fs[/variant] workload), each cell
   * coloured by damaged/total; a cell with failures links to them (to the
   * one failing run's report.html when it holds one). */
  function campaignColour(g) {
    var ran = g.clean + g.damaged;
    if (!ran) return g.error ? "#bdbdbd" : "#f4f4f4";
    if (!g.damaged) return g.error ? "#c7e3be" : "#9fd49a";
    var f = g.damaged / ran;   /* light red at one in many, full red at all */
    var light = [248, 200, 200], full = [214, 39, 40];
    var rgb = light.map(function (v, i) { return Math.round(v + (full[i] - v) * f); });
    return "rgb(" + rgb.join(",") + ")";
  }
  function campaignLink(cell) {
    return cell.status === "damaged" ? cell.dir + "/report.html" : cell.dir + "/wtrack-run.log";
  }
  function renderCampaign() {
    var S = data.summary, C = S.counts;
    var verdict = C.error ? "incomplete" : C.damaged ? "damaged" : "clean";
    document.title = "wtrack campaign: " + verdict;
    app.appendChild(el("h1", {}, ["wtrack campaign ", el("span", { id: "verdict", class: "verdict " + verdict, text: verdict })]));
    app.appendChild(el("p", { id: "counts", text: C.cells + " cells: " + C.clean + " clean, " + C.damaged + " damaged, " +
      C.error + " error, " + C.not_run + " not run (" + S.dir + ")" }));
    var rows = [], cols = [], colKey = function (g) { return g.fs + "\u0000" + (g.variant || "") + "\u0000" + g.workload; };
    var colLabel = {}, cellsAt = {};
    /* the block sizes the cells of a column reported, as summary.txt's
     * " bs=N[/M]": ", 1.0 KiB blocks" (nothing when none did) */
    function columnBlocks(g) {
      var sizes = [];
      S.cells.forEach(function (c) {
        if (colKey(c) === colKey(g) && c.block_size && sizes.indexOf(c.block_size) < 0) sizes.push(c.block_size);
      });
      sizes.sort(function (a, b) { return a - b; });
      return sizes.length ? ", " + sizes.map(fmtBytes).join("/") + " blocks" : "";
    }
    S.grid.forEach(function (g) {
      if (rows.indexOf(g.kernel) < 0) rows.push(g.kernel);
      var k = colKey(g);
      if (cols.indexOf(k) < 0) { cols.push(k); colLabel[k] = g.fs + (g.variant ? "/" + g.variant : "") + " " + g.workload + columnBlocks(g); }
    });
    S.cells.forEach(function (c) {
      var k = c.kernel + "\u0001" + colKey(c);
      (cellsAt[k] = cellsAt[k] || []).push(c);
    });
    var table = el("table", { id: "grid", class: "grid" });
    table.appendChild(el("tr", {}, [el("th", { text: "kernel" })].concat(cols.map(function (k) { return el("th", { text: colLabel[k] }); }))));
    var failing = [];
    /* each kernel's architecture, and its guests' page size when a cell
     * reported one */
    function kernelLabel(kernel) {
      var g = S.grid.filter(function (x) { return x.kernel === kernel; })[0];
      var sized = S.cells.filter(function (c) { return c.kernel === kernel && c.page_size; })[0];
      var arch = g && g.arch ? g.arch : "?";
      return kernel + " (" + arch + (sized ? ", " + fmtBytes(sized.page_size) + " pages" : "") + ")";
    }
    rows.forEach(function (kernel, i) {
      var tr = el("tr", {}, [el("th", { class: "kernel", "data-arch": (S.grid.filter(function (x) { return x.kernel === kernel; })[0] || {}).arch || "", text: kernelLabel(kernel) })]);
      cols.forEach(function (k, j) {
        var g = S.grid.filter(function (x) { return x.kernel === kernel && colKey(x) === k; })[0];
        if (!g) { tr.appendChild(el("td", { class: "empty" })); return; }
        var text = g.damaged + "/" + (g.clean + g.damaged) + (g.error ? " +" + g.error + " error" + (g.error > 1 ? "s" : "") : "") +
          (g.not_run ? " +" + g.not_run + " not run" : "");
        var bad = (cellsAt[kernel + "\u0001" + k] || []).filter(function (c) { return c.status === "damaged" || c.status === "error"; });
        var td = el("td", { class: "gcell", "data-damaged": g.damaged, "data-total": g.clean + g.damaged, "data-error": g.error });
        td.style.background = campaignColour(g);
        if (bad.length) {
          var anchor = "fail-" + i + "-" + j;
          td.appendChild(el("a", { href: bad.length === 1 ? campaignLink(bad[0]) : "#" + anchor, text: text }));
          failing.push({ anchor: anchor, title: kernel + " " + colLabel[k], cells: bad });
        } else td.textContent = text;
        tr.appendChild(td);
      });
      table.appendChild(tr);
    });
    app.appendChild(el("h2", { text: "damaged/total seeds" }));
    app.appendChild(table);
    app.appendChild(el("p", { class: "note", text: "Errors (cells that could not run) and cells not run are counted apart. " +
      "A cell with failures links to its failing runs' report.html (an error's wtrack-run.log)." }));
    if (failing.length) {
      app.appendChild(el("h2", { text: "failing cells" }));
      failing.forEach(function (f) {
        app.appendChild(el("h3", { id: f.anchor, text: f.title }));
        var ul = el("ul", { class: "failing" });
        f.cells.forEach(function (c) {
          var what = c.status === "damaged"
            ? c.bad_sectors + " bad sectors (" + Object.keys(c.by_class).map(function (n) { return n + "=" + c.by_class[n]; }).join(" ") + ")"
            : "error: " + (c.error || "?");
          var li = [el("a", { href: campaignLink(c), text: c.id }), " " + what];
          if (c.minimal) li.push(" (", el("a", { class: "minimal", href: c.minimal, text: "minimized" }), ")");
          ul.appendChild(el("li", { class: "failing-cell " + c.status }, li));
        });
        app.appendChild(ul);
      });
    }
    document.body.setAttribute("data-rendered", "yes");
  }

  render();
})();
