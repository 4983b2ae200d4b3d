import { randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guildTokenKey, mintGuildToken } from '../../core/billing/benefits/guild-token.js';
import { startFakeDiscord, type FakeDiscord } from '../../core/integrations/fake-discord.js';
import { startFakeGitHub, type FakeGitHub } from '../../core/integrations/fake-github.js';
import { listEvents } from '../../core/webhooks/outbox.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';
import { grantForOrder, revokeForOrder, seedProductWithBenefits } from '../testing/benefit-grants.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, polarSdk, v1Request } from '../testing/v1.js';
import { until } from '../testing/poll.js';

// Discord and GitHub benefits that really grant: the customer connects an account from the portal through OAuth
// (driven over HTTP through every redirect, against local fakes of GitHub and Discord), the grant's job gives access
// on the service, and revoking takes it back; failures are recorded on the grant and retried.

const GUILD = '112233445566778899';
const ROLE = '998877665544332211';

let github: FakeGitHub;
let discord: FakeDiscord;
let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;
let slug: string;
let guildToken: string;
const portal = () => new Polar({ serverURL: daemon.url });
const sdk = () => polarSdk(daemon.url, owner.token);


const grantRow = async (id: string) => {
  const row = await daemon.db('benefit_grants').where({ id }).first();
  return { ...row, properties: typeof row.properties === 'string' ? JSON.parse(row.properties) : row.properties, error: typeof row.error === 'string' ? JSON.parse(row.error) : row.error };
};

async function sessionFor(customerId: string): Promise<string> {
  const answer = await v1Request(daemon.url, owner.token, 'POST', '/customer-sessions/', { customer_id: customerId });
  expect(answer.status).toBe(201);
  return (await answer.json()).token;
}

/** A customer who bought a product with these benefits: their grant ids by benefit type, and a session token. */
async function buyer(benefits: unknown[]) {
  const seeded = await seedProductWithBenefits(daemon, owner.token, organizationId, benefits as never);
  const orderId = randomUUID();
  await grantForOrder(daemon, { organizationId, customerId: seeded.customerId, productId: seeded.productId, orderId });
  const rows = await daemon.db('benefit_grants').where({ customer_id: seeded.customerId });
  return { customerId: seeded.customerId, orderId, grantIds: rows.map((row) => String(row.id)), token: await sessionFor(seeded.customerId) };
}

const cookieOf = (response: Response) => response.headers.getSetCookie().map((cookie) => cookie.split(';')[0]!).join('; ');

/** The customer clicks "connect" on the portal: Till → the platform's consent page → Till's callback → back to the portal. */
async function connect(platform: 'github' | 'discord', grantId: string, token: string) {
  const start = await fetch(`${daemon.url}/portal/${slug}/connect/${platform}?grant_id=${grantId}&customer_session_token=${token}`, { redirect: 'manual' });
  expect(start.status).toBe(303);
  const consent = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  expect(consent.status).toBe(302);
  const callback = new URL(consent.headers.get('location')!);
  expect(callback.origin + callback.pathname).toBe(`${daemon.url}/portal/oauth/${platform}/callback`);
  const back = await fetch(callback, { redirect: 'manual', headers: { cookie: cookieOf(start) } });
  return { status: back.status, location: back.headers.get('location'), callback, cookie: cookieOf(start) };
}

/** Moves the organization's test clock on, running the jobs due by then (a retry after its backoff). */
async function advance(by: string) {
  const answer = await v1Request(daemon.url, owner.token, 'POST', `/organizations/${organizationId}/clock/advance`, { by });
  expect(answer.status).toBe(200);
}

beforeAll(async () => {
  [github, discord] = await Promise.all([startFakeGitHub(), startFakeDiscord()]);
  daemon = await startTestDaemon({ ...github.env, ...discord.env, TILL_JOB_INTERVAL_MS: '100' });
  owner = await signUp(daemon.url, { name: 'Olga Owner' });
  organizationId = await createOrganization(owner, 'Guild Shop');
  slug = (await sdk().organizations.get({ id: organizationId })).slug;
  expect((await v1Request(daemon.url, owner.token, 'PATCH', `/organizations/${organizationId}/clock`, { sandbox: true })).status).toBe(200);
  guildToken = mintGuildToken(guildTokenKey((await daemon.auth.$context).secret), GUILD);
  discord.addGuild(GUILD, [ROLE]);
  github.addRepository('acme', 'private');
});
afterAll(async () => {
  await daemon?.close();
  await Promise.all([github?.close(), discord?.close()]);
});

