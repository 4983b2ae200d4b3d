import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON logs on stdout. Credentials are never logged: request lines carry method, path and status only. */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'tilld' },
      redact: {
        paths: ['*.authorization', '*.cookie', '*.password', '*.token', '*.secret', '*["set-cookie"]'],
        censor: '[redacted]',
      },
    },
    destination ?? process.stdout,
  );
}
