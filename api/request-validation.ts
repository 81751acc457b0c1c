/**
 * How request parts are validated. A query string arrives as text, so its numbers and booleans are
 * coerced and a lone `?tag=x` becomes a one-item list. A JSON body arrives typed: coercing it would
 * turn `allowHosts: [1]` into `["1"]` and `seeds: "https://…"` into a list, accepting what the
 * caller got wrong, so the body is validated as sent. Both run fastify's own AJV compiler.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { badRequest } from './errors';

const SHARED_OPTIONS = {
  // Unknown parameters are errors, not silently dropped: `?crawlId=` instead of `?crawl=` says so.
  removeAdditional: false,
  useDefaults: true,
  allErrors: false,
} as const;

type ValidatorFactory = ReturnType<typeof AjvCompiler>;
type CompilerOptions = NonNullable<Parameters<ValidatorFactory>[1]>;
// The package's types call the compiled function with a schema; at run time fastify calls it with
// the route definition (httpPart, schema, url, method), which is what the split needs.
type RouteValidatorCompiler = (route: { httpPart?: string }) => unknown;

const fromPool = AjvCompiler();

const buildValidator: ValidatorFactory = (externalSchemas, ajvOptions) => {
  const options = (coerceTypes: 'array' | false): CompilerOptions => ({
    ...(ajvOptions as object),
    customOptions: { ...ajvOptions?.customOptions, ...SHARED_OPTIONS, coerceTypes },
  });
  const lenient = fromPool(externalSchemas, options('array')) as unknown as RouteValidatorCompiler;
  const strict = fromPool(externalSchemas, options(false)) as unknown as RouteValidatorCompiler;
  const byPart: RouteValidatorCompiler = (route) => (route.httpPart === 'body' ? strict : lenient)(route);
  return byPart as unknown as ReturnType<ValidatorFactory>;
};

/** Fastify's `schemaController` option: body parts strict, every other part coerced. */
export const requestValidation: FastifyServerOptions['schemaController'] = {
  compilersFactory: { buildValidator },
};

/**
 * Refuses a query or path parameter holding a NUL character (`?q=%00`) with a 400 naming it. No
 * Postgres text can hold one, so the value could match nothing; it reached the database, whose
 * refusal answered 500 on /search, /context, /tags and /changes.
 */
export function installNulParameterGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    for (const [part, values] of [
      ['query parameter', request.query],
      ['path parameter', request.params],
    ] as const) {
      const name = parameterWithNul(values);
      if (name !== undefined) throw badRequest(`${part} "${name}" must not contain a NUL character`);
    }
  });
}

function parameterWithNul(values: unknown): string | undefined {
  if (typeof values !== 'object' || values === null) return undefined;
  for (const [name, value] of Object.entries(values)) {
    // A repeated parameter (`?tag=a&tag=b`) arrives as a list.
    const list: unknown[] = Array.isArray(value) ? value : [value];
    if (list.some((item) => typeof item === 'string' && item.includes('\u0000'))) return name;
  }
  return undefined;
}

/**
 * A parameter a control route takes in its query string or in its JSON body (which it must send
 * anyway): `{"origin": "…"}` in the body was ignored before, so a pause meant for one origin paused
 * the whole crawl. Given in both places, the two must agree.
 */
export function queryOrBody<T>(
  name: string,
  fromQuery: T | undefined,
  fromBody: T | undefined,
): T | undefined {
  if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody)
    throw badRequest(
      `"${name}" is given twice, differently, in the query string and in the body: give it once`,
    );
  return fromQuery ?? fromBody;
}