const repoBenefit = { type: 'github_repository', description: 'Repo access', properties: { repositoryOwner: 'acme', repositoryName: 'private', permission: 'triage' } };
const discordBenefit = (kickMember: boolean) => ({ type: 'discord', description: kickMember ? 'Members only' : 'Supporter role', properties: { guildToken, roleId: ROLE, kickMember } });

describe('GitHub repository benefits', () => {
  it('invites the GitHub account the customer connects through OAuth, with the benefit’s permission, and removes it on revoke', async () => {
    const ann = await buyer([repoBenefit]);
    const [grantId] = ann.grantIds as [string];
    expect((await grantRow(grantId)).error).toMatchObject({ type: 'BenefitActionRequired' });

    github.signIn({ id: 5001, login: 'ann-codes' });
    const done = await connect('github', grantId, ann.token);
    expect(done).toMatchObject({ status: 303, location: `/portal/${slug}?connected=github` });

    const granted = await until(() => grantRow(grantId), (row) => row.granted_at !== null, 'the grant to be granted');
    expect(granted.properties).toMatchObject({ account_id: '5001', granted_account_id: '5001', granted_account_username: 'ann-codes', repository_owner: 'acme', repository_name: 'private', permission: 'triage' });
    expect(granted.error).toBeNull();
    expect(github.invitations('acme', 'private')).toEqual([expect.objectContaining({ login: 'ann-codes', permission: 'triage' })]);
    // The invite went out with the server's token, never the customer's.
    const invite = github.calls.find((call) => call.method === 'PUT' && call.path === '/repos/acme/private/collaborators/ann-codes')!;
    expect(invite.headers.authorization).toBe(`Bearer ${github.adminToken}`);
    const updated = await listEvents(daemon.db, organizationId, { type: 'benefit_grant.updated' });
    const grantEvents = updated.map((event) => event.payload.data as { id: string; is_granted: boolean }).filter((data) => data.id === grantId);
    expect(grantEvents.at(-1)).toMatchObject({ is_granted: true, properties: { granted_account_id: '5001' } });

    // The portal shows the connected account on the grant, through the SDK with response validation on.
    const seen = await portal().customerPortal.benefitGrants.get({ customerSession: ann.token }, { id: grantId });
    expect(seen).toMatchObject({ isGranted: true, properties: { accountId: '5001', grantedAccountId: '5001' } });

    github.acceptInvitation('acme', 'private', 'ann-codes');
    expect(github.collaborators('acme', 'private').get('ann-codes')).toBe('triage');
    await revokeForOrder(daemon, { organizationId, customerId: ann.customerId, orderId: ann.orderId });
    await until(async () => github.collaborators('acme', 'private').has('ann-codes'), (has) => !has, 'the collaborator to be removed');
    const revoked = await until(() => grantRow(grantId), (row) => row.properties.granted_account_id === undefined, 'the grant to forget the access');
    expect(revoked.revoked_at).not.toBeNull();
  });

  it('cancels a pending invitation on revoke', async () => {
    const ben = await buyer([repoBenefit]);
    github.signIn({ id: 5002, login: 'ben-builds' });
    await connect('github', ben.grantIds[0]!, ben.token);
    await until(async () => github.invitations('acme', 'private').some((i) => i.login === 'ben-builds'), Boolean, 'the invitation');
    await revokeForOrder(daemon, { organizationId, customerId: ben.customerId, orderId: ben.orderId });
    await until(async () => github.invitations('acme', 'private').some((i) => i.login === 'ben-builds'), (pending) => !pending, 'the invitation to be canceled');
  });

  it('records a GitHub failure on the grant and grants on a later retry', async () => {
    const cleo = await buyer([repoBenefit]);
    const grantId = cleo.grantIds[0]!;
    github.failNext('PUT', /\/collaborators\/cleo-/, { status: 502, body: { message: 'Server Error' } });
    github.signIn({ id: 5003, login: 'cleo-ships' });
    await connect('github', grantId, cleo.token);
    const failed = await until(() => grantRow(grantId), (row) => row.error?.type === 'ProviderUnavailable', 'the failure to be recorded');
    expect(failed.granted_at).toBeNull();
    expect(failed.error.message).toContain('HTTP 502');
    expect(failed.error.timestamp).toEqual(expect.any(String));
    const job = await daemon.db('jobs').where({ kind: 'benefit_grant.sync', subject_id: grantId }).first();
    expect(Number(job.attempts)).toBe(1);
    // The retry falls due after the job's backoff (30 s on the organization's clock).
    await advance('+1m');
    const granted = await until(() => grantRow(grantId), (row) => row.granted_at !== null, 'the retry to grant');
    expect(granted.error).toBeNull();
    expect(github.invitations('acme', 'private').some((i) => i.login === 'cleo-ships')).toBe(true);
  });

  it('retries a revoke the service refused until the access is gone', async () => {
    const dan = await buyer([repoBenefit]);
    const grantId = dan.grantIds[0]!;
    github.signIn({ id: 5004, login: 'dan-devs' });
    await connect('github', grantId, dan.token);
    await until(() => grantRow(grantId), (row) => row.granted_at !== null, 'the grant');
    github.acceptInvitation('acme', 'private', 'dan-devs');
    github.failNext('DELETE', /\/collaborators\/dan-devs$/, { status: 503, body: { message: 'Service Unavailable' } });
    await revokeForOrder(daemon, { organizationId, customerId: dan.customerId, orderId: dan.orderId });
    const failed = await until(() => grantRow(grantId), (row) => row.error?.type === 'ProviderUnavailable', 'the failed revoke to be recorded');
    expect(failed.revoked_at).not.toBeNull();
    expect(failed.properties.granted_account_id).toBe('5004');
    expect(github.collaborators('acme', 'private').has('dan-devs')).toBe(true);
    await advance('+1m');
    await until(async () => github.collaborators('acme', 'private').has('dan-devs'), (has) => !has, 'the retried revoke');
    expect((await until(() => grantRow(grantId), (row) => row.properties.granted_account_id === undefined, 'the grant to forget the access')).error).toBeNull();
  });
});

