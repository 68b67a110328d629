// Generative UI routes, as LangGraph.js deployments serve them (`@langchain/langgraph-sdk`'s
// `client["~ui"].getComponent` and `LoadExternalComponent` call them):
//
// - `POST /ui/{name}` with `{"name": "<component>"}` answers the HTML that loads the UI's bundle
//   into the page: a `<link>` per stylesheet and the `<script>` of `entrypoint.js`, whose
//   `onload` renders the component into the shadow root `{{shadowRootId}}` (the SDK fills it in).
//   An unknown UI is a 404.
// - `GET /ui/{name}/{file}` serves the bundle's files. They are public, as the web interface's
//   files are: a `<script src>` carries no API key (request-guard.ts). One route per UI, so that
//   they never shadow the web interface's own files under `/ui/`.

import { extname } from 'node:path';
import type { FastifyRequest } from 'fastify';
import type { BundleFile } from '../genui/bundle.ts';
import { bundleGlobal } from '../genui/bundle.ts';
import type { AgentApp } from './services.ts';

/** The bundled files of each UI, by UI name. */
export type UiBundles = ReadonlyMap<string, readonly BundleFile[]>;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

const componentBody = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string', minLength: 1 } },
} as const;

const uiParams = {
  type: 'object',
  required: ['name'],
  properties: { name: { type: 'string' } },
} as const;

const fileParams = {
  type: 'object',
  required: ['basename'],
  properties: { basename: { type: 'string' } },
} as const;

/** `&`, `<`, `>`, quotes: for values inside HTML attributes. */
function escapeAttribute(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** Where this request reached the server (`http://localhost:2024`), for the bundle's URLs. */
function origin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

export function registerGenerativeUiRoutes(app: AgentApp, bundles: UiBundles): void {
  app.post('/ui/:name', { schema: { params: uiParams, body: componentBody, hide: true } }, async (request, reply) => {
    const { name } = request.params;
    const files = bundles.get(name);
    if (!files) return reply.code(404).type('text/plain; charset=utf-8').send(`UI not found for agent "${name}"`);
    const base = `${origin(request)}/ui/${encodeURIComponent(name)}`;
    const lines: string[] = [];
    for (const file of files.filter((item) => extname(item.basename) === '.css'))
      lines.push(`<link rel="stylesheet" href="${escapeAttribute(`${base}/${file.basename}`)}" />`);
    const script = files.find((item) => extname(item.basename) === '.js');
    if (script) {
      // The component name is a JS string inside a single-quoted attribute.
      const call = `${bundleGlobal(name)}.render(${JSON.stringify(request.body.name)}, "{{shadowRootId}}")`;
      lines.push(
        `<script src="${escapeAttribute(`${base}/${script.basename}`)}" onload='${call.replace(/[&<>']/g, (char) => `&#${char.charCodeAt(0)};`)}'></script>`,
      );
    }
    return reply.type('text/html; charset=utf-8').send(lines.join('\n'));
  });

  for (const [name, files] of bundles) {
    app.get(`/ui/${name}/:basename`, { schema: { params: fileParams, hide: true } }, async (request, reply) => {
      const file = files.find((item) => item.basename === request.params.basename);
      if (!file) return reply.code(404).type('text/plain; charset=utf-8').send('File not found');
      return reply
        .type(CONTENT_TYPES[extname(file.basename)] ?? 'application/octet-stream')
        .header('cache-control', 'no-cache')
        .send(Buffer.from(file.contents));
    });
  }
}
