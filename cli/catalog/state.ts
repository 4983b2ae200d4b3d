import { CliError, EXIT } from '../errors.js';
import type { Caller } from '../resources/api.js';
import { KINDS, type ApiObject, type Kind } from './model.js';
import type { OrganizationState } from './plan.js';

const LISTS: Record<Kind, string> = {
  meter: '/v1/meters/?is_archived=false',
  custom_field: '/v1/custom-fields/?',
  benefit: '/v1/benefits/?',
  product: '/v1/products/?is_archived=false',
  discount: '/v1/discounts/?',
  webhook: '/v1/webhooks/endpoints?',
  tax_rate: '/v1/tax-rates?',
};

const ITEM: Record<Kind, string> = {
  meter: '/v1/meters/',
  custom_field: '/v1/custom-fields/',
  benefit: '/v1/benefits/',
  product: '/v1/products/',
  discount: '/v1/discounts/',
  webhook: '/v1/webhooks/endpoints/',
  tax_rate: '/v1/tax-rates/',
};

/** Every page of a list. */
async function listAll(api: Caller, path: string, organizationId: string): Promise<ApiObject[]> {
  const items: ApiObject[] = [];
  for (let page = 1; ; page++) {
    const separator = path.endsWith('?') ? '' : '&';
    const answer = await api.request<{ items: ApiObject[]; pagination?: { max_page?: number } }>('GET', `${path}${separator}organization_id=${encodeURIComponent(organizationId)}&limit=100&page=${page}`);
    items.push(...answer.items);
    if (answer.items.length < 100 || page >= (answer.pagination?.max_page ?? page)) return items;
  }
}

/** The organization a catalog command works on: the one named, else the caller's only one. */
export async function catalogOrganization(api: Caller, named: string | undefined): Promise<ApiObject> {
  if (named) return api.request<ApiObject>('GET', `/v1/organizations/${encodeURIComponent(named)}`);
  const page = await api.request<{ items: ApiObject[] }>('GET', '/v1/organizations/?limit=2');
  if (page.items.length === 1) return page.items[0];
  throw new CliError('ORGANIZATION_REQUIRED', page.items.length === 0 ? 'You belong to no organization.' : 'You belong to several organizations: say which with --org.', EXIT.usage, 'Pass --org ID|SLUG, set TILL_ORG, or run `till orgs use SLUG`.');
}

/**
 * Reads what a plan compares: the organization, its live objects of every kind, and the keys the file gave; and
 * the live subscriptions (active or trialing) of the products named by `migrating` (keys of products whose
 * subscriptions the file moves onto the current price).
 */
export async function readOrganization(api: Caller, organization: ApiObject, migrating: readonly string[] = []): Promise<OrganizationState> {
  const organizationId = String(organization.id);
  const keys = (await api.request<{ items: { kind: Kind; key: string; object_id: string }[] }>('GET', `/v1/catalog/keys?organization_id=${encodeURIComponent(organizationId)}`)).items;
  const lists = await Promise.all(KINDS.map((kind) => listAll(api, LISTS[kind], organizationId)));
  const objects = Object.fromEntries(KINDS.map((kind, index) => [kind, lists[index]])) as Record<Kind, ApiObject[]>;
  // An archived object a key still names is not in the live lists: fetch it, so the plan restores it.
  for (const binding of keys) {
    if (objects[binding.kind].some((object) => String(object.id) === binding.object_id)) continue;
    try {
      objects[binding.kind].push(await api.request<ApiObject>('GET', `${ITEM[binding.kind]}${encodeURIComponent(binding.object_id)}`));
    } catch (error) {
      if (!(error instanceof CliError) || error.exitCode !== EXIT.notFound) throw error;
    }
  }
  const subscriptions: Record<string, ApiObject[]> = {};
  for (const key of migrating) {
    const productId = keys.find((binding) => binding.kind === 'product' && binding.key === key)?.object_id;
    if (productId) subscriptions[productId] = await listAll(api, `/v1/subscriptions?product_id=${encodeURIComponent(productId)}&status=active&status=trialing`, organizationId);
  }
  return { organization, objects, keys, subscriptions };
}
