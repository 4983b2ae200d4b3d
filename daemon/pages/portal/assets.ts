import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';

export const PORTAL_STYLESHEET_PATH = '/assets/portal.css';
export const PORTAL_SCRIPT_PATH = '/assets/portal.js';

/** The portal's own rules, on top of till.css and checkout.css (the same look as the hosted checkout). */
const CSS = `
.checkout-header .portal-nav { margin-left: auto; display: flex; gap: .75rem; align-items: center; flex-wrap: wrap; }
.checkout-header .portal-nav .who { font-size: .9rem; overflow-wrap: anywhere; }
main.portal { max-width: 56rem; }
section.portal-section { margin: 0 0 2rem; }
section.portal-section > h2 { font-size: 1.2rem; margin: 0 0 .75rem; }
.portal-card { border: 1px solid var(--line); border-radius: 8px; padding: .9rem 1rem; margin-bottom: .75rem; background: var(--card); }
.portal-card h3 { font-size: 1.05rem; margin: 0 0 .35rem; overflow-wrap: anywhere; }
.portal-card p { margin: .25rem 0; }
.portal-card .actions { display: flex; flex-wrap: wrap; gap: .5rem; margin-top: .6rem; align-items: center; }
.muted { color: var(--muted); font-size: .9rem; }
.table-scroll { overflow-x: auto; max-width: 100%; }
table.portal-table { width: 100%; border-collapse: collapse; }
table.portal-table th, table.portal-table td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
table.portal-table td.amount { white-space: nowrap; }
@media (max-width: 40rem) {
  table.portal-table thead { display: none; }
  table.portal-table tr { display: block; border-bottom: 1px solid var(--line); padding: .4rem 0; }
  table.portal-table td { display: block; border: none; padding: .15rem 0; }
}
.key-row { display: flex; gap: .5rem; align-items: stretch; flex-wrap: wrap; }
.key-row input { flex: 1 1 12rem; min-width: 0; font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
.copy-status { font-size: .85rem; }
.meter-bar { width: 100%; height: .75rem; }
ul.plain { list-style: none; padding: 0; margin: .25rem 0; }
ul.plain li { overflow-wrap: anywhere; }
.code-input { font-size: 1.4rem; letter-spacing: .3em; max-width: 12rem; }
.connect-slot { border: 1px dashed var(--focus); border-radius: 6px; padding: .4rem .6rem; }
`;

/** Copy buttons: without JavaScript the key is still shown, selected on focus, in a read-only field. */
const SCRIPT = `
document.addEventListener('click', function (event) {
  var button = event.target.closest && event.target.closest('button[data-copy]');
  if (!button) return;
  var input = document.getElementById(button.getAttribute('data-copy'));
  var status = document.getElementById(button.getAttribute('data-copy') + '-status');
  if (!input) return;
  var done = function (text) { if (status) status.textContent = text; };
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(input.value).then(function () { done('Copied.'); }, function () { input.select(); done('Press Ctrl+C (or Cmd+C) to copy.'); });
  } else {
    input.select();
    done('Press Ctrl+C (or Cmd+C) to copy.');
  }
});
document.querySelectorAll('button[data-copy]').forEach(function (button) { button.hidden = false; });
`;

function serve(body: string, type: string): RequestHandler {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`;
  return (req, res) => {
    res.setHeader('Content-Type', `${type}; charset=utf-8`);
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.setHeader('ETag', etag);
    if (req.headers['if-none-match'] === etag) return void res.status(304).end();
    res.send(body);
  };
}

export const servePortalStylesheet = serve(CSS, 'text/css');
export const servePortalScript = serve(SCRIPT, 'text/javascript');
