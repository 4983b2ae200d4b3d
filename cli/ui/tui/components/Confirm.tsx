import { Box, Text } from 'ink';
import { useHints } from '../hints.js';
import { useKeys } from '../keys.js';
import { useRef } from 'react';
import { useTheme } from '../theme.js';

export interface ConfirmProps {
  /** What will happen, one line each. */
  lines: string[];
  onConfirm(): void;
  onCancel(): void;
}

/** "Do this? y/n": y or Enter confirms once (a second press does nothing), n or Esc cancels. */
export function Confirm({ lines, onConfirm, onCancel }: ConfirmProps) {
  const theme = useTheme();
  const answered = useRef(false);
  useHints('y/Enter yes · n/Esc no');
  useKeys((input, key) => {
    if (answered.current) return;
    if (input === 'y' || input === 'Y' || key.return) {
      answered.current = true;
      onConfirm();
    } else if (input === 'n' || input === 'N' || key.escape) {
      answered.current = true;
      onCancel();
    }
  });
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={theme.color('yellow')} paddingX={1}>
      {lines.map((line, index) => (
        <Text key={index}>{line}</Text>
      ))}
      <Text bold>Confirm? y/Enter yes · n/Esc no</Text>
    </Box>
  );
}
