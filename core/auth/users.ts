import { z } from 'zod';
import { APIError } from 'better-auth/api';
import { CoreError } from '../errors.js';
import { PASSWORD_LENGTH, type TillAuth } from './auth.js';

export interface CreatedUser {
  id: string;
  email: string;
  name: string;
  role: string;
  /** Lowercased, as Better Auth stores it; absent when none was given. */
  username?: string;
}

export const CreateUserInput = z.object({
  email: z.string().trim().toLowerCase().pipe(z.email()),
  password: z.string(),
  name: z.string().trim().optional(),
  admin: z.boolean().optional(),
  /** Checked by Better Auth's username plugin (core/auth/usernames.ts). */
  username: z.string().trim().optional(),
});
export type CreateUserInput = z.input<typeof CreateUserInput>;

/**
 * Creates an account from the server side (no session needed): `tilld users create`.
 * The very first account of an installation becomes an admin whatever `admin` says (auth.ts).
 */
export async function createUser(auth: TillAuth, raw: CreateUserInput): Promise<CreatedUser> {
  const parsed = CreateUserInput.safeParse(raw);
  if (!parsed.success) throw new CoreError('invalid', 'INVALID_EMAIL', `Invalid email: ${raw.email}`);
  const input = parsed.data;
  // Better Auth's admin endpoint checks only the maximum length when called from the server.
  if (input.password.length < PASSWORD_LENGTH.min) {
    throw new CoreError('invalid', 'PASSWORD_TOO_SHORT', `Password too short: use at least ${PASSWORD_LENGTH.min} characters`);
  }
  if (input.password.length > PASSWORD_LENGTH.max) {
    throw new CoreError('invalid', 'PASSWORD_TOO_LONG', `Password too long: use at most ${PASSWORD_LENGTH.max} characters`);
  }
  const name = input.name || input.email.split('@')[0] || input.email;
  try {
    const { user } = await auth.api.createUser({
      body: {
        email: input.email,
        password: input.password,
        name,
        ...(input.admin ? { role: 'admin' } : {}),
        ...(input.username ? { data: { username: input.username } } : {}),
      },
    });
    const username = (user as { username?: unknown }).username;
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      role: String(user.role ?? 'user'),
      ...(typeof username === 'string' ? { username } : {}),
    };
  } catch (error) {
    if (!(error instanceof APIError) || error.statusCode >= 500) throw error;
    const code = String(error.body?.code ?? 'INVALID_USER');
    if (code === 'USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL' || code === 'USER_ALREADY_EXISTS') {
      throw new CoreError('conflict', 'USER_ALREADY_EXISTS', `An account with ${input.email} already exists`);
    }
    if (code === 'USERNAME_IS_ALREADY_TAKEN') throw new CoreError('conflict', code, error.message);
    throw new CoreError('invalid', code, error.message);
  }
}
