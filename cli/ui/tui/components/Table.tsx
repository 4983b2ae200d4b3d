import { Box, Text } from 'ink';

export interface Column<Row> {
  header: string;
  width: number;
  value(row: Row): string;
}

export interface TableProps<Row> {
  columns: Column<Row>[];
  rows: Row[];
  selected: number;
  height: number;
  empty: string;
}

const fit = (text: string, width: number) => (text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text.padEnd(width));

/** Fixed-width columns, the selected row inverted, scrolled so the selection stays in view. */
export function Table<Row>({ columns, rows, selected, height, empty }: TableProps<Row>) {
  const visible = Math.max(1, height - 1);
  const top = Math.max(0, Math.min(selected - Math.floor(visible / 2), rows.length - visible));
  return (
    <Box flexDirection="column">
      <Text bold>{columns.map((column) => fit(column.header, column.width)).join(' ').trimEnd()}</Text>
      {rows.length === 0 ? <Text dimColor>{empty}</Text> : null}
      {rows.slice(top, top + visible).map((row, index) => {
        const isSelected = top + index === selected;
        // Only the selected row's padding shows (inverted): ink's output costs per character, spaces included.
        const padded = columns.map((column) => fit(column.value(row), column.width)).join(' ');
        const line = isSelected ? padded : padded.trimEnd();
        return (
          <Text key={top + index} inverse={isSelected} wrap="truncate-end">
            {line}
          </Text>
        );
      })}
    </Box>
  );
}

/** Moves a selection by a key: ↑/↓ j/k, Home/End g/G; returns the new index. */
export function moveSelection(current: number, count: number, input: string, key: { upArrow: boolean; downArrow: boolean; pageUp: boolean; pageDown: boolean }, page = 10): number {
  if (count === 0) return 0;
  if (key.downArrow || input === 'j') return Math.min(count - 1, current + 1);
  if (key.upArrow || input === 'k') return Math.max(0, current - 1);
  if (key.pageDown) return Math.min(count - 1, current + page);
  if (key.pageUp) return Math.max(0, current - page);
  if (input === 'g') return 0;
  if (input === 'G') return count - 1;
  return current;
}
