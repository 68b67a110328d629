// The agent API as one encapsulated Fastify plugin: JSON body parsing, the error handler
// (404/409/422 with a JSON body carrying the message) and every route group. Nothing registered
// here leaks into other receivers sharing the server. What every request passes first (CORS, the
// host and cross-site guards, authentication) is in request-guard.ts.

import swagger from '@fastify/swagger';
import type { JsonSchemaToTsProvider } from '@fastify/type-provider-json-schema-to-ts';
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifySchemaValidationError } from 'fastify';
import { answerUnrouted, httpErrorBody } from 'tracepipe/confighttp';
import { CodedError } from 'tracepipe/plugin';
import {
  ApiGraphError,
  ApiInternalError,
  ApiInvalidError,
  ApiMethodNotAllowedError,
  ApiNotFoundError,
  ApiUnavailableError,
} from '../../errors.ts';
import { storedUuidForm } from 'tracepipe/tracestore';
import { AuthRefusal } from '../auth/custom.ts';
import { GraphLoadError, GraphNotFoundError } from '../graphs/registry.ts';
import { classifyGraphInputError } from '../graphs/input-errors.ts';
import { parseJsonBody } from './json-body.ts';
import { registerAssistantRoutes } from './routes-assistants.ts';
import { registerCronRoutes } from './routes-crons.ts';
import { registerMcpRoutes } from './routes-mcp.ts';
import { registerA2aRoutes } from './routes-a2a.ts';
import { registerDocsAndMetrics } from './routes-docs.ts';
import { registerMetaRoutes } from './routes-meta.ts';
import { BrokerUnavailableError } from '../runs/broker.ts';
import { registerProtocolRoutes } from './routes-protocol.ts';
import { registerRunRoutes } from './routes-runs.ts';
import { registerStoreRoutes } from './routes-store.ts';
import { registerGenerativeUiRoutes } from './routes-genui.ts';
import { registerThreadRoutes } from './routes-threads.ts';
import type { AgentApp, AgentServices } from './services.ts';
import { isDatabaseUnavailable } from '../storage/database.ts';
import { ThrottledWarning } from '../runs/throttled-warning.ts';

/** `{statusCode, error, code, message}`: the SDKs show the raw text, so the message is in it. */
export function errorBody(statusCode: number, code: string, message: string) {
  return httpErrorBody(statusCode, message, { code });
}

type ValidationIssue = Pick<FastifySchemaValidationError, 'instancePath' | 'message' | 'keyword' | 'params'>;

/** `body.assistant_id: is required`, `querystring.limit: must be <= 1000`, one per issue. */
export function validationMessage(context: string | undefined, issues: readonly ValidationIssue[]): string {
  const lines = issues
    .filter((issue) => issue.keyword !== 'anyOf' || issues.length === 1)
    .map((issue) => {
      const path = [context ?? 'body', ...issue.instancePath.split('/').slice(1)].join('.');
      if (issue.keyword === 'required') return `${path}.${String(issue.params.missingProperty)}: is required`;
      if (issue.keyword === 'enum')
        return `${path}: must be one of ${(issue.params.allowedValues as unknown[])
          .filter((v) => v !== null)
          .map((v) => JSON.stringify(v))
          .join(', ')}`;
      return `${path}: ${issue.message ?? 'is invalid'}`;
    });
  return [...new Set(lines)].join('; ');
}

/** Retry-After of requests refused while the database is unreachable. */
const DATABASE_RETRY_AFTER_S = 2;

