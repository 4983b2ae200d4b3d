import { Text } from 'ink';
import { useHints } from '../hints.js';
import { useKeys } from '../keys.js';
import { useRef, useState } from 'react';
import { printable } from '../key-chunks.js';
import { useTheme } from '../theme.js';

export interface TextFieldProps {
  label: string;
  initial?: string;
  /** Receives each change (the filter applies as one types). */
  onChange?(value: string): void;
  onSubmit(value: string): void;
  onCancel(): void;
  isActive?: boolean;
}

/** A one-line input: type, Backspace, Enter submits, Esc cancels. */
export function TextField({ label, initial = '', onChange, onSubmit, onCancel, isActive = true }: TextFieldProps) {
  const [value, setValueState] = useState(initial);
  // Keys can arrive faster than renders: each works on what the previous one left.
  const latest = useRef(initial);
  const setValue = (next: string) => {
    latest.current = next;
    setValueState(next);
  };
  const theme = useTheme();
  useHints(isActive ? 'type · Backspace · Enter done · Esc cancel' : undefined);
  useKeys(
    (input, key) => {
      const value = latest.current;
      if (key.escape) return onCancel();
      if (key.return) return onSubmit(value);
      if (key.backspace || key.delete) {
        const next = value.slice(0, -1);
        setValue(next);
        onChange?.(next);
        return;
      }
      if (key.ctrl || key.meta || key.tab || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow) return;
      // Keys that came together arrive here one by one (KeysProvider); control characters are never kept.
      const text = printable(input);
      if (text) {
        const next = value + text;
        setValue(next);
        onChange?.(next);
      }
    },
    { isActive },
  );
  return (
    <Text>
      <Text color={theme.color('cyan')}>{label}</Text> {value}
      {isActive ? <Text inverse> </Text> : null}
    </Text>
  );
}
