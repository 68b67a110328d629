// @ts-check
// Entry point of the web interface: mounts the application shell into the page.

import { render } from 'preact';
import { html } from '@tracepipe/webui/html.js';
import { App } from './app.js';

// index.html has it.
const root = /** @type {HTMLElement} */ (document.getElementById('app'));
// Replace the "Loading…" placeholder rather than rendering beside it.
root.replaceChildren();
render(html`<${App} />`, root);
