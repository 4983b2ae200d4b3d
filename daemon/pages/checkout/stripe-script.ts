import type { RequestHandler } from 'express';

/**
 * The hosted checkout's script for Stripe organizations: mounts Stripe's Payment Element in #payment-element
 * (publishable key, amount and currency from its data attributes), and on "Pay" has Stripe.js make a
 * ConfirmationToken, which the form posts as `confirmation_token_id` (card data goes to Stripe, never to tilld).
 * Served by tilld ('self' in CSP), not inline. Every other button of the form posts as it does without it.
 */
const SCRIPT = `(() => {
  'use strict';
  const mount = document.getElementById('payment-element');
  if (!mount) return;
  const form = mount.closest('form');
  const token = document.getElementById('confirmation-token-id');
  const say = (message) => {
    let box = document.getElementById('stripe-error');
    if (!box) {
      box = document.createElement('p');
      box.id = 'stripe-error';
      box.className = 'field-error';
      box.setAttribute('role', 'alert');
      mount.after(box);
    }
    box.textContent = message;
  };
  if (typeof window.Stripe !== 'function') {
    say('Stripe\\u2019s payment form could not be loaded. Check your connection, then reload this page.');
    return;
  }
  const stripe = window.Stripe(mount.dataset.publishableKey);
  const amount = Number(mount.dataset.amount);
  const currency = mount.dataset.currency;
  // The card is saved at Stripe for renewals (setup_future_usage off_session, as tilld confirms the intent).
  const elements = stripe.elements(amount > 0 ? { mode: 'payment', amount, currency, setupFutureUsage: 'off_session' } : { mode: 'setup', currency });
  elements.create('payment').mount(mount);
  let busy = false;
  form.addEventListener('submit', async (event) => {
    const submitter = event.submitter;
    if (!submitter || submitter.value !== 'pay') return;
    event.preventDefault();
    if (busy) return;
    busy = true;
    submitter.disabled = true;
    try {
      const checked = await elements.submit();
      if (checked.error) return say(checked.error.message);
      const made = await stripe.createConfirmationToken({ elements });
      if (made.error) return say(made.error.message);
      token.value = made.confirmationToken.id;
      // form.submit() sends no button: the pay button's intent goes along as a hidden input.
      const intent = document.createElement('input');
      intent.type = 'hidden';
      intent.name = submitter.name;
      intent.value = submitter.value;
      form.appendChild(intent);
      form.submit();
    } finally {
      busy = false;
      submitter.disabled = false;
    }
  });
})();
`;

export const serveStripeCheckoutScript: RequestHandler = (_req, res) => {
  res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
  res.setHeader('Cache-Control', 'public, max-age=300');
  res.send(SCRIPT);
};
