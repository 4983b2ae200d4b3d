import type { Response } from 'express';
import type { ReactNode } from 'react';
import { Layout } from '../components/Layout.js';
import { sendPage } from '../render.js';
import type { OpenApiDocument, OpenApiOperation, Schema } from '../../http/v1/openapi.js';

const METHODS_ORDER = ['get', 'post', 'patch', 'delete'];

interface Entry {
  path: string;
  method: string;
  operation: OpenApiOperation;
}

/**
 * /docs: the OpenAPI document of /v1 as a reference page (no scripts, no external assets): a table of contents by
 * tag, a section per operation (anchor: its operationId) with its scopes, parameters, request and answer shapes and
 * examples, the error bodies, and every named schema (anchor: `schema-Name`) the shapes link to.
 */
export function ApiDocsPage({ document }: { document: OpenApiDocument }) {
  const entries: Entry[] = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .sort(([a], [b]) => METHODS_ORDER.indexOf(a) - METHODS_ORDER.indexOf(b))
      .map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  );
  const byTag = document.tags.map((tag) => ({ tag: tag.name, entries: entries.filter((entry) => entry.operation.tags[0] === tag.name) }));
  const linked = new Set<string>();
  const collect = (schema: unknown) => JSON.stringify(schema ?? null, (key, value) => (key === '$ref' && typeof value === 'string' && linked.add(value.split('/').pop()!), value));
  for (const { operation } of entries) {
    collect(operation.requestBody);
    collect(operation.responses);
  }
  // Names reached through other names are listed too.
  for (let before = -1; before !== linked.size; ) {
    before = linked.size;
    for (const name of [...linked]) collect(document.components.schemas[name]);
  }
  return (
    <Layout title="Billing API">
      <p>
        Polar's public wire format, version {document.info.version}. Machine-readable: <a href="/openapi.json">/openapi.json</a>. Send a session
        token or an organization access token as <code>Authorization: Bearer …</code>; an access token needs one of the scopes an operation lists.
      </p>
      <nav className="card" id="contents">
        <h2>Contents</h2>
        {byTag.map(({ tag, entries: tagged }) => (
          <div key={tag}>
            <h3 id={`tag-${tag}`}>{tag}</h3>
            <ul>
              {tagged.map(({ path, method, operation }) => (
                <li key={operation.operationId}>
                  <a href={`#${operation.operationId}`}>
                    <code>
                      {method} {path}
                    </code>
                  </a>{' '}
                  {operation.summary}
                </li>
              ))}
            </ul>
          </div>
        ))}
        <p>
          <a href="#errors">Error bodies</a> · <a href="#schemas">Schemas</a>
        </p>
      </nav>
      {entries.map(({ path, method, operation }) => {
        const [status, success] = Object.entries(operation.responses).find(([code]) => code.startsWith('2'))!;
        const answer = success.content?.['application/json'];
        const request = operation.requestBody?.content['application/json'];
        return (
          <section key={operation.operationId} className="card" id={operation.operationId}>
            <h2>
              <code>
                {method} {path}
              </code>
            </h2>
            <p>{operation.summary}</p>
            <p>
              {operation.security.length === 0 ? 'No credentials (public). ' : null}
              Scopes: {operation['x-scopes'].map((scope) => <code key={scope}>{scope}</code>).reduce<ReactNode[]>((all, item, i) => (i ? [...all, ' or ', item] : [item]), [])}
            </p>
            {operation.parameters?.length ? (
              <table>
                <thead>
                  <tr>
                    <th>Parameter</th>
                    <th>In</th>
                    <th>Type</th>
                  </tr>
                </thead>
                <tbody>
                  {operation.parameters.map((p) => (
                    <tr key={`${p.in}-${p.name}`}>
                      <td>
                        <code>{p.name}</code>
                        {p.required ? ' (required)' : ''}
                      </td>
                      <td>{p.in}</td>
                      <td>{typeName(p.schema)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
            {request ? (
              <>
                <h3>Request body</h3>
                <Shape schema={request.schema} schemas={document.components.schemas} />
                <details>
                  <summary>Example</summary>
                  <pre>{JSON.stringify(request.example, null, 2)}</pre>
                </details>
              </>
            ) : null}
            <h3>Answer {status}</h3>
            {answer ? (
              <>
                <Shape schema={answer.schema} schemas={document.components.schemas} />
                <details>
                  <summary>Example</summary>
                  <pre>{JSON.stringify(answer.example, null, 2)}</pre>
                </details>
              </>
            ) : (
              <p>{success.description}</p>
            )}
            <p>
              Errors:{' '}
              {Object.entries(operation.responses)
                .filter(([code]) => !code.startsWith('2'))
                .map(([code, response]) => `${code} ${response.description}`)
                .join(' · ')}{' '}
              (<a href="#errors">bodies</a>)
            </p>
          </section>
        );
      })}
      <section className="card" id="errors">
        <h2>Error bodies</h2>
        <p>
          Every refusal is JSON. Invalid input (422) is a <a href="#schema-ValidationError">ValidationError</a>, every other refusal an{' '}
          <a href="#schema-Error">Error</a>. 409 answers a conflict (an object's state, or a unique value another request took at the same moment), 429
          too many requests.
        </p>
      </section>
      <section className="card" id="schemas">
        <h2>Schemas</h2>
        {[...linked].sort().map((name) => (
          <div key={name} id={`schema-${name}`}>
            <h3>{name}</h3>
            <Shape schema={document.components.schemas[name] ?? {}} schemas={document.components.schemas} />
          </div>
        ))}
      </section>
    </Layout>
  );
}

/** A schema as a short type: a linked name, `string (date-time)`, `"a" | "b"`, `[Product]`, `… | null`. */
function typeName(schema: Schema): ReactNode {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').pop()!;
    return <a href={`#schema-${name}`}>{name}</a>;
  }
  const nullable = schema.nullable ? ' | null' : '';
  const choices = (schema.anyOf ?? schema.oneOf ?? schema.allOf) as Schema[] | undefined;
  if (choices?.length) {
    return (
      <>
        {choices.map((choice, i) => (
          <span key={i}>
            {i ? ' | ' : ''}
            {typeName(choice)}
          </span>
        ))}
        {nullable}
      </>
    );
  }
  const enumeration = schema.enum as unknown[] | undefined;
  if (enumeration) return `${enumeration.map((value) => JSON.stringify(value)).join(' | ')}${nullable}`;
  if (schema.type === 'array') {
    return (
      <>
        [{typeName((schema.items as Schema | undefined) ?? {})}]{nullable}
      </>
    );
  }
  if (schema.type === 'object' && !schema.properties) return `object${nullable}`;
  if (schema.type === 'object') return `{${Object.keys(schema.properties as object).join(', ')}}${nullable}`;
  const bounds = [schema.format, schema.minLength !== undefined || schema.maxLength !== undefined ? `${schema.minLength ?? 0}–${schema.maxLength ?? '…'} characters` : undefined]
    .filter(Boolean)
    .join(', ');
  return `${String(schema.type ?? 'any')}${bounds ? ` (${bounds})` : ''}${nullable}`;
}

/** An object's fields as a table (name, type, required); anything else as its type. */
function Shape({ schema, schemas }: { schema: Schema; schemas: Record<string, Schema> }) {
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (!properties) return <p>{typeName(schema)}</p>;
  const required = new Set((schema.required ?? []) as string[]);
  void schemas;
  return (
    <table>
      <thead>
        <tr>
          <th>Field</th>
          <th>Type</th>
        </tr>
      </thead>
      <tbody>
        {Object.entries(properties).map(([name, property]) => (
          <tr key={name}>
            <td>
              <code>{name}</code>
              {required.has(name) ? ' (required)' : ''}
            </td>
            <td>{typeName(property)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export const sendApiDocs = (res: Response, document: OpenApiDocument) => sendPage(res, 200, <ApiDocsPage document={document} />);
