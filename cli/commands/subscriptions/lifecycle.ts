import { CliError, EXIT } from '../../errors.js';
import { canPrompt, openPrompter } from '../../input/prompt.js';
import type { Env, Streams } from '../../output.js';
import { done } from '../../resources/item.js';
import { openSession, type Session } from '../../resources/session.js';
import type { ApiObject } from '../../resources/spec.js';
import { shortDate } from '../../ui/record.js';

export const CANCELLATION_REASONS = ['customer_service', 'low_quality', 'missing_features', 'switched_service', 'too_complex', 'too_expensive', 'unused', 'other'] as const;

export interface LifecycleOptions {
  server?: string;
  json?: boolean;
  reason?: string;
  comment?: string;
  yes?: boolean;
}

const FLAG_OF: Record<string, string> = { customer_cancellation_reason: '--reason', customer_cancellation_comment: '--comment' };

/** The reason and comment flags as body fields; an unknown reason is a usage error before anything is sent. */
function cancellation(options: LifecycleOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (options.reason !== undefined) {
    if (!(CANCELLATION_REASONS as readonly string[]).includes(options.reason)) {
      throw new CliError('INVALID_FLAG', `--reason "${options.reason}": expected one of ${CANCELLATION_REASONS.join(', ')}.`, EXIT.invalid);
    }
    body.customer_cancellation_reason = options.reason;
  }
  if (options.comment !== undefined) body.customer_cancellation_comment = options.comment;
  return body;
}

const patch = (session: Session, id: string, body: Record<string, unknown>) =>
  session.api.request<ApiObject>('PATCH', `/v1/subscriptions/${encodeURIComponent(id)}`, { body, flagOf: (field) => FLAG_OF[field] });

/** `till subscriptions cancel ID`: it keeps running to the end of the period it is in, then ends. */
export async function cancelSubscription(id: string, options: LifecycleOptions, env: Env, streams: Streams): Promise<number> {
  const body = { cancel_at_period_end: true, ...cancellation(options) };
  const session = await openSession(env, streams, options);
  const subscription = await patch(session, id, body);
  done(session, subscription, `Subscription ${id} cancels at the end of its period, ${shortDate(subscription.ends_at)}.`);
  return EXIT.ok;
}

/** `till subscriptions uncancel ID`: takes back a cancellation at the period end. */
export async function uncancelSubscription(id: string, options: LifecycleOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const subscription = await patch(session, id, { cancel_at_period_end: false });
  done(session, subscription, `Subscription ${id} renews on ${shortDate(subscription.current_period_end)}.`);
  return EXIT.ok;
}

/** `till subscriptions revoke ID`: ends it now and revokes its benefits; asks first on a terminal, --yes elsewhere. */
export async function revokeSubscription(id: string, options: LifecycleOptions, env: Env, streams: Streams): Promise<number> {
  const body = { revoke: true, ...cancellation(options) };
  const session = await openSession(env, streams, options);
  if (!options.yes) {
    if (!canPrompt(streams)) throw new CliError('CONFIRMATION_REQUIRED', 'Refusing to revoke without --yes: there is no terminal to ask on.', EXIT.usage, 'Add --yes to revoke it.');
    const current = await session.api.request<ApiObject>('GET', `/v1/subscriptions/${encodeURIComponent(id)}`);
    const who = String((current.customer as ApiObject | undefined)?.email ?? current.customer_id);
    if (!(await (await openPrompter(streams)).confirm(`End subscription ${id} of ${who} now and revoke its benefits?`))) {
      throw new CliError('CANCELLED', 'Nothing was revoked.', EXIT.error);
    }
  }
  const subscription = await patch(session, id, body);
  done(session, subscription, `Subscription ${id} ended; its benefits are revoked.`);
  return EXIT.ok;
}
