import type { Response } from 'express';
import { Layout } from '../components/Layout.js';
import { sendPage } from '../render.js';
import type { OpenApiDocument } from '../../http/v1/openapi.js';

/** /docs: the OpenAPI document of /v1 as a readable page (no scripts, no external assets). */
export function ApiDocsPage({ document }: { document: OpenApiDocument }) {
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  );
  return (
    <Layout title="Billing API">
      <p>
        Polar's public wire format, version {document.info.version}. Machine-readable: <a href="/openapi.json">/openapi.json</a>. Send a session
        token or an organization access token as <code>Authorization: Bearer …</code>.
      </p>
      {operations.map(({ path, method, operation }) => (
        <section key={operation.operationId} className="card" id={operation.operationId}>
          <h2>
            <code>
              {method} {path}
            </code>
          </h2>
          <p>{operation.summary}</p>
          <p>Scopes: {operation['x-scopes'].join(' or ')}</p>
          {operation.parameters?.length ? (
            <p>
              Parameters:{' '}
              {operation.parameters.map((p) => `${p.name} (${p.in}${p.required ? ', required' : ''})`).join(', ')}
            </p>
          ) : null}
          {operation.requestBody ? (
            <details>
              <summary>Request body schema</summary>
              <pre>{JSON.stringify(operation.requestBody.content['application/json'].schema, null, 2)}</pre>
            </details>
          ) : null}
          <p>Answers: {Object.keys(operation.responses).join(', ')}</p>
        </section>
      ))}
    </Layout>
  );
}

export const sendApiDocs = (res: Response, document: OpenApiDocument) => sendPage(res, 200, <ApiDocsPage document={document} />);
