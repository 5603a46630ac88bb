/**
 * The OpenAPI document at GET /api/v2/openapi.json, and the docs page at
 * GET /docs: Swagger UI (@fastify/swagger-ui, its assets under
 * /docs/static/), whose "try it" calls the server that served the page (the
 * document's server is relative). Both are ordinary Fastify routes: the
 * front door (CORS, the rate limit) and the error body apply to them as to
 * any other, and the fast path never sees them.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { openApiDocument, type OpenApiDocument } from './openapi/document.js';
import { ROUTE_DOCS } from './openapi/routes.js';

export const OPENAPI_PATH = '/api/v2/openapi.json';
export const DOCS_PATH = '/docs';

/** Built once per process, when first asked for. */
let document: { value: OpenApiDocument; text: string } | undefined;

export function servedDocument(): { value: OpenApiDocument; text: string } {
  if (document === undefined) {
    const value = openApiDocument(ROUTE_DOCS);
    document = { value, text: JSON.stringify(value) };
  }
  return document;
}

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  app.get(OPENAPI_PATH, async (_request, reply) => reply.type('application/json; charset=utf-8').send(servedDocument().text));
  // The plugin's type wants openapi-types' Document, which ours is in shape (the validator test checks it) but not in name.
  await app.register(swagger, { mode: 'static', specification: { document: servedDocument().value as never } });
  await app.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    uiConfig: { docExpansion: 'list', deepLinking: true, displayRequestDuration: true, defaultModelsExpandDepth: 0 },
  });
}
