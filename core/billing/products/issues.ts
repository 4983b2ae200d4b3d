/** One item of a 422's detail, as Polar writes it. */
export interface Issue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** An issue with a field of the request body. */
export const issue = (loc: (string | number)[], msg: string): Issue => ({ loc: ['body', ...loc], msg, type: 'value_error' });

/** Issues for ids listed more than once (each would be attached twice). */
export function duplicateIssues(field: string, ids: readonly string[]): Issue[] {
  return ids.flatMap((id, index) => (ids.indexOf(id) === index ? [] : [issue([field, index], 'Listed more than once.')]));
}
