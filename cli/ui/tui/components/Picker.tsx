import { Box, Text } from 'ink';
import { useRef, useState } from 'react';
import { useHints } from '../hints.js';
import { useKeys } from '../keys.js';
import { moveSelection } from './Table.js';

export interface PickerItem {
  label: string;
  hint?: string;
}

export interface PickerProps {
  title: string;
  items: PickerItem[];
  onPick(index: number): void;
  onCancel(): void;
  /** Lines it may use. */
  height: number;
}

/** Choose one of a list: ↑/↓ (j/k) move, Enter picks once, Esc cancels. */
export function Picker({ title, items, onPick, onCancel, height }: PickerProps) {
  const [choice, setChoice] = useState(0);
  const picked = useRef(false);
  useHints('↑/↓ choose · Enter pick · Esc cancel');
  useKeys((input, key) => {
    if (picked.current) return;
    if (key.escape) {
      picked.current = true;
      return onCancel();
    }
    if (key.return && items[choice]) {
      picked.current = true;
      return onPick(choice);
    }
    setChoice(moveSelection(choice, items.length, input, key, Math.max(1, height - 3)));
  });
  const visible = Math.max(1, height - 2);
  const top = Math.max(0, Math.min(choice - Math.floor(visible / 2), items.length - visible));
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        {title}
      </Text>
      {items.slice(top, top + visible).map((item, index) => (
        <Text key={top + index} inverse={top + index === choice} wrap="truncate-end">
          {top + index === choice ? '› ' : '  '}
          {item.label}
          {item.hint ? <Text dimColor> {item.hint}</Text> : null}
        </Text>
      ))}
      <Text dimColor>↑/↓ choose · Enter pick · Esc cancel</Text>
    </Box>
  );
}
