import { Box, Text } from 'ink';
import { useEffect, useMemo, useState } from 'react';
import { messageOf } from '../backend.js';
import { useHints } from '../hints.js';
import { scrolled, useKeys } from '../keys.js';
import { useTheme } from '../theme.js';
import { JsonView } from './JsonView.js';

/** A part of a detail view: a heading and its lines (an empty list says `empty`). */
export interface Section {
  title: string;
  lines: string[];
  empty?: string;
}

export interface DetailViewProps {
  title: string;
  /** Loads the sections (again on r). */
  load(): Promise<Section[]>;
  /** The object itself, shown as JSON on J. */
  raw: unknown;
  height: number;
  onClose(): void;
}

/** Sections loaded from the API, scrollable (↑/↓ j/k, PgUp/PgDn, g/G); J the raw JSON; r reload; Esc back. */
export function DetailView({ title, load, raw, height, onClose }: DetailViewProps) {
  const theme = useTheme();
  const [sections, setSections] = useState<Section[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [reload, setReload] = useState(0);
  const [top, setTop] = useState(0);
  const [json, setJson] = useState(false);
  useEffect(() => {
    let current = true;
    load()
      .then((loaded) => current && (setSections(loaded), setError(undefined)))
      .catch((problem: unknown) => current && setError(messageOf(problem)));
    return () => void (current = false);
  }, [reload]);
  const lines = useMemo(
    () =>
      (sections ?? []).flatMap((section) => [
        { text: section.title, heading: true },
        ...(section.lines.length ? section.lines : [section.empty ?? 'None.']).map((text) => ({ text: `  ${text}`, heading: false, dim: section.lines.length === 0 })),
      ]),
    [sections],
  );
  const visible = Math.max(1, height - 1);
  const last = Math.max(0, lines.length - visible);
  useHints(json ? undefined : '↑/↓ scroll · J raw JSON · r reload · Esc back');
  useKeys(
    (input, key) => {
      if (key.escape || input === 'q') return onClose();
      if (input === 'J') return setJson(true);
      if (input === 'r') return setReload((n) => n + 1);
      setTop((t) => scrolled(input, key, t, last, visible) ?? t);
    },
    { isActive: !json },
  );
  if (json) return <JsonView title={title} value={raw} height={height} onClose={() => setJson(false)} />;
  const shownTop = Math.min(top, last);
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        {title}
        {error ? <Text color={theme.color('red')}> ✗ {error}</Text> : sections ? null : <Text dimColor> loading…</Text>}
      </Text>
      {lines.slice(shownTop, shownTop + visible).map((line, index) => (
        <Text key={shownTop + index} bold={line.heading} dimColor={'dim' in line && line.dim} wrap="truncate-end">
          {line.text}
        </Text>
      ))}
    </Box>
  );
}
