// Entry point of the web interface: mounts the application shell into the page.

import { render } from 'preact';
import { App } from './app.js';
import { html } from './html.js';

const root = document.getElementById('app');
// Replace the "Loading…" placeholder rather than rendering beside it.
root.replaceChildren();
render(html`<${App} />`, root);
