import type { Body } from '../input/data.js';
import type { Style } from '../output.js';
import type { Column } from '../ui/table.js';

/*
 * A catalog noun (`till products …`) described as data: its API path, the verbs the API allows, the flags that
 * write request fields, the filters of its list, its table. The nouns themselves are listed in catalog.ts; a noun's
 * spec loads when the noun is used, register.ts turns it into commander commands, and run.ts (loaded only when a
 * verb runs) carries the verb out.
 */

export type Verb = 'list' | 'get' | 'create' | 'update' | 'delete' | 'archive';
export type WriteVerb = 'create' | 'update';

/** A wire object as the API answers it. */
export type ApiObject = Record<string, unknown>;

interface FlagBase {
  /** Commander flags, e.g. '--name <name>'. */
  flags: string;
  description: string;
  /** The verbs that take the flag. */
  verbs: readonly WriteVerb[];
  /** The top-level body keys it writes (default: `field`): a requirement is met when --data has one, and a 422 on one names the flag. */
  keys?: readonly string[];
  /** Needed to create: asked for on a terminal, a usage error (exit 2) elsewhere. */
  required?: Requirement;
}

export interface Requirement {
  /** The question on a terminal. */
  question: string;
  /** Offered as a list instead of typed in. */
  choices?: readonly string[];
}

/** A flag given once; its value lands in `field`, or `apply` places it. */
export interface ValueFlag extends FlagBase {
  repeatable?: false;
  field?: string;
  apply?(value: string, body: Body, verb: WriteVerb): void;
}

/** A flag given any number of times; `apply` gets every value, in order. */
export interface RepeatFlag extends FlagBase {
  repeatable: true;
  apply(values: string[], body: Body, verb: WriteVerb): void;
}

export type FieldFlag = ValueFlag | RepeatFlag;

/** A flag that becomes a query parameter: `--x <v>` → x=v, a switch `--x` → x=true, `--no-x` → x=false. */
export interface FilterFlag {
  flags: string;
  description: string;
  param: string;
  /** Repeated as `param=a&param=b`. */
  repeatable?: boolean;
}

export interface ResourceSpec {
  /** The command: `till <noun> <verb>`. */
  noun: string;
  /** "product": messages and prompts. */
  singular: string;
  /** Collection path, with its trailing slash: '/v1/products/'. */
  path: string;
  verbs: readonly Verb[];
  fields: readonly FieldFlag[];
  filters?: readonly FilterFlag[];
  /** What `--sort` takes on the list (each also with a leading `-` for descending). */
  sorting?: readonly string[];
  /** `--metadata key=value` filters the list (`metadata[key]=value`). */
  metadataFilter?: boolean;
  /** The list takes `organization_id` (all but organizations themselves). */
  organizationScoped: boolean;
  columns: readonly Column<ApiObject>[];
  /**
   * Last touches to an update body; `current` reads the object (once, only if called). Benefits and custom
   * fields repeat the stored `type`, which the API requires.
   */
  prepareUpdate?(body: Body, current: () => Promise<ApiObject>): Promise<void>;
  /** Last touches to a create body (defaults the API insists on, such as an empty `properties`). */
  prepareCreate?(body: Body): void;
  /** The human rendering of a created object, when a record is not the right one (a token shown once). */
  describeCreated?(created: ApiObject, style: Style): string;
  /** The object inside a create's answer, when the answer wraps it (a token and its secret). */
  createdObject?(answer: ApiObject): ApiObject;
  /** Said on stderr after a create, about the object created (so it can name its id). */
  createdHint?(created: ApiObject): string;
  /** A list the API sets with a call of its own after the write: `POST {path}{id}/{subpath}` (a product's benefits). */
  subresource?: { flags: string; description: string; subpath: string; field: string };
  /** The objects are organizations: get/update take an id or a slug, and default to --org / the default organization. */
  organizationItem?: boolean;
  /** get/update/delete take `--external`: the argument is the object's external id (`{path}external/{id}`). */
  externalId?: boolean;
  /** Flags of `delete` that become query parameters (customers: --anonymize). */
  deleteFlags?: readonly FilterFlag[];
  /** No GET by id (files): `get` lists with this parameter set to the id. */
  getByListing?: string;
}
