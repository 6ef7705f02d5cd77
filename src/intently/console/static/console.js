// intently console: progressive enhancement only. Every page reads fine without this file.
(function () {
  "use strict";
  var pendingG = 0;
  function typing(target) {
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
  }
  // The first field of a selector a person can see: a field inside a closed <details> (the
  // review queue's "Edit text") cannot take focus, so "/" would silently do nothing.
  function firstVisible(selector) {
    var found = document.querySelectorAll(selector);
    for (var i = 0; i < found.length; i++) {
      var el = found[i];
      var seen = el.checkVisibility ? el.checkVisibility({ visibilityProperty: true }) : el.getClientRects().length > 0;
      if (!el.disabled && seen && !el.closest("details:not([open])")) return el;
    }
    return null;
  }
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    var key = event.key;
    if (pendingG && Date.now() - pendingG < 1500) {
      pendingG = 0;
      var link = document.querySelector('nav a[data-key="' + key + '"]');
      if (link) { event.preventDefault(); window.location.assign(link.getAttribute("href")); }
      return;
    }
    if (key === "g") { pendingG = Date.now(); return; }
    if (key === "/") {
      var box = firstVisible("main [data-search], main input[type=search]") ||
        firstVisible("main input:not([type]), main input[type=text], main input[type=number], main textarea");
      if (box) { event.preventDefault(); box.focus(); }
    } else if (key === "?") {
      document.body.classList.toggle("help-open");
      var foot = document.querySelector(".foot");
      if (foot) foot.scrollIntoView({ block: "end" });
    }
  });
  // Destructive buttons ask first (the form still works without JavaScript).
  // A change is sent once: a second click (or Enter) while the first POST is on its way
  // would otherwise create a second intent or reminder. GET forms (filters, preview) may
  // be sent again at will. A page restored from the back/forward cache is reset.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) { event.preventDefault(); return; }
    if ((form.getAttribute("method") || "get").toLowerCase() !== "post") return;
    if (form.getAttribute("data-sent") === "1") { event.preventDefault(); return; }
    form.setAttribute("data-sent", "1");
    form.setAttribute("aria-busy", "true");
    // A request stopped by the person (Esc, the stop button) must not lock the form for good.
    window.setTimeout(function () { form.removeAttribute("data-sent"); form.removeAttribute("aria-busy"); }, 15000);
  });
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) return;
    var sent = document.querySelectorAll("form[data-sent]");
    for (var i = 0; i < sent.length; i++) { sent[i].removeAttribute("data-sent"); sent[i].removeAttribute("aria-busy"); }
  });
  // A running scan: poll its status and fill the progress bar, step and counts in place.
  var job = document.getElementById("scan-job");
  if (job && job.getAttribute("data-state") === "running") {
    var url = job.getAttribute("data-status-url");
    var step = document.getElementById("scan-step");
    var poll = function () {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
        .then(function (s) {
          if (s.state === "running") {
            if (s.total) { var running = document.getElementById("scan-progress"); running.max = s.total; running.value = s.done; }
            step.textContent = "Running: " + s.step + " (" + s.elapsed.toFixed(1) + " s).";
            window.setTimeout(poll, 400);
            return;
          }
          var bar = document.getElementById("scan-progress");
          bar.max = 1; bar.value = 1;
          step.textContent = (s.state === "done" ? "Done in " : "Failed after ") + s.elapsed.toFixed(1) + " s.";
          job.setAttribute("data-state", s.state);
          var result = document.getElementById("scan-result");
          document.getElementById("scan-summary").textContent = s.error || s.summary;
          var counts = document.getElementById("scan-counts");
          counts.textContent = "";
          Object.keys(s.counts).forEach(function (name) {
            var dt = document.createElement("dt"); dt.textContent = name;
            var dd = document.createElement("dd"); dd.textContent = String(s.counts[name]);
            counts.appendChild(dt); counts.appendChild(dd);
          });
          result.hidden = false;
        })
        .catch(function () { step.textContent = "Lost contact with the server; reload the page to see the result."; });
    };
    window.setTimeout(poll, 200);
  }
})();
