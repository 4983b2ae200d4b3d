import { Polar } from '@polar-sh/sdk';
import type { DiscountCreate } from '@polar-sh/sdk/models/components/discountcreate.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimRedemption } from '../../core/billing/discounts/repository.js';
import { startTestDaemon, type TestDaemon } from '../testing/daemon.js';
import { createOrganization, v1Request, polarSdk } from '../testing/v1.js';
import { signUp, type SignedIn } from '../testing/auth-client.js';

let daemon: TestDaemon;
let owner: SignedIn;
let organizationId: string;

const sdk = (accessToken: string) => polarSdk(daemon.url, accessToken);

const v1 = (token: string | undefined, method: string, path: string, body?: unknown) => v1Request(daemon.url, token, method, path, body);

const discountRows = async () => Number((await daemon.db('discounts').count({ n: '*' }))[0].n);
const uniqueCode = () => `C${Math.random().toString(36).slice(2, 10).toUpperCase()}`;

beforeAll(async () => {
  daemon = await startTestDaemon();
  owner = await signUp(daemon.url, { name: 'Dana Discount' });
  organizationId = await createOrganization(owner, 'Deal Makers');
});
afterAll(async () => {
  await daemon?.close();
});

describe('/v1/discounts', () => {
  it('answers 401 Unauthorized to a call without credentials', async () => {
    const res = await v1(undefined, 'GET', '/discounts/');
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'Unauthorized' });
    expect((await v1(undefined, 'POST', '/discounts/', { name: 'X', type: 'percentage', duration: 'once', basis_points: 100 })).status).toBe(401);
  });

  it('round-trips every type and duration through the SDK, in the shape its validation picks', async () => {
    const polar = sdk(owner.token);
    const terms = [
      { type: 'fixed', amount: 500, currency: 'usd' },
      { type: 'percentage', basisPoints: 2550 },
    ] as const;
    const durations = [{ duration: 'once' }, { duration: 'forever' }, { duration: 'repeating', durationInMonths: 3 }] as const;
    for (const term of terms) {
      for (const duration of durations) {
        const name = `${term.type} ${duration.duration}`;
        const created = await polar.discounts.create({ name, organizationId, ...term, ...duration } as DiscountCreate);
        const fetched = await polar.discounts.get({ id: created.id });
        for (const discount of [created, fetched]) {
          expect(discount).toMatchObject({ name, type: term.type, duration: duration.duration, organizationId, redemptionsCount: 0, products: [], modifiedAt: null });
          if (term.type === 'fixed') expect(discount).toMatchObject({ amount: 500, currency: 'usd', amounts: { usd: 500 } });
          else expect(discount).toMatchObject({ basisPoints: 2550 });
          if (duration.duration === 'repeating') expect(discount).toMatchObject({ durationInMonths: 3 });
          else expect(discount).not.toHaveProperty('durationInMonths');
        }
      }
    }
    const page = await polar.discounts.list({ organizationId, limit: 100 });
    expect(page.result.items.map((d) => d.name)).toEqual(expect.arrayContaining(['fixed once', 'fixed forever', 'fixed repeating', 'percentage once', 'percentage forever', 'percentage repeating']));
  });

  it('takes a fixed amount in the multi-currency form and answers amount, currency and amounts', async () => {
    const created = await sdk(owner.token).discounts.create({ name: 'Euro off', type: 'fixed', duration: 'once', amounts: { eur: 700 }, organizationId });
    expect(created).toMatchObject({ amount: 700, currency: 'eur', amounts: { eur: 700 } });
    const raw = await (await v1(owner.token, 'GET', `/discounts/${created.id}`)).json();
    expect(raw).toMatchObject({ amount: 700, currency: 'eur', amounts: { eur: 700 }, starts_at: null, ends_at: null, max_redemptions: null, code: null });
    expect(raw).not.toHaveProperty('duration_in_months');
    expect(raw).not.toHaveProperty('basis_points');
  });

  it('keeps an amount per currency, answering the organization currency’s as the deprecated amount and currency', async () => {
    const polar = sdk(owner.token);
    const created = await polar.discounts.create({ name: 'Everywhere', type: 'fixed', duration: 'forever', amounts: { eur: 900, usd: 1000, gbp: 800 }, organizationId });
    // The organization charges in usd by default: that amount stands for the discount in the single-currency fields.
    expect(created).toMatchObject({ amount: 1000, currency: 'usd', amounts: { eur: 900, usd: 1000, gbp: 800 } });
    const raw = await (await v1(owner.token, 'GET', `/discounts/${created.id}`)).json();
    expect(raw.amounts).toEqual({ eur: 900, gbp: 800, usd: 1000 });

    // Without an amount in the default currency, the first currency in alphabetical order stands for it, as Polar's map.
    const noUsd = await polar.discounts.create({ name: 'Europe', type: 'fixed', duration: 'once', amounts: { gbp: 800, eur: 900 }, organizationId });
    expect(noUsd).toMatchObject({ amount: 900, currency: 'eur', amounts: { eur: 900, gbp: 800 } });

    // amounts replaces the whole map; the deprecated amount with a currency makes it that one currency, as Polar does.
    expect(await polar.discounts.update({ id: created.id, discountUpdate: { amounts: { usd: 1100, chf: 950 } } })).toMatchObject({ amount: 1100, currency: 'usd', amounts: { usd: 1100, chf: 950 } });
    const single = await polar.discounts.update({ id: created.id, discountUpdate: { amount: 700, currency: 'eur' } });
    expect(single).toMatchObject({ amount: 700, currency: 'eur', amounts: { eur: 700 } });
    expect(await daemon.db('discount_amounts').where({ discount_id: created.id })).toEqual([{ discount_id: created.id, currency: 'eur', amount: expect.anything() }]);

    await daemon.db.transaction((trx) => claimRedemption(trx, created.id));
    const refused = await polar.discounts.update({ id: created.id, discountUpdate: { amounts: { eur: 700, usd: 800 } } }).catch((e: unknown) => e);
    expect((refused as HTTPValidationError).detail?.map((d) => d.loc)).toEqual([['body', 'amounts']]);
    // Sending the amounts it already has is no change.
    expect(await polar.discounts.update({ id: created.id, discountUpdate: { amounts: { eur: 700 }, name: 'Still' } })).toMatchObject({ name: 'Still', amounts: { eur: 700 } });
  });

  it('stores starts_at, ends_at, max_redemptions and metadata and answers them with offsets', async () => {
    const created = await sdk(owner.token).discounts.create({
      name: 'Window',
      type: 'percentage',
      duration: 'forever',
      basisPoints: 1000,
      startsAt: new Date('2030-01-01T00:00:00Z'),
      endsAt: new Date('2030-02-01T00:00:00Z'),
      maxRedemptions: 50,
      metadata: { campaign: 'spring', tier: 2, public: true },
      organizationId,
    });
    const raw = await (await v1(owner.token, 'GET', `/discounts/${created.id}`)).json();
    expect(raw).toMatchObject({ starts_at: '2030-01-01T00:00:00.000Z', ends_at: '2030-02-01T00:00:00.000Z', max_redemptions: 50, metadata: { campaign: 'spring', tier: 2, public: true } });
  });

  it('keeps codes unique per organization whatever their case, and frees a code when its discount is deleted', async () => {
    const polar = sdk(owner.token);
    const code = uniqueCode();
    const first = await polar.discounts.create({ name: 'First', code, type: 'percentage', duration: 'once', basisPoints: 500, organizationId });
    expect(first.code).toBe(code);
    const clash = await polar.discounts
      .create({ name: 'Second', code: code.toLowerCase(), type: 'percentage', duration: 'once', basisPoints: 500, organizationId })
      .catch((e: unknown) => e);
    expect(clash).toBeInstanceOf(HTTPValidationError);
    expect((clash as HTTPValidationError).detail).toEqual([{ loc: ['body', 'code'], msg: 'Discount with this code already exists.', type: 'value_error' }]);

    const other = await signUp(daemon.url);
    const otherOrg = await createOrganization(other, 'Other Deals');
    expect((await sdk(other.token).discounts.create({ name: 'Theirs', code, type: 'fixed', duration: 'once', amount: 100, organizationId: otherOrg })).code).toBe(code);

    await polar.discounts.delete({ id: first.id });
    expect((await polar.discounts.create({ name: 'Reused', code: code.toLowerCase(), type: 'percentage', duration: 'once', basisPoints: 500, organizationId })).code).toBe(code.toLowerCase());
  });

  it('lets exactly one of several concurrent creates take a code', async () => {
    const code = uniqueCode();
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        v1(owner.token, 'POST', '/discounts/', { name: `Race ${i}`, code: i % 2 ? code : code.toLowerCase(), type: 'percentage', duration: 'once', basis_points: 100, organization_id: organizationId }),
      ),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([201, 422, 422, 422, 422, 422]);
    const list = await sdk(owner.token).discounts.list({ organizationId, query: code, limit: 100 });
    expect(list.result.items).toHaveLength(1);
  });

  it('refuses invalid discounts with a 422 naming the field, writing nothing', async () => {
    const base = { name: 'Bad', organization_id: organizationId };
    const cases: [unknown, (string | number)[]][] = [
      [{ ...base, type: 'percentage', duration: 'repeating', basis_points: 100 }, ['body', 'duration_in_months']],
      [{ ...base, type: 'percentage', duration: 'once', duration_in_months: 3, basis_points: 100 }, ['body', 'duration_in_months']],
      [{ ...base, type: 'percentage', duration: 'repeating', duration_in_months: 0, basis_points: 100 }, ['body', 'duration_in_months']],
      [{ ...base, type: 'percentage', duration: 'once', basis_points: 0 }, ['body', 'basis_points']],
      [{ ...base, type: 'percentage', duration: 'once', basis_points: 10001 }, ['body', 'basis_points']],
      [{ ...base, type: 'percentage', duration: 'once' }, ['body', 'basis_points']],
      [{ ...base, type: 'fixed', duration: 'once' }, ['body', 'amounts']],
      [{ ...base, type: 'fixed', duration: 'once', amount: 100, amounts: { usd: 100 } }, ['body', 'amounts']],
      [{ ...base, type: 'fixed', duration: 'once', amounts: {} }, ['body', 'amounts']],
      [{ ...base, type: 'fixed', duration: 'once', amounts: { usd: -1 } }, ['body', 'amounts', 'usd']],
      [{ ...base, type: 'fixed', duration: 'once', amount: -1 }, ['body', 'amount']],
      [{ ...base, type: 'fixed', duration: 'once', amount: 1.5 }, ['body', 'amount']],
      [{ ...base, type: 'fixed', duration: 'once', amount: 100, currency: 'USD' }, ['body', 'currency']],
      [{ ...base, type: 'fixed', duration: 'once', amounts: { USD: 100 } }, ['body', 'amounts']],
      [{ ...base, type: 'bogus', duration: 'once' }, ['body', 'type']],
      [{ ...base, type: 'percentage', duration: 'weekly', basis_points: 100 }, ['body', 'duration']],
      [{ ...base, type: 'percentage', duration: 'once', basis_points: 100, code: 'AB' }, ['body', 'code']],
      [{ ...base, type: 'percentage', duration: 'once', basis_points: 100, code: 'SAVE-10' }, ['body', 'code']],
      [{ ...base, type: 'percentage', duration: 'once', basis_points: 100, max_redemptions: 0 }, ['body', 'max_redemptions']],
      [{ ...base, type: 'percentage', duration: 'once', basis_points: 100, starts_at: '2030-02-01T00:00:00Z', ends_at: '2030-01-01T00:00:00Z' }, ['body', 'ends_at']],
      [{ ...base, type: 'percentage', duration: 'once', basis_points: 100, starts_at: '2030-02-01 00:00' }, ['body', 'starts_at']],
      [{ ...base, type: 'percentage', duration: 'once', basis_points: 100, products: ['8c1f6c1e-0000-4000-8000-000000000000'] }, ['body', 'products', 0]],
      [{ ...base, type: 'percentage', duration: 'once', basis_points: 100, metadata: { nested: { no: 1 } } }, ['body', 'metadata', 'nested']],
      [{ ...base, name: '', type: 'percentage', duration: 'once', basis_points: 100 }, ['body', 'name']],
    ];
    const before = await discountRows();
    for (const [body, loc] of cases) {
      const res = await v1(owner.token, 'POST', '/discounts/', body);
      const answer = await res.json();
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      expect(answer.error).toBe('RequestValidationError');
      expect(answer.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc);
    }
    expect(await discountRows()).toBe(before);
  });

  it('answers a refused create through the SDK as HTTPValidationError', async () => {
    const error = await sdk(owner.token)
      .discounts.create({ name: 'Too much', type: 'percentage', duration: 'once', basisPoints: 20000, organizationId })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail?.[0]?.loc).toEqual(['body', 'basis_points']);
  });

  it('updates name, code, window and amount, and clears what is set to null', async () => {
    const polar = sdk(owner.token);
    const created = await polar.discounts.create({
      name: 'Before', code: uniqueCode(), type: 'fixed', duration: 'repeating', durationInMonths: 2, amount: 300, currency: 'usd',
      endsAt: new Date('2031-01-01T00:00:00Z'), maxRedemptions: 10, organizationId,
    });
    const code = uniqueCode();
    const updated = await polar.discounts.update({
      id: created.id,
      discountUpdate: { name: 'After', code, endsAt: null, maxRedemptions: null, amount: 450, durationInMonths: 6, metadata: { k: 'v' } },
    });
    expect(updated).toMatchObject({ name: 'After', code, endsAt: null, maxRedemptions: null, amount: 450, currency: 'usd', amounts: { usd: 450 }, durationInMonths: 6, metadata: { k: 'v' } });
    expect(updated.modifiedAt).toBeInstanceOf(Date);
    const cleared = await polar.discounts.update({ id: created.id, discountUpdate: { code: null } });
    expect(cleared).toMatchObject({ code: null, name: 'After', amount: 450 });
  });

  it('refuses to change type or duration, or the amount of a redeemed discount, changing nothing', async () => {
    const polar = sdk(owner.token);
    const created = await polar.discounts.create({ name: 'Fixed terms', type: 'percentage', duration: 'once', basisPoints: 1000, organizationId });
    const refused = async (discountUpdate: Parameters<Polar['discounts']['update']>[0]['discountUpdate'], loc: string) => {
      const error = await polar.discounts.update({ id: created.id, discountUpdate }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HTTPValidationError);
      expect((error as HTTPValidationError).detail?.map((d) => d.loc)).toContainEqual(['body', loc]);
    };
    await refused({ type: 'fixed', name: 'Changed' }, 'type');
    await refused({ duration: 'forever', name: 'Changed' }, 'duration');
    await refused({ durationInMonths: 4, name: 'Changed' }, 'duration_in_months');
    await refused({ startsAt: new Date('2030-02-01T00:00:00Z'), endsAt: new Date('2030-01-01T00:00:00Z') }, 'ends_at');

    await daemon.db.transaction((trx) => claimRedemption(trx, created.id));
    await refused({ basisPoints: 1500, name: 'Changed' }, 'basis_points');
    const after = await polar.discounts.get({ id: created.id });
    expect(after).toMatchObject({ name: 'Fixed terms', type: 'percentage', duration: 'once', basisPoints: 1000, redemptionsCount: 1, modifiedAt: null });
    // What a redemption does not fix may still change.
    expect(await polar.discounts.update({ id: created.id, discountUpdate: { name: 'Renamed', basisPoints: 1000 } })).toMatchObject({ name: 'Renamed', redemptionsCount: 1 });
  });

  it('refuses an update to a code another discount holds', async () => {
    const polar = sdk(owner.token);
    const code = uniqueCode();
    await polar.discounts.create({ name: 'Holder', code, type: 'percentage', duration: 'once', basisPoints: 100, organizationId });
    const other = await polar.discounts.create({ name: 'Taker', type: 'percentage', duration: 'once', basisPoints: 100, organizationId });
    const error = await polar.discounts.update({ id: other.id, discountUpdate: { code: code.toLowerCase() } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail?.[0]?.loc).toEqual(['body', 'code']);
    expect((await polar.discounts.get({ id: other.id })).code).toBeNull();
  });

  it('lists with a name or code query, sorting and pages', async () => {
    const other = await signUp(daemon.url);
    const org = await createOrganization(other, 'List Deals');
    const polar = sdk(other.token);
    for (const [name, code, basisPoints] of [['Alpha sale', 'ALPHA1', 100], ['Beta sale', 'BETA22', 300], ['Gamma', 'SALE99', 200], ['100%_off', null, 10000]] as const) {
      await polar.discounts.create({ name, code, type: 'percentage', duration: 'once', basisPoints, organizationId: org });
    }
    const names = async (request: Parameters<Polar['discounts']['list']>[0]) => (await polar.discounts.list(request)).result.items.map((d) => d.name);
    expect(await names({ organizationId: org, query: 'SALE', sorting: ['name'] })).toEqual(['Alpha sale', 'Beta sale', 'Gamma']);
    expect(await names({ organizationId: org, query: '%_' })).toEqual(['100%_off']);
    expect(await names({ organizationId: org, sorting: ['-name'] })).toEqual(['Gamma', 'Beta sale', 'Alpha sale', '100%_off']);
    const page = await polar.discounts.list({ organizationId: org, sorting: ['name'], limit: 3, page: 2 });
    expect(page.result).toMatchObject({ items: [{ name: 'Gamma' }], pagination: { totalCount: 4, maxPage: 2 } });
    const bad = await v1(other.token, 'GET', `/discounts/?sorting=basis_points`);
    expect(bad.status).toBe(422);
  });

  it('deletes with 204, after which the discount is not found', async () => {
    const polar = sdk(owner.token);
    const created = await polar.discounts.create({ name: 'Short lived', type: 'percentage', duration: 'once', basisPoints: 100, organizationId });
    const res = await v1(owner.token, 'DELETE', `/discounts/${created.id}`);
    expect(res.status).toBe(204);
    await expect(polar.discounts.get({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(polar.discounts.delete({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(polar.discounts.update({ id: created.id, discountUpdate: { name: 'Back' } })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await polar.discounts.list({ organizationId, limit: 100 })).result.items.map((d) => d.id)).not.toContain(created.id);
  });

  it("answers ResourceNotFound for another organization's discount, and never lists it", async () => {
    const created = await sdk(owner.token).discounts.create({ name: 'Private', type: 'percentage', duration: 'once', basisPoints: 100, organizationId });
    const stranger = await signUp(daemon.url);
    await createOrganization(stranger, 'Stranger Co');
    const polar = sdk(stranger.token);
    await expect(polar.discounts.get({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(polar.discounts.update({ id: created.id, discountUpdate: { name: 'Hijacked' } })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(polar.discounts.delete({ id: created.id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await polar.discounts.list({ organizationId, limit: 100 })).result.items).toEqual([]);
    expect((await polar.discounts.list({ limit: 100 })).result.items).toEqual([]);
    const create = await v1(stranger.token, 'POST', '/discounts/', { name: 'Planted', type: 'percentage', duration: 'once', basis_points: 100, organization_id: organizationId });
    expect(create.status).toBe(422);
    expect((await sdk(owner.token).discounts.get({ id: created.id })).name).toBe('Private');
  });

  it('lets a member read discounts but not create, change or delete them', async () => {
    const created = await sdk(owner.token).discounts.create({ name: 'Members see', type: 'percentage', duration: 'once', basisPoints: 100, organizationId });
    const member = await signUp(daemon.url, { name: 'Milo Member' });
    await daemon.auth.api.addMember({ body: { userId: member.user.id, organizationId, role: 'member' } });
    const polar = sdk(member.token);
    expect((await polar.discounts.get({ id: created.id })).name).toBe('Members see');
    expect((await polar.discounts.list({ organizationId, limit: 100 })).result.items.map((d) => d.id)).toContain(created.id);
    for (const attempt of [
      () => polar.discounts.create({ name: 'Nope', type: 'percentage', duration: 'once', basisPoints: 100, organizationId }),
      () => polar.discounts.update({ id: created.id, discountUpdate: { name: 'Nope' } }),
      () => polar.discounts.delete({ id: created.id }),
    ]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SDKError);
      expect((error as SDKError).statusCode).toBe(403);
    }
    expect((await sdk(owner.token).discounts.get({ id: created.id })).name).toBe('Members see');
  });

  it('holds an access token to its scopes: discounts:read reads, discounts:write writes', async () => {
    const mint = async (scopes: string[]) =>
      (await (await v1(owner.token, 'POST', '/organization-access-tokens/', { comment: 'ci', scopes, organization_id: organizationId })).json()).token as string;
    const reader = sdk(await mint(['discounts:read']));
    const writer = sdk(await mint(['discounts:write']));
    const created = await writer.discounts.create({ name: 'By token', type: 'percentage', duration: 'once', basisPoints: 100 });
    expect(created.organizationId).toBe(organizationId);
    expect((await reader.discounts.get({ id: created.id })).name).toBe('By token');
    const error = await reader.discounts.create({ name: 'Reader', type: 'percentage', duration: 'once', basisPoints: 100 }).catch((e: unknown) => e);
    expect((error as SDKError).statusCode).toBe(403);
    const unrelated = sdk(await mint(['products:read']));
    expect(((await unrelated.discounts.get({ id: created.id }).catch((e: unknown) => e)) as SDKError).statusCode).toBe(403);
  });
});

describe('/openapi.json', () => {
  it('describes the discounts operations with their request schemas', async () => {
    const document = await (await fetch(`${daemon.url}/openapi.json`)).json();
    expect(Object.keys(document.paths['/v1/discounts'])).toEqual(['get', 'post']);
    expect(Object.keys(document.paths['/v1/discounts/{id}'])).toEqual(['get', 'patch', 'delete']);
    expect(JSON.stringify(document.paths['/v1/discounts'].post.requestBody)).toContain('"basis_points"');
    expect(document.paths['/v1/discounts/{id}'].delete['x-scopes']).toEqual(['discounts:write']);
  });
});

describe('discount bounds the database could not hold', () => {
  it('refuses years outside 1–9999 and max_redemptions past 2^31−1 with a 422', async () => {
    const base = { name: 'Bounds', type: 'percentage', duration: 'once', basis_points: 100 };
    for (const extra of [{ starts_at: '0000-01-01T00:00:00Z' }, { ends_at: '9999-12-31T23:59:59-14:00' }, { max_redemptions: 2 ** 31 }]) {
      const res = await v1(owner.token, 'POST', '/discounts/', { ...base, ...extra });
      expect([Object.keys(extra)[0], res.status]).toEqual([Object.keys(extra)[0], 422]);
    }
  });
});
