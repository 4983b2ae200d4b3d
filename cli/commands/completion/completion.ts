import type { Command as Commander } from 'commander';
import { CliError, EXIT } from '../../errors.js';
import type { Env, Streams } from '../../output.js';
import { addVerbs } from '../../resources/verbs.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** One command of the tree: its path ("products create"), subcommands and flags. */
export interface CompletionNode {
  path: string;
  /** Subcommands, and the values a positional argument takes (`completion bash|zsh|fish`). */
  commands: { name: string; description: string }[];
  /** takesValue: the flag needs a value (`--org <id>`), not one that may have one (`--json [fields]`). */
  flags: { flag: string; short?: string; description: string; takesValue: boolean; file?: boolean }[];
}

/**
 * Every command and flag of the program, read from commander itself (the catalog nouns' verbs are added first:
 * they are otherwise loaded only when a noun is used), so the completion cannot drift from the commands.
 */
export function completionTree(program: Commander, setup: { env: Env; streams: Streams; setExitCode(code: number): void }): CompletionNode[] {
  const nodes: CompletionNode[] = [];
  const visit = (command: Commander, path: string) => {
    if (path !== '' && !path.includes(' ') && command.commands.length === 0) addVerbs(command, setup);
    const commands = command.commands.filter((sub) => !(sub as unknown as { _hidden?: boolean })._hidden);
    const flags = command.options
      .filter((option) => !option.hidden && option.long)
      .map((option) => ({ flag: option.long!, short: option.short ?? undefined, description: option.description, takesValue: option.required, file: /<[^>]*file[^>]*>/.test(option.flags) }));
    flags.push({ flag: '--help', short: '-h', description: 'show help', takesValue: false, file: false });
    const values = (command.registeredArguments[0]?.argChoices ?? []).map((value) => ({ name: value, description: value }));
    nodes.push({ path, commands: [...commands.map((sub) => ({ name: sub.name(), description: sub.description() })), ...values], flags });
    for (const sub of commands) visit(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  visit(program, '');
  return nodes;
}

/** `till completion bash|zsh|fish`: a completion script for the shell, on stdout (docs/cli.md says where it goes). */
export function completionScript(shell: string, nodes: CompletionNode[]): string {
  switch (shell) {
    case 'bash':
      return bash(nodes);
    case 'zsh':
      return zsh(nodes);
    case 'fish':
      return fish(nodes);
    default:
      throw new CliError('INVALID_ARGUMENT', `No completion for the shell "${shell}": expected ${SHELLS.join(', ')}.`, EXIT.invalid);
  }
}

/** A single-quoted shell word ('it'\''s'). */
const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
const paths = (nodes: CompletionNode[]) => nodes.filter((node) => node.path !== '').map((node) => node.path);

function bash(nodes: CompletionNode[]): string {
  const cases = nodes
    .map((node) => `    ${quote(node.path)}) commands=${quote(node.commands.map((c) => c.name).join(' '))}; flags=${quote(node.flags.flatMap((f) => [f.flag, ...(f.short ? [f.short] : [])]).join(' '))} ;;`)
    .join('\n');
  return `# till completion for bash. Load it with:  source <(till completion bash)
# or save it:  till completion bash > ~/.local/share/bash-completion/completions/till
_till() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" next word i commands="" flags=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ $word == -* ]] && continue
    next="\${path:+$path }$word"
    case "$next" in
${paths(nodes).map((path) => `      ${quote(path)}) path="$next" ;;`).join('\n')}
    esac
  done
  case "$path" in
${cases}
  esac
  if [[ $cur == -* || -z $commands ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    [[ -z $commands && $cur != -* ]] && COMPREPLY=($(compgen -f -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$commands" -- "$cur"))
  fi
}
complete -o default -F _till till
`;
}

function zsh(nodes: CompletionNode[]): string {
  const item = (name: string, description: string) => quote(`${name.replace(/:/g, '\\:')}:${oneLine(description)}`);
  const cases = nodes
    .map(
      (node) =>
        `    (${quote(node.path)}) subs=(${node.commands.map((c) => item(c.name, c.description)).join(' ')}); flags=(${node.flags.map((f) => item(f.flag, f.description)).join(' ')}) ;;`,
    )
    .join('\n');
  return `#compdef till
# till completion for zsh. Load it with:  source <(till completion zsh)
# or save it as _till in a directory of your $fpath.
_till() {
  local cmdpath="" next word i
  local -a subs flags
  for ((i = 2; i < CURRENT; i++)); do
    word=\${words[i]}
    [[ $word == -* ]] && continue
    next="\${cmdpath:+$cmdpath }$word"
    case "$next" in
${paths(nodes).map((path) => `      (${quote(path)}) cmdpath="$next" ;;`).join('\n')}
    esac
  done
  case "$cmdpath" in
${cases}
  esac
  if [[ \${words[CURRENT]} == -* ]]; then
    _describe -t flags 'flag' flags
  elif (( \${#subs} )); then
    _describe -t commands 'command' subs
  else
    _files
  fi
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _till "$@"; else compdef _till till; fi
`;
}

function fish(nodes: CompletionNode[]): string {
  const lines = [
    '# till completion for fish. Load it with:  till completion fish | source',
    '# or save it:  till completion fish > ~/.config/fish/completions/till.fish',
    `set -g __till_paths ${paths(nodes).map((path) => quote(`till ${path}`)).join(' ')}`,
    'function __till_path',
    "    set -l path 'till'",
    '    for word in (commandline -opc)[2..-1]',
    "        string match -q -- '-*' $word; and continue",
    '        if contains -- "$path $word" $__till_paths',
    '            set path "$path $word"',
    '        end',
    '    end',
    '    echo $path',
    'end',
    'complete -c till -f',
  ];
  for (const node of nodes) {
    const condition = quote(`test (__till_path) = ${quote(node.path ? `till ${node.path}` : 'till')}`);
    for (const command of node.commands) lines.push(`complete -c till -n ${condition} -a ${quote(command.name)} -d ${quote(oneLine(command.description))}`);
    for (const flag of node.flags) {
      const short = flag.short ? ` -s ${flag.short.replace(/^-/, '')}` : '';
      lines.push(`complete -c till -n ${condition} -l ${flag.flag.replace(/^--/, '')}${short}${flag.takesValue ? (flag.file ? ' -r -F' : ' -x') : ''} -d ${quote(oneLine(flag.description))}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
