// The explanation page's script. It computes no score: every number it shows is
// looked up in the tables zero_jax filled when the page was generated (the JSON in
// #zero-data), at the index the controls' positions give.
(function () {
  "use strict";

  var DATA = JSON.parse(document.getElementById("zero-data").textContent);
  var AXES = DATA.axes;
  var ALPHABET = DATA.alphabet;
  var SVG = "http://www.w3.org/2000/svg";
  var POS = {};
  for (var a = 0; a < ALPHABET.length; a++) POS[ALPHABET.charAt(a)] = a;

  // ------------------------------------------------------------------ tables
  function decode(t) {
    var out = new Array(t.n);
    for (var k = 0; k < t.n; k++) {
      var idx = 0;
      for (var j = 0; j < t.w; j++) idx = idx * ALPHABET.length + POS[t.s.charAt(k * t.w + j)];
      out[k] = t.u[idx];
    }
    return out;
  }

  function fmt(v) {
    if (typeof v === "boolean") return v ? "kept" : "dropped";
    var s = v.toFixed(3).replace(/\.?0+$/, "");
    return s === "-0" ? "0" : s;
  }

  function $(id) {
    var el = document.getElementById(id);
    if (!el) throw new Error("explain page: no element #" + id);
    return el;
  }

  function show(id, v, text) {
    var el = $(id);
    el.textContent = text === undefined ? fmt(v) : text;
    el.setAttribute("data-value", String(v));
  }

  // ------------------------------------------------------------------ controls
  function axisOf(input) {
    return AXES[input.getAttribute("data-axis")];
  }

  // Position of a range input; shows its value next to it and to assistive technology.
  function pos(id) {
    var el = $(id);
    var i = parseInt(el.value, 10);
    var label = el.hasAttribute("data-axis") ? axisOf(el).labels[i] : String(i);
    el.setAttribute("aria-valuetext", label);
    $(id + "-out").textContent = label;
    return i;
  }

  function axisValue(id) {
    var el = $(id);
    return axisOf(el).values[parseInt(el.value, 10)];
  }

  function checked(id) {
    return $(id).checked ? 1 : 0;
  }

  function choice(id) {
    return parseInt($(id).value, 10);
  }

  function listen(ids, fn) {
    ids.forEach(function (id) {
      $(id).addEventListener("input", fn);
      $(id).addEventListener("change", fn);
    });
    fn();
  }

  // ------------------------------------------------------------------ SVG helpers
  function el(name, attrs, text) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) {
      node.setAttribute(k, attrs[k]);
    });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function clear(svg) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
  }

  // A line plot of ys over the positions of an axis, with the current position marked.
  function linePlot(svg, xs, series, current, opts) {
    clear(svg);
    var box = svg.viewBox.baseVal;
    var L = 56, R = 24, T = 14, B = 52;
    var lo = opts.ymin, hi = opts.ymax;
    function X(i) { return L + (box.width - L - R) * (xs[i] - xs[0]) / (xs[xs.length - 1] - xs[0]); }
    function Y(v) { return T + (box.height - T - B) * (hi - v) / (hi - lo); }
    opts.yticks.forEach(function (t) {
      svg.appendChild(el("line", { "class": "grid", x1: L, x2: box.width - R, y1: Y(t), y2: Y(t) }));
      svg.appendChild(el("text", { "class": "tick", x: L - 6, y: Y(t) + 4, "text-anchor": "end" }, String(t)));
    });
    opts.xticks.forEach(function (i) {
      svg.appendChild(el("text", { "class": "tick", x: X(i), y: box.height - B + 26, "text-anchor": "middle" }, opts.xlabels[i]));
    });
    svg.appendChild(el("text", { "class": "axis", x: (L + box.width - R) / 2, y: box.height - 4, "text-anchor": "middle" }, opts.xname));
    series.forEach(function (s) {
      var pts = s.ys.map(function (v, i) { return X(i).toFixed(1) + "," + Y(v).toFixed(1); }).join(" ");
      svg.appendChild(el("polyline", { "class": s.cls, points: pts }));
    });
    var main = series[0].ys[current];
    svg.appendChild(el("circle", { "class": "dot", cx: X(current), cy: Y(main), r: 5 }));
  }

  // ------------------------------------------------------------------ the loops
  function initLoop(loop) {
    var n = loop.querySelectorAll(".stage-tab").length;
    var names = Array.prototype.map.call(loop.querySelectorAll(".stage-tab"), function (b) {
      return b.textContent.replace(/^\d+\.\s*/, "");
    });
    function go(stage) {
      stage = Math.max(0, Math.min(n - 1, stage));
      loop.setAttribute("data-stage", String(stage));
      loop.querySelectorAll("[data-from]").forEach(function (node) {
        var from = parseInt(node.getAttribute("data-from"), 10);
        node.classList.toggle("later", from > stage);
        node.classList.toggle("now", from === stage && node.tagName !== "DIV");
      });
      loop.querySelectorAll("[data-stage-text]").forEach(function (p) {
        p.hidden = parseInt(p.getAttribute("data-stage-text"), 10) !== stage;
      });
      loop.querySelectorAll(".stage-tab").forEach(function (b, i) {
        if (i === stage) b.setAttribute("aria-current", "step");
        else b.removeAttribute("aria-current");
      });
      loop.querySelector(".prev").disabled = stage === 0;
      loop.querySelector(".next").disabled = stage === n - 1;
      loop.querySelector(".status").textContent =
        "Step " + (stage + 1) + " of " + n + ": " + names[stage];
    }
    loop.addEventListener("click", function (ev) {
      var b = ev.target.closest("button");
      if (!b || !loop.contains(b)) return;
      var cur = parseInt(loop.getAttribute("data-stage"), 10);
      if (b.hasAttribute("data-step")) go(cur + parseInt(b.getAttribute("data-step"), 10));
      else if (b.hasAttribute("data-goto")) go(parseInt(b.getAttribute("data-goto"), 10));
    });
    go(0);
  }

  // ------------------------------------------------------------------ 107
  function initChallenger() {
    var g = DATA.challenger;
    var reward = decode(g.reward), unc = decode(g.uncertainty);
    var combo = {};
    g.combos.forEach(function (c, i) { combo[c.join(",")] = i; });
    var P = AXES["challenger.p"], S = AXES["challenger.strength"];
    var np = P.values.length, ns = S.values.length;
    function update() {
      var B = pos("ch-B");
      var n = $("ch-n"); n.max = String(B); if (parseInt(n.value, 10) > B) n.value = String(B);
      var copies = pos("ch-n");
      var m = $("ch-m"); m.max = String(copies - 1); if (parseInt(m.value, 10) > copies - 1) m.value = String(copies - 1);
      var bad = pos("ch-m");
      var p = pos("ch-p"), j = pos("ch-lam"), v = checked("ch-valid");
      var ci = combo[[B, copies, bad].join(",")];
      var base = ((ci * ns + j) * 2 + v) * np;
      show("ch-r", reward[base + p]);
      show("ch-u", unc[p]);
      $("ch-pen").textContent = "penalty term \u03bb\u00b7|C|/B = " + S.labels[j] + " \u00d7 " + copies + " / " + B +
        (v ? "" : "; the format gate sets the reward to 0");
      // the batch strip
      var strip = $("ch-strip");
      strip.textContent = "";
      for (var i = 0; i < B; i++) {
        var cell = document.createElement("span");
        cell.className = "cell" + (i < copies ? " same" : "") + (i === 0 ? " self" : "") +
          ((i === 0 && !v) || (i > 0 && i <= bad) ? " malformed" : "");
        cell.textContent = i === 0 ? "this" : (i < copies ? "copy" : "other");
        strip.appendChild(cell);
      }
      var ys = reward.slice(base, base + np);
      linePlot($("ch-plot"), P.values, [{ ys: ys, cls: "series-a" }, { ys: unc, cls: "series-b" }], p, {
        ymin: 0, ymax: 1, yticks: [0, 0.25, 0.5, 0.75, 1], xticks: [0, 5, 10, 15, 20], xlabels: P.labels,
        xname: "consistency p",
      });
    }
    listen(["ch-B", "ch-n", "ch-m", "ch-p", "ch-lam", "ch-valid"], update);
  }

  // ------------------------------------------------------------------ 108
  function initPseudo() {
    var g = DATA.pseudo;
    var label = decode(g.label), p = decode(g.p), pIndex = decode(g.p_index);
    var mask = decode(g.mask), pseudo = decode(g.pseudo), revote = decode(g.revote);
    var E = AXES["band.edge"], PG = AXES["band.p"];
    var ne = E.values.length, np = PG.values.length;
    var votes = ["ps-v0", "ps-v1", "ps-v2", "ps-v3"], fresh = ["ps-f0", "ps-f1", "ps-f2"];
    function voteIndex() {
      return votes.reduce(function (acc, id) { return acc * 4 + choice(id); }, 0);
    }
    function freshIndex() {
      return fresh.reduce(function (acc, id) { return acc * 4 + choice(id); }, 0);
    }
    function update() {
      var vi = voteIndex(), y = label[vi];
      show("ps-label", y, String(y));
      show("ps-p", p[vi]);
      var lo = pos("ps-low"), hi = pos("ps-high"), probe = pos("ps-probe");
      var err = g.errors[lo * ne + hi];
      var base = (lo * ne + hi) * np;
      $("ps-band-msg").textContent = err ? "curriculum_mask raises ValueError: " + err : "";
      if (err) {
        show("ps-kept", "error", "\u2014 (no band)");
        show("ps-inband", "error", "\u2014 (no band)");
      } else {
        show("ps-kept", mask[base + probe]);
        show("ps-inband", mask[base + pIndex[vi]]);
      }
      drawBand(err ? null : mask.slice(base, base + np), lo, hi, pIndex[vi]);
      var fi = freshIndex();
      show("ps-frozen", y, String(y));
      for (var k = 0; k < 3; k++) show("ps-r" + k, pseudo[(y * 64 + fi) * 3 + k]);
      var rv = revote[fi];
      $("ps-revote").textContent = "Re-voting these fresh answers (the mistake) would make " + rv +
        " the label" + (rv === y ? ", the same as the frozen one here." : " instead of " + y + ".");
    }
    function drawBand(keep, lo, hi, marked) {
      var svg = $("ps-band-chart");
      clear(svg);
      var box = svg.viewBox.baseVal, L = 24, R = 24;
      function X(v) { return L + (box.width - L - R) * v; }
      if (keep) {
        svg.appendChild(el("rect", { "class": "band-fill", x: X(E.values[lo]), y: 18, width: Math.max(0, X(E.values[hi]) - X(E.values[lo])), height: 40 }));
      }
      svg.appendChild(el("line", { "class": "grid", x1: X(0), x2: X(1), y1: 38, y2: 38 }));
      PG.values.forEach(function (v, i) {
        var kept = keep ? keep[i] : false;
        var c = el("circle", { "class": kept ? "kept" : "dropped", cx: X(v), cy: 38, r: 6, "data-p": PG.labels[i], "data-kept": String(kept) });
        svg.appendChild(c);
        if (i % 5 === 0) svg.appendChild(el("text", { "class": "tick", x: X(v), y: 80, "text-anchor": "middle" }, PG.labels[i]));
      });
      svg.appendChild(el("path", { "class": "marker", d: "M" + X(PG.values[marked]) + " 8 l-6 -8 h12 z" }));
      svg.appendChild(el("text", { "class": "axis", x: box.width / 2, y: 104, "text-anchor": "middle" }, "consistency p"));
    }
    listen(votes.concat(fresh, ["ps-low", "ps-high", "ps-probe"]), update);
  }

  // ------------------------------------------------------------------ 109
  function initHint() {
    var g = DATA.proposer;
    var delta = decode(g.delta), H = AXES["hint.shift"], base = DATA.hint_base_logp;
    var nh = H.values.length;
    function update() {
      var s = [pos("hd-s0"), pos("hd-s1"), pos("hd-s2")];
      var m = [checked("hd-m0"), checked("hd-m1"), checked("hd-m2")];
      var idx = ((s[0] * nh + s[1]) * nh + s[2]) * 8 + (m[0] * 4 + m[1] * 2 + m[2]);
      show("hd-delta", delta[idx]);
      for (var t = 0; t < 3; t++) {
        $("hd-lp" + t).textContent = m[t]
          ? "log p\u02b0 = " + DATA.hint_hinted_labels[t][s[t]]
          : "padding: left out of the mean";
      }
      var svg = $("hd-chart");
      clear(svg);
      var box = svg.viewBox.baseVal, L = 52, R = 14, T = 12, B = 28;
      function Y(v) { return T + (box.height - T - B) * (3 - v) / 4; }
      [-1, 0, 1, 2, 3].forEach(function (v) {
        svg.appendChild(el("line", { "class": "grid", x1: L, x2: box.width - R, y1: Y(v), y2: Y(v) }));
        svg.appendChild(el("text", { "class": "tick", x: L - 6, y: Y(v) + 4, "text-anchor": "end" }, String(v)));
      });
      var bw = (box.width - L - R) / 3;
      for (t = 0; t < 3; t++) {
        var v = H.values[s[t]];
        var top = Math.min(Y(v), Y(0)), h = Math.abs(Y(v) - Y(0));
        svg.appendChild(el("rect", { "class": m[t] ? "bar" : "bar off", x: L + t * bw + bw * 0.2, y: top, width: bw * 0.6, height: Math.max(h, 1) }));
        svg.appendChild(el("text", { "class": "tick", x: L + t * bw + bw / 2, y: box.height - 8, "text-anchor": "middle" }, "token " + (t + 1)));
      }
      var d = delta[idx];
      svg.appendChild(el("line", { "class": "mean", x1: L, x2: box.width - R, y1: Y(d), y2: Y(d) }));
    }
    listen(["hd-s0", "hd-s1", "hd-s2", "hd-m0", "hd-m1", "hd-m2"], update);
  }

  function initProposer() {
    var g = DATA.proposer;
    var reward = decode(g.reward);
    var D = AXES["proposer.delta"], Ln = AXES["proposer.length"], Sh = AXES["proposer.share"];
    var nd = D.values.length, nl = Ln.values.length, ns = Sh.values.length;
    function update() {
      var d = pos("pr-delta"), l = pos("pr-len"), s = pos("pr-share"), v = checked("pr-valid");
      var base = ((v * ns + s) * nd + d) * nl;
      show("pr-r", reward[base + l]);
      var ys = reward.slice(base, base + nl);
      var lo = Math.min(-2, Math.floor(Math.min.apply(null, ys))), hi = Math.max(3, Math.ceil(Math.max.apply(null, ys)));
      var ticks = [];
      for (var t = lo; t <= hi; t++) ticks.push(t);
      linePlot($("pr-plot"), Ln.values, [{ ys: ys, cls: "series-a" }], l, {
        ymin: lo, ymax: hi, yticks: ticks, xticks: [0, 5, 10, 15, 20, 25, 30], xlabels: Ln.labels,
        xname: "hint length L (characters)",
      });
    }
    listen(["pr-delta", "pr-len", "pr-share", "pr-valid"], update);
  }

  // ------------------------------------------------------------------ 113
  function initCoder() {
    var coder = decode(DATA.mm.coder), C = AXES["coder.consistency"];
    var ne = AXES["coder.easy"].values.length, nc = C.values.length;
    function update() {
      var e = checked("cd-exec"), x = checked("cd-syntax"), s = pos("cd-easy"), c = pos("cd-c");
      var base = ((e * 2 + x) * ne + s) * nc;
      show("cd-r", coder[base + c]);
      $("cd-ignored").textContent = e ? "" : "The render failed: s and c are ignored.";
      linePlot($("cd-plot"), C.values, [{ ys: coder.slice(base, base + nc), cls: "series-a" }], c, {
        ymin: -0.5, ymax: 2.5, yticks: [0, 1, 2], xticks: [0, 5, 10, 15, 20], xlabels: C.labels,
        xname: "consistency c",
      });
    }
    listen(["cd-exec", "cd-syntax", "cd-easy", "cd-c"], update);
  }

  function initSolver() {
    var g = DATA.mm;
    var solver = decode(g.solver), silver = decode(g.silver);
    var na = AXES["solver.alpha"].values.length;
    var ans = ["sv-a0", "sv-a1", "sv-a2", "sv-a3"], fm = ["sv-f0", "sv-f1", "sv-f2", "sv-f3"];
    function update() {
      var ai = ans.reduce(function (acc, id) { return acc * 4 + choice(id); }, 0);
      var fi = fm.reduce(function (acc, id) { return acc * 2 + checked(id); }, 0);
      var al = pos("sv-alpha");
      show("sv-silver", silver[ai], String(silver[ai]));
      for (var k = 0; k < 4; k++) show("sv-r" + k, solver[((ai * 16 + fi) * na + al) * 4 + k]);
    }
    listen(ans.concat(fm, ["sv-alpha"]), update);
  }

  document.querySelectorAll(".loop").forEach(initLoop);
  initChallenger();
  initPseudo();
  initHint();
  initProposer();
  initCoder();
  initSolver();
  document.body.setAttribute("data-ready", "true");
})();
