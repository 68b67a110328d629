// The stream modes a run may ask for, as the API names them. How each mode is produced from
// LangGraph's output is the run machinery's business (`runs/stream-modes.ts`).

export const STREAM_MODES = [
  'values',
  'messages',
  'messages-tuple',
  'updates',
  'events',
  'tasks',
  'checkpoints',
  'debug',
  'custom',
  'tools',
] as const;
export type ApiStreamMode = (typeof STREAM_MODES)[number];
