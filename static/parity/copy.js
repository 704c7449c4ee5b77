// Copy buttons: a button[data-copy] copies the text of the element whose id it names, and says
// so for a moment. Buttons stay hidden without JavaScript (the text can still be selected).
(function () {
  "use strict";
  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    // Plain HTTP on another host has no clipboard API: the old way, through a selection.
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var done = document.execCommand("copy");
    document.body.removeChild(area);
    return done ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      copy(source.textContent).then(
        function () { button.textContent = "Copied"; },
        function () { button.textContent = "Select it and copy"; }
      ).then(function () {
        setTimeout(function () { button.textContent = label; }, 1500);
      });
    });
  });
})();
