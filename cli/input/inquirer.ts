// The three prompts till uses, named so the bundler leaves out the rest of @inquirer/prompts (its editor
// prompt alone pulls in iconv-lite). Loaded only through prompt.ts's dynamic import.
export { confirm, input, select } from '@inquirer/prompts';
