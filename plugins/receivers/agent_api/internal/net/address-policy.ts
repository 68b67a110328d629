// Which network addresses the server may connect to on a request's behalf (run webhooks). A
// webhook URL comes from whoever can create a run, so without a check the server could be made to
// POST into the network it runs in: the cloud metadata service at 169.254.169.254, an admin port
// on 127.0.0.1, hosts on the private network. Only public (globally routable) unicast addresses
// are allowed unless the deployment's `webhooks.allow` names a class or a CIDR range.
//
// Addresses are parsed and classified by `ipaddr.js`; hostnames are normalised by the WHATWG URL
// parser first, which turns every IPv4 spelling (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`,
// full-width digits, a trailing dot) into the dotted quad. An IPv6 address that stands for an IPv4
// one (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, IPv4-translated
// `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`) is judged by that IPv4 address.

import { isIPv4 } from 'node:net';
import ipaddr from 'ipaddr.js';

/** The classes `webhooks.allow` can name; everything not public belongs to one of them. */
export const ADDRESS_CLASSES = [
  'loopback',
  'private',
  'link_local',
  'cgnat',
  'unspecified',
  'multicast',
  'broadcast',
  'reserved',
] as const;
export type AddressClass = (typeof ADDRESS_CLASSES)[number];

const DESCRIPTIONS: Record<AddressClass, string> = {
  loopback: 'a loopback address',
  private: 'a private-network address',
  link_local: 'a link-local address',
  cgnat: 'a carrier-grade NAT (shared) address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved or special-purpose address',
};

type Address = ipaddr.IPv4 | ipaddr.IPv6;

// ipaddr.js range names → our classes; a name missing here (reserved, as112, amt, 6to4, teredo,
// benchmarking, orchid, ...) is `reserved`.
const IPV4_CLASSES: Record<string, AddressClass | 'public'> = {
  unicast: 'public',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link_local',
  loopback: 'loopback',
  carrierGradeNat: 'cgnat',
  private: 'private',
};
const IPV6_CLASSES: Record<string, AddressClass | 'public'> = {
  unicast: 'public',
  unspecified: 'unspecified',
  multicast: 'multicast',
  linkLocal: 'link_local',
  loopback: 'loopback',
  uniqueLocal: 'private',
  // fec0::/10, the site-local addresses RFC 3879 deprecated: private in all but name.
  deprecatedSiteLocal: 'private',
};

/** The IPv4 address an IPv6 address carries in its last 32 bits and stands for, if it does. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const parts = address.parts;
  const zero = (from: number, to: number) => parts.slice(from, to).every((part) => part === 0);
  const mapped = zero(0, 5) && parts[5] === 0xffff; // ::ffff:a.b.c.d
  const compatible = zero(0, 6) && !(parts[6] === 0 && parts[7]! <= 1); // ::a.b.c.d (not :: or ::1)
  const translated = zero(0, 4) && parts[4] === 0xffff && parts[5] === 0; // ::ffff:0:a.b.c.d
  const nat64 = parts[0] === 0x64 && parts[1] === 0xff9b && zero(2, 6); // 64:ff9b::a.b.c.d
  if (!mapped && !compatible && !translated && !nat64) return undefined;
  return new ipaddr.IPv4([parts[6]! >> 8, parts[6]! & 0xff, parts[7]! >> 8, parts[7]! & 0xff]);
}

/** The class of an address, `public` for a globally routable unicast one. */
export function classify(address: Address): AddressClass | 'public' {
  if (address.kind() === 'ipv4') return IPV4_CLASSES[address.range()] ?? 'reserved';
  const v6 = address as ipaddr.IPv6;
  const v4 = embeddedIPv4(v6);
  if (v4) return classify(v4);
  const found = IPV6_CLASSES[v6.range()] ?? 'reserved';
  // Global unicast is 2000::/3; ipaddr.js calls everything it has no name for `unicast`.
  if (found === 'public' && (v6.parts[0]! & 0xe000) !== 0x2000) return 'reserved';
  return found;
}

