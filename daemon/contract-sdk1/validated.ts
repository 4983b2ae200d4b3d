import { join } from 'node:path';
import ts from 'typescript';

/**
 * `@polar-sh/sdk` 1.x does not check what the server answers (its parseResponse returns the JSON as it came), so
 * this suite does: every answer is checked against the TypeScript type the SDK declares for it, read from the SDK's
 * own declaration files with the TypeScript compiler. A required field left out, a `null` where the type allows
 * none, a wrong primitive, an enum value outside the declared ones, or a `*_at` timestamp without an offset fails
 * the call with the path of the offending field.
 */

const ROOT = join(import.meta.dirname, '__sdk1_types__.ts');
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

export class ResponseShapeError extends Error {
  override name = 'ResponseShapeError';
}

interface Types {
  checker: ts.TypeChecker;
  polar: ts.Type;
}

const programs = new Map<string, Types>();

/** The SDK's declared types for one version's entry point (`2026-04`, `2026-10`), compiled once (a few seconds). */
export function sdkTypes(version: string): Types {
  const cached = programs.get(version);
  if (cached) return cached;
  const source = `import type { Polar } from 'polar-sdk-v1/${version}';\nexport declare const polar: Polar;\n`;
  const options: ts.CompilerOptions = { strict: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, skipLibCheck: true, noEmit: true, types: [] };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, ...rest) =>
    fileName === ROOT ? ts.createSourceFile(fileName, source, languageVersion) : getSourceFile(fileName, languageVersion, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => fileName === ROOT || fileExists(fileName);
  const program = ts.createProgram([ROOT], options, host);
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(ROOT)!;
  const declaration = file.statements.find(ts.isVariableStatement)!.declarationList.declarations[0];
  const polar = checker.getTypeAtLocation(declaration.name);
  if (checker.getPropertiesOfType(polar).length === 0) throw new Error(`could not read the SDK's types for ${version}`);
  const types = { checker, polar };
  programs.set(version, types);
  return types;
}

function check(checker: ts.TypeChecker, value: unknown, type: ts.Type, path: string, errors: string[]): void {
  const flags = type.flags;
  if (flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return;
  if (type.isUnion()) {
    let closest: string[] | undefined;
    for (const member of type.types) {
      const memberErrors: string[] = [];
      check(checker, value, member, path, memberErrors);
      if (memberErrors.length === 0) return;
      const sameKind = value === null ? (member.flags & ts.TypeFlags.Null) !== 0 : (member.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined)) === 0;
      if (sameKind && (!closest || memberErrors.length < closest.length)) closest = memberErrors;
    }
    // Report the member the value came closest to: for a union of objects, that is the one it was meant to be.
    if (closest && typeof value === 'object' && value !== null) errors.push(...closest);
    else errors.push(`${path}: ${JSON.stringify(value)?.slice(0, 80)} matches none of ${checker.typeToString(type).slice(0, 200)}`);
    return;
  }
  if (type.isIntersection()) {
    for (const member of type.types) check(checker, value, member, path, errors);
    return;
  }
  if (flags & ts.TypeFlags.Null) return void (value === null || errors.push(`${path}: expected null, got ${JSON.stringify(value)}`));
  if (flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) return void (value === undefined || errors.push(`${path}: expected nothing, got ${JSON.stringify(value)}`));
  if (type.isStringLiteral() || type.isNumberLiteral()) {
    if (value !== type.value) errors.push(`${path}: expected ${JSON.stringify(type.value)}, got ${JSON.stringify(value)}`);
    return;
  }
  if (flags & ts.TypeFlags.BooleanLiteral) {
    const expected = checker.typeToString(type) === 'true';
    if (value !== expected) errors.push(`${path}: expected ${expected}, got ${JSON.stringify(value)}`);
    return;
  }
  if (flags & ts.TypeFlags.String) {
    if (typeof value !== 'string') errors.push(`${path}: expected a string, got ${JSON.stringify(value)}`);
    else if (/_at$/.test(path) && !TIMESTAMP.test(value)) errors.push(`${path}: ${value} is not a timestamp with an offset`);
    return;
  }
  if (flags & ts.TypeFlags.Number) return void (typeof value === 'number' || errors.push(`${path}: expected a number, got ${JSON.stringify(value)}`));
  if (flags & ts.TypeFlags.Boolean) return void (typeof value === 'boolean' || errors.push(`${path}: expected a boolean, got ${JSON.stringify(value)}`));
  if (checker.isTupleType(type)) {
    const elements = checker.getTypeArguments(type as ts.TypeReference);
    if (!Array.isArray(value) || value.length !== elements.length) return void errors.push(`${path}: expected a tuple of ${elements.length}, got ${JSON.stringify(value)}`);
    elements.forEach((element, i) => check(checker, value[i], element, `${path}[${i}]`, errors));
    return;
  }
  if (checker.isArrayType(type)) {
    if (!Array.isArray(value)) return void errors.push(`${path}: expected an array, got ${JSON.stringify(value)?.slice(0, 80)}`);
    const [element] = checker.getTypeArguments(type as ts.TypeReference);
    value.forEach((item, i) => check(checker, item, element, `${path}[${i}]`, errors));
    return;
  }
  if (flags & ts.TypeFlags.Object) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return void errors.push(`${path}: expected an object, got ${JSON.stringify(value)?.slice(0, 80)}`);
    const record = value as Record<string, unknown>;
    const declared = new Set<string>();
    for (const property of checker.getPropertiesOfType(type)) {
      declared.add(property.name);
      const optional = (property.flags & ts.SymbolFlags.Optional) !== 0;
      const field = record[property.name];
      if (field === undefined) {
        if (!optional) errors.push(`${path}.${property.name}: required, missing`);
        continue;
      }
      check(checker, field, checker.getTypeOfSymbol(property), `${path}.${property.name}`, errors);
    }
    for (const info of checker.getIndexInfosOfType(type)) {
      for (const [key, field] of Object.entries(record)) if (!declared.has(key)) check(checker, field, info.type, `${path}.${key}`, errors);
    }
    return;
  }
  errors.push(`${path}: no check for type ${checker.typeToString(type)}`);
}