export function agentApiPlugin(services: AgentServices): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    // JSON bodies: an empty body is no body (the SDKs post some without one). Other content
    // types never get here: the request guard answers 415 (see request-guard.ts).
    app.removeContentTypeParser(['application/json', 'text/plain']);
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      try {
        // Empty → undefined; malformed → 400; nested deeper than max_json_depth → 422.
        done(null, parseJsonBody(String(body), services.maxJsonDepth));
      } catch (error) {
        done(error as Error, undefined);
      }
    });

    // CORS, the DNS-rebinding and cross-site guards and authentication are root-level hooks of the
    // server (request-guard.ts), so they also cover the web interface, /metrics and /docs.

    const databaseWarning = new ThrottledWarning(
      services.logger,
      'Requests fail with 503: the database is unreachable or ended the connection.',
    );
    app.setErrorHandler((error: FastifyError & { validationContext?: string }, request, reply) => {
      if (error.validation) {
        const message = validationMessage(error.validationContext, error.validation);
        return reply.code(422).send(errorBody(422, ApiInvalidError.code, message));
      }
      if (error instanceof CodedError)
        return reply.code(error.statusCode).send(errorBody(error.statusCode, error.code, error.message));
      if (error instanceof AuthRefusal) {
        if (error.statusCode >= 500)
          services.logger.error({ err: error.cause ?? error, url: request.url }, 'The custom auth handler failed.');
        return reply
          .code(error.statusCode)
          .headers(error.headers)
          .send(errorBody(error.statusCode, error.code, error.message));
      }
      if (error instanceof BrokerUnavailableError)
        return reply
          .code(503)
          .header('retry-after', String(error.retryAfterSeconds))
          .send(errorBody(503, ApiUnavailableError.code, error.message));
      if (error instanceof GraphNotFoundError)
        return reply.code(404).send(errorBody(404, ApiNotFoundError.code, error.message));
      // Bad input only the graph library could judge (an unknown checkpoint namespace, ...).
      const graphInput = classifyGraphInputError(error);
      if (graphInput)
        return reply
          .code(graphInput.statusCode)
          .send(errorBody(graphInput.statusCode, graphInput.code, graphInput.message));
      if (error instanceof GraphLoadError) {
        services.logger.warn({ err: error, url: request.url }, 'A graph could not be built for a request.');
        const failure = new ApiGraphError([error.message]);
        return reply.code(failure.statusCode).send(errorBody(failure.statusCode, failure.code, failure.message));
      }
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        return reply
          .code(413)
          .send(
            errorBody(
              413,
              error.code,
              `Request body is larger than the limit of ${services.maxBodyBytes} bytes (max_body_bytes)`,
            ),
          );
      }
      // Fastify's own request errors (413 body too large, 415 media type, ...) keep their codes.
      if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
        return reply.code(error.statusCode).send(errorBody(error.statusCode, error.code ?? 'FST_ERR', error.message));
      }
      if (isDatabaseUnavailable(error)) {
        databaseWarning.warn({ err: error, url: request.url, method: request.method });
        const failure = new ApiUnavailableError([error.message || String(error.code ?? '')]);
        return reply
          .code(503)
          .header('retry-after', String(DATABASE_RETRY_AFTER_S))
          .send(errorBody(503, failure.code, failure.message));
      }
      services.logger.error({ err: error, url: request.url, method: request.method }, 'An API request failed.');
      const failure = new ApiInternalError([error.message]);
      return reply.code(500).send(errorBody(500, failure.code, failure.message));
    });

    // A path the API has, with another method: 405 with `Allow`; an unknown path: 404.
    app.setNotFoundHandler((request, reply) =>
      answerUnrouted(request, reply, {
        send: (reply, _request, status, message) =>
          reply
            .code(status)
            .send(errorBody(status, status === 405 ? ApiMethodNotAllowedError.code : ApiNotFoundError.code, message)),
        notFoundMessage: (request) => `Route ${request.method} ${request.url.split('?')[0]} not found`,
      }),
    );

    // An id in the path may be written as 32 hex digits, as OpenTelemetry writes a run's trace id
    // (its run id's 16 bytes); routes see the stored form, before the schema checks it.
    app.addHook('preValidation', async (request) => {
      const params = request.params as Record<string, string> | undefined;
      if (!params) return;
      for (const [name, value] of Object.entries(params)) {
        if (typeof value === 'string') params[name] = storedUuidForm(value);
      }
    });

    // Collects the routes registered below (their schemas) into the OpenAPI document.
    await app.register(swagger, {
      openapi: {
        info: {
          title: 'tracepipe Agent Deployment API',
          version: '0.1.0',
          description: 'Assistants, threads, runs and streaming for LangGraph.js graphs.',
        },
      },
    });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    await registerDocsAndMetrics(app, services);

    const api: AgentApp = app.withTypeProvider<JsonSchemaToTsProvider>();
    registerMetaRoutes(api, services);
    registerAssistantRoutes(api, services);
    registerThreadRoutes(api, services);
    registerRunRoutes(api, services);
    await registerProtocolRoutes(api, services);
    registerStoreRoutes(api, services);
    registerCronRoutes(api, services);
    if (services.mcpEnabled) registerMcpRoutes(api, services);
    if (services.a2aEnabled) registerA2aRoutes(api, services);
    if (services.uiBundles && services.uiBundles.size > 0) registerGenerativeUiRoutes(api, services.uiBundles);
  };
}
