// @ts-check
// The way back from a trace to the agent server's studio: a trace whose root run is an agent
// server run (its metadata names the thread and the assistant) opens that thread in the studio,
// `<studio_url>#/studio/<assistant id>/<thread id>`. The studio's address comes from the explorer's
// `/api/config` (the agent server running beside it tells the explorer where its web UI is).

/**
 * The studio link of a trace, or null when its root run is no agent server run or no studio is known.
 * @param {Record<string, unknown> | undefined | null} metadata The root run's `extra.metadata`.
 * @param {string | null | undefined} studioUrl The agent server's web UI, e.g. `http://127.0.0.1:8123/ui/`.
 * @returns {string | null}
 */
export function studioLink(metadata, studioUrl) {
  if (!studioUrl || !metadata) return null;
  const { thread_id: threadId, assistant_id: assistantId } = metadata;
  if (typeof threadId !== 'string' || typeof assistantId !== 'string' || !threadId || !assistantId) return null;
  const base = studioUrl.replace(/#.*$/, '');
  return `${base}#/studio/${encodeURIComponent(assistantId)}/${encodeURIComponent(threadId)}`;
}
