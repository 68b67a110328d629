// @ts-check
// How the studio shows messages: thread-state messages (`type` human/ai/tool, string or block
// content) and the chunks of a streamed answer, merged so a token stream turns into the final
// message in place when the run's last `values` arrive.

/** @typedef {import('./types.js').Message} Message */
/** @typedef {import('./types.js').StreamedMessage} StreamedMessage */

/**
 * The text of a message's content: a string, or the text blocks of a block array.
 * @param {unknown} content
 * @returns {string}
 */
export function messageText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content == null ? '' : JSON.stringify(content);
  return content
    .map((block) =>
      typeof block === 'string' ? block : block?.type === 'text' ? block.text : block?.type ? `[${block.type}]` : '',
    )
    .join('');
}

/** @type {Record<string, string>} */
const ROLE = {
  human: 'user',
  user: 'user',
  ai: 'assistant',
  AIMessageChunk: 'assistant',
  tool: 'tool',
  ToolMessage: 'tool',
  system: 'system',
};

/**
 * The role a message is shown with: `user`, `assistant`, `tool`, `system`, else its own type.
 * @param {Message | null | undefined} message
 * @returns {string}
 */
export function messageRole(message) {
  return (
    ROLE[/** @type {string} */ (message?.type ?? message?.role)] ?? String(message?.type ?? message?.role ?? 'message')
  );
}

/**
 * Adds one `messages` (messages-tuple) chunk to the streamed messages, keyed by message id;
 * chunks of one message are token deltas and are concatenated.
 * @param {StreamedMessage[]} streamed
 * @param {Message | null | undefined} chunk
 * @returns {StreamedMessage[]}
 */
export function addChunk(streamed, chunk) {
  const id = chunk?.id ?? `chunk-${streamed.length}`;
  const index = streamed.findIndex((message) => message.id === id);
  if (index === -1)
    return [
      ...streamed,
      { id, type: messageRole(chunk) === 'tool' ? 'tool' : 'ai', content: messageText(chunk?.content) },
    ];
  const copy = streamed.slice();
  copy[index] = { ...copy[index], content: copy[index].content + messageText(chunk?.content) };
  return copy;
}

/**
 * State messages, then streamed ones the state does not hold yet.
 * @param {Message[]} stateMessages
 * @param {StreamedMessage[]} streamed
 * @returns {Message[]}
 */
export function mergeMessages(stateMessages, streamed) {
  const known = new Set(stateMessages.map((message) => message.id).filter(Boolean));
  return [...stateMessages, ...streamed.filter((message) => !known.has(message.id))];
}
