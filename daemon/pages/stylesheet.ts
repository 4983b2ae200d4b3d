import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';

export const STYLESHEET_PATH = '/assets/till.css';

/**
 * The pages' only stylesheet. It lives in a string, not a .css file, because tilld runs from dist/
 * and tsc copies no assets; the CSP allows styles from 'self' only, so nothing is inline.
 */
const CSS = `
:root {
  color-scheme: light dark;
  --bg: #f7f7f5; --fg: #1d1d1b; --muted: #5f5f5a; --card: #ffffff; --line: #deded8;
  --accent: #1f5f4a; --accent-fg: #ffffff; --danger: #a1261d; --danger-bg: #fbeceb; --ok-bg: #e9f5ef;
  --focus: #f2b400;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #151514; --fg: #ececea; --muted: #a9a9a3; --card: #1f1f1d; --line: #3a3a36;
    --accent: #5fbf9a; --accent-fg: #0f1f19; --danger: #ff8a80; --danger-bg: #3a1d1b; --ok-bg: #17302a;
  }
}
*, *::before, *::after { box-sizing: border-box; }
html { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
body { margin: 0; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip-link { position: absolute; left: -999px; }
.skip-link:focus { left: 1rem; top: 1rem; background: var(--card); padding: .5rem; }
.site-header { display: flex; align-items: center; justify-content: space-between; gap: 1rem;
  padding: .75rem 1.5rem; border-bottom: 1px solid var(--line); background: var(--card); }
.brand { font-weight: 700; font-size: 1.25rem; text-decoration: none; color: var(--fg); letter-spacing: .02em; }
.site-nav { display: flex; align-items: center; gap: 1rem; font-size: .95rem; }
main { max-width: 52rem; margin: 2rem auto; padding: 0 1.25rem; }
main.narrow { max-width: 26rem; }
h1 { font-size: 1.75rem; line-height: 1.2; margin: 0 0 1.25rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .75rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 1.25rem 1.5rem; }
.field { margin-bottom: 1rem; }
.field label { display: block; font-weight: 600; margin-bottom: .25rem; }
.field input { width: 100%; padding: .55rem .65rem; font: inherit; color: inherit; background: var(--bg);
  border: 1px solid var(--line); border-radius: 6px; }
.field-invalid input { border-color: var(--danger); border-width: 2px; }
.hint { color: var(--muted); font-size: .9rem; margin: 0 0 .25rem; }
.field-error { color: var(--danger); font-weight: 600; font-size: .95rem; margin: 0 0 .25rem; }
.alert { border-radius: 8px; padding: .75rem 1rem; margin: 0 0 1.25rem; border: 1px solid var(--line); }
.alert p { margin: 0; }
.alert-error { background: var(--danger-bg); border-color: var(--danger); }
.alert-success { background: var(--ok-bg); border-color: var(--accent); }
.button { display: inline-block; font: inherit; font-weight: 600; padding: .5rem 1rem; border-radius: 6px;
  border: 1px solid var(--accent); background: var(--accent); color: var(--accent-fg); cursor: pointer; white-space: nowrap; }
.button-secondary { background: transparent; color: var(--accent); }
.button-danger { background: transparent; border-color: var(--danger); color: var(--danger); }
.button-link { background: none; border: none; padding: 0; color: var(--accent); text-decoration: underline; font-weight: 400; }
.actions { display: flex; flex-wrap: wrap; gap: .75rem; align-items: center; margin-top: 1.25rem; }
.inline-form { display: inline; margin: 0; }
.muted { color: var(--muted); }
.small { font-size: .9rem; }
.code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 1.5rem;
  letter-spacing: .15em; font-weight: 700; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 10px; }
th, td { text-align: left; padding: .6rem .75rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .85rem; color: var(--muted); font-weight: 600; white-space: nowrap; }
tr:last-child td { border-bottom: none; }
time { white-space: nowrap; }
.user-agent { overflow-wrap: anywhere; }
.badge { display: inline-block; font-size: .75rem; font-weight: 700; padding: .05rem .45rem; border-radius: 99px;
  background: var(--ok-bg); border: 1px solid var(--accent); margin-left: .35rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
`;

let etag: string | undefined;
const stylesheetEtag = () => (etag ??= `"${createHash('sha256').update(CSS).digest('base64url').slice(0, 16)}"`);

/** Serves the stylesheet with a content ETag, so browsers revalidate cheaply. */
export const serveStylesheet: RequestHandler = (req, res) => {
  res.setHeader('Content-Type', 'text/css; charset=utf-8');
  res.setHeader('Cache-Control', 'public, max-age=300');
  res.setHeader('ETag', stylesheetEtag());
  if (req.headers['if-none-match'] === stylesheetEtag()) {
    res.status(304).end();
    return;
  }
  res.send(CSS);
};
