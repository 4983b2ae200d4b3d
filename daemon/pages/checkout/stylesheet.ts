import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';

export const CHECKOUT_STYLESHEET_PATH = '/assets/checkout.css';

/** The checkout page's own rules, on top of till.css (same reasons for living in a string: see ../stylesheet.ts). */
const CSS = `
.checkout-header { display: flex; align-items: center; gap: .75rem; padding: .75rem 1.5rem; border-bottom: 1px solid var(--line); background: var(--card); }
.checkout-header .seller { font-weight: 700; font-size: 1.1rem; }
.checkout-header .mode { margin-left: auto; font-size: .8rem; font-weight: 700; text-transform: uppercase; letter-spacing: .06em;
  padding: .1rem .5rem; border-radius: 99px; border: 1px solid var(--focus); }
main.checkout { max-width: 64rem; }
.checkout-grid { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.15fr); gap: 2rem; align-items: start; }
@media (max-width: 52rem) { .checkout-grid { grid-template-columns: 1fr; } }
.summary .description { white-space: pre-line; }
.summary .price { font-size: 1.35rem; font-weight: 700; margin: .5rem 0 1rem; }
.summary ul.benefits { padding-left: 1.25rem; margin: .25rem 0 1rem; }
fieldset.group { border: none; padding: 0; margin: 0 0 1.25rem; }
fieldset.group > legend { font-weight: 700; font-size: 1.05rem; padding: 0; margin-bottom: .75rem; }
.field select, .field textarea { width: 100%; padding: .55rem .65rem; font: inherit; color: inherit; background: var(--bg);
  border: 1px solid var(--line); border-radius: 6px; }
.field-invalid select, .field-invalid textarea { border-color: var(--danger); border-width: 2px; }
.field-check { display: flex; flex-wrap: wrap; gap: .5rem; align-items: baseline; }
.field-check input { width: auto; }
.field-check label { display: inline; }
.field-check .hint, .field-check .field-error { flex-basis: 100%; }
.row { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.choice { display: flex; gap: .6rem; align-items: baseline; padding: .6rem .75rem; border: 1px solid var(--line); border-radius: 8px; margin-bottom: .5rem; }
.choice input { width: auto; }
.discount-entry { display: flex; gap: .5rem; align-items: end; }
.discount-entry .field { flex: 1; margin-bottom: 0; }
.discount-applied { display: flex; gap: .75rem; align-items: center; justify-content: space-between; }
table.amounts { margin: 1rem 0 1.25rem; }
table.amounts th { font-size: 1rem; color: var(--fg); font-weight: 400; }
table.amounts td { text-align: right; white-space: nowrap; }
table.amounts tr.total th, table.amounts tr.total td { font-weight: 700; font-size: 1.1rem; }
.sandbox-cards { background: var(--bg); border: 1px dashed var(--focus); border-radius: 8px; padding: .6rem .8rem; margin-bottom: 1rem; font-size: .9rem; }
.sandbox-cards p { margin: 0 0 .25rem; }
.sandbox-cards ul { margin: 0; padding-left: 1.1rem; }
.pay { width: 100%; font-size: 1.1rem; padding: .75rem 1rem; }
ul.benefits-received { list-style: none; }
ul.benefits-received li + li { border-top: 1px solid var(--line); padding-top: .75rem; margin-top: .75rem; }
.license-key { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; overflow-wrap: anywhere; }
/* The business fields show once the box is ticked; without :has() (old browsers) they simply always show. */
@supports selector(:has(a)) { .business:not(:has(input[name="is_business_customer"]:checked)) .business-fields { display: none; } }
.default-submit { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
`;

let etag: string | undefined;
const checkoutEtag = () => (etag ??= `"${createHash('sha256').update(CSS).digest('base64url').slice(0, 16)}"`);

/** Serves the checkout stylesheet with a content ETag. */
export const serveCheckoutStylesheet: RequestHandler = (req, res) => {
  res.setHeader('Content-Type', 'text/css; charset=utf-8');
  res.setHeader('Cache-Control', 'public, max-age=300');
  res.setHeader('ETag', checkoutEtag());
  if (req.headers['if-none-match'] === checkoutEtag()) {
    res.status(304).end();
    return;
  }
  res.send(CSS);
};
