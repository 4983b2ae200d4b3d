import { describe, expect, it } from 'vitest';
import { guildTokenKey, mintGuildToken, verifyGuildToken } from './guild-token.js';

const key = guildTokenKey('a-secret-of-at-least-thirty-two-characters');

describe('guild tokens', () => {
  it('verify to the guild id they were minted for', () => {
    expect(verifyGuildToken(key, mintGuildToken(key, '123456789'))).toBe('123456789');
  });

  it('do not verify under another secret, tampered with, or malformed', () => {
    const token = mintGuildToken(key, '123456789');
    expect(verifyGuildToken(guildTokenKey('another-secret-of-thirty-two-characters!'), token)).toBeUndefined();
    const [, signature] = token.split('.');
    const forged = `${Buffer.from(JSON.stringify({ guild_id: '987654321', type: 'discord_guild_token' })).toString('base64url')}.${signature}`;
    expect(verifyGuildToken(key, forged)).toBeUndefined();
    for (const bad of ['', 'abc', `${token}.extra`, token.slice(0, -2)]) expect(verifyGuildToken(key, bad)).toBeUndefined();
  });

  it('are refused for anything but a Discord id', () => {
    expect(() => mintGuildToken(key, 'not-a-snowflake')).toThrow();
  });
});
