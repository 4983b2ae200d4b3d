import { USERNAME_LENGTH } from '../../../core/auth/usernames.js';
import { Alert } from '../components/Alert.js';
import { CaptchaSlot } from '../components/CaptchaSlot.js';
import { Field } from '../components/Field.js';
import { Layout } from '../components/Layout.js';
import { HiddenFields } from '../components/PostButton.js';
import type { FormErrors } from '../forms.js';
import { withNext } from '../safe-next.js';
import type { SignInProvider } from '../../../core/auth/social.js';
import { ProviderButtons } from './SignInPage.js';

export interface SignUpPageProps {
  name?: string;
  email?: string;
  username?: string;
  next: string;
  minPasswordLength: number;
  errors?: FormErrors;
  captchaProvider?: string;
  /** Configured providers: the same "Continue with …" buttons as /sign-in (the first sign-in makes the account). */
  providers?: SignInProvider[];
}

export function SignUpPage({ name = '', email = '', username = '', next, minPasswordLength, errors = {}, captchaProvider, providers = [] }: SignUpPageProps) {
  const fields = errors.fields ?? {};
  return (
    <Layout title="Create your account" narrow>
      {errors.form ? (
        <Alert kind="error" id="form-error">
          {errors.form}
        </Alert>
      ) : null}
      <form method="post" action="/sign-up" className="card" aria-describedby={errors.form ? 'form-error' : undefined}>
        <HiddenFields fields={{ next }} />
        <Field name="name" label="Name" value={name} error={fields.name} autoComplete="name" required />
        <Field name="email" label="Email address" type="email" value={email} error={fields.email} autoComplete="email" required />
        <Field
          name="username"
          label="Username (optional)"
          hint={`${USERNAME_LENGTH.min} to ${USERNAME_LENGTH.max} letters, digits, underscores or dots. You can sign in with it instead of your email.`}
          value={username}
          error={fields.username}
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
        />
        <Field
          name="password"
          label="Password"
          type="password"
          hint={`At least ${minPasswordLength} characters.`}
          error={fields.password}
          autoComplete="new-password"
          required
        />
        <CaptchaSlot provider={captchaProvider} error={fields.captcha} />
        <div className="actions">
          <button type="submit" className="button">
            Create account
          </button>
        </div>
      </form>
      <ProviderButtons providers={providers} next={next} heading="Or sign up with" />
      <p>
        Already have an account? <a href={withNext('/sign-in', next)}>Sign in</a>
      </p>
    </Layout>
  );
}
