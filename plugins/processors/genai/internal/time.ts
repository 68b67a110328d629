// Span timestamps (bigint nanoseconds) to the run's RFC 3339 UTC text. Kept at full nanosecond
// precision with trailing zeros trimmed, as the reference writes them (`2023-11-14T22:13:21.25Z`).

const NANOS_PER_SECOND = 1_000_000_000n;

export function nanosToRfc3339(nanos: bigint): string {
  const clamped = nanos < 0n ? 0n : nanos;
  const seconds = clamped / NANOS_PER_SECOND;
  const fraction = clamped % NANOS_PER_SECOND;
  const base = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  if (fraction === 0n) return `${base}Z`;
  return `${base}.${fraction.toString().padStart(9, '0').replace(/0+$/, '')}Z`;
}
