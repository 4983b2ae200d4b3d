import type { RequestHandler } from 'express';
import type { AppDeps } from '../app.js';
import { signInProviders } from '../../core/auth/social.js';

/**
 * The pages' Content-Security-Policy allows forms to post to this daemon only (`form-action 'self'`), and
 * browsers apply that to the redirects a form post leads to. A "Continue with …" or "Link …" button posts
 * here and is redirected to the provider, so the pages that carry those buttons also allow the providers'
 * authorization origins, and nothing else.
 */
export function allowProviderForms(deps: AppDeps): RequestHandler {
  const known = new Map<string, string>();
  return async (_req, res, next) => {
    try {
      const policy = res.getHeader('Content-Security-Policy');
      if (typeof policy !== 'string') return next();
      const origins = await providerOrigins(deps, known);
      if (origins.length > 0) res.setHeader('Content-Security-Policy', policy.replace(/form-action 'self'/, `form-action 'self' ${origins.join(' ')}`));
      next();
    } catch (error) {
      next(error);
    }
  };
}

/**
 * Each provider's authorization origin, read off an authorization URL Better Auth builds for it (no request
 * is made). An OpenID provider whose discovery has not succeeded yet has none; its discovery URL's origin
 * stands in until it has, and is not remembered.
 */
async function providerOrigins(deps: AppDeps, known: Map<string, string>): Promise<string[]> {
  const providers = signInProviders(deps.auth.options);
  if (providers.every((provider) => known.has(provider.id))) return [...new Set(providers.map((provider) => known.get(provider.id)!))];
  const context = await deps.auth.$context;
  const origins = new Set<string>();
  for (const { id } of providers) {
    const cached = known.get(id);
    if (cached) {
      origins.add(cached);
      continue;
    }
    const provider = context.socialProviders.find((candidate) => candidate.id === id);
    try {
      if (!provider) throw new Error('not built yet');
      const url = await provider.createAuthorizationURL({ state: 'csp', codeVerifier: 'csp'.repeat(15), redirectURI: `${context.baseURL}/callback/${id}` });
      const origin = new URL(url).origin;
      known.set(id, origin);
      origins.add(origin);
    } catch {
      const discoveryUrl = oidcDiscoveryUrl(deps, id);
      if (discoveryUrl) origins.add(new URL(discoveryUrl).origin);
    }
  }
  return [...origins];
}

function oidcDiscoveryUrl(deps: AppDeps, providerId: string): string | undefined {
  const generic = deps.auth.options.plugins?.find((plugin) => plugin.id === 'generic-oauth') as
    | { options?: { config?: { providerId: string; discoveryUrl?: string }[] } }
    | undefined;
  return generic?.options?.config?.find((config) => config.providerId === providerId)?.discoveryUrl;
}
