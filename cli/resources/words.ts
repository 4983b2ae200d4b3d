/** "a product", "an access token". */
export const withArticle = (noun: string) => `${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun}`;

export const capitalize = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

/**
 * A count and its noun in agreement: "1 event", "2 events", "0 deliveries" (`plural` when adding an s is wrong).
 * Every count `till` prints goes through this one helper.
 */
export function count(n: number, singular: string, plural = pluralOf(singular)): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? singular : plural}`;
}

function pluralOf(singular: string): string {
  if (/[^aeiou]y$/.test(singular)) return `${singular.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(singular)) return `${singular}es`;
  return `${singular}s`;
}
