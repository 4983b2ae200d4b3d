import type { Command as Commander } from 'commander';
import type { UploadOptions } from '../commands/files/upload.js';
import type { UseOptions } from '../commands/orgs/use.js';
import type { CreateOrganizationOptions } from '../commands/orgs/create.js';
import type { InvoiceOptions } from '../commands/orders/invoice.js';
import type { OpenOptions } from '../commands/checkouts/open.js';
import type { RefundOptions } from '../commands/refunds/create.js';
import type { ActivateOptions, DeactivateOptions, ValidateOptions } from '../commands/license-keys/keys.js';
import type { StateOptions } from '../commands/customers/state.js';
import type { PortalOptions } from '../commands/customers/portal.js';
import type { LifecycleOptions } from '../commands/subscriptions/lifecycle.js';
import type { ConfirmOptions } from '../commands/checkouts/confirm.js';
import type { IngestOptions } from '../commands/events-ingest/ingest.js';
import type { NamesOptions } from '../commands/events-names/names.js';
import type { QuantitiesOptions } from '../commands/meters/quantities.js';
import type { Env, Streams } from '../output.js';
import type { DeliveriesOptions, RedeliverOptions, RotateOptions } from '../commands/webhooks/commands.js';
import { common, registerResource, type Execute } from './register.js';
import { RESOURCES } from './specs/index.js';

export interface VerbSetup {
  env: Env;
  streams: Streams;
  setExitCode(code: number): void;
}

/**
 * Gives a catalog noun its verbs: the generic ones from its spec, and the two that are its own (`orgs use`,
 * `files upload`). Loaded by program.ts when the noun is used; each verb's code loads when it runs.
 */