describe('Discord benefits', () => {
  it('adds the member the customer connects to the guild with the role, and takes the role back on revoke', async () => {
    const eve = await buyer([discordBenefit(false)]);
    const grantId = eve.grantIds[0]!;
    discord.signIn({ id: '700000000000000001', username: 'eve' });
    expect((await connect('discord', grantId, eve.token)).location).toBe(`/portal/${slug}?connected=discord`);
    const granted = await until(() => grantRow(grantId), (row) => row.granted_at !== null, 'the grant');
    expect(granted.properties).toMatchObject({ account_id: '700000000000000001', granted_account_id: '700000000000000001', guild_id: GUILD, role_id: ROLE });
    expect(discord.members(GUILD).get('700000000000000001')).toEqual([ROLE]);
    const join = discord.calls.find((call) => call.method === 'PUT' && call.path === `/api/v10/guilds/${GUILD}/members/700000000000000001`)!;
    expect(join.headers.authorization).toBe(`Bot ${discord.botToken}`);
    // The customer's Discord token is kept sealed, never in the clear.
    const account = await daemon.db('customer_oauth_accounts').where({ customer_id: eve.customerId }).first();
    expect(account).toMatchObject({ platform: 'discord', account_id: '700000000000000001', account_username: 'eve' });
    expect(String(account.access_token)).toMatch(/^v1\./);
    const customerToken = (join.body as { access_token: string }).access_token;
    expect(String(account.access_token)).not.toContain(customerToken);
    for (const secret of [customerToken, eve.token, discord.botToken, discord.clientSecret]) expect(JSON.stringify(daemon.logs)).not.toContain(secret);
    // The portal's customer (and the one a grant embeds) names the account as Polar keys it, without its tokens.
    const security = { customerSession: eve.token };
    const me = await portal().customerPortal.customers.get(security);
    expect(me.oauthAccounts).toEqual({ 'discord:700000000000000001': { accountId: '700000000000000001', accountUsername: 'eve' } });
    const raw = await (await fetch(`${daemon.url}/v1/customer-portal/benefit-grants/${grantId}`, { headers: { authorization: `Bearer ${eve.token}` } })).text();
    expect(JSON.parse(raw).customer.oauth_accounts).toEqual({ 'discord:700000000000000001': { account_id: '700000000000000001', account_username: 'eve' } });
    expect(raw).not.toContain(customerToken);

    await revokeForOrder(daemon, { organizationId, customerId: eve.customerId, orderId: eve.orderId });
    await until(async () => discord.members(GUILD).get('700000000000000001'), (roles) => roles !== undefined && roles.length === 0, 'the role to be taken back');
  });

  it('kicks the member on revoke when the benefit says kick_member', async () => {
    const fay = await buyer([discordBenefit(true)]);
    discord.signIn({ id: '700000000000000002', username: 'fay' });
    await connect('discord', fay.grantIds[0]!, fay.token);
    await until(async () => discord.members(GUILD).has('700000000000000002'), Boolean, 'the member to join');
    await revokeForOrder(daemon, { organizationId, customerId: fay.customerId, orderId: fay.orderId });
    await until(async () => discord.members(GUILD).has('700000000000000002'), (member) => !member, 'the member to be kicked');
  });

  it('takes back the access the service gave while the grant was being revoked', async () => {
    const hal = await buyer([discordBenefit(true)]);
    discord.signIn({ id: '700000000000000009', username: 'hal' });
    // Discord adds the member, and its answer is still on its way when the order's benefits are revoked.
    const held = discord.holdNext('PUT', /\/members\/700000000000000009$/);
    await connect('discord', hal.grantIds[0]!, hal.token);
    await held.reached;
    expect(discord.members(GUILD).has('700000000000000009')).toBe(true);
    await revokeForOrder(daemon, { organizationId, customerId: hal.customerId, orderId: hal.orderId });
    held.release();

    await until(async () => discord.members(GUILD).has('700000000000000009'), (member) => !member, 'the member to be kicked');
    const grant = await until(() => grantRow(hal.grantIds[0]!), (row) => row.properties.granted_account_id === undefined, 'the grant to forget the access');
    expect(grant).toMatchObject({ granted_at: null, error: null });
    expect(grant.revoked_at).not.toBeNull();
  });
});

