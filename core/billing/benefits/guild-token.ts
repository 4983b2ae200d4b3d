import { createHmac, timingSafeEqual } from 'node:crypto';

const TOKEN_TYPE = 'discord_guild_token';
const SNOWFLAKE = /^\d{1,20}$/;

/** The key guild tokens are signed with: derived from the daemon's secret, so it signs nothing else. */
export const guildTokenKey = (secret: string): Buffer => createHmac('sha256', secret).update(`till:${TOKEN_TYPE}`).digest();

const sign = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest('base64url');

/**
 * A signed token naming a Discord server (Polar's `guild_token`): minted once Till's bot is in the guild,
 * it proves which guild a discord benefit may grant roles in. It is not a credential to Discord.
 */
export function mintGuildToken(key: Buffer, guildId: string): string {
  if (!SNOWFLAKE.test(guildId)) throw new Error(`Not a Discord guild id: ${guildId}`);
  const payload = Buffer.from(JSON.stringify({ guild_id: guildId, type: TOKEN_TYPE })).toString('base64url');
  return `${payload}.${sign(key, payload)}`;
}

/** The guild id inside a token this daemon minted; undefined for anything else. */
export function verifyGuildToken(key: Buffer, token: string): string | undefined {
  const [payload, signature, ...rest] = token.split('.');
  if (!payload || !signature || rest.length > 0) return undefined;
  const expected = Buffer.from(sign(key, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  try {
    const data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { guild_id?: unknown; type?: unknown };
    return data.type === TOKEN_TYPE && typeof data.guild_id === 'string' && SNOWFLAKE.test(data.guild_id) ? data.guild_id : undefined;
  } catch {
    return undefined;
  }
}
