export interface FieldProps {
  name: string;
  label: string;
  type?: 'text' | 'email' | 'password';
  /** What the user typed last time; never given for passwords. */
  value?: string;
  error?: string;
  hint?: string;
  autoComplete: string;
  required?: boolean;
  /** Extra input attributes, e.g. for the device code. */
  inputMode?: 'text' | 'email';
  spellCheck?: boolean;
  autoCapitalize?: string;
}

/** A labelled input whose hint and error are tied to it (aria-describedby), the error announced as invalid. */
export function Field({ name, label, type = 'text', value, error, hint, autoComplete, required, ...rest }: FieldProps) {
  const id = `field-${name}`;
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div className={error ? 'field field-invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {hint ? (
        <p id={hintId} className="hint">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p id={errorId} className="field-error">
          <span className="visually-hidden">Error: </span>
          {error}
        </p>
      ) : null}
      <input
        id={id}
        name={name}
        type={type}
        defaultValue={type === 'password' ? undefined : value}
        autoComplete={autoComplete}
        required={required}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy}
        {...rest}
      />
    </div>
  );
}
