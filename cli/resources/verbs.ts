import type { Command as Commander } from 'commander';
import type { UploadOptions } from '../commands/files/upload.js';
import type { UseOptions } from '../commands/orgs/use.js';
import type { Env, Streams } from '../output.js';
import { common, registerResource, type Execute } from './register.js';
import { RESOURCES } from './specs/index.js';

export interface VerbSetup {
  env: Env;
  streams: Streams;
  setExitCode(code: number): void;
}

/**
 * Gives a catalog noun its verbs: the generic ones from its spec, and the two that are its own (`orgs use`,
 * `files upload`). Loaded by program.ts when the noun is used; each verb's code loads when it runs.
 */
export function addVerbs(noun: Commander, { env, streams, setExitCode }: VerbSetup): void {
  const spec = RESOURCES.find((candidate) => candidate.noun === noun.name());
  if (!spec) return;
  const execute: Execute = async (invocation) => {
    const { runVerb } = await import('./run.js');
    setExitCode(await runVerb(invocation, env, streams));
  };
  registerResource(noun, spec, execute);

  if (spec.noun === 'orgs') {
    common(
      noun
        .command('use')
        .description('make an organization the default for catalog commands on this server')
        .argument('[org]', 'organization slug or id (asked for on a terminal)')
        .option('--clear', 'forget the default organization instead'),
    ).action(async (org: string | undefined, options: UseOptions) => {
      const { useOrganization } = await import('../commands/orgs/use.js');
      setExitCode(await useOrganization(org, options, env, streams));
    });
  }

  if (spec.noun === 'files') {
    common(
      noun
        .command('upload')
        .description('upload a file: checksums computed here, a progress bar on a terminal')
        .argument('[path]', 'the file to upload')
        .option('--service <service>', 'what it is for: downloadable (default), product_media, organization_avatar')
        .option('--name <name>', 'name shown to customers (default: the file name)')
        .option('--mime-type <type>', 'MIME type (default: guessed from the extension)')
        .option('--file-version <version>', 'version label (e.g. 1.2.0)')
        .option('--org <id|slug>', 'the organization (default: TILL_ORG, else the one `till orgs use` chose)'),
    ).action(async (path: string | undefined, options: UploadOptions) => {
      const { uploadFile } = await import('../commands/files/upload.js');
      setExitCode(await uploadFile(path, options, env, streams));
    });
  }
}
