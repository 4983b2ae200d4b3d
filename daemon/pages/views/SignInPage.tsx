import { Alert } from '../components/Alert.js';
import { CaptchaSlot } from '../components/CaptchaSlot.js';
import { Field } from '../components/Field.js';
import { Layout } from '../components/Layout.js';
import { HiddenFields, PostButton } from '../components/PostButton.js';
import type { SignInProvider } from '../../../core/auth/social.js';
import type { FormErrors } from '../forms.js';
import { withNext } from '../safe-next.js';

export interface SignInPageProps {
  /** What was typed in the one field: an email address or a username. */
  email?: string;
  /** Local path to go to afterwards (already checked). */
  next: string;
  errors?: FormErrors;
  captchaProvider?: string;
  /** Why the user is here, e.g. after signing out. */
  notice?: string;
  /** Configured providers: a "Continue with …" button each. */
  providers?: SignInProvider[];
}

export function SignInPage({ email = '', next, errors = {}, captchaProvider, notice, providers = [] }: SignInPageProps) {
  const fields = errors.fields ?? {};
  return (
    <Layout title="Sign in" narrow>
      {errors.form ? (
        <Alert kind="error" id="form-error">
          {errors.form}
        </Alert>
      ) : notice ? (
        <Alert kind="info">{notice}</Alert>
      ) : null}
      <form method="post" action="/sign-in" className="card" aria-describedby={errors.form ? 'form-error' : undefined}>
        <HiddenFields fields={{ next }} />
        <Field
          name="email"
          label="Email address or username"
          value={email}
          error={fields.email}
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          required
        />
        <Field name="password" label="Password" type="password" error={fields.password} autoComplete="current-password" required />
        <CaptchaSlot provider={captchaProvider} error={fields.captcha} />
        <div className="actions">
          <button type="submit" className="button">
            Sign in
          </button>
        </div>
      </form>
      <ProviderButtons providers={providers} next={next} heading="Or sign in with" />
      <p>
        <a href="/forgot-password">Forgot your password?</a>
      </p>
      <p>
        New to Till? <a href={withNext('/sign-up', next)}>Create an account</a>
      </p>
    </Layout>
  );
}

/**
 * A "Continue with …" button per configured provider, on /sign-in and /sign-up alike: a plain form post to
 * /sign-in/social, which sends the browser to the provider. The first sign-in through a provider makes the
 * account, so the same button signs up.
 */
export function ProviderButtons({ providers, next, heading }: { providers: SignInProvider[]; next: string; heading: string }) {
  if (providers.length === 0) return null;
  return (
    <section aria-labelledby="providers-heading">
      <h2 id="providers-heading">{heading}</h2>
      <div className="actions">
        {providers.map((provider) => (
          <PostButton key={provider.id} action="/sign-in/social" fields={{ provider: provider.id, next }} label={`Continue with ${provider.name}`} variant="secondary" />
        ))}
      </div>
    </section>
  );
}
