// The dashboard's drawing: plain canvas, no library, nothing fetched but
// data.json from the same server.
"use strict";
(function () {
  const palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"];
  const base = document.body.dataset.base;

  function fmt(n) {
    if (n >= 1e6) return (n / 1e6).toFixed(1) + "M";
    if (n >= 1e4) return Math.round(n / 1e3) + "k";
    return String(n);
  }
  function hhmm(t) {
    const d = new Date(t);
    return d.toISOString().slice(11, 19);
  }
  function ctx2d(c) {
    const g = c.getContext("2d");
    g.clearRect(0, 0, c.width, c.height);
    g.font = "12px system-ui, sans-serif";
    g.textBaseline = "middle";
    return g;
  }
  function empty(g, c, text) {
    g.fillStyle = "#888";
    g.fillText(text, 12, c.height / 2);
  }
  // mark records where a plot is and how much it drew: the browser test
  // reads it back from the DOM.
  function mark(c, drawn) {
    const r = c.getBoundingClientRect();
    c.dataset.rect = [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)].join(",");
    c.dataset.drawn = String(drawn);
  }

  function drawKept(d) {
    const c = document.getElementById("kept"), g = ctx2d(c);
    const series = d.kept.series.filter((s) => s.points.length > 0);
    if (series.length === 0) { empty(g, c, "nothing diverted yet"); mark(c, 0); return; }
    const L = 56, R = 10, T = 10, B = 60, W = c.width - L - R, H = c.height - T - B;
    let t0 = Infinity, t1 = -Infinity, ymax = 1;
    for (const s of series) for (const p of s.points) { t0 = Math.min(t0, p[0]); t1 = Math.max(t1, p[0]); ymax = Math.max(ymax, p[1]); }
    t0 = Math.min(t0, t1 - 60000); // a minute's lead: the first step shows
    if (t1 <= t0) t1 = t0 + 1;
    const x = (t) => L + ((t - t0) / (t1 - t0)) * W, y = (v) => T + H - (v / ymax) * H;
    g.strokeStyle = "#999"; g.lineWidth = 1;
    g.beginPath(); g.moveTo(L, T); g.lineTo(L, T + H); g.lineTo(L + W, T + H); g.stroke();
    g.fillStyle = "#555"; g.textAlign = "right";
    for (let i = 0; i <= 4; i++) { const v = (ymax * i) / 4; g.fillText(fmt(Math.round(v)), L - 6, y(v)); }
    g.textAlign = "left"; g.fillText(hhmm(t0), L, T + H + 12); g.textAlign = "right"; g.fillText(hhmm(t1), L + W, T + H + 12);
    g.textAlign = "left";
    series.forEach((s, i) => {
      g.strokeStyle = palette[i % palette.length]; g.lineWidth = 3;
      g.beginPath(); g.moveTo(x(t0), y(0));
      let last = 0;
      for (const p of s.points) { g.lineTo(x(p[0]), y(last)); g.lineTo(x(p[0]), y(p[1])); last = p[1]; }
      g.lineTo(x(t1), y(last)); g.stroke();
      const lx = L + (i % 3) * 165, ly = T + H + 30 + Math.floor(i / 3) * 16;
      g.fillStyle = palette[i % palette.length]; g.fillRect(lx, ly - 6, 12, 12);
      g.fillStyle = "#222"; g.fillText(s.key.slice(0, 24), lx + 16, ly);
    });
    mark(c, series.length);
  }
  function drawTools(d) {
    const c = document.getElementById("tools"), g = ctx2d(c);
    const rows = d.by_tool.filter((r) => r.diverted > 0 || r.passed > 0 || r.by_reference > 0);
    if (rows.length === 0) { empty(g, c, "no calls yet"); mark(c, 0); return; }
    const keys = d.kept.series.map((s) => s.key);
    const L = 150, R = 110, rh = Math.min(22, (c.height - 10) / rows.length), W = c.width - L - R;
    const max = Math.max(1, ...rows.map((r) => r.diverted + r.passed));
    rows.forEach((r, i) => {
      const y = 5 + i * rh, k = keys.indexOf(r.key);
      g.fillStyle = "#222"; g.textAlign = "right"; g.fillText(r.key.slice(0, 22), L - 6, y + rh / 2);
      const wd = (r.diverted / max) * W, wp = (r.passed / max) * W;
      g.fillStyle = palette[(k >= 0 ? k : i) % palette.length]; g.fillRect(L, y + 3, wd, rh - 6);
      g.fillStyle = "#bbbbbb"; g.fillRect(L + wd, y + 3, wp, rh - 6);
      g.fillStyle = "#555"; g.textAlign = "left"; g.fillText(fmt(r.diverted) + (r.passed > 0 ? " + " + fmt(r.passed) + " passed" : "") + (r.by_reference > 0 ? ", " + fmt(r.by_reference) + " by ref" : ""), L + wd + wp + 4, y + rh / 2);
    });
    mark(c, rows.length);
  }

  function drawBudgets(d) {
    const c = document.getElementById("budgets");
    const rows = d.budgets;
    c.height = Math.max(40, rows.length * 26 + 10);
    const g = ctx2d(c);
    if (rows.length === 0) { empty(g, c, "no live agent"); mark(c, 0); return; }
    const L = 220, R = 150, W = c.width - L - R;
    rows.forEach((b, i) => {
      const y = 5 + i * 26, f = b.total > 0 ? Math.max(0, Math.min(1, b.left / b.total)) : 0;
      g.fillStyle = "#222"; g.textAlign = "right";
      g.fillText((b.run ? b.run + " / " : "") + b.agent, L - 8, y + 12);
      g.fillStyle = "#e6e6e6"; g.fillRect(L, y + 3, W, 18);
      g.fillStyle = f > 0.5 ? "#2ca02c" : f > 0.2 ? "#ff7f0e" : "#d62728"; g.fillRect(L, y + 3, f * W, 18);
      g.fillStyle = "#555"; g.textAlign = "left"; g.fillText(fmt(b.left) + " of " + fmt(b.total) + " left", L + W + 8, y + 12);
    });
    mark(c, rows.length);
  }

  function cell(tr, text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }
  function fill(id, rows, cols, none) {
    const tb = document.querySelector("#" + id + " tbody");
    tb.replaceChildren();
    if (rows.length === 0) {
      const tr = document.createElement("tr"); const td = cell(tr, none, "empty"); td.colSpan = cols; tb.appendChild(tr);
    }
    return tb;
  }
  function drawTables(d) {
    let tb = fill("biggest", d.biggest, 4, "nothing diverted yet");
    for (const b of d.biggest) {
      const tr = document.createElement("tr");
      cell(tr, hhmm(b.time)); cell(tr, b.key); cell(tr, b.file).title = b.file; cell(tr, fmt(b.tokens), "n");
      tb.appendChild(tr);
    }
    tb = fill("recent", d.recent, 7, "no calls yet");
    const slowest = Math.max(1, ...d.recent.map((c) => c.duration_ms));
    for (const c of d.recent) {
      const tr = document.createElement("tr");
      cell(tr, hhmm(c.time)); cell(tr, c.agent || "-"); cell(tr, c.key);
      cell(tr, c.outcome, c.outcome === "ok" ? "" : "err");
      const td = cell(tr, "");
      const bar = document.createElement("span"); bar.className = "lat"; bar.style.width = Math.max(1, Math.round((c.duration_ms / slowest) * 60)) + "px";
      td.appendChild(bar); td.appendChild(document.createTextNode(c.duration_ms < 1000 ? Math.round(c.duration_ms) + " ms" : (c.duration_ms / 1000).toFixed(1) + " s"));
      cell(tr, fmt(c.tokens_in), "n"); cell(tr, fmt(c.tokens_out), "n");
      tb.appendChild(tr);
    }
  }

  function render(d) {
    document.getElementById("summary").textContent = fmt(d.kept.total) + " tokens kept out of the context" +
      (d.owner ? " (owner " + d.owner + ")" : "") + (d.kept.by_reference > 0 ? ", " + fmt(d.kept.by_reference) + " more handed to tools by reference" : "") +
      "; " + d.finished.agents + " finished agents, " + fmt(d.finished.intercepted) + " intercepted" +
      (d.finished.by_reference > 0 ? ", " + fmt(d.finished.by_reference) + " by reference" : "");
    drawKept(d); drawTools(d); drawBudgets(d); drawTables(d);
    document.body.dataset.rendered = d.generated;
  }

  render(JSON.parse(document.getElementById("data").textContent));
  setInterval(() => {
    fetch(base + "/data.json", { cache: "no-store" }).then((r) => r.ok ? r.json() : null).then((d) => { if (d) render(d); }).catch(() => {});
  }, 5000);
})();
