declare const __TILL_CLI_VERSION__: string | undefined;

/** The CLI's version; scripts/bundle-cli.mjs writes package.json's version in at bundle time. */
export const CLI_VERSION: string = typeof __TILL_CLI_VERSION__ === 'string' ? __TILL_CLI_VERSION__ : '0.0.0-dev';
