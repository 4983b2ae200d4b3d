import { CliError, EXIT } from '../../errors.js';
import { parseMetadata } from '../../input/pairs.js';
import type { Env, Streams } from '../../output.js';
import { organizationId, openSession, type Session } from '../../resources/session.js';
import type { ApiObject } from '../../resources/spec.js';
import { describeValue, renderRecord } from '../../ui/record.js';
import { count } from '../../resources/words.js';

interface Common {
  server?: string;
  json?: boolean;
  org?: string;
}

export interface ValidateOptions extends Common {
  activation?: string;
  benefit?: string;
  customer?: string;
  incrementUsage?: string;
  condition?: string[];
}

export interface ActivateOptions extends Common {
  label?: string;
  condition?: string[];
  meta?: string[];
}

export interface DeactivateOptions extends Common {
  activation?: string;
}

/** Keys are validated within one organization: --org, the default one, else the caller's only one. */
async function keyOrganization(session: Session, flag: string | undefined): Promise<string> {
  const chosen = await organizationId(session, flag);
  if (chosen) return chosen;
  const page = await session.api.request<{ items: ApiObject[] }>('GET', '/v1/organizations/?limit=2');
  if (page.items.length === 1) return String(page.items[0]!.id);
  throw new CliError('ORGANIZATION_REQUIRED', 'Which organization issued the key?', EXIT.usage, 'Give --org (or set TILL_ORG, or run `till orgs use`).');
}

/** `--condition k=v` / `--meta k=v` pairs: strings, or numbers and booleans with `k:=5`. */
const pairs = (values: readonly string[] | undefined, flag: string) => {
  try {
    return parseMetadata(values ?? []);
  } catch (error) {
    if (error instanceof CliError) throw new CliError(error.code, error.message.replace('--metadata', flag), error.exitCode, error.hint);
    throw error;
  }
};

const usage = (key: ApiObject) => `${describeValue(key.usage)}${typeof key.limit_usage === 'number' ? ` of ${key.limit_usage}` : ''}`;

/** `till license-keys validate KEY`: checks a key as an application would (usage counted with --increment-usage). */
export async function validateKey(key: string, options: ValidateOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const body: Record<string, unknown> = { key, organization_id: await keyOrganization(session, options.org), conditions: pairs(options.condition, '--condition') };
  if (options.activation) body.activation_id = options.activation;
  if (options.benefit) body.benefit_id = options.benefit;
  if (options.customer) body.customer_id = options.customer;
  if (options.incrementUsage !== undefined) {
    if (!/^\d{1,10}$/.test(options.incrementUsage)) throw new CliError('INVALID_FLAG', `--increment-usage "${options.incrementUsage}": expected a whole number.`, EXIT.invalid);
    body.increment_usage = Number(options.incrementUsage);
  }
  const validated = await session.api.request<ApiObject>('POST', '/v1/license-keys/validate', { body });
  session.out.result(validated, (style) =>
    [
      `${style.green('✓')} ${String(validated.display_key)} is valid (${String(validated.status)}): usage ${usage(validated)}, ${typeof validated.validations === 'number' ? count(validated.validations, 'validation') : `${describeValue(validated.validations)} validations`}.`,
      renderRecord({ id: validated.id, customer_id: validated.customer_id, benefit_id: validated.benefit_id, expires_at: validated.expires_at, activation: validated.activation }, style),
    ].join('\n'),
  );
  return EXIT.ok;
}

/** `till license-keys activate KEY --label L`: registers one more instance (up to the key's activation limit). */
export async function activateKey(key: string, options: ActivateOptions, env: Env, streams: Streams): Promise<number> {
  if (!options.label) throw new CliError('MISSING_ARGUMENT', 'Missing --label (needed to activate a key).', EXIT.usage, 'Name the instance, e.g. --label "Ada\'s laptop".');
  const session = await openSession(env, streams, options);
  const body = {
    key,
    organization_id: await keyOrganization(session, options.org),
    label: options.label,
    conditions: pairs(options.condition, '--condition'),
    meta: pairs(options.meta, '--meta'),
  };
  const activation = await session.api.request<ApiObject>('POST', '/v1/license-keys/activate', { body, flagOf: (field) => ({ label: '--label', conditions: '--condition', meta: '--meta' })[field] });
  session.out.result(activation, (style) => `${style.green('✓')} Activated "${String(activation.label)}": activation ${String(activation.id)}.`);
  return EXIT.ok;
}

/** `till license-keys deactivate KEY --activation ID`: frees an activation slot. */
export async function deactivateKey(key: string, options: DeactivateOptions, env: Env, streams: Streams): Promise<number> {
  if (!options.activation) throw new CliError('MISSING_ARGUMENT', 'Missing --activation (needed to deactivate a key).', EXIT.usage, '`till license-keys list` shows the keys’ ids; `till license-keys get` with one of them lists its activations.');
  const session = await openSession(env, streams, options);
  const body = { key, organization_id: await keyOrganization(session, options.org), activation_id: options.activation };
  await session.api.request('POST', '/v1/license-keys/deactivate', { body });
  session.out.result({ deactivated: true, activation_id: options.activation }, (style) => `${style.green('✓')} Deactivated activation ${options.activation}.`);
  return EXIT.ok;
}
