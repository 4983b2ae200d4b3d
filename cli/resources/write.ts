import { CliError, EXIT } from '../errors.js';
import { readData, type Body } from '../input/data.js';
import { canPrompt, missingArgument, openPrompter } from '../input/prompt.js';
import { flagName, optionKey } from './fields.js';
import { done, fetchItem, named, type Target } from './item.js';
import { organizationId, type Session } from './session.js';
import type { ApiObject, FieldFlag, ResourceSpec, WriteVerb } from './spec.js';
import { withArticle } from './words.js';

/** create or update: the body from --data, then the flags over it, then what is still missing asked for. */
export async function runWrite(session: Session, spec: ResourceSpec, verb: WriteVerb, target: Target | undefined, options: Record<string, unknown>): Promise<number> {
  const body = typeof options.data === 'string' ? await readData(options.data, session.streams.stdin) : {};
  const fields = spec.fields.filter((field) => field.verbs.includes(verb));
  for (const field of fields) {
    const value = options[optionKey(field.flags)];
    if (value !== undefined) applyFlag(field, value as string | string[], body, verb);
  }
  const flagOf = (key: string): string | undefined => {
    if (key === 'organization_id') return '--org';
    const field = fields.find((candidate) => keysOf(candidate).includes(key));
    if (field) return flagName(field.flags);
    return spec.subresource?.field === key ? flagName(spec.subresource.flags) : undefined;
  };
  const related = spec.subresource ? (options[optionKey(spec.subresource.flags)] as string[] | undefined) : undefined;

  let written: ApiObject | undefined;
  if (verb === 'create') {
    // --org (like every flag) overrides --data; the defaults (TILL_ORG, `orgs use`) only fill a gap.
    if (spec.organizationScoped && (options.org !== undefined || body.organization_id === undefined)) {
      const org = await organizationId(session, options.org as string | undefined);
      if (org) body.organization_id = org;
    }
    await askForMissing(session, spec, fields, body);
    spec.prepareCreate?.(body);
    written = await session.api.request<ApiObject>('POST', spec.path, { body, flagOf });
  } else {
    if (Object.keys(body).length === 0 && !related) {
      throw new CliError('MISSING_ARGUMENT', `Nothing to change: give at least one flag or --data (see \`till ${spec.noun} update --help\`).`, EXIT.usage);
    }
    let current: Promise<ApiObject> | undefined;
    await spec.prepareUpdate?.(body, () => (current ??= fetchItem(session, spec, target!)));
    if (Object.keys(body).length > 0) written = await session.api.request<ApiObject>('PATCH', target!.path, { body, flagOf });
  }
  if (spec.subresource && related) {
    const id = written ? idOf(spec, written) : target!.id;
    try {
      written = await session.api.request<ApiObject>('POST', `${spec.path}${encodeURIComponent(id)}/${spec.subresource.subpath}`, { body: { [spec.subresource.field]: related }, flagOf });
    } catch (error) {
      // The object itself was written: say so, so that running the command again does not make a second one.
      if (!(error instanceof CliError) || verb !== 'create') throw error;
      throw new CliError(error.code, error.message, error.exitCode, `The ${spec.singular} was created as ${id}; fix ${flagName(spec.subresource.flags)} with \`till ${spec.noun} update ${id}\`.`);
    }
  }
  const result = written!;
  const object = spec.createdObject?.(result) ?? result;
  if (verb === 'create' && spec.describeCreated) session.out.result(result, (style) => spec.describeCreated!(result, style));
  else done(session, result, `${verb === 'create' ? 'Created' : 'Updated'} ${named(spec.singular, object)}.`);
  // The hint names the real object (`till checkouts open 3f…`), never a placeholder.
  if (verb === 'create' && spec.createdHint) session.out.note(session.out.style.err.yellow(spec.createdHint(object)));
  return EXIT.ok;
}

/** The id of a written object, also when the answer wraps it (a created token comes with its secret). */
const idOf = (spec: ResourceSpec, answer: ApiObject) => String((spec.createdObject?.(answer) ?? answer).id);

const keysOf = (field: FieldFlag) => field.keys ?? (field.repeatable || !field.field ? [] : [field.field]);

function applyFlag(field: FieldFlag, value: string | string[], body: Body, verb: WriteVerb): void {
  if (field.repeatable) field.apply(Array.isArray(value) ? value : [value], body, verb);
  else if (field.apply) field.apply(String(value), body, verb);
  else if (field.field) body[field.field] = value;
}

/** Required fields neither --data nor a flag gave: asked for on a terminal, else exit 2 naming every flag. */
async function askForMissing(session: Session, spec: ResourceSpec, fields: readonly FieldFlag[], body: Body): Promise<void> {
  const missing = fields.filter((field) => field.required && !keysOf(field).some((key) => body[key] !== undefined));
  if (missing.length === 0) return;
  if (!canPrompt(session.streams)) throw missingArgument(missing.map((field) => flagName(field.flags)), `create ${withArticle(spec.singular)}`);
  const prompter = await openPrompter(session.streams);
  for (const field of missing) {
    const { question, choices } = field.required!;
    const answer = choices
      ? await prompter.select(question, choices.map((value) => ({ value })))
      : await prompter.text(question, {
          // The answer goes through the flag's own parser, so a typo is caught while the question is open.
          validate: (value) => {
            try {
              applyFlag(field, value, {}, 'create');
              return true;
            } catch (error) {
              return error instanceof Error ? error.message : String(error);
            }
          },
        });
    applyFlag(field, answer, body, 'create');
  }
}
