import type { TestMethod } from './catalogue.js';

/** Stripe's wire objects as the fake keeps them (snake_case, as Stripe sends them). */
export interface Customer {
  id: string;
  object: 'customer';
  created: number;
  email: string | null;
  name: string | null;
  description: string | null;
  metadata: Record<string, string>;
  invoice_settings: { default_payment_method: string | null };
  livemode: false;
}

export interface PaymentMethod {
  id: string;
  object: 'payment_method';
  type: 'card' | 'sepa_debit';
  created: number;
  customer: string | null;
  livemode: false;
  metadata: Record<string, string>;
  allow_redisplay: 'always' | 'limited' | 'unspecified';
  billing_details: { address: Address; email: string | null; name: string | null; phone: string | null };
  card?: {
    brand: string;
    display_brand: string;
    last4: string;
    exp_month: number;
    exp_year: number;
    country: string;
    funding: string;
    checks: { address_line1_check: null; address_postal_code_check: null; cvc_check: 'pass' | null };
    wallet: null;
  };
  sepa_debit?: { bank_code: string; country: string; last4: string };
}

export interface Address {
  city: string | null;
  country: string | null;
  line1: string | null;
  line2: string | null;
  postal_code: string | null;
  state: string | null;
}

export interface PaymentError {
  type: 'card_error' | 'invalid_request_error';
  code: string;
  decline_code?: string;
  message: string;
  payment_method?: PaymentMethod;
  doc_url: string;
}

export type PaymentIntentStatus =
  | 'requires_payment_method'
  | 'requires_confirmation'
  | 'requires_action'
  | 'processing'
  | 'succeeded'
  | 'canceled';

export interface NextAction {
  type: 'redirect_to_url' | 'use_stripe_sdk';
  redirect_to_url?: { url: string; return_url: string };
  use_stripe_sdk?: { type: 'three_d_secure_redirect'; stripe_js: string };
}

export interface PaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_capturable: number;
  amount_received: number;
  currency: string;
  customer: string | null;
  description: string | null;
  status: PaymentIntentStatus;
  client_secret: string;
  capture_method: 'automatic' | 'automatic_async';
  confirmation_method: 'automatic';
  created: number;
  canceled_at: number | null;
  cancellation_reason: string | null;
  last_payment_error: PaymentError | null;
  latest_charge: string | null;
  livemode: false;
  metadata: Record<string, string>;
  next_action: NextAction | null;
  payment_method: string | null;
  payment_method_types: string[];
  receipt_email: string | null;
  setup_future_usage: 'off_session' | 'on_session' | null;
  statement_descriptor: string | null;
}

export interface SetupIntent {
  id: string;
  object: 'setup_intent';
  cancellation_reason: 'abandoned' | 'requested_by_customer' | 'duplicate' | null;
  client_secret: string;
  created: number;
  customer: string | null;
  description: string | null;
  last_setup_error: PaymentError | null;
  livemode: false;
  metadata: Record<string, string>;
  next_action: NextAction | null;
  payment_method: string | null;
  payment_method_types: string[];
  status: 'requires_payment_method' | 'requires_confirmation' | 'requires_action' | 'processing' | 'succeeded' | 'canceled';
  usage: 'off_session' | 'on_session';
}

export interface Charge {
  id: string;
  object: 'charge';
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  captured: boolean;
  created: number;
  currency: string;
  customer: string | null;
  description: string | null;
  disputed: boolean;
  failure_code: string | null;
  failure_message: string | null;
  livemode: false;
  metadata: Record<string, string>;
  outcome: { network_status: string; reason: string | null; risk_level: 'normal'; seller_message: string; type: string };
  paid: boolean;
  payment_intent: string;
  payment_method: string;
  payment_method_details: { type: string; card?: { brand: string; last4: string; exp_month: number; exp_year: number; country: string; funding: string } };
  refunded: boolean;
  status: 'succeeded' | 'pending' | 'failed';
}

export interface Refund {
  id: string;
  object: 'refund';
  amount: number;
  charge: string;
  created: number;
  currency: string;
  failure_reason: string | null;
  metadata: Record<string, string>;
  payment_intent: string;
  reason: string | null;
  status: 'pending' | 'requires_action' | 'succeeded' | 'failed' | 'canceled';
}

export interface Dispute {
  id: string;
  object: 'dispute';
  amount: number;
  charge: string;
  created: number;
  currency: string;
  evidence: { uncategorized_text: string | null; customer_email_address: string | null; product_description: string | null };
  evidence_details: { due_by: number; has_evidence: boolean; past_due: boolean; submission_count: number };
  is_charge_refundable: boolean;
  livemode: false;
  metadata: Record<string, string>;
  payment_intent: string;
  reason: string;
  status: 'warning_needs_response' | 'warning_under_review' | 'warning_closed' | 'needs_response' | 'under_review' | 'won' | 'lost';
}

export interface ConfirmationToken {
  id: string;
  object: 'confirmation_token';
  created: number;
  expires_at: number;
  livemode: false;
  payment_intent: string | null;
  setup_intent: string | null;
  payment_method_preview: Omit<PaymentMethod, 'id' | 'object' | 'created' | 'livemode' | 'metadata'>;
  return_url: string | null;
  setup_future_usage: 'off_session' | 'on_session' | null;
  use_stripe_sdk: boolean;
}

export interface StripeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  data: { object: unknown; previous_attributes?: Record<string, unknown> };
  livemode: false;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

/** Everything the fake remembers. Side tables hold what Stripe keeps but never shows (a method's test behaviour). */
export interface FakeState {
  customers: Map<string, Customer>;
  paymentMethods: Map<string, PaymentMethod>;
  setupIntents: Map<string, SetupIntent>;
  paymentIntents: Map<string, PaymentIntent>;
  charges: Map<string, Charge>;
  refunds: Map<string, Refund>;
  disputes: Map<string, Dispute>;
  confirmationTokens: Map<string, ConfirmationToken>;
  events: StripeEvent[];
  behaviourOf: Map<string, TestMethod>;
  /** Methods authenticated for off-session use (3-D Secure done while setting them up). */
  readyOffSession: Set<string>;
  /** Confirmation tokens already used: each confirms once. */
  usedTokens: Set<string>;
  tokenMethod: Map<string, TestMethod & { expMonth: number; expYear: number }>;
  /** Asynchronous changes Stripe makes "some time later"; they run on advance(). */
  later: Array<() => void>;
}

export const emptyState = (): FakeState => ({
  customers: new Map(),
  paymentMethods: new Map(),
  setupIntents: new Map(),
  paymentIntents: new Map(),
  charges: new Map(),
  refunds: new Map(),
  disputes: new Map(),
  confirmationTokens: new Map(),
  events: [],
  behaviourOf: new Map(),
  readyOffSession: new Set(),
  usedTokens: new Set(),
  tokenMethod: new Map(),
  later: [],
});

export const noAddress = (): Address => ({ city: null, country: null, line1: null, line2: null, postal_code: null, state: null });
