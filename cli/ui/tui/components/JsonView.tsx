import { Box, Text } from 'ink';
import { useHints } from '../hints.js';
import { scrolled, useKeys } from '../keys.js';
import { useMemo, useState } from 'react';
import { useTheme, type Theme } from '../theme.js';

export interface JsonViewProps {
  title: string;
  value: unknown;
  height: number;
  onClose(): void;
}

/** Pretty-printed JSON, scrollable (↑/↓ j/k, PgUp/PgDn, g/G), keys and values coloured when colour is on. */
export function JsonView({ title, value, height, onClose }: JsonViewProps) {
  const theme = useTheme();
  const lines = useMemo(() => JSON.stringify(value, null, 2).split('\n'), [value]);
  const visible = Math.max(1, height - 2);
  const last = Math.max(0, lines.length - visible);
  const [top, setTop] = useState(0);
  useHints('↑/↓ PgUp/PgDn g/G scroll · Esc back');
  useKeys((input, key) => {
    if (key.escape || input === 'q' || key.return) return onClose();
    setTop((t) => scrolled(input, key, t, last, visible) ?? t);
  });
  return (
    <Box flexDirection="column">
      <Text bold>
        {title} <Text dimColor>lines {top + 1}–{Math.min(lines.length, top + visible)} of {lines.length}</Text>
      </Text>
      {lines.slice(top, top + visible).map((line, index) => (
        <JsonLine key={top + index} line={line} theme={theme} />
      ))}
    </Box>
  );
}

const KEY_VALUE = /^(\s*)("(?:[^"\\]|\\.)*")(: )?(.*)$/;

function JsonLine({ line, theme }: { line: string; theme: Theme }) {
  const match = KEY_VALUE.exec(line);
  if (!match || !match[3]) return <Text wrap="truncate-end">{colourValue(line, theme)}</Text>;
  return (
    <Text wrap="truncate-end">
      {match[1]}
      <Text color={theme.color('cyan')}>{match[2]}</Text>
      {match[3]}
      {colourValue(match[4]!, theme)}
    </Text>
  );
}

function colourValue(text: string, theme: Theme) {
  const trimmed = text.trim().replace(/,$/, '');
  if (trimmed.startsWith('"')) return <Text color={theme.color('green')}>{text}</Text>;
  if (/^-?\d/.test(trimmed)) return <Text color={theme.color('yellow')}>{text}</Text>;
  if (trimmed === 'true' || trimmed === 'false' || trimmed === 'null') return <Text color={theme.color('magenta')}>{text}</Text>;
  return text;
}
