import { APIError } from 'better-auth/api';
import { CoreError } from '../errors.js';
import type { TillAuth } from './auth.js';

export interface CreatedUser {
  id: string;
  email: string;
  name: string;
  role: string;
}

/** Creates an account from the server side (no session needed): `tilld users create`. */
export async function createUser(
  auth: TillAuth,
  input: { email: string; password: string; name?: string; admin?: boolean },
): Promise<CreatedUser> {
  const email = input.email.trim().toLowerCase();
  const name = input.name?.trim() || email.split('@')[0] || email;
  try {
    const { user } = await auth.api.createUser({
      body: { email, password: input.password, name, ...(input.admin ? { role: 'admin' } : {}) },
    });
    return { id: user.id, email: user.email, name: user.name, role: String(user.role ?? 'user') };
  } catch (error) {
    if (error instanceof APIError) {
      const kind = error.statusCode === 422 || /exists/i.test(error.message) ? 'conflict' : 'invalid';
      throw new CoreError(kind, String(error.body?.code ?? 'INVALID_USER'), error.message);
    }
    throw error;
  }
}