describe('connecting an account', () => {
  it('refuses a callback that comes back without the browser that started it, or a second time', async () => {
    const gus = await buyer([repoBenefit]);
    github.signIn({ id: 5005, login: 'gus-git' });
    const start = await fetch(`${daemon.url}/portal/${slug}/connect/github?grant_id=${gus.grantIds[0]}&customer_session_token=${gus.token}`, { redirect: 'manual' });
    const consent = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    const callback = consent.headers.get('location')!;
    // Someone else's browser (no cookie): refused, and nothing connected.
    const stranger = await fetch(callback, { redirect: 'manual' });
    expect(stranger.status).toBe(400);
    expect(await stranger.text()).toContain('not valid any more');
    const ok = await fetch(callback, { redirect: 'manual', headers: { cookie: cookieOf(start) } });
    expect(ok.status).toBe(303);
    const again = await fetch(callback, { redirect: 'manual', headers: { cookie: cookieOf(start) } });
    expect(again.status).toBe(400);
  });

  it('needs a live customer session of the organization and a grant of the customer', async () => {
    const hal = await buyer([repoBenefit]);
    const ida = await buyer([repoBenefit]);
    expect((await fetch(`${daemon.url}/portal/${slug}/connect/github?grant_id=${hal.grantIds[0]}`, { redirect: 'manual' })).status).toBe(401);
    expect((await fetch(`${daemon.url}/portal/${slug}/connect/github?grant_id=${ida.grantIds[0]}&customer_session_token=${hal.token}`, { redirect: 'manual' })).status).toBe(404);
    expect((await fetch(`${daemon.url}/portal/${slug}/connect/discord?grant_id=${hal.grantIds[0]}&customer_session_token=${hal.token}`, { redirect: 'manual' })).status).toBe(400);
    expect((await fetch(`${daemon.url}/portal/${slug}/connect/slack?grant_id=${hal.grantIds[0]}&customer_session_token=${hal.token}`, { redirect: 'manual' })).status).toBe(404);
  });

  it('comes back to the portal with the reason when the customer declines', async () => {
    const jo = await buyer([repoBenefit]);
    const start = await fetch(`${daemon.url}/portal/${slug}/connect/github?grant_id=${jo.grantIds[0]}&customer_session_token=${jo.token}`, { redirect: 'manual' });
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
    const back = await fetch(`${daemon.url}/portal/oauth/github/callback?error=access_denied&state=${state}`, { redirect: 'manual', headers: { cookie: cookieOf(start) } });
    expect(back.status).toBe(303);
    expect(new URL(back.headers.get('location')!, daemon.url).searchParams.get('connect_error')).toBe('The GitHub connection was declined');
    expect((await grantRow(jo.grantIds[0]!)).properties.account_id).toBeUndefined();
  });
});

