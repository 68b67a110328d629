// @ts-check
// Entry point of the web interface: mounts the application shell into the page.

import { render } from 'preact';
import { App } from './app.js';
import { html } from './html.js';

// index.html has it.
const root = /** @type {HTMLElement} */ (document.getElementById('app'));
// Replace the "Loading…" placeholder rather than rendering beside it.
root.replaceChildren();
render(html`<${App} />`, root);
