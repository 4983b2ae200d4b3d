import type { Command as Commander } from 'commander';
import type { UploadOptions } from '../commands/files/upload.js';
import type { UseOptions } from '../commands/orgs/use.js';
import type { InvoiceOptions } from '../commands/orders/invoice.js';
import type { RefundOptions } from '../commands/refunds/create.js';
import type { ActivateOptions, DeactivateOptions, ValidateOptions } from '../commands/license-keys/keys.js';
import type { StateOptions } from '../commands/customers/state.js';
import type { LifecycleOptions } from '../commands/subscriptions/lifecycle.js';
import type { Env, Streams } from '../output.js';
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
        .option('--amount <n|all>', 'net amount in minor units (500 is 5.00 USD; tax goes back in proportion), or all')
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
}