describe('customerPortal.benefitGrants.update (SDK 0.49)', () => {
  it('answers 401 without a customer session', async () => {
    expect((await v1Request(daemon.url, undefined, 'PATCH', `/customer-portal/benefit-grants/${randomUUID()}`, { benefit_type: 'custom' })).status).toBe(401);
  });

  it('moves a grant to another connected account: the old one loses access, the new one gets it', async () => {
    const kim = await buyer([repoBenefit]);
    const grantId = kim.grantIds[0]!;
    github.signIn({ id: 5006, login: 'kim-one' });
    await connect('github', grantId, kim.token);
    await until(() => grantRow(grantId), (row) => row.granted_at !== null, 'the grant');
    github.signIn({ id: 5007, login: 'kim-two' });
    // Connecting a second account from the callback names it on the grant too; here it is named through the SDK.
    await connect('github', grantId, kim.token);
    await until(async () => github.invitations('acme', 'private').map((i) => i.login), (logins) => logins.includes('kim-two') && !logins.includes('kim-one'), 'the move to kim-two');
    const answer = await portal().customerPortal.benefitGrants.update(
      { customerSession: kim.token },
      { id: grantId, customerBenefitGrantUpdate: { benefitType: 'github_repository', properties: { accountId: '5006' } } },
    );
    expect(answer).toMatchObject({ id: grantId, properties: { accountId: '5006' } });
    await until(async () => github.invitations('acme', 'private').map((i) => i.login), (logins) => logins.includes('kim-one') && !logins.includes('kim-two'), 'the move back to kim-one');
    expect((await until(() => grantRow(grantId), (row) => row.properties.granted_account_id === '5006', 'the grant to name kim-one')).granted_at).not.toBeNull();
  });

  it('refuses an account the customer has not connected, a wrong benefit type and another customer’s grant', async () => {
    const lea = await buyer([repoBenefit]);
    const max = await buyer([repoBenefit]);
    const update = (token: string, id: string, body: unknown) => portal().customerPortal.benefitGrants.update({ customerSession: token }, { id, customerBenefitGrantUpdate: body as never });
    await expect(update(lea.token, lea.grantIds[0]!, { benefitType: 'github_repository', properties: { accountId: '999' } })).rejects.toBeInstanceOf(HTTPValidationError);
    await expect(update(lea.token, lea.grantIds[0]!, { benefitType: 'discord', properties: { accountId: '999' } })).rejects.toBeInstanceOf(HTTPValidationError);
    await expect(update(lea.token, max.grantIds[0]!, { benefitType: 'github_repository', properties: { accountId: '5001' } })).rejects.toBeInstanceOf(ResourceNotFound);
    const raw = await v1Request(daemon.url, lea.token, 'PATCH', `/customer-portal/benefit-grants/${lea.grantIds[0]}`, { benefit_type: 'github_repository', properties: { account_id: '999' } });
    expect(raw.status).toBe(422);
    expect((await raw.json()).detail[0]).toMatchObject({ loc: ['body', 'properties', 'account_id'] });
  });
});
