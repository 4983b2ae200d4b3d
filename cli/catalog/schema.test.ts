import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { checkCatalog, checkSecrets, expandEnvironment } from './file.js';
import { catalogJsonSchema, ENV_REFERENCE_ONLY } from './schema.js';

const root = join(import.meta.dirname, '..', '..');

describe('the catalog file schema', () => {
  it('is the one checked into docs/catalog.schema.json (regenerate it with the line in docs/catalog-as-code.md)', () => {
    const checkedIn = JSON.parse(readFileSync(join(root, 'docs', 'catalog.schema.json'), 'utf8'));
    expect(checkedIn).toEqual(JSON.parse(JSON.stringify(catalogJsonSchema())));
  });

  it('accepts fixtures/catalog.example.yaml, every section and benefit type in it', () => {
    const raw = parse(readFileSync(join(root, 'fixtures', 'catalog.example.yaml'), 'utf8'));
    const env = { WEBHOOK_SECRET: 'whsec_x'.padEnd(40, 'x'), DISCORD_GUILD_TOKEN: 'token', GUIDE_FILE_ID: '00000000-0000-4000-8000-000000000000' };
    const { file, entries } = checkCatalog('catalog.example.yaml', expandEnvironment('catalog.example.yaml', raw, env));
    expect(new Set(file.benefits.map((benefit) => benefit.type))).toEqual(new Set(['custom', 'discord', 'github_repository', 'downloadables', 'license_keys', 'meter_credit']));
    expect(new Set(entries.map((entry) => entry.kind))).toEqual(new Set(['meter', 'custom_field', 'benefit', 'product', 'discount', 'webhook', 'tax_rate']));
    expect(file.organization).toBeDefined();
  });

  it('shows fixtures/catalog.example.yaml as the complete example of docs/catalog-as-code.md, to the letter', () => {
    const docs = readFileSync(join(root, 'docs', 'catalog-as-code.md'), 'utf8');
    const example = docs.split('## A complete example')[1].split('```yaml\n')[1].split('```')[0];
    expect(example).toBe(readFileSync(join(root, 'fixtures', 'catalog.example.yaml'), 'utf8'));
  });

  it('refuses a webhook secret or a Discord token written in the file: secrets come only from the environment', () => {
    expect(() => checkSecrets('c.yaml', { webhooks: [{ key: 'app', url: 'https://x.test', secret: 'whsec_literal_secret' }] })).toThrow(/secret at webhooks\[0\]\.secret/);
    expect(() => checkSecrets('c.yaml', { webhooks: [{ key: 'app', url: 'https://x.test', secret: 'prefix-${env:SECRET}' }] })).toThrow(/never from the file/);
    expect(() => checkSecrets('c.yaml', { benefits: [{ key: 'd', type: 'discord', properties: { guild_token: 'abc.def', role_id: '1' } }] })).toThrow(/benefits\[0\]\.properties\.guild_token/);
    expect(() => checkSecrets('c.yaml', { webhooks: [{ key: 'app', url: 'https://x.test', secret: '${env:SECRET}' }, { key: 'other', url: 'https://y.test' }] })).not.toThrow();
    // Editors are told too: the schema's secret fields take only an environment reference.
    const patterns = JSON.stringify(catalogJsonSchema()).split(JSON.stringify(ENV_REFERENCE_ONLY.source)).length - 1;
    expect(patterns).toBe(2);
  });

  it('refuses a missing environment variable by name, a reference to an undefined key, and a duplicate key', () => {
    expect(() => expandEnvironment('c.yaml', { webhooks: [{ secret: '${env:NOPE}' }] }, {})).toThrow(/NOPE/);
    expect(() => checkCatalog('c.yaml', { products: [{ key: 'pro', name: 'Pro plan', prices: [{ amount_type: 'free' }], benefits: ['ghost'] }] })).toThrow(/"ghost"/);
    expect(() => checkCatalog('c.yaml', { tax_rates: [{ key: 'de', country: 'DE', basis_points: 1 }, { key: 'de', country: 'FR', basis_points: 1 }] })).toThrow(/two tax_rates with the key "de"/);
    expect(() => checkCatalog('c.yaml', { products: [{ key: 'Bad Key', name: 'Pro plan', prices: [] }] })).toThrow(/does not match the catalog schema/);
  });
});
