// @ts-check
// Entry point of the trace explorer: mounts the application into the page.

import { render } from 'preact';
import { html } from '@tracepipe/webui/html.js';
import { App } from './app.js';

const root = /** @type {HTMLElement} */ (document.getElementById('app'));
root.replaceChildren();
render(html`<${App} />`, root);
