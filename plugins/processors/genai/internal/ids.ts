// OTLP ids (lowercase hex from the receiver) to the backend's UUID run ids, as the reference
// derives them: the last 16 bytes, right-aligned in 16 zero bytes, formatted 8-4-4-4-12 with no
// version bits set. A 16-byte trace id maps 1:1; an 8-byte span id becomes
// `00000000-0000-0000-xxxx-xxxxxxxxxxxx`.

const HEX = /^[0-9a-f]+$/;

/** The UUID of an id, or undefined when it is shorter than 8 bytes or not even-length hex. */
export function idToUuid(hex: string): string | undefined {
  if (hex.length < 16 || hex.length % 2 !== 0 || !HEX.test(hex)) return undefined;
  const bytes = hex.slice(-32).padStart(32, '0');
  return `${bytes.slice(0, 8)}-${bytes.slice(8, 12)}-${bytes.slice(12, 16)}-${bytes.slice(16, 20)}-${bytes.slice(20)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(text: string): boolean {
  return UUID.test(text);
}
