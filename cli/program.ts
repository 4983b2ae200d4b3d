import { Argument, Command as Commander } from 'commander';
import type { Command, CommandContext } from './context.js';
import { createOutput, type Env, type Streams } from './output.js';
import { CATALOG_NOUNS } from './resources/catalog.js';
import { CLI_VERSION } from './version.js';

export interface ProgramSetup {
  env: Env;
  streams: Streams;
  /** Receives the exit code a command returns. */
  setExitCode(code: number): void;
}

/**
 * The command tree. Each action imports its command module when it runs, so `till --help` and
 * `till --version` load commander and this file only.
 */
export function createProgram({ env, streams, setExitCode }: ProgramSetup): Commander {
  const program = new Commander('till')
    .description('Drive a Till server (tilld) from the terminal.')
    .version(CLI_VERSION, '-V, --version', 'print the CLI version')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', 'show help for a command')
    // Settings above and below are inherited by every subcommand added after them.
    .exitOverride()
    .configureOutput({
      writeOut: (text) => streams.stdout.write(text),
      writeErr: (text) => streams.stderr.write(text),
      // Usage errors are shown by main's one error handler (as JSON with --json).
      outputError: () => {},
    })
    .showSuggestionAfterError()
    .addHelpText('after', '\nEnvironment: TILL_SERVER, TILL_TOKEN, TILL_ORG, TILL_CONFIG_DIR, NO_COLOR. Exit codes and JSON shapes: docs/cli.md');

  const run =
    <Options extends { json?: boolean | string }>(load: () => Promise<Command<Options>>) =>
    async (options: Options) => {
      const command = await load();
      const context: CommandContext = { env, out: createOutput(streams, env, options) };
      setExitCode((await command(options, context)) ?? 0);
    };
  const server = ['--server <url>', 'tilld URL (default: TILL_SERVER, else the last server signed in to, else http://127.0.0.1:4010)'] as const;
  const json = ['--json [fields]', 'print JSON on stdout (errors as JSON on stderr); --json id,name keeps only those fields'] as const;

  program
    .command('login')
    .description('sign in with a one-time code approved in the browser')
    .option(...server)
    .option('--no-browser', 'do not open a browser, only print the URL')
    .option(...json)
    .action(run(async () => (await import('./commands/login.js')).login));

  program
    .command('logout')
    .description('end the session on the server and forget it here')
    .option(...server)
    .option('--local', 'only forget the stored session, without telling the server (for a server that is gone)')
    .option(...json)
    .action(run(async () => (await import('./commands/logout.js')).logout));

  program
    .command('whoami')
    .description('show who you are signed in as (exit 3 if not signed in)')
    .option(...server)
    .option(...json)
    .action(run(async () => (await import('./commands/whoami.js')).whoami));

  program
    .command('status')
    .description('check the server, its database, versions, who is signed in and how each organization takes payments')
    .option(...server)
    .option('--org <id|slug>', 'report the payment mode of this organization only (default: TILL_ORG, else the one `till orgs use` chose, else all of yours)')
    .option(...json)
    .action(run(async () => (await import('./commands/status.js')).status));

  // The test clock of a sandbox organization (docs/cli.md, "Test clock").
  const clock = program.command('clock').description('a sandbox organization’s test clock: show it, move it forward (renewals and retries run)');
  const org = ['--org <id|slug>', 'the organization (default: TILL_ORG, else the one `till orgs use` chose)'] as const;
  clock
    .command('show')
    .description('the organization’s current time and the jobs due next')
    .option(...server)
    .option(...org)
    .option(...json)
    .action(async (options) => setExitCode(await (await import('./commands/clock/clock.js')).showClock(options, env, streams)));
  clock
    .command('sandbox')
    .description('mark the organization as sandbox (on) so its clock can move, or not (off)')
    .argument('<state>', 'on or off')
    .option(...server)
    .option(...org)
    .option(...json)
    .action(async (state: string, options) => setExitCode(await (await import('./commands/clock/clock.js')).setSandbox(state, options, env, streams)));
  clock
    .command('advance')
    .description('move the clock forward by a step (+1month, +2w, +3d, +12h, +1year) or --to a date, running what falls due')
    .argument('[step]', 'how far: +30s, +15m, +12h, +3d, +2w, +1month, +1year')
    .option('--to <date>', 'move to this date or date-time (UTC unless it has an offset)')
    .option(...server)
    .option(...org)
    .option(...json)
    .action(async (step: string | undefined, options) => setExitCode(await (await import('./commands/clock/clock.js')).advanceClock(step, options, env, streams)));

  // Developer tools: the live event stream, fixtures and triggers (docs/listen.md, docs/fixtures.md).
  const inOrg = ['--org <id|slug>', 'the organization (default: TILL_ORG, else the one `till orgs use` chose, else your only one)'] as const;
  program
    .command('listen')
    .description('follow the organization’s events live; --forward-to POSTs each, signed, to a local URL')
    .option('--forward-to <url>', 'POST each event here exactly as a webhook endpoint gets it (Standard Webhooks signature)')
    .option('--events <types>', 'only these event types, comma-separated (e.g. order.paid,subscription.created)')
    .option('--print-secret', 'print the signing secret this profile forwards with, then exit')
    .option('--timeout <seconds>', 'give up when the server stays unreachable this long (default: 120)')
    .option(...server)
    .option(...inOrg)
    .option(...json)
    .action(async (options) => setExitCode(await (await import('./commands/listen/listen.js')).listen(options, env, streams)));

  // Revenue metrics (docs/metrics.md).
  program
    .command('metrics')
    .description('revenue, orders, MRR, subscriptions, checkouts and churn over a range: sparklines on a terminal, a table elsewhere')
    .option('--from <date>', 'first day (default: 30 days before --to)')
    .option('--to <date>', 'last day (default: today)')
    .option('--interval <interval>', 'hour, day, week, month or year (default day)')
    .option('--timezone <zone>', 'IANA timezone the days follow (default UTC)')
    .option('--product <id>', 'only this product (repeatable)', (value: string, previous: string[] = []) => [...previous, value])
    .option('--currency <code>', 'the currency to count (default: the organization’s)')
    .option(...server)
    .option(...inOrg)
    .option(...json)
    .action(async (options) => setExitCode(await (await import('./commands/metrics/metrics.js')).metrics(options, env, streams)));

  // The terminal UI (docs/tui.md): ink and react load only when it runs.
  const openUi = async (options: { server?: string; org?: string }) => setExitCode(await (await import('./commands/ui.js')).ui(options, env, streams));
  program
    .command('ui')
    .description('the full-screen terminal UI: dashboard, live events, orders, customers, subscriptions, catalog, webhooks (needs a terminal)')
    .option(...server)
    .option(...inOrg)
    .action(openUi);
  // `till` alone on a terminal opens the UI; off a terminal it still prints the help (exit 2).
  const parseAsync = program.parseAsync.bind(program);
  program.parseAsync = async (argv, parseOptions) => {
    if (argv?.length === 0 && streams.stdin.isTTY && streams.stdout.isTTY) {
      await openUi({});
      return program;
    }
    return parseAsync(argv, parseOptions);
  };

  const collect = (value: string, previous: string[] = []) => [...previous, value];
  program
    .command('fixtures')
    .description('run fixture files: scripted API requests that seed or exercise a server')
    .command('run')
    .description('run fixture files (JSON or YAML) in order, printing each step and the ids it created')
    .argument('<files...>', 'fixture files, e.g. fixtures/demo-store.json')
    .option('--skip <step>', 'do not run this step (repeatable)', collect)
    .option('--override <step:path=value>', 'set a value in a step’s params before it runs (repeatable)', collect)
    .option('--dry-run', 'show the requests without sending them')
    .option('--yes', 'write into an organization that is not a sandbox without asking (needed off a terminal)')
    .option(...server)
    .option(...inOrg)
    .option(...json)
    .action(async (files: string[], options) => setExitCode(await (await import('./commands/fixtures/run.js')).runFixturesCommand(files, options, env, streams)));
  program
    .command('trigger')
    .description('make a real event of a type happen (runs fixtures/triggers/EVENT.json); without EVENT, list the types')
    .argument('[event]', 'an event type, e.g. order.paid')
    .option('--wait <seconds>', 'how long to wait for the event once the fixture ran (default: 15)')
    .option('--yes', 'trigger in an organization that is not a sandbox without asking (needed off a terminal)')
    .option(...server)
    .option(...inOrg)
    .option(...json)
    .action(async (event: string | undefined, options) => setExitCode(await (await import('./commands/trigger/trigger.js')).trigger(event, options, env, streams)));

  // Catalog as code (docs/catalog-as-code.md): the organization's catalog from a file, planned, applied, pulled.
  program
    .command('plan')
    .description('show what `till apply FILE` would change, field by field (exit 0: nothing, 10: changes pending)')
    .argument('<file>', 'a catalog file (YAML or JSON), e.g. catalog.yaml')
    .option('--prune', 'also plan to archive the objects the file does not name')
    .option(...server)
    .option(...inOrg)
    .option(...json)
    .action(async (file: string, options) => setExitCode(await (await import('./commands/catalog/plan.js')).plan(file, options, env, streams)));
  program
    .command('apply')
    .description('make the organization match a catalog file: the plan, a confirmation (or --yes), then the changes')
    .argument('<file>', 'a catalog file (YAML or JSON)')
    .option('--yes', 'apply without asking (needed off a terminal)')
    .option('--prune', 'archive (never delete) the objects the file does not name')
    .option(...server)
    .option(...inOrg)
    .option(...json)
    .action(async (file: string, options) => setExitCode(await (await import('./commands/catalog/apply.js')).apply(file, options, env, streams)));
  program
    .command('pull')
    .description('write the organization’s catalog as a file (YAML; JSON for a .json output or --json)')
    .option('--output <file>', 'write here instead of stdout')
    .option(...server)
    .option(...inOrg)
    .option(...json)
    .action(async (options) => setExitCode(await (await import('./commands/catalog/pull.js')).pull(options, env, streams)));

  // The catalog: `till <noun> <verb>`. Only the nouns are declared here; a noun's verbs load when it is used.
  const catalog = new Set(CATALOG_NOUNS.map(({ noun }) => noun));
  for (const { noun, description } of CATALOG_NOUNS) program.command(noun).description(description);
  const withVerbs = async (command: Commander) => {
    if (!catalog.has(command.name()) || command.commands.length > 0) return;
    const { addVerbs } = await import('./resources/verbs.js');
    addVerbs(command, { env, streams, setExitCode });
  };
  program.hook('preSubcommand', (_program, command) => withVerbs(command));

  program
    .command('completion')
    .description('print a completion script for bash, zsh or fish (commands and flags); see docs/cli.md to install it')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .action(async (shell: string) => {
      const { completionScript, completionTree } = await import('./commands/completion/completion.js');
      streams.stdout.write(completionScript(shell, completionTree(program, { env, streams, setExitCode })));
    });

  // Commander's own `help <command>` shows a command's help without the hook above, so a noun would show no verbs.
  program
    .command('help')
    .argument('[command...]', 'a command, or a noun and its verb')
    .description('show help for a command')
    .action(async (names: string[]) => {
      let target = program;
      for (const name of names) {
        await withVerbs(target);
        const next = target.commands.find((command) => command.name() === name || command.aliases().includes(name));
        if (!next) return target.help({ error: true });
        target = next;
      }
      await withVerbs(target);
      target.help();
    });
  // That command replaces commander's at the top; nouns keep commander's (`till products help create`).
  program.helpCommand(false);

  return program;
}
