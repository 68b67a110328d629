// Timestamps as the API writes them: ISO 8601 in UTC with an explicit `+00:00` offset, which sort
// correctly as strings (the storage relies on that for ordering and for due-time checks).

export function isoNow(offsetMs = 0): string {
  return isoOf(Date.now() + offsetMs);
}

export function isoOf(epochMs: number): string {
  return new Date(epochMs).toISOString().replace('Z', '+00:00');
}
