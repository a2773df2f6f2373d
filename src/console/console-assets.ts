/**
 * The console's stylesheet and its one small script, served from `/assets/` so the content
 * security policy can forbid inline script and style. The script only adds comfort: countdowns
 * and the live inbox; every page works without it.
 */

/** `/assets/console.css`. */
export const CONSOLE_CSS = `
:root{--ink:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#f6f8fa;--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--link:#0969da}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);background:#fff}
a{color:var(--link)}
a:focus,button:focus,input:focus,select:focus,textarea:focus,summary:focus{outline:3px solid #54aeff;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px}
header{display:flex;flex-wrap:wrap;gap:12px;align-items:center;justify-content:space-between;padding:10px 16px;border-bottom:1px solid var(--line);background:var(--bg)}
header nav{display:flex;flex-wrap:wrap;gap:12px;align-items:center}
header form{margin:0}
main{max-width:1100px;margin:0 auto;padding:16px}
h1{font-size:1.4rem;margin:.2em 0 .6em}
h2{font-size:1.1rem;margin:1.4em 0 .4em}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
.scroll{overflow-x:auto}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
pre{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:8px;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}
code{overflow-wrap:anywhere}
.status{display:inline-block;padding:0 8px;border-radius:10px;background:var(--bg);border:1px solid var(--line)}
.status-authorized,.status-verified{color:var(--ok)}
.status-denied,.status-expired,.status-failed_known{color:var(--bad)}
.notice{padding:10px 12px;border-radius:6px;border:1px solid var(--line);background:var(--bg);margin:8px 0}
.notice.error{border-color:var(--bad);color:var(--bad)}
.notice.ok{border-color:var(--ok);color:var(--ok)}
.decide{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:16px}
.decide form{border:1px solid var(--line);border-radius:8px;padding:12px}
label{display:block;font-weight:600;margin:8px 0 4px}
input[type=text],input[type=password],textarea,select{width:100%;padding:8px;font:inherit;border:1px solid var(--line);border-radius:6px}
button{font:inherit;padding:8px 16px;border-radius:6px;border:1px solid var(--line);background:var(--bg);cursor:pointer}
button.approve{background:var(--ok);color:#fff;border-color:var(--ok)}
button.deny{background:var(--bad);color:#fff;border-color:var(--bad)}
.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-end;margin-bottom:12px}
.filters label{margin:0}
.muted{color:var(--muted)}
svg.timeline{max-width:100%;height:auto}
svg.timeline .spine{stroke:var(--line);stroke-width:2}
svg.timeline circle{fill:var(--link)}
svg.timeline circle.write{fill:var(--ok)}
svg.timeline circle.people{fill:var(--warn)}
svg.timeline circle.bad{fill:var(--bad)}
svg.timeline text{font:13px system-ui,sans-serif;fill:var(--ink)}
svg.timeline text.at{fill:var(--muted)}
@media (max-width:600px){th,td{padding:4px}dl.facts{grid-template-columns:1fr}.hide-narrow{display:none}}
`;

/** `/assets/console.js`: countdowns and the live inbox (server-sent events). */
export const CONSOLE_JS = `
'use strict';
(function () {
  function pad(n) { return n < 10 ? '0' + n : String(n); }
  function tick() {
    var now = Date.now();
    var nodes = document.querySelectorAll('[data-expires-ms]');
    for (var i = 0; i < nodes.length; i++) {
      var left = Number(nodes[i].getAttribute('data-expires-ms')) - now;
      if (left <= 0) { nodes[i].textContent = 'expired'; continue; }
      var s = Math.floor(left / 1000);
      var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
      nodes[i].textContent = (h > 0 ? h + ':' + pad(m) : String(m)) + ':' + pad(s % 60) + ' left';
    }
  }
  tick();
  setInterval(tick, 1000);
  var live = document.body.getAttribute('data-live');
  if (live && window.EventSource) {
    var source = new EventSource(live);
    source.addEventListener('inbox', function (event) {
      var rows = document.getElementById('inbox-rows');
      if (rows) { rows.innerHTML = event.data; tick(); }
      var count = document.getElementById('inbox-count');
      if (count && rows) count.textContent = String(rows.querySelectorAll('tr[data-proposal]').length);
    });
  }
})();
`;
