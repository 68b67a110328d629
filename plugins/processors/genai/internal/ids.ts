// OTLP ids (lowercase hex from the receiver) to the backend's UUID run ids, as the reference
// derives them: the last 16 bytes, right-aligned in 16 zero bytes, formatted 8-4-4-4-12 with no
// version bits set. A 16-byte trace id maps 1:1; an 8-byte span id becomes
// `00000000-0000-0000-xxxx-xxxxxxxxxxxx`.

// The UUID is written into a scratch buffer and read back as one string, rather than joined from
// slices: a joined string is a tree of V8 cons strings, about 380 bytes for 36 characters until
// something flattens it, and these ids are what the processors' and the batcher's caches keep (a
// root alias cost 520 bytes of heap; flat, a UUID is 56). It also spares the regular expression.
const scratch = Buffer.from('00000000-0000-0000-0000-000000000000', 'latin1');
/** Where each of the 32 hex digits goes among the UUID's 36 characters. */
const DIGIT_AT = Uint8Array.from(
  { length: 32 },
  (_, i) => i + Number(i >= 8) + Number(i >= 12) + Number(i >= 16) + Number(i >= 20),
);
const ZERO = 48;

function isHexDigit(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 97 && code <= 102);
}

/** The UUID of an id, or undefined when it is shorter than 8 bytes or not even-length lowercase hex. */
export function idToUuid(hex: string): string | undefined {
  const length = hex.length;
  if (length < 16 || length % 2 !== 0) return undefined;
  const digits = Math.min(length, 32);
  const dropped = length - digits;
  for (let i = 0; i < dropped; i++) if (!isHexDigit(hex.charCodeAt(i))) return undefined;
  const pad = 32 - digits;
  for (let i = 0; i < pad; i++) scratch[DIGIT_AT[i]!] = ZERO;
  for (let i = 0; i < digits; i++) {
    const code = hex.charCodeAt(dropped + i);
    if (!isHexDigit(code)) return undefined;
    scratch[DIGIT_AT[pad + i]!] = code;
  }
  return scratch.toString('latin1', 0, 36);
}

/**
 * `idToUuid` with the last id it converted remembered: the spans of a trace come together in a
 * request (a batch span processor exports a trace's spans as they end), so they repeat their trace
 * id, and the children their parent's id. Comparing the id with the last one (a new string of the
 * same length, compared up to its first different character) costs less than converting it. One
 * memo per call site (trace ids, parent ids), so that the two do not displace each other.
 */
export class RecentUuid {
  private hex = '';
  private uuid: string | undefined;

  of(hex: string): string | undefined {
    if (hex === this.hex) return this.uuid;
    const uuid = idToUuid(hex);
    this.hex = hex;
    this.uuid = uuid;
    return uuid;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(text: string): boolean {
  return UUID.test(text);
}
