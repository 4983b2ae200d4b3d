import { Box, Text } from 'ink';
import { useHints } from '../hints.js';
import { useKeys } from '../keys.js';
import { useRef, useState } from 'react';
import { printable } from '../key-chunks.js';
import { useTheme } from '../theme.js';

export interface FormField {
  name: string;
  label: string;
  /** A choice field cycles through these with ←/→ (or space). */
  choices?: string[];
  initial?: string;
  hint?: string;
}

export interface FormProps {
  title: string;
  fields: FormField[];
  /** Turns the values into what to send, or throws an Error whose message is shown. */
  onSubmit(values: Record<string, string>): void;
  onCancel(): void;
  /** Shown under the form (e.g. the server's refusal). */
  error?: string;
  /** Start on the last field (back from a refusal: Enter sends again). */
  focusLast?: boolean;
}

/** Fields one per line: ↑/↓ or Tab moves, type to edit, ←/→ change a choice, Enter on the last field (or Ctrl-S) submits, Esc cancels. */
export function Form({ title, fields, onSubmit, onCancel, error, focusLast }: FormProps) {
  const theme = useTheme();
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(fields.map((f) => [f.name, printable(f.initial ?? f.choices?.[0] ?? '')])));
  const [focus, setFocus] = useState(focusLast ? fields.length - 1 : 0);
  const [localError, setLocalError] = useState<string | undefined>();
  // Keys can arrive faster than renders (a paste, a busy machine): each key works on what the previous one left,
  // kept here, not on the values of the last render.
  const latest = useRef({ values, focus });
  const submitting = useRef(false);
  useHints('↑/↓ move · ←/→ choose · Ctrl-S submit · Esc cancel');
  const moveTo = (next: number) => {
    latest.current.focus = next;
    setFocus(next);
  };

  useKeys((input, key) => {
    const { focus: at } = latest.current;
    const field = fields[at]!;
    const set = (value: string) => {
      latest.current.values = { ...latest.current.values, [field.name]: value };
      setValues(latest.current.values);
    };
    if (key.escape) return onCancel();
    if ((key.return && at === fields.length - 1) || (key.ctrl && input === 's')) {
      if (submitting.current) return;
      try {
        setLocalError(undefined);
        onSubmit(latest.current.values);
      } catch (problem) {
        setLocalError(problem instanceof Error ? problem.message : String(problem));
      }
      return;
    }
    if (key.return || key.downArrow || (key.tab && !key.shift)) return moveTo(Math.min(fields.length - 1, at + 1));
    if (key.upArrow || (key.tab && key.shift)) return moveTo(Math.max(0, at - 1));
    const current = latest.current.values[field.name] ?? '';
    if (field.choices) {
      const index = field.choices.indexOf(current);
      if (key.rightArrow || input === ' ') set(field.choices[(index + 1) % field.choices.length]!);
      else if (key.leftArrow) set(field.choices[(index - 1 + field.choices.length) % field.choices.length]!);
      return;
    }
    if (key.backspace || key.delete) return set(current.slice(0, -1));
    if (key.ctrl || key.meta || key.leftArrow || key.rightArrow) return;
    if (input) set(current + printable(input));
  });

  const shown = error ?? localError;
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text bold>{title}</Text>
      {fields.map((f, index) => (
        <Text key={f.name} wrap="truncate-end">
          <Text color={index === focus ? theme.color('cyan') : undefined} bold={index === focus}>
            {index === focus ? '› ' : '  '}
            {f.label.padEnd(16)}
          </Text>
          {f.choices ? `‹ ${values[f.name]} ›` : values[f.name]}
          {index === focus && !f.choices ? <Text inverse> </Text> : null}
          {f.hint ? <Text dimColor> {f.hint}</Text> : null}
        </Text>
      ))}
      {shown ? <Text color={theme.color('red')}>✗ {shown}</Text> : null}
      <Text dimColor>↑/↓ move · ←/→ choose · Enter on the last field or Ctrl-S submit · Esc cancel</Text>
    </Box>
  );
}
