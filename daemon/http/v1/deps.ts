import type { TillAuth } from '../../../core/auth/auth.js';
import type { Clock } from '../../../core/clock.js';
import type { Database } from '../../../core/db/database.js';
import type { FileStorage } from '../../../core/billing/files/storage.js';
import type { PaymentProcessor } from '../../../core/payments/processor.js';
import type { StripeIntegration } from '../../../core/payments/stripe/integration.js';
import type { Mailer } from '../../../core/mail/mailer.js';

/** What /v1 handlers are given. */
export interface V1Deps {
  db: Database;
  auth: TillAuth;
  clock: Clock;
  /** Seconds a session stays fresh enough to mint access tokens; 0 turns the check off. */
  sessionFreshAge: number;
  /** Public URL of this daemon (upload URLs, public file URLs). */
  baseUrl: string;
  /** Where uploaded file bytes are kept; the file routes need it. */
  fileStorage?: FileStorage;
  /** Largest file accepted, in bytes (TILL_MAX_FILE_SIZE); DEFAULT_MAX_FILE_SIZE when absent. */
  maxFileSize?: number;
  /** Charges, refunds and saved cards go through it (the sandbox processor unless another is configured). */
  payments: PaymentProcessor;
  /** Stripe's processor when TILL_STRIPE_* is set: organizations not marked sandbox pay through it. */
  livePayments?: PaymentProcessor | null;
  /** Organizations not marked sandbox need livePayments to be paid (tilld, unless TILL_SANDBOX_ONLY). */
  liveRequired?: boolean;
  /** Stripe when configured: its webhook endpoint and disputes need the client and the secrets. */
  stripe?: StripeIntegration | null;
  /** The daemon's mailer: a test-clock advance runs jobs that mail customers (pay links). */
  mailer?: Mailer;
  /** TILL_WEBHOOKS_ALLOW_PRIVATE: webhook URLs on loopback and private ranges are accepted. */
  webhooksAllowPrivate?: boolean;
}
