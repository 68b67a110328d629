// The two spellings of a 16-byte id that people copy from one tool into another: OTLP's 32 hex
// digits (a trace id in logs, an OpenTelemetry exporter's output, a run's trace id) and the UUID's
// 8-4-4-4-12 form that the run model and the agent API store. Every lookup by id accepts both and
// looks up the stored form: dashed, lowercase.

const HEX_32 = /^[0-9a-f]{32}$/i;
const DASHED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The stored (dashed, lowercase) form of a 16-byte id written either way; any other text is
 * returned unchanged, so that a lookup of it finds nothing rather than failing differently.
 */
export function storedUuidForm(id: string): string {
  if (HEX_32.test(id)) {
    const hex = id.toLowerCase();
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  return DASHED.test(id) ? id.toLowerCase() : id;
}
