import { CliError, EXIT } from '../../errors.js';
import type { Env, Streams, Style } from '../../output.js';
import { openSession, organizationId, type Session } from '../../resources/session.js';
import { count } from '../../resources/words.js';

export interface ClockOptions {
  server?: string;
  json?: boolean;
  org?: string;
  to?: string;
}

interface ClockAnswer {
  organization_id: string;
  sandbox: boolean;
  now: string;
  offset_seconds: number;
  pending_jobs: { kind: string; subject_id: string; run_at: string; attempts: number }[];
  pending_jobs_count: number;
  advanced_from?: string;
  jobs_run?: number;
  jobs_failed?: number;
}

/** The organization a clock command applies to: --org, TILL_ORG, the default, else the caller's only one. */
async function clockPath(session: Session, flag: string | undefined): Promise<string> {
  const id = (await organizationId(session, flag)) ?? (await onlyOrganization(session));
  return `/v1/organizations/${encodeURIComponent(id)}/clock`;
}

async function onlyOrganization(session: Session): Promise<string> {
  const page = await session.api.request<{ items: { id: string }[] }>('GET', '/v1/organizations/?limit=2');
  if (page.items.length === 1) return page.items[0].id;
  throw new CliError('ORGANIZATION_REQUIRED', page.items.length ? 'You belong to several organizations: say which with --org.' : 'You belong to no organization.', EXIT.usage, 'Run `till orgs use SLUG` to choose a default.');
}

const describe = (clock: ClockAnswer) => (style: Style) => {
  const lines = [
    `${style.bold('Clock')} of ${clock.organization_id}: ${clock.now}${clock.sandbox ? style.yellow(' (sandbox)') : ''}`,
    clock.offset_seconds ? style.dim(`  ${formatOffset(clock.offset_seconds)} ahead of real time`) : style.dim('  real time'),
  ];
  if (clock.jobs_run !== undefined) {
    lines.push(`${style.green('✓')} Advanced from ${clock.advanced_from}: ${count(clock.jobs_run, 'job')} run${clock.jobs_failed ? style.red(`, ${clock.jobs_failed} failed (retried later)`) : ''}.`);
  }
  if (clock.pending_jobs_count) {
    lines.push(`${count(clock.pending_jobs_count, 'job')} pending; next:`);
    for (const job of clock.pending_jobs.slice(0, 5)) lines.push(`  ${job.run_at}  ${job.kind}  ${style.dim(job.subject_id)}`);
  }
  return lines.join('\n');
};

function formatOffset(seconds: number): string {
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  return days ? `${count(days, 'day')} ${hours} h` : `${hours} h ${Math.floor((seconds % 3600) / 60)} min`;
}

/** `till clock show`. */
export async function showClock(options: ClockOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const clock = await session.api.request<ClockAnswer>('GET', await clockPath(session, options.org));
  session.out.result(clock, describe(clock));
  return EXIT.ok;
}

/** `till clock sandbox on|off`. */
export async function setSandbox(state: string, options: ClockOptions, env: Env, streams: Streams): Promise<number> {
  if (state !== 'on' && state !== 'off') throw new CliError('INVALID_ARGUMENT', `Expected on or off, got "${state}".`, EXIT.invalid);
  const session = await openSession(env, streams, options);
  const clock = await session.api.request<ClockAnswer>('PATCH', await clockPath(session, options.org), { body: { sandbox: state === 'on' } });
  session.out.result(clock, describe(clock));
  return EXIT.ok;
}

/** `till clock advance +1month` or `till clock advance --to 2027-01-01T00:00:00Z`. */
export async function advanceClock(step: string | undefined, options: ClockOptions, env: Env, streams: Streams): Promise<number> {
  if ((step === undefined) === (options.to === undefined)) {
    throw new CliError('MISSING_ARGUMENT', 'Say how far: a step such as +1month, or --to DATE.', EXIT.usage, 'Steps: +30s, +15m, +12h, +3d, +2w, +1month, +1year.');
  }
  const session = await openSession(env, streams, options);
  const body = step !== undefined ? { by: step } : { to: normalizeDate(options.to!) };
  const clock = await session.api.request<ClockAnswer>('POST', `${await clockPath(session, options.org)}/advance`, {
    body,
    flagOf: (field) => (field === 'to' ? '--to' : field === 'by' ? '[step]' : undefined),
  });
  session.out.result(clock, describe(clock));
  return EXIT.ok;
}

/** A date alone means midnight UTC; a date-time without an offset is taken as UTC. */
function normalizeDate(raw: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(raw)) return `${raw}T00:00:00Z`;
  if (/^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(raw)) return `${raw}Z`;
  return raw;
}
