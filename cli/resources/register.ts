import type { Command as Commander } from 'commander';
import type { ResourceSpec, Verb } from './spec.js';
import { withArticle } from './words.js';

/** One verb to carry out, as commander parsed it. */
export interface Invocation {
  spec: ResourceSpec;
  verb: Verb;
  /** The positional argument of get/update/delete/archive, when given. */
  id?: string;
  options: Record<string, unknown>;
}

export type Execute = (invocation: Invocation) => Promise<void>;

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

const SERVER = ['--server <url>', 'tilld URL (default: TILL_SERVER, else the last server signed in to)'] as const;
const JSON_FLAG = ['--json [fields]', 'print JSON on stdout (errors as JSON on stderr); --json id,name keeps only those fields'] as const;
const ORG = ['--org <id|slug>', 'the organization (default: TILL_ORG, else the one `till orgs use` chose)'] as const;

/** Adds `till <noun> <verb>` to the noun's command for every verb of the spec; `execute` loads the code that runs them. */
export function registerResource(noun: Commander, spec: ResourceSpec, execute: Execute): Commander {
  const argument = spec.organizationItem ? '[org]' : '[id]';
  const add = (verb: Verb, description: string, positional: boolean) => {
    const command = noun.command(verb).description(description);
    if (positional) command.argument(argument, spec.organizationItem ? 'organization slug or id (default: --org, TILL_ORG, else the one `till orgs use` chose)' : `${spec.singular} id${spec.externalId ? ' (or external id with --external)' : ''}`);
    command.action(async (...args: unknown[]) => {
      const self = args.at(-1) as Commander;
      await execute({ spec, verb, id: positional ? (args[0] as string | undefined) : undefined, options: self.opts() });
    });
    return command;
  };

  for (const verb of spec.verbs) {
    if (verb === 'list') {
      const command = add('list', `list ${spec.noun.replace('-', ' ')}`, false);
      for (const filter of spec.filters ?? []) {
        if (filter.repeatable) command.option(filter.flags, filter.description, collect);
        else command.option(filter.flags, filter.description);
      }
      if (spec.metadataFilter) command.option('--metadata <key=value>', 'only those with this metadata (repeatable: values of one key OR\'ed, keys AND\'ed)', collect);
      if (spec.sorting) command.option('--sort <field>', `order by ${spec.sorting.join(', ')}; -field for descending (repeatable)`, collect);
      if (spec.organizationScoped) command.option(...ORG);
      command
        .option('--limit <n>', 'how many per page, 1–100 (default 10; 100 with --all)')
        .option('--page <n>', 'which page, from 1')
        .option('--all', 'follow the pages to the end');
      common(command);
      continue;
    }
    const positional = verb !== 'create';
    const command = add(verb, verbDescription(verb, spec), positional);
    if (verb === 'create' || verb === 'update') {
      for (const field of spec.fields) {
        if (!field.verbs.includes(verb)) continue;
        if (field.repeatable) command.option(field.flags, field.description, collect);
        else command.option(field.flags, field.description);
      }
      if (spec.subresource) command.option(spec.subresource.flags, spec.subresource.description, collect);
      command.option('--data <@file|-|json>', 'the request body as JSON: @file.json, - for stdin, or inline; flags override its fields');
      if (verb === 'create' && spec.organizationScoped) command.option(...ORG);
    }
    if (verb === 'delete') for (const flag of spec.deleteFlags ?? []) command.option(flag.flags, flag.description);
    if (verb === 'delete' || verb === 'archive') command.option('--yes', `${verb} without asking (needed off a terminal)`);
    if (spec.externalId && (verb === 'get' || verb === 'update' || verb === 'delete')) command.option('--external', 'the argument is the external id');
    if (spec.organizationItem) command.addOption(command.createOption(ORG[0], ORG[1]).hideHelp());
    common(command);
  }
  return noun;
}

function verbDescription(verb: Exclude<Verb, 'list'>, spec: ResourceSpec): string {
  const one = withArticle(spec.singular);
  switch (verb) {
    case 'get':
      return `show ${one}`;
    case 'create':
      return `create ${one} (missing required flags are asked for on a terminal)`;
    case 'update':
      return `change ${one}: only the fields given`;
    case 'delete':
      return `delete ${one}`;
    case 'archive':
      return `archive ${one} (it stays readable, and can no longer be bought)`;
  }
}

/** --server and --json, last in every verb's help. */
export function common(command: Commander): Commander {
  return command.option(...SERVER).option(...JSON_FLAG);
}
