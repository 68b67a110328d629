// `dotted_order` segments: `YYYYMMDDTHHMMSSffffffZ<run id>`, from the run's start time with exactly
// six fraction digits, so that segments sort lexically in start order (the backend's documented
// format; the reference used the wall clock and a variable-width fraction).

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/;

/** The 22-character time part of a segment, e.g. `20231114T221320100000Z`. */
export function segmentTime(startTime: string): string {
  const match = RFC3339.exec(startTime);
  if (match && match[8] === 'Z') {
    const [, year, month, day, hour, minute, second, fraction] = match;
    return `${year}${month}${day}T${hour}${minute}${second}${(fraction ?? '').padEnd(6, '0').slice(0, 6)}Z`;
  }
  // Other offsets (or other writers' formats) go through Date, at millisecond precision.
  const millis = Date.parse(startTime);
  const iso = new Date(Number.isNaN(millis) ? 0 : millis).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}${iso.slice(20, 23)}000Z`;
}

export function segment(startTime: string, runId: string): string {
  return `${segmentTime(startTime)}${runId}`;
}

/** The run ids along a dotted order, root first. */
export function dottedOrderIds(dottedOrder: string): string[] {
  return dottedOrder.split('.').map((part) => part.slice(part.indexOf('Z') + 1));
}
