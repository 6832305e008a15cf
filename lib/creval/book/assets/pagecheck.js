// The page check's script (creval.book.pagecheck): run in the page after it loads; writes what it found.
(function () {
  function run() {
    var out = [], W = window.innerWidth;
    var page = document.scrollingElement || document.documentElement;
    if (page.scrollWidth > W + 2) {
      var wide = [];
      document.querySelectorAll("body *").forEach(function (e) {
        var r = e.getBoundingClientRect();
        if (r.right > W + 2 && r.width > 0 && wide.length < 3) {
          var p = e.parentElement, clipped = false;
          while (p && p !== document.body) {
            var s = getComputedStyle(p).overflowX;
            if (s === "auto" || s === "scroll" || s === "hidden") { clipped = true; break; }
            p = p.parentElement;
          }
          if (!clipped) wide.push(e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined ? "." + String(e.className).split(" ")[0] : ""));
        }
      });
      out.push({kind: "overflow", what: "page " + page.scrollWidth + " px wide in a " + W + " px window: " + wide.join(", ")});
    }
    var REPR = /\{\s*['"][^'"\n]{1,60}['"]\s*:\s*[^}\n]{0,80}\}|\[\s*'[^'\n]{0,60}'\s*(,\s*'[^'\n]{0,60}'\s*)*\]/;
    var walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT), node;
    while ((node = walker.nextNode())) {
      var el = node.parentElement;
      if (!el || el.closest("pre, code, script, style, details, .js-plotly-plot, #creval-pagecheck")) continue;
      var m = REPR.exec(node.textContent);
      if (m) out.push({kind: "repr", what: m[0].slice(0, 120)});
    }
    document.querySelectorAll("h1, h2, h3, h4, h5, h6").forEach(function (h) {
      if (h.closest("nav, .creval-nav")) return;
      var t = h.textContent.replace(/¶/g, "").trim();
      if (!t) return;
      if (/\.$/.test(t) || /^[a-z]/.test(t) || t.length > LONG)
        out.push({kind: "heading from data", what: t.slice(0, 120)});
    });
    document.querySelectorAll(".js-plotly-plot").forEach(function (gd, i) {
      var L = gd._fullLayout;
      if (!L) { out.push({kind: "figure", what: "figure " + (i + 1) + " did not draw"}); return; }
      var title = (L.title && L.title.text) || "figure " + (i + 1);
      var axes = Object.keys(L).filter(function (k) { return /^[xy]axis\d*$/.test(k) && L[k] && L[k].visible !== false; });
      var xs = axes.filter(function (k) { return k[0] === "x"; }), ys = axes.filter(function (k) { return k[0] === "y"; });
      var has = function (list) {      // the figure's own titles (plotly fills untitled axes with a placeholder)
        return list.some(function (k) {
          var u = (gd.layout || {})[k], t = u && u.title;
          return typeof t === "string" ? t.trim() : t && t.text && String(t.text).trim();
        });
      };
      var drawn = (gd.data || []).some(function (t) { return !t.type || /scatter|bar|box|violin|histogram|heatmap/.test(t.type); });
      if (drawn && xs.length && ys.length && (!has(xs) || !has(ys)))
        out.push({kind: "figure", what: title.slice(0, 80) + ": no title on its " + (!has(xs) ? "x" : "y") + " axis"});
      if (drawn && L._size && L.width && L._size.w < 0.5 * L.width)
        out.push({kind: "figure", what: title.slice(0, 80) + ": plot area " + Math.round(L._size.w) + " of " + Math.round(L.width) + " px"});
    });
    var pre = document.createElement("pre");
    pre.id = "creval-pagecheck";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  window.addEventListener("load", function () { setTimeout(run, 500); });
})();
