import { CliError, EXIT, isCliError } from '../../errors.js';
import type { Env, Streams } from '../../output.js';
import { openSession } from '../../resources/session.js';
import { canPrompt, openPrompter } from '../../input/prompt.js';
import { applyPlan, ApplyFailure, type AppliedStep, type Send } from '../../catalog/apply.js';
import type { ApiObject } from '../../catalog/model.js';
import { planJson, renderPlan } from '../../catalog/render.js';
import { planFor, type PlanOptions } from './plan.js';
import { count } from '../../resources/words.js';

export interface ApplyOptions extends PlanOptions {
  yes?: boolean;
}

const describe = (done: AppliedStep) => `${done.step.action} ${done.step.kind.replace('_', ' ')} ${done.step.key}`;

/** `till apply FILE`: the plan, a question (or --yes), then every step, each with its own idempotency key. */
export async function apply(file: string, options: ApplyOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const { plan, keys } = await planFor(session, file, options);
  if (plan.steps.length === 0) {
    session.out.result({ ...planJson(plan), applied: [] }, (style) => renderPlan(plan, style, { prune: options.prune === true }));
    return EXIT.ok;
  }
  if (!options.yes) {
    if (!canPrompt(streams)) throw new CliError('CONFIRMATION_REQUIRED', 'Refusing to apply without --yes: there is no terminal to ask on.', EXIT.usage, 'Run `till plan FILE` to review, then `till apply FILE --yes`.');
    streams.stderr.write(`${renderPlan(plan, session.out.style.err, { prune: options.prune === true })}\n`);
    if (!(await (await openPrompter(streams)).confirm('Apply these changes?'))) throw new CliError('CANCELLED', 'Nothing was changed.', EXIT.error);
  } else if (!session.out.json) {
    session.out.note(renderPlan(plan, session.out.style.err, { prune: options.prune === true }));
  }
  const send: Send = (method, path, body, idempotencyKey) => session.api.request<ApiObject | null>(method, path, method === 'GET' ? {} : { body, idempotencyKey });
  try {
    const done = await applyPlan(plan, keys, send, (step) => session.out.note(`${session.out.style.err.green('✓')} ${describe(step)}`));
    session.out.result({ ...planJson(plan), applied: done.map((item) => ({ action: item.step.action, kind: item.step.kind, key: item.step.key, id: item.id })) }, (style) => `${style.green('✓')} Applied ${count(done.length, 'change')}.`);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof ApplyFailure)) throw error;
    const cause = error.cause;
    const done = error.done.map(describe);
    const message = `Stopped at ${error.failed.action} ${error.failed.kind.replace('_', ' ')} ${error.failed.key}: ${cause instanceof Error ? cause.message : String(cause)}\nDone before it (${done.length}): ${done.length ? done.join(', ') : 'nothing'}.`;
    throw new CliError(isCliError(cause) ? cause.code : 'APPLY_FAILED', message, isCliError(cause) ? cause.exitCode : EXIT.error, 'Fix the cause and run the same `till apply` again: it finishes what is left (every step is idempotent).');
  }
}