function awaitedResult(checker: ts.TypeChecker, method: ts.Type): { kind: 'promise' | 'iterator'; type: ts.Type } | undefined {
  const signature = method.getCallSignatures()[0];
  if (!signature) return undefined;
  const returned = signature.getReturnType();
  const symbolName = returned.getSymbol()?.getName();
  if (symbolName === 'AsyncGenerator' || symbolName === 'AsyncIterable' || symbolName === 'AsyncIterableIterator') {
    return { kind: 'iterator', type: checker.getTypeArguments(returned as ts.TypeReference)[0] };
  }
  return { kind: 'promise', type: checker.getAwaitedType(returned) ?? returned };
}

/** Throws when `value` does not have the type the SDK declares for `operation` (e.g. `products.get`). */
export function assertShape(types: Types, value: unknown, type: ts.Type, operation: string) {
  const errors: string[] = [];
  check(types.checker, value, type, operation, errors);
  if (errors.length) throw new ResponseShapeError(`${operation} answered a shape the SDK does not declare:\n${errors.slice(0, 20).join('\n')}`);
}

function wrap(types: Types, target: Record<string, unknown>, type: ts.Type, prefix: string): unknown {
  const { checker } = types;
  return new Proxy(target, {
    get(object, name) {
      const value = Reflect.get(object, name);
      if (typeof name !== 'string') return value;
      const property = checker.getPropertyOfType(type, name);
      if (!property) return value;
      const propertyType = checker.getTypeOfSymbol(property);
      const operation = `${prefix}${name}`;
      if (typeof value === 'function') {
        const result = awaitedResult(checker, propertyType);
        if (!result) return value;
        if (result.kind === 'iterator') {
          return async function* (...args: unknown[]) {
            for await (const item of (value as (...a: unknown[]) => AsyncIterable<unknown>)(...args)) {
              assertShape(types, item, result.type, operation);
              yield item;
            }
          };
        }
        return async (...args: unknown[]) => {
          const answer = await (value as (...a: unknown[]) => Promise<unknown>)(...args);
          if (!(result.type.flags & ts.TypeFlags.Void)) assertShape(types, answer, result.type, operation);
          return answer;
        };
      }
      if (value && typeof value === 'object') return wrap(types, value as Record<string, unknown>, propertyType, `${operation}.`);
      return value;
    },
  });
}

/** The client with every call's answer checked against the type the SDK declares for it, for that API version. */
export function validated<T extends object>(client: T, version: string): T {
  const types = sdkTypes(version);
  return wrap(types, client as Record<string, unknown>, types.polar, '') as T;
}
