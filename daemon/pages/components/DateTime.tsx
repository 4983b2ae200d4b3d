/** A date as `2025-03-04 13:37` in UTC (the server renders it, so the reader's zone is unknown; headers say UTC). */
export function DateTime({ value }: { value: Date }) {
  const iso = value.toISOString();
  return <time dateTime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 16)}`}</time>;
}
