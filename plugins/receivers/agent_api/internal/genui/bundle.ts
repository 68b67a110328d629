// Generative UI: the React components a deployment names in langgraph.json's `ui` section
// (`{"agent": "./src/agent/ui.tsx"}`, a module whose default export maps component names to
// components), bundled for the browser when the server starts. The bundle speaks the protocol of
// `LoadExternalComponent` from `@langchain/langgraph-sdk/react-ui`, which the chat page runs:
//
// - the page loads `entrypoint.js` with a `<script>`, which defines the global `__LGUI_<name>`
//   whose `render(component, shadowRootId)` puts a mount point into that element's shadow root
//   and hands it, with the component, to the page's store (`window[Symbol.for("LGUI_EXT_STORE")]`);
// - React and the SDK are the page's own, never bundled: each import of them (and of the
//   `ui_config.shared` packages) becomes a call to `globalThis[Symbol.for("LGUI_REQUIRE")]`, the
//   page's module table, so the component renders with the page's React.
//
// Styles the components import come out as `entrypoint.css` beside the script.

import { dirname, basename as baseName, resolve } from 'node:path';
import type { Plugin } from 'esbuild';

/** One file of a bundle, served under `/ui/<name>/<basename>`. */
export interface BundleFile {
  readonly basename: string;
  readonly contents: Uint8Array;
}

/** Modules the chat page provides (LoadExternalComponent's module table). */
const PAGE_MODULES = ['react', 'react-dom', '@langchain/langgraph-sdk'];

/** `agent-alias` → `__LGUI_agent_alias`: the global the bundle defines. */
export function bundleGlobal(name: string): string {
  return `__LGUI_${name.replace(/[^a-zA-Z0-9]/g, '_')}`;
}

const ENTRY = 'tracepipe-genui-entry';
const PAGE_MODULE_NS = 'tracepipe-genui-page';

function entryPlugin(componentsPath: string, pageModules: readonly string[]): Plugin {
  const fromPage = (path: string) => pageModules.some((name) => path === name || path.startsWith(`${name}/`));
  return {
    name: 'tracepipe-genui',
    setup(bundler) {
      bundler.onResolve({ filter: new RegExp(`^${ENTRY}$`) }, () => ({ path: ENTRY, namespace: ENTRY }));
      bundler.onLoad({ filter: /.*/, namespace: ENTRY }, () => ({
        resolveDir: dirname(componentsPath),
        loader: 'js',
        contents: [
          `import components from ${JSON.stringify(componentsPath)};`,
          `const store = () => window[Symbol.for("LGUI_EXT_STORE")];`,
          `export function render(name, shadowRootId) {`,
          `  const mount = document.createElement("div");`,
          `  document.getElementById(shadowRootId).shadowRoot.appendChild(mount);`,
          `  store().respond(shadowRootId, components[name], mount);`,
          `}`,
        ].join('\n'),
      }));
      // React, the SDK and the shared packages: taken from the page at run time.
      bundler.onResolve({ filter: /.*/ }, (args) =>
        args.namespace !== PAGE_MODULE_NS && fromPage(args.path)
          ? { path: args.path, namespace: PAGE_MODULE_NS }
          : undefined,
      );
      bundler.onLoad({ filter: /.*/, namespace: PAGE_MODULE_NS }, (args) => ({
        loader: 'js',
        contents: `module.exports = globalThis[Symbol.for("LGUI_REQUIRE")](${JSON.stringify(args.path)});`,
      }));
    },
  };
}

/**
 * Bundles the components of `file` (absolute) as the UI `name`; `shared` names more packages the
 * page provides (langgraph.json `ui_config.shared`). Rejects with esbuild's errors.
 */
export async function bundleUi(name: string, file: string, shared: readonly string[] = []): Promise<BundleFile[]> {
  // Imported here, not at the top: only a deployment with a `ui` section bundles, and esbuild's
  // module would otherwise load with every server.
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: { entrypoint: ENTRY },
    absWorkingDir: dirname(resolve(file)),
    outdir: resolve(dirname(file), '.genui'),
    write: false,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: bundleGlobal(name),
    target: 'es2020',
    jsx: 'automatic',
    logLevel: 'silent',
    plugins: [entryPlugin(resolve(file), [...PAGE_MODULES, ...shared])],
  });
  return result.outputFiles.map((output) => ({
    basename: baseName(output.path),
    contents: output.path.endsWith('.js') ? plainModuleTable(output.text) : output.contents,
  }));
}

/**
 * esbuild marks `Symbol.for(...)` calls pure (`/* @__PURE__ *\/`); without the mark the script
 * names the page's module table as the platform's bundles do, `globalThis[Symbol.for("LGUI_REQUIRE")]`,
 * for whoever reads or checks it. The code is the same either way.
 */
function plainModuleTable(text: string): Uint8Array {
  return new TextEncoder().encode(text.replaceAll('/* @__PURE__ */ Symbol.for("LGUI_', 'Symbol.for("LGUI_'));
}