export function addVerbs(noun: Commander, { env, streams, setExitCode }: VerbSetup): void {
  const spec = RESOURCES.find((candidate) => candidate.noun === noun.name());
  if (!spec) return;
  const execute: Execute = async (invocation) => {
    const { runVerb } = await import('./run.js');
    setExitCode(await runVerb(invocation, env, streams));
  };
  registerResource(noun, spec, execute);

  if (spec.noun === 'orgs') {
    common(
      noun
        .command('use')
        .description('make an organization the default for catalog commands on this server')
        .argument('[org]', 'organization slug or id (asked for on a terminal)')
        .option('--clear', 'forget the default organization instead'),
    ).action(async (org: string | undefined, options: UseOptions) => {
      const { useOrganization } = await import('../commands/orgs/use.js');
      setExitCode(await useOrganization(org, options, env, streams));
    });
    common(
      noun
        .command('create')
        .description('create an organization you own; your first one becomes the default')
        .argument('<name>', 'display name (3–64 characters)')
        .option('--slug <slug>', 'URL name: 3–64 lowercase letters, digits and hyphens (default: made from the name)'),
    ).action(async (name: string, options: CreateOrganizationOptions) => {
      const { createOrganization } = await import('../commands/orgs/create.js');
      setExitCode(await createOrganization(name, options, env, streams));
    });
  }

  if (spec.noun === 'files') {
    common(
      noun
        .command('upload')
        .description('upload a file: checksums computed here, a progress bar on a terminal')
        .argument('[path]', 'the file to upload')
        .option('--service <service>', 'what it is for: downloadable (default), product_media, organization_avatar')
        .option('--name <name>', 'name shown to customers (default: the file name)')
        .option('--mime-type <type>', 'MIME type (default: guessed from the extension)')
        .option('--file-version <version>', 'version label (e.g. 1.2.0)')
        .option('--org <id|slug>', 'the organization (default: TILL_ORG, else the one `till orgs use` chose)'),
    ).action(async (path: string | undefined, options: UploadOptions) => {
      const { uploadFile } = await import('../commands/files/upload.js');
      setExitCode(await uploadFile(path, options, env, streams));
    });
  }

  if (spec.noun === 'checkouts') {
    common(
      noun
        .command('open')
        .description('print the checkout’s hosted payment page and open it in the browser')
        .argument('<id>', 'checkout id')
        .option('--no-browser', 'only print the URL'),
    ).action(async (id: string, options: OpenOptions) => {
      const { openCheckout } = await import('../commands/checkouts/open.js');
      setExitCode(await openCheckout(id, options, env, streams));
    });
  }

  if (spec.noun === 'orders') {
    common(
      noun
        .command('invoice')
        .description('save the order’s invoice PDF (generated on first ask; the order needs a billing name and address)')
        .argument('<id>', 'order id')
        .option('--output <file>', 'where to save it (default: Invoice-<number>.pdf here; - for stdout)')
        .option('--force', 'overwrite the file if it exists'),
    ).action(async (id: string, options: InvoiceOptions) => {
      const { saveInvoice } = await import('../commands/orders/invoice.js');
      setExitCode(await saveInvoice(id, options, env, streams));
    });
  }

  if (spec.noun === 'refunds') {
    common(
      noun
        .command('create')
        .description('refund part or all of a paid order (shows the refundable amount; asks on a terminal, --yes elsewhere)')
        .option('--order <id>', 'the order to refund')
        .option('--amount <n|p%|all>', 'net amount in minor units (500 is 5.00 USD), a percentage of the order (50%), or all; tax goes back in proportion')
        .option('--reason <reason>', 'customer_request, duplicate, fraudulent, service_disruption, satisfaction_guarantee, dispute_prevention or other')
        .option('--comment <text>', 'an internal note')
        .option('--revoke-benefits', 'also revoke what the order granted (one-time purchases only)')
        .option('--metadata <key=value>', 'a metadata entry (repeatable; key:=JSON for a number or boolean)', (value: string, previous: string[] = []) => [...previous, value])
        .option('--yes', 'refund without asking (needed off a terminal)'),
    ).action(async (options: RefundOptions) => {
      const { createRefund } = await import('../commands/refunds/create.js');
      setExitCode(await createRefund(options, env, streams));
    });
  }

  if (spec.noun === 'license-keys') {
    const pairs = (value: string, previous: string[] = []) => [...previous, value];
    const org = ['--org <id|slug>', 'the organization that issued the key (default: TILL_ORG, else the one `till orgs use` chose, else your only one)'] as const;
    common(
      noun
        .command('validate')
        .description('check a key as an app would: 404 (exit 4) when unknown, revoked, expired or not matching')
        .argument('<key>', 'the license key')
        .option('--activation <id>', 'the activation (instance) validating')
        .option('--benefit <id>', 'the key must be of this benefit')
        .option('--customer <id>', 'the key must belong to this customer')
        .option('--increment-usage <n>', 'count this much usage (refused when more than the key has left)')
        .option('--condition <key=value>', 'a condition the activation was made with (repeatable; key:=5 for numbers and booleans)', pairs)
        .option(...org),
    ).action(async (key: string, options: ValidateOptions) => {
      const { validateKey } = await import('../commands/license-keys/keys.js');
      setExitCode(await validateKey(key, options, env, streams));
    });
    common(
      noun
        .command('activate')
        .description('activate the key on one more instance (up to its activation limit)')
        .argument('<key>', 'the license key')
        .option('--label <label>', 'what the instance is, e.g. "Ada’s laptop"')
        .option('--condition <key=value>', 'a condition later validations must repeat (repeatable; key:=5 for numbers and booleans)', pairs)
        .option('--meta <key=value>', 'data kept with the activation (repeatable)', pairs)
        .option(...org),
    ).action(async (key: string, options: ActivateOptions) => {
      const { activateKey } = await import('../commands/license-keys/keys.js');
      setExitCode(await activateKey(key, options, env, streams));
    });
    common(
      noun
        .command('deactivate')
        .description('deactivate one activation of the key, freeing its slot')
        .argument('<key>', 'the license key')
        .option('--activation <id>', 'the activation to remove (see `till license-keys get ID`)')
        .option(...org),
    ).action(async (key: string, options: DeactivateOptions) => {
      const { deactivateKey } = await import('../commands/license-keys/keys.js');
      setExitCode(await deactivateKey(key, options, env, streams));
    });
  }

  if (spec.noun === 'events') {
    const org = ['--org <id|slug>', 'the organization (default: TILL_ORG, else the one `till orgs use` chose)'] as const;
    common(
      noun
        .command('ingest')
        .description('send events from an NDJSON file (or a JSON array; - for stdin) in batches, with a progress bar and the rate')
        .argument('[file]', 'the events: one JSON object per line, or a JSON array; - reads stdin')
        .option('--batch-size <n>', 'events per request (default 1000, at most 10000)')
        .option('--concurrency <n>', 'requests in flight at once (default 4)')
        .option(...org),
    ).action(async (file: string | undefined, options: IngestOptions) => {
      const { ingestEvents } = await import('../commands/events-ingest/ingest.js');
      setExitCode(await ingestEvents(file, options, env, streams));
    });
    common(
      noun
        .command('names')
        .description('the event names seen, with occurrences and first and last time')
        .option('--query <text>', 'name contains')
        .option('--limit <n>', 'names per page (default 100)')
        .option('--page <n>', 'page (default 1)')
        .option(...org),
    ).action(async (options: NamesOptions) => {
      const { eventNames } = await import('../commands/events-names/names.js');
      setExitCode(await eventNames(options, env, streams));
    });
    // Issue 7's name for `till webhooks redeliver`: a webhook event sent again (F).
    common(
      noun
        .command('resend')
        .description('send a webhook event again, same webhook-id and body (to every endpoint that got it, or --endpoint)')
        .argument('<event-id>', 'the webhook event id (the webhook-id header; `till listen` prints it)')
        .option('--endpoint <id>', 'only to this endpoint (also one that did not get it the first time)'),
    ).action(async (eventId: string, options: RedeliverOptions) => {
      const { redeliver } = await import('../commands/webhooks/commands.js');
      setExitCode(await redeliver(eventId, options, env, streams));
    });
  }

  if (spec.noun === 'meters') {
    const collectValues = (value: string, previous: string[] = []) => [...previous, value];
    common(
      noun
        .command('quantities')
        .description("a meter's quantity per interval: a bar chart on a terminal, a table elsewhere (default: the last 30 days, by day)")
        .argument('<id>', 'meter id')
        .option('--start <time>', 'from (a date or an ISO 8601 time; default: 30 days before --end)')
        .option('--end <time>', 'until (default: now)')
        .option('--interval <interval>', 'hour, day, week, month or year (default day)')
        .option('--timezone <zone>', 'IANA timezone the intervals follow (default UTC)')
        .option('--customer <id>', 'only this customer (repeatable)', collectValues)
        .option('--external-customer <id>', 'only the customer with this external id (repeatable)', collectValues),
    ).action(async (id: string, options: QuantitiesOptions) => {
      const { meterQuantities } = await import('../commands/meters/quantities.js');
      setExitCode(await meterQuantities(id, options, env, streams));
    });
  }

  if (spec.noun === 'customers') {
    common(
      noun
        .command('state')
        .description('what the customer has now: active subscriptions, granted benefits, active meters')
        .argument('<id>', 'customer id (or external id with --external)')
        .option('--external', 'the argument is your external id for the customer')
        .option('--org <id>', 'with --external: the organization, when several of yours use that external id'),
    ).action(async (id: string, options: StateOptions) => {
      const { customerState } = await import('../commands/customers/state.js');
      setExitCode(await customerState(id, options, env, streams));
    });
    common(
      noun
        .command('portal')
        .description('print the customer’s portal link (a one-hour customer session) and open it on a terminal')
        .argument('<id>', 'customer id (or external id with --external)')
        .option('--external', 'the argument is your external id for the customer')
        .option('--return-url <url>', 'where the portal’s back button leads')
        .option('--no-browser', 'only print the link'),
    ).action(async (id: string, options: PortalOptions) => {
      const { customerPortal } = await import('../commands/customers/portal.js');
      setExitCode(await customerPortal(id, options, env, streams));
    });
  }

  if (spec.noun === 'subscriptions') {
    const reason = ['--reason <reason>', 'the customer’s reason: customer_service, low_quality, missing_features, switched_service, too_complex, too_expensive, unused or other'] as const;
    const comment = ['--comment <text>', 'the customer’s comment'] as const;
    common(noun.command('cancel').description('cancel at the end of the current period (it keeps running until then)').argument('<id>', 'subscription id').option(...reason).option(...comment)).action(
      async (id: string, options: LifecycleOptions) => {
        const { cancelSubscription } = await import('../commands/subscriptions/lifecycle.js');
        setExitCode(await cancelSubscription(id, options, env, streams));
      },
    );
    common(noun.command('uncancel').description('take back a cancellation at the period end').argument('<id>', 'subscription id')).action(async (id: string, options: LifecycleOptions) => {
      const { uncancelSubscription } = await import('../commands/subscriptions/lifecycle.js');
      setExitCode(await uncancelSubscription(id, options, env, streams));
    });
    common(
      noun
        .command('revoke')
        .description('end it now and revoke its benefits (asks on a terminal, --yes elsewhere)')
        .argument('<id>', 'subscription id')
        .option(...reason)
        .option(...comment)
        .option('--yes', 'revoke without asking (needed off a terminal)'),
    ).action(async (id: string, options: LifecycleOptions) => {
      const { revokeSubscription } = await import('../commands/subscriptions/lifecycle.js');
      setExitCode(await revokeSubscription(id, options, env, streams));
    });
  }

  if (spec.noun === 'webhooks') {
    const repeat = (value: string, previous: string[] = []) => [...previous, value];
    common(
      noun
        .command('rotate-secret')
        .description('replace an endpoint’s signing secret with a new whsec_ one (shown once, here)')
        .argument('<id>', 'webhook endpoint id'),
    ).action(async (id: string, options: RotateOptions) => {
      const { rotateSecret } = await import('../commands/webhooks/commands.js');
      setExitCode(await rotateSecret(id, options, env, streams));
    });
    common(
      noun
        .command('deliveries')
        .description('delivery attempts, newest first: result, HTTP code, duration, the start of the answer')
        .option('--endpoint <id>', 'only this endpoint’s (repeatable)', repeat)
        .option('--type <event-type>', 'only events of this type (repeatable)', repeat)
        .option('--event <id|text>', 'only attempts of this event id, or whose body or answer contains the text')
        .option('--failed', 'only failed attempts')
        .option('--succeeded', 'only successful attempts')
        .option('--code <class>', 'only answers of this class: 2xx, 3xx, 4xx or 5xx')
        .option('--since <time>', 'attempts from this date or ISO 8601 time')
        .option('--until <time>', 'attempts up to this date or ISO 8601 time')
        .option('--page <n>', 'page (from 1)')
        .option('--limit <n>', 'attempts per page (default 20, at most 100)'),
    ).action(async (options: DeliveriesOptions) => {
      const { listDeliveries } = await import('../commands/webhooks/commands.js');
      setExitCode(await listDeliveries(options, env, streams));
    });
    common(
      noun
        .command('redeliver')
        .description('send an event again, same webhook-id and body (to every endpoint that got it, or one)')
        .argument('<event-id>', 'the event id (the webhook-id header)')
        .option('--endpoint <id>', 'only to this endpoint (also one that did not get it the first time)'),
    ).action(async (eventId: string, options: RedeliverOptions) => {
      const { redeliver } = await import('../commands/webhooks/commands.js');
      setExitCode(await redeliver(eventId, options, env, streams));
    });
  }

  if (spec.noun === 'checkouts') {
    common(
      noun
        .command('confirm')
        .description('pay a checkout in sandbox mode with a test token, as a script or the SDK’s clientConfirm does')
        .argument('<id>', 'checkout id')
        .option('--token <token>', 'test confirmation token: tok_visa (pays), tok_chargeDeclined, tok_chargeDeclinedInsufficientFunds, tok_chargeCustomerFail (pays now, renewals declined)')
        .option('--email <email>', 'the customer’s email, unless the checkout has one')
        .option('--name <name>', 'the customer’s name')
        .option('--country <code>', 'the billing country, ISO 3166 alpha-2 (sets the tax rate)'),
    ).action(async (id: string, options: ConfirmOptions) => {
      const { confirmCheckout } = await import('../commands/checkouts/confirm.js');
      setExitCode(await confirmCheckout(id, options, env, streams));
    });
  }
}
