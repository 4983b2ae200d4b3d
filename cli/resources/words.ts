/** "a product", "an access token". */
export const withArticle = (noun: string) => `${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun}`;

export const capitalize = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
