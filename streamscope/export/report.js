// streamscope's report page. Every recorded value reaches the page as a text node
// (textContent, createTextNode): none is ever parsed as HTML, and the page's
// Content-Security-Policy allows this script alone and fetches nothing.
(function () {
  "use strict";
  var root = document.documentElement;
  window.addEventListener("error", function (e) { root.setAttribute("data-error", String(e.message)); });
  document.addEventListener("securitypolicyviolation", function (e) {
    root.setAttribute("data-csp-violation", String(e.violatedDirective));
  });
  var data = JSON.parse(document.getElementById("report-data").textContent);
  data.streams.forEach(rebuild);

  // each frame's tables, text and reasoning, rebuilt from its change from the frame
  // before (report_html.compact): a table unchanged is the same object
  function rebuild(s) {
    var tables = {}, text = "", reasoning = "";
    s.states.forEach(function (st) {
      var next = {};
      Object.keys(tables).forEach(function (n) { next[n] = tables[n]; });
      Object.keys(st.changes).forEach(function (n) {
        var d = st.changes[n], old = tables[n];
        if (d.calls !== undefined || !old || old.calls === null) { next[n] = d; return; }
        var t = { calls: old.calls.slice(0, d.n !== undefined ? d.n : old.calls.length),
                  error: old.error, differs: old.differs, more: old.more };
        ["error", "differs", "more"].forEach(function (k) { if (k in d) t[k] = d[k]; });
        (d.set || []).forEach(function (pair) {
          var base = t.calls[pair[0]] || {}, c = {}, f = pair[1];
          Object.keys(base).forEach(function (x) { c[x] = base[x]; });
          Object.keys(f).forEach(function (x) {
            if (x === "arguments+") c.arguments = base.arguments + f[x]; else c[x] = f[x];
          });
          t.calls[pair[0]] = c;
        });
        next[n] = t;
      });
      tables = next;
      if ("text+" in st) text += st["text+"]; else if ("text" in st) text = st.text;
      if ("reasoning+" in st) reasoning += st["reasoning+"]; else if ("reasoning" in st) reasoning = st.reasoning;
      st.tables = tables; st.text = text; st.reasoning = reasoning;
    });
  }
  var main = document.getElementById("report");

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent, tag, cls, text) { var n = el(tag, cls, text); parent.appendChild(n); return n; }
  // a recorded value as JSON text ("" and null told apart); arguments' text as itself
  function shown(value, raw) {
    if (raw && typeof value === "string" && value !== "") return value;
    try { return JSON.stringify(value); } catch (e) { return String(value); }
  }
  function same(a, b) { return JSON.stringify(a) === JSON.stringify(b); }
  function sev(parent, s) { add(parent, "span", "sev sev-" + (/^(error|warning|info)$/.test(s) ? s : "info"), s); }

  // #exchange=N&frame=F (or #frame=F): the stream and frame the page opens at
  function wanted() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var kv = part.split("=");
      if (kv.length === 2 && /^\d+$/.test(kv[1])) out[kv[0]] = parseInt(kv[1], 10);
    });
    return out;
  }

  add(main, "h1", null, "streamscope report");
  add(main, "div", "dim", "of " + data.source + (data.redacted ? " \u2014 redacted: the conversation's text, tool results and argument values are left out" : ""));
  if (data.masked) add(main, "div", "note", data.masked + " credential(s) the requests carried are masked.");
  (data.notes || []).forEach(function (n) { add(main, "div", "note", n); });

  var picker = null;
  if (data.streams.length > 1) {
    var bar = add(main, "div", "controls");
    add(bar, "label", null, "Stream: ");
    picker = add(bar, "select");
    picker.id = "stream-picker";
    data.streams.forEach(function (s, i) {
      var o = add(picker, "option", null, "exchange " + s.exchange + (s.turn ? ", response " + s.turn : "") +
        " \u2014 " + s.anomalies.length + " anomal" + (s.anomalies.length === 1 ? "y" : "ies"));
      o.value = String(i);
    });
  }
  var view = add(main, "div");
  view.id = "stream";

  var current = null, slider = null, frameBox = null;

  function showStream(i, frame) {
    var s = data.streams[i];
    current = s;
    if (picker) picker.value = String(i);
    view.textContent = "";
    var req = s.request;
    add(view, "h2", null, "The request (exchange " + s.exchange + (s.turn ? ", response " + s.turn : "") + ")");
    var facts = add(view, "table");
    var line = (req.method || "") + " " + (req.url || "");
    if (req.message) line = "the client message " + req.message + " (session: " + line + ")";
    [["request", req.recorded === false ? "no request recorded (a stream's body alone)" : line], ["model", req.model], ["status", req.status],
     ["dialect", s.dialect], ["framing", s.framing], ["frames", s.frames], ["ended", s.ended],
     ["tools declared", (req.tools || []).map(function (t) { return shown(t); }).join(", ")]]
      .forEach(function (row) {
        var tr = add(facts, "tr");
        add(tr, "th", null, row[0]);
        add(tr, "td", "v", row[1] === null || row[1] === undefined ? "\u2014" : row[1]);
      });
    headers(view, "Request headers", req.headers);
    headers(view, "Response headers", req.response_headers);
    if (req.body !== null && req.body !== undefined) {
      var d = add(view, "details");
      add(d, "summary", null, "Request body");
      add(d, "pre", null, req.body);
    }
    (s.notes || []).forEach(function (n) { add(view, "div", "note", n); });

    add(view, "h2", null, "Frame by frame");
    if (s.states.length) {
      var controls = add(view, "div", "controls");
      var prev = add(controls, "button", null, "\u25C0 frame");
      slider = add(controls, "input");
      slider.type = "range"; slider.id = "frame-slider";
      slider.min = "0"; slider.max = String(s.states.length - 1); slider.step = "1";
      var next = add(controls, "button", null, "frame \u25B6");
      var jump = add(controls, "button", null, "next anomaly \u25B6\u25B6");
      prev.addEventListener("click", function () { move(-1); });
      next.addEventListener("click", function () { move(1); });
      jump.addEventListener("click", nextMarked);
      jump.id = "next-anomaly";
      // (no marked frame: no anomaly to go to)
      jump.hidden = !s.states.some(function (st) { return st.marks.length; });
      slider.addEventListener("input", function () { showState(parseInt(slider.value, 10), true); });
      frameBox = add(view, "div");
      frameBox.id = "frame";
      showFrame(frame === undefined ? s.finding_frame : frame, false);
    } else {
      add(view, "div", "note", "No frame-by-frame view for this stream.");
    }

    add(view, "h2", null, "Anomalies");
    var list = add(view, "ul");
    list.id = "anomalies";
    if (!s.anomalies.length) add(list, "li", null, "none");
    s.anomalies.forEach(function (a) {
      var li = add(list, "li");
      li.setAttribute("data-frame", String(a.frame));
      var b = add(li, "button", null, "frame " + a.frame);
      b.addEventListener("click", function () { showFrame(a.frame, true); });
      li.appendChild(document.createTextNode(" "));
      sev(li, a.severity);
      li.appendChild(document.createTextNode(" "));
      add(li, "code", null, a.kind);
      li.appendChild(document.createTextNode(": " + a.message));
    });

    add(view, "h2", null, "What each client builds (end of stream)");
    clients(view, s.clients);
    texts(view, s.content, s.reasoning, "at the end");
    markAnomalies();
  }

  // the text the model wrote (and its reasoning) by then
  function texts(parent, text, reasoning, at) {
    [["Reasoning", reasoning], ["The text answer", text]].forEach(function (t) {
      if (!t[1]) return;
      var d = add(parent, "details", "text");
      d.open = true;
      add(d, "summary", null, t[0] + " " + at);
      add(d, "pre", null, t[1]);
    });
  }

  function headers(parent, title, rows) {
    if (!rows || !rows.length) return;
    var d = add(parent, "details");
    add(d, "summary", null, title + " (" + rows.length + ")");
    var t = add(d, "table");
    rows.forEach(function (h) { var tr = add(t, "tr"); add(tr, "th", "v", h[0]); add(tr, "td", "v", h[1]); });
  }

  function move(step) {
    var i = Math.max(0, Math.min(current.states.length - 1, parseInt(slider.value, 10) + step));
    showState(i, true);
  }
  function nextMarked() {
    var i = parseInt(slider.value, 10);
    for (var k = i + 1; k < current.states.length; k++) {
      if (current.states[k].marks.length) { showState(k, true); return; }
    }
  }
  // a frame the page did not keep (a long stream's) or the stream has not: said, and
  // the kept frame before it shown
  function showFrame(frame, remember) {
    var states = current.states, at = 0;
    for (var k = 0; k < states.length; k++) if (states[k].number <= frame) at = k;
    var said = null, got = states[at].number;
    if (frame > current.frames) said = "Frame " + frame + ": the stream has frames 1-" + current.frames + "; showing frame " + got + ".";
    else if (got !== frame) said = "Frame " + frame + " was not kept in this report (see the note above); showing frame " + got + ", the kept frame before it.";
    showState(at, remember, said);
  }

  function showState(i, remember, said) {
    var st = current.states[i];
    slider.value = String(i);
    slider.setAttribute("aria-valuenow", String(st.number));
    slider.setAttribute("aria-valuetext", "frame " + st.number);
    root.setAttribute("data-frame", String(st.number));
    frameBox.textContent = "";
    if (said) add(frameBox, "div", "note fallback", said);
    var head = add(frameBox, "div", "frame-head");
    add(head, "strong", null, st.number === 0 ? "Before the first frame" : "Frame " + st.number);
    add(head, "span", "dim", " of " + current.frames + (st.time_ms !== null ? " \u00B7 " + st.time_ms + " ms" : ""));
    if (st.summary) add(frameBox, "div", "v dim", st.summary);
    var marks = add(frameBox, "div", "marks");
    marks.id = "marks";
    st.marks.forEach(function (k) { add(marks, "span", "mark", k); });
    var grid = add(frameBox, "div", "clients");
    var robust = st.tables.robust;
    Object.keys(st.tables).forEach(function (name) { table(grid, name, st.tables[name], name === "robust" ? null : robust); });
    texts(frameBox, st.text, st.reasoning, "at frame " + st.number);
    if (remember) {
      var want = "#exchange=" + current.exchange + (current.turn ? "&response=" + current.turn : "") + "&frame=" + st.number;
      if (location.hash !== want) history.replaceState(null, "", want);
    }
    markAnomalies();
  }

  function table(parent, name, t, robust) {
    var box = add(parent, "div", "client");
    box.setAttribute("data-client", name);
    add(box, "h3", null, name === "robust" ? "robust (streamscope)" : name);
    if (t.calls === null) {
      box.className += " raised";
      add(box, "div", null, "raised: " + t.error);
      return;
    }
    if (t.differs) box.className += " differs-client";
    if (!t.calls.length) { add(box, "div", "dim", current.calls ? "no call yet" : "no call in this stream"); return; }
    var tab = add(box, "table");
    var hr = add(tab, "tr");
    // the dialect's own columns (Terms.call_fields), as inspect's call table has them:
    // its container (a Responses call's response, numbered as inspect does) and key first
    var cols = current.columns || [["choice", "choice"], ["index", "index"], ["id", "id"], ["name", "name"]];
    cols.forEach(function (c) { add(hr, "th", null, c[0]); });
    ["arguments", "fragments"].forEach(function (h) { add(hr, "th", null, h); });
    t.calls.forEach(function (c, k) {
      var base = robust && robust.calls ? robust.calls[k] : null;
      var tr = add(tab, "tr");
      add(tr, "td", "v", shown(c.choice));
      add(tr, "td", "v", shown(c.index));
      cols.slice(2).map(function (x) { return x[1]; }).concat(["arguments"]).forEach(function (f) {
        var td = add(tr, "td", "v", shown(c[f], f === "arguments"));
        td.setAttribute("data-field", f);
        if (robust && (!base || !same(base[f], c[f]))) {
          td.className += " differs";
          td.title = "robust holds " + (base ? shown(base[f], f === "arguments") : "no such call");
        }
      });
      add(tr, "td", null, c.fragments);
    });
    if (t.more) add(box, "div", "dim", "\u2026 and " + t.more + " more calls (left out of the report)");
  }

  function clients(parent, tables) {
    var t = add(parent, "table");
    var hr = add(t, "tr");
    ["client", "calls", "ids", "names", "differs from robust", "what differs"].forEach(function (h) { add(hr, "th", null, h); });
    Object.keys(tables).forEach(function (name) {
      var c = tables[name], tr = add(t, "tr");
      add(tr, "td", null, name);
      if (c.calls === null) { add(tr, "td", "v", "raised: " + c.error); add(tr, "td"); add(tr, "td"); add(tr, "td", "yes", "yes"); add(tr, "td", null, "raises"); return; }
      add(tr, "td", null, c.calls.length + c.more);
      add(tr, "td", "v", c.calls.map(function (x) { return shown(x.id); }).join(", "));
      add(tr, "td", "v", c.calls.map(function (x) { return shown(x.name); }).join(", "));
      add(tr, "td", c.differs ? "yes" : null, c.differs === null ? "" : (c.differs ? "yes" : "no"));
      add(tr, "td", "v what-differs", c.said || "");
    });
  }

  function markAnomalies() {
    var f = root.getAttribute("data-frame");
    var items = document.querySelectorAll("#anomalies li");
    for (var k = 0; k < items.length; k++) {
      items[k].className = items[k].getAttribute("data-frame") === f ? "here" : "";
    }
  }

  add(main, "h2", null, "The contract (the requests that carry the calls back)");
  var contract = add(main, "ul");
  if (!data.contract.length) add(contract, "li", null, "no finding");
  data.contract.forEach(function (f) {
    var li = add(contract, "li");
    sev(li, f.severity);
    li.appendChild(document.createTextNode(" "));
    add(li, "code", null, f.kind);
    li.appendChild(document.createTextNode(": " + f.message));
  });

  // the URL's #exchange=N(&response=R)(&frame=F) wins; else where the report opens
  function open() {
    var w = wanted(), i = data.open ? data.open.stream : 0, named = false;
    var miss = document.getElementById("link-miss");
    if (miss) miss.parentNode.removeChild(miss);
    if (w.exchange !== undefined) {
      for (var k = data.streams.length - 1; k >= 0; k--) {  // (the first that matches)
        var s = data.streams[k];
        if (s.exchange === w.exchange && (w.response === undefined || s.turn === w.response)) { i = k; named = true; }
      }
    }
    var frame = w.frame !== undefined ? w.frame : (!named && data.open ? data.open.frame : null);
    var said = null;
    if (w.exchange !== undefined && !named) {
      var where = "exchange " + w.exchange + (w.response !== undefined ? ", response " + w.response : "");
      var s0 = data.streams[i];
      said = "The link names " + where + ": this report has no such stream; showing exchange " + s0.exchange + (s0.turn ? ", response " + s0.turn : "") + " at its finding.";
      frame = data.open ? data.open.frame : null;
    }
    showStream(i, frame === null ? undefined : frame);
    if (said) {
      var n = el("div", "note fallback", said);
      n.id = "link-miss";
      main.insertBefore(n, view);
    }
  }
  if (picker) picker.addEventListener("change", function () { showStream(parseInt(picker.value, 10)); });
  window.addEventListener("hashchange", open);
  open();
  root.setAttribute("data-ready", "1");
})();