/** An IP address in any form ipaddr.js reads (zone ids included), or undefined. */
function parseAddress(text: string): Address | undefined {
  try {
    return ipaddr.parse(text);
  } catch {
    return undefined;
  }
}

export type Verdict = { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

/** The problems of a `webhooks.allow` list, each naming its entry (for config validation). */
export function allowListProblems(entries: readonly string[], key: string): string[] {
  return entries.flatMap((entry, index) => {
    if ((ADDRESS_CLASSES as readonly string[]).includes(entry)) return [];
    if (entry.includes('/') && ipaddr.isValidCIDR(entry)) return [];
    return [
      `${key}[${index}]: "${entry}" is neither an address class (${ADDRESS_CLASSES.join(', ')}) nor a CIDR range such as 10.1.2.0/24`,
    ];
  });
}

export class AddressPolicy {
  private constructor(
    private readonly classes: ReadonlySet<AddressClass>,
    private readonly ranges: readonly [Address, number][],
  ) {}

  /** A policy from `webhooks.allow`: class names and CIDR ranges. Throws on an entry it cannot read. */
  static fromAllowList(entries: readonly string[]): AddressPolicy {
    const problems = allowListProblems(entries, 'webhooks.allow');
    if (problems.length > 0) throw new Error(problems.join('; '));
    const classes = new Set(
      entries.filter((entry): entry is AddressClass => (ADDRESS_CLASSES as readonly string[]).includes(entry)),
    );
    const ranges = entries.filter((entry) => entry.includes('/')).map((entry) => ipaddr.parseCIDR(entry));
    return new AddressPolicy(classes, ranges);
  }

  /** Whether the server may connect to this IP address (as DNS or a URL's host gives it). */
  check(text: string): Verdict {
    const address = parseAddress(text);
    if (!address) return { allowed: false, reason: `${text} is not an IP address` };
    const found = classify(address);
    if (found === 'public' || this.classes.has(found)) return { allowed: true };
    const v4 = address.kind() === 'ipv6' ? embeddedIPv4(address as ipaddr.IPv6) : undefined;
    for (const candidate of v4 ? [address, v4] : [address]) {
      if (this.ranges.some(([range, bits]) => range.kind() === candidate.kind() && candidate.match(range, bits)))
        return { allowed: true };
    }
    const shown = v4 ? `${text} (${v4.toString()})` : text;
    return {
      allowed: false,
      reason: `${shown} is ${DESCRIPTIONS[found]} (class ${found}), which webhooks.allow does not list`,
    };
  }
}

/** The IP address a URL's hostname is written as (brackets removed), or undefined for a name. */
export function literalAddress(hostname: string): string | undefined {
  if (hostname.startsWith('[') && hostname.endsWith(']')) return hostname.slice(1, -1);
  // The WHATWG parser has already turned every IPv4 spelling into a dotted quad.
  return isIPv4(hostname) ? hostname : undefined;
}

/**
 * What is wrong with a webhook URL before anything is sent, or undefined: it must be an absolute
 * http(s) URL without credentials, and when its host is an IP address, one the policy allows.
 * A hostname is checked when the webhook is sent, against every address it resolves to. A path
 * (`/custom/webhook`) names a route of this server and is always allowed.
 */
export function webhookUrlProblem(url: string, policy: AddressPolicy): string | undefined {
  if (url.startsWith('/') && !url.startsWith('//')) return /\s/.test(url) ? 'must not contain spaces' : undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid absolute URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `must be an http or https URL, not ${parsed.protocol}`;
  if (parsed.username !== '' || parsed.password !== '') {
    return 'must not hold a user name or password (the URL is stored with the run and returned by the API)';
  }
  const literal = literalAddress(parsed.hostname);
  if (literal === undefined) return undefined;
  const verdict = policy.check(literal);
  return verdict.allowed ? undefined : `names a refused address: ${verdict.reason}`;
}
