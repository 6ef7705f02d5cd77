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
})();
