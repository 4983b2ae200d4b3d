import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { CliError, EXIT } from '../errors.js';
import type { Env } from '../output.js';

/** Who a stored session belongs to, as seen when it was created. */
export interface ProfileUser {
  id: string;
  email: string;
  name: string;
}

/** One signed-in session, kept per server URL. */
export interface Profile {
  token: string;
  user?: ProfileUser;
  signed_in_at: string;
}

/** The organization catalog commands use on a server when --org does not name one (`till orgs use`). */
export interface DefaultOrganization {
  id: string;
  slug: string;
  name: string;
}

interface ConfigFile extends Record<string, unknown> {
  /** The server commands use when neither --server nor TILL_SERVER says otherwise: the last one signed in to. */
  current_server?: string;
  profiles?: Record<string, Profile>;
  /** Per server, apart from the session, so signing in again or out keeps the choice. */
  default_organizations?: Record<string, DefaultOrganization>;
}

export interface ProfileStore {
  /** The config file (which may not exist yet). */
  readonly path: string;
  currentServer(): string | undefined;
  get(server: string): Profile | undefined;
  /** Stores the session for `server` and makes that server the current one. */
  save(server: string, profile: Profile): void;
  forget(server: string): void;
  defaultOrganization(server: string): DefaultOrganization | undefined;
  /** Sets (or, with undefined, clears) the default organization for `server`. */
  setDefaultOrganization(server: string, organization: DefaultOrganization | undefined): void;
}

/** TILL_CONFIG_DIR, else $XDG_CONFIG_HOME/till, else ~/.config/till. */
export function configDir(env: Env): string {
  if (env.TILL_CONFIG_DIR) return resolve(env.TILL_CONFIG_DIR);
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'till');
}

/**
 * Opens the profile file (config.json, mode 0600, directory 0700) with `conf`.
 * conf drags in ajv and costs ~35 ms to load, so it is imported here, on demand: commands run with
 * TILL_TOKEN and TILL_SERVER, and `--help`/`--version`, never load it.
 */
export async function openProfileStore(env: Env): Promise<ProfileStore> {
  const { default: Conf } = await import('conf');
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let conf: InstanceType<typeof Conf<ConfigFile>>;
  try {
    conf = new Conf<ConfigFile>({
      cwd: dir,
      configName: 'config',
      configFileMode: 0o600,
      // Server URLs contain dots; keys are whole URLs, not paths.
      accessPropertiesByDotNotation: false,
      clearInvalidConfig: false,
    });
  } catch (error) {
    throw new CliError(
      'CONFIG_INVALID',
      `Cannot read ${join(dir, 'config.json')}: ${error instanceof Error ? error.message : String(error)}`,
      EXIT.error,
      'Fix or delete that file, then run `till login` again.',
    );
  }
  const profiles = (): Record<string, Profile> => {
    const value = conf.get('profiles');
    return value && typeof value === 'object' ? { ...value } : {};
  };
  const defaults = (): Record<string, DefaultOrganization> => {
    const value = conf.get('default_organizations');
    return value && typeof value === 'object' ? { ...value } : {};
  };
  return {
    path: conf.path,
    currentServer() {
      const value = conf.get('current_server');
      return typeof value === 'string' && value ? value : undefined;
    },
    get(server) {
      const profile = profiles()[server];
      return profile && typeof profile.token === 'string' && profile.token ? profile : undefined;
    },
    save(server, profile) {
      conf.set({ profiles: { ...profiles(), [server]: profile }, current_server: server });
    },
    forget(server) {
      const rest = profiles();
      delete rest[server];
      conf.set('profiles', rest);
    },
    defaultOrganization(server) {
      const organization = defaults()[server];
      return organization && typeof organization.id === 'string' && organization.id ? organization : undefined;
    },
    setDefaultOrganization(server, organization) {
      const rest = defaults();
      if (organization) rest[server] = organization;
      else delete rest[server];
      conf.set('default_organizations', rest);
    },
  };
}
