import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { till } from '../testing/till.js';
import { CATALOG_NOUNS } from './catalog.js';
import { RESOURCES } from './specs/index.js';

describe('catalog help', () => {
  it('lists every catalog noun in `till --help`', async () => {
    const result = await till(['--help'], {});
    for (const { noun } of CATALOG_NOUNS) expect(result.stdout).toMatch(new RegExp(`^ {2}${noun} `, 'm'));
    expect(result.stdout.match(/^ {2}help /gm)).toHaveLength(1);
  });

  it('has a spec for every noun it lists, and a noun for every spec', () => {
    expect(RESOURCES.map((spec) => spec.noun).sort()).toEqual(CATALOG_NOUNS.map(({ noun }) => noun).sort());
  });

  it('shows a noun\'s verbs with `till help <noun>`, `till <noun> --help` and `till help <noun> <verb>`', async () => {
    const viaHelp = await till(['help', 'products'], {});
    expect(viaHelp.exitCode).toBe(0);
    for (const verb of ['create', 'list', 'get', 'update', 'archive']) expect(viaHelp.stdout).toMatch(new RegExp(`^ {2}${verb} `, 'm'));
    const viaFlag = await till(['files', '--help'], {});
    expect(viaFlag.stdout).toMatch(/^ {2}upload \[options\] \[path\]/m);
    const verb = await till(['help', 'orgs', 'use'], {});
    expect(verb.stdout).toContain('Usage: till orgs use [options] [org]');
  });

  it('exits 2 with the noun\'s help for a noun without a verb, and suggests a verb for a typo', async () => {
    const bare = await till(['discounts'], {});
    expect(bare.exitCode).toBe(2);
    expect(bare.stderr).toContain('Usage: till discounts');
    const typo = await till(['discounts', 'craete'], {});
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain('(Did you mean create?)');
  });

  it('loads only the noun table at start-up: specs and verbs are in lazily loaded chunks', () => {
    const entry = readFileSync(join(import.meta.dirname, '..', '..', 'dist', 'cli', 'till.js'), 'utf8');
    expect(entry).toContain('// cli/resources/catalog.ts');
    expect(entry).not.toMatch(/\/\/ cli\/resources\/(specs|register|run|write)/);
    expect(entry).not.toContain('@inquirer');
  });
});
