// intently console: progressive enhancement only. Every page reads fine without this file.
(function () {
  "use strict";
  var pendingG = 0;
  function typing(target) {
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
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
      var box = document.querySelector("main input[type=search], main input[type=text], main textarea");
      if (box) { event.preventDefault(); box.focus(); }
    } else if (key === "?") {
      document.body.classList.toggle("help-open");
      var foot = document.querySelector(".foot");
      if (foot) foot.scrollIntoView({ block: "end" });
    }
  });
  // Destructive buttons ask first (the form still works without JavaScript).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) event.preventDefault();
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
