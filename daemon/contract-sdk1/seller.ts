import { SCOPES } from '../../core/billing/shared/scopes.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { createOrganization } from '../testing/v1.js';
import { startTilld, type TilldProcess } from './tilld.js';

export interface Seller {
  tilld: TilldProcess;
  owner: SignedIn;
  organizationId: string;
  /** An organization access token with every scope Till honours, as a seller's app would hold it. */
  accessToken: string;
}

/**
 * A real tilld with a seller on it: an owner, a sandbox organization (test cards pay) and an organization access
 * token with every scope. One per test file, started in beforeAll.
 */
export async function startSeller(name: string): Promise<Seller> {
  // Webhooks go to test apps on this machine's loopback address.
  const tilld = await startTilld({ TILL_WEBHOOKS_ALLOW_PRIVATE: '1', TILL_WEBHOOKS_POLL_MS: '50' });
  const owner = await signUp(tilld.url, { name: `${name} owner` });
  const organizationId = await createOrganization(owner, name);
  const headers = { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' };
  const res = await fetch(`${tilld.url}/v1/organization-access-tokens/`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ organization_id: organizationId, comment: name, scopes: SCOPES }),
  });
  if (res.status !== 201) throw new Error(`access token: ${res.status} ${await res.text()}`);
  const accessToken = (await res.json()).token as string;
  const sandbox = await fetch(`${tilld.url}/v1/organizations/${organizationId}/clock`, { method: 'PATCH', headers, body: JSON.stringify({ sandbox: true }) });
  if (sandbox.status !== 200) throw new Error(`sandbox: ${sandbox.status} ${await sandbox.text()}`);
  return { tilld, owner, organizationId, accessToken };
}

/** Polls `read` until it returns something other than undefined (a webhook arrived, a job ran), or fails after 30 s. */
export async function eventually<T>(read: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
