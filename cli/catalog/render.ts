import type { Style } from '../output.js';
import type { Change, Plan, Step } from './plan.js';
import { SECTION } from './model.js';
import { count } from '../resources/words.js';

const SIGN: Record<Step['action'], string> = { create: '+', update: '~', replace: '±', archive: '-', migrate: '>' };

const show = (value: unknown) => (value === undefined ? '—' : typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value));

const noun = (step: Step) => (step.kind === 'organization' ? 'organization' : SECTION[step.kind].replace(/s$/, '').replace('_', ' '));

function changeLine(change: Change, style: Style, migrating: boolean): string {
  if (change.from === undefined) return `      ${change.field}: ${style.green(show(change.to))}`;
  if (change.to === null && change.field === 'price') return `      ${style.red(`- price ${show(change.from)}`)} ${style.dim(migrating ? '(archived; its subscriptions move to the current price)' : '(archived; subscriptions stay on it)')}`;
  if (change.from === null && change.field === 'price') return `      ${style.green(`+ price ${show(change.to)}`)}`;
  return `      ${change.field}: ${style.red(show(change.from))} → ${style.green(show(change.to))}`;
}

/** The plan for a person: one block per step, field by field, coloured on a terminal. */
export function renderPlan(plan: Plan, style: Style, options: { prune: boolean }): string {
  const lines: string[] = [];
  const colour = { create: style.green, update: style.yellow, replace: style.yellow, archive: style.red, migrate: style.yellow } as const;
  for (const step of plan.steps) {
    lines.push(colour[step.action](`  ${SIGN[step.action]} ${step.action} ${noun(step)} ${step.key}`) + (step.id && step.action !== 'archive' ? style.dim(`  ${step.id}`) : ''));
    for (const change of step.changes) lines.push(changeLine(change, style, step.entry?.migrate !== undefined));
  }
  const counts = (['create', 'update', 'replace', 'archive', 'migrate'] as const).map((action) => [action, plan.steps.filter((step) => step.action === action).length] as const).filter(([, n]) => n > 0);
  if (plan.steps.length === 0) lines.push('Nothing to change: the organization matches the file.');
  else lines.push('', `Plan: ${counts.map(([action, n]) => `${n} to ${action}`).join(', ')}.`);
  const left = plan.untouched.filter((item) => item.reason === 'not_in_file');
  if (left.length > 0 && !options.prune) lines.push(style.dim(`${count(left.length, 'object')} not in the file left alone (--prune archives them).`));
  const kept = plan.untouched.filter((item) => item.reason === 'not_archivable');
  if (kept.length > 0) lines.push(style.dim(`Not archivable, left alone: ${kept.map((item) => `${item.kind.replace('_', ' ')} ${item.key ?? item.name}`).join(', ')}.`));
  return lines.join('\n');
}

/** The plan for machines (`--json`). */
export function planJson(plan: Plan) {
  return {
    organization_id: plan.organizationId,
    changes_pending: plan.steps.length > 0,
    steps: plan.steps.map((step) => ({ action: step.action, kind: step.kind, key: step.key, id: step.id ?? null, changes: step.changes })),
    untouched: plan.untouched,
  };
}
