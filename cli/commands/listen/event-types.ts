/**
 * The webhook event types tilld announces (core/webhooks/outbox.ts WEBHOOK_EVENT_TYPES; the CLI cannot import
 * core, and a test checks the two lists agree).
 */
export const EVENT_TYPES = [
  'benefit.created', 'benefit.updated',
  'benefit_grant.created', 'benefit_grant.updated', 'benefit_grant.revoked', 'benefit_grant.cycled',
  'checkout.created', 'checkout.updated', 'checkout.expired',
  'order.created', 'order.updated', 'order.paid', 'order.refunded',
  'organization.updated',
  'product.created', 'product.updated',
  'refund.created', 'refund.updated',
  'subscription.created', 'subscription.active', 'subscription.canceled', 'subscription.revoked',
  'subscription.uncanceled', 'subscription.updated', 'subscription.past_due',
  'customer.created', 'customer.updated', 'customer.deleted', 'customer.state_changed',
] as const;
