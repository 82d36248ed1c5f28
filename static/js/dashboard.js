// Dashboard enhancements; every page works without them.
// - Copy buttons: [data-copy=ID] copies the value of the input #ID.
// - Forms with data-confirm ask before a destructive action.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("button[data-copy]").forEach(function (btn) {
    var input = document.getElementById(btn.getAttribute("data-copy"));
    if (!input || !navigator.clipboard) {
      return;
    }
    btn.hidden = false;
    btn.addEventListener("click", function () {
      navigator.clipboard.writeText(input.value).then(function () {
        btn.textContent = "Copied";
        setTimeout(function () { btn.textContent = "Copy"; }, 2000);
      }, function () {
        input.select();
      });
    });
  });
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (e) {
      if (!window.confirm(form.getAttribute("data-confirm"))) {
        e.preventDefault();
      }
    });
  });
});
