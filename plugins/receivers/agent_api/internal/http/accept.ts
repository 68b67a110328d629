// Content negotiation for the JSON-RPC endpoints (`/mcp`, `/a2a/…`): whether a request's `Accept`
// header lets the server answer with a given media type. A missing or empty header accepts
// anything (RFC 9110 §12.5.1); otherwise one media range must match — the type itself, `type/*`
// or `*/*` — with a quality above 0.

export function accepts(header: string | string[] | undefined, mediaType: string): boolean {
  const value = (Array.isArray(header) ? header.join(',') : (header ?? '')).trim();
  if (value === '') return true;
  const [type, subtype] = mediaType.toLowerCase().split('/');
  return value.split(',').some((range) => {
    const [name = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const quality = params.find((param) => /^q\s*=/.test(param));
    if (quality !== undefined && !(Number(quality.replace(/^q\s*=\s*/, '')) > 0)) return false;
    const [rangeType, rangeSubtype] = name.split('/');
    if (rangeType === '*' && rangeSubtype === '*') return true;
    return rangeType === type && (rangeSubtype === '*' || rangeSubtype === subtype);
  });
}
