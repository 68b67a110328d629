// @ts-check
// Hash routing: `#/assistants`, `#/assistants/new`, `#/assistants/<id>`,
// `#/studio[/<assistant id>[/<thread id>]]` (the studio on that assistant, with that thread open:
// the trace explorer links an agent run's trace back here), `#/crons`, `#/deployment`.
// The hash keeps every screen bookmarkable without server-side routes, and the back button works.

import { useEffect, useState } from 'preact/hooks';

/**
 * The screen a hash names.
 * @typedef {object} Route
 * @property {'assistants' | 'studio' | 'crons' | 'deployment'} page
 * @property {string} [assistantId]
 * @property {string} [threadId] The thread the studio opens.
 * @property {boolean} [create] The creation form of the Assistants screen.
 */

/**
 * @param {string} hash `location.hash`
 * @returns {Route}
 */
export function parseRoute(hash) {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'studio') return { page: 'studio', assistantId: parts[1], threadId: parts[2] };
  if (parts[0] === 'crons') return { page: 'crons' };
  if (parts[0] === 'deployment') return { page: 'deployment' };
  if (parts[0] === 'assistants' && parts[1] === 'new') return { page: 'assistants', create: true };
  if (parts[0] === 'assistants' && parts[1]) return { page: 'assistants', assistantId: parts[1] };
  return { page: 'assistants' };
}

export const href = {
  assistants: () => '#/assistants',
  newAssistant: () => '#/assistants/new',
  /** @param {string} assistantId */
  assistant: (assistantId) => `#/assistants/${encodeURIComponent(assistantId)}`,
  crons: () => '#/crons',
  deployment: () => '#/deployment',
  /** @param {string} [assistantId] @param {string} [threadId] */
  studio: (assistantId, threadId) =>
    assistantId
      ? `#/studio/${encodeURIComponent(assistantId)}${threadId ? `/${encodeURIComponent(threadId)}` : ''}`
      : '#/studio',
};

/** @param {string} target A hash from `href`. */
export function navigate(target) {
  window.location.hash = target;
}

/** @returns {Route} the current route, following hash changes. */
export function useRoute() {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}
