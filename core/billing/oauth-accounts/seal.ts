import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** The key tokens are sealed with: derived from the daemon's secret, so it seals nothing else. */
export const tokenSealKey = (secret: string): Buffer => createHmac('sha256', secret).update('till:oauth_account_tokens').digest();

/** AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>`, base64url. */
export function seal(key: Buffer, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
}

/** The sealed text, or undefined when it was sealed with another key (the secret changed) or altered. */
export function unseal(key: Buffer, sealed: string): string | undefined {
  const [version, iv, tag, data, ...rest] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || data === undefined || rest.length > 0) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
