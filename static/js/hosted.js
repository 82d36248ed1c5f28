// The hosted page's only script. A merchant's link looks like
//   {hosted_url}/#/bank-account/{public_key}/{user_id}/{funding_source_id}?successUrl=…&cancelUrl=…
// and this turns it into the server-rendered page at
//   /bank-account/{public_key}/{user_id}/{funding_source_id}?successUrl=…&cancelUrl=…
// Only identifiers made of letters, digits and underscores are accepted, so
// the result is always a path on this site.
(function () {
  "use strict";
  var link = /^#\/bank-account\/([A-Za-z0-9_]{1,100})\/([A-Za-z0-9_]{1,100})\/([A-Za-z0-9_]{1,100})\/?(\?[^#]*)?$/;
  function show(id) {
    ["opening", "no-link", "bad-link"].forEach(function (other) {
      document.getElementById(other).hidden = other !== id;
    });
  }
  function route() {
    var hash = window.location.hash;
    if (hash === "" || hash === "#") {
      show("no-link");
      return;
    }
    var m = link.exec(hash);
    if (!m) {
      show("bad-link");
      return;
    }
    show("opening");
    window.location.replace("/bank-account/" + m[1] + "/" + m[2] + "/" + m[3] + (m[4] || ""));
  }
  document.addEventListener("DOMContentLoaded", route);
  window.addEventListener("hashchange", route);
})();
