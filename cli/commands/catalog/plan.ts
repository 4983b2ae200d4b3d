import { EXIT } from '../../errors.js';
import type { Env, Streams } from '../../output.js';
import { openSession, organizationId } from '../../resources/session.js';
import { loadCatalog } from '../../catalog/file.js';
import { buildPlan, type Plan } from '../../catalog/plan.js';
import { planJson, renderPlan } from '../../catalog/render.js';
import { catalogOrganization, readOrganization } from '../../catalog/state.js';
import type { Session } from '../../resources/session.js';

export interface PlanOptions {
  server?: string;
  org?: string;
  json?: boolean;
  prune?: boolean;
}

/** Reads the file and the organization and answers the plan between them (shared by plan and apply). */
export async function planFor(session: Session, path: string, options: PlanOptions): Promise<{ plan: Plan; keys: { kind: never; key: string; object_id: string }[] }> {
  const catalog = await loadCatalog(path, session.env);
  const organization = await catalogOrganization(session.api, await organizationId(session, options.org));
  const state = await readOrganization(
    session.api,
    organization,
    catalog.entries.filter((entry) => entry.migrate).map((entry) => entry.key),
  );
  const plan = buildPlan(catalog.entries, catalog.file.organization, state, { prune: options.prune === true, now: new Date() });
  return { plan, keys: state.keys as never };
}

/** `till plan FILE`: what `till apply FILE` would change, field by field. Exit 0 when nothing, 10 when changes are pending. */
export async function plan(file: string, options: PlanOptions, env: Env, streams: Streams): Promise<number> {
  const session = await openSession(env, streams, options);
  const { plan } = await planFor(session, file, options);
  session.out.result(planJson(plan), (style) => renderPlan(plan, style, { prune: options.prune === true }));
  return plan.steps.length > 0 ? EXIT.changesPending : EXIT.ok;
}
