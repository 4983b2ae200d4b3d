import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { tempConfigDir, till } from '../../testing/till.js';

const has = (shell: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${shell}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** The script `till completion SHELL` prints, saved to a file. */
async function script(shell: string): Promise<string> {
  const result = await till(['completion', shell], {});
  expect(result.exitCode, result.stderr).toBe(0);
  const path = join(tempConfigDir(), `till.${shell}`);
  writeFileSync(path, result.stdout);
  return path;
}

/** What bash offers after the words typed (the last one being completed), as the shell would call the function. */
async function bashOffers(path: string, words: string[]): Promise<string[]> {
  const program = `source ${path}; COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _till; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const { stdout } = await execa('bash', ['--norc', '-c', program]);
  return stdout.split('\n').filter(Boolean);
}

describe('till completion', () => {
  it('completes commands, catalog verbs and flags in bash, from the commands themselves', async () => {
    const path = await script('bash');
    expect(await bashOffers(path, ['till', 'pro'])).toEqual(['products']);
    expect(await bashOffers(path, ['till', 'products', ''])).toEqual(['create', 'list', 'get', 'update', 'archive']);
    expect(await bashOffers(path, ['till', 'products', 'create', '--pr'])).toEqual(['--price']);
    expect(await bashOffers(path, ['till', 'webhooks', 'deliveries', '--fa'])).toEqual(['--failed']);
    // A flag's value in between does not lose the place.
    expect(await bashOffers(path, ['till', 'checkouts', 'create', '--product', 'abc', '--cus'])).toEqual(['--customer', '--customer-email', '--customer-name', '--customer-country']);
    expect(await bashOffers(path, ['till', 'completion', ''])).toEqual(['bash', 'zsh', 'fish']);
    expect(await bashOffers(path, ['till', 'orgs', 'create', '--'])).toEqual(expect.arrayContaining(['--slug', '--server', '--json', '--help']));
  });

  it('offers every top-level command of `till --help`', async () => {
    const help = (await till(['--help'], {})).stdout;
    const commands = [...help.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((match) => match[1]);
    expect(commands.length).toBeGreaterThan(20);
    const offered = await bashOffers(await script('bash'), ['till', '']);
    expect(offered).toEqual(expect.arrayContaining(commands));
  });

  it.skipIf(!has('fish'))('completes in fish', async () => {
    const path = await script('fish');
    const complete = async (line: string) => (await execa('fish', ['--no-config', '-c', `source ${path}; complete -C '${line}'`])).stdout.split('\n').map((row) => row.split('\t')[0]);
    expect(await complete('till pro')).toEqual(['products']);
    expect(await complete('till products create --na')).toEqual(['--name']);
    expect(await complete('till completion ')).toEqual(['bash', 'fish', 'zsh']);
    // A flag's value is not a subcommand: an id is not completed (no files), a file flag's value is a file.
    expect(await complete('till products list --org ')).toEqual(['']);
    expect(await complete('till products list --org acme --li')).toEqual(['--limit']);
  });

  it.skipIf(!has('zsh'))('loads in zsh as a completion function for till', async () => {
    const path = await script('zsh');
    const { stdout } = await execa('zsh', ['-f', '-c', `autoload -U compinit; compinit -u -d ${tempConfigDir()}/zcompdump; source ${path}; print -r -- $_comps[till]`]);
    expect(stdout).toBe('_till');
  });

  it('refuses another shell with a usage error', async () => {
    const result = await till(['completion', 'tcsh'], {});
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('bash, zsh, fish');
  });
});
