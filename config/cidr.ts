// IPv4 and IPv6 addresses and CIDR ranges as numbers, for the address checks (topology/addresses.ts)
// and the network schema (config/network.ts). Plain functions over bigint: no dependency.

export interface Address {
  family: 4 | 6;
  value: bigint;
}

export interface Cidr extends Address {
  /** Prefix length. */
  prefix: number;
  /** The written form, e.g. `10.20.0.0/24`. */
  text: string;
}

const bits = (family: 4 | 6) => (family === 4 ? 32 : 128);

function parseIPv4(s: string): bigint | undefined {
  const parts = s.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.reduce((n, p) => (n << 8n) | BigInt(p), 0n);
}

function parseIPv6(s: string): bigint | undefined {
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const groups = (h: string) => (h === "" ? [] : h.split(":"));
  const [head, tail] = [groups(halves[0]), halves.length === 2 ? groups(halves[1]) : []];
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 1 && missing !== 0) || (halves.length === 2 && missing < 1)) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!all.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  return all.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

export function parseAddress(s: string): Address | undefined {
  const v4 = parseIPv4(s);
  if (v4 !== undefined) return { family: 4, value: v4 };
  const v6 = s.includes(":") ? parseIPv6(s) : undefined;
  return v6 !== undefined ? { family: 6, value: v6 } : undefined;
}

/** An address and a prefix length that fits it, host bits or not. */
function addressAndPrefix(s: string): Cidr | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(s);
  const addr = m ? parseAddress(m[1]) : undefined;
  if (!m || !addr || Number(m[2]) > bits(addr.family)) return undefined;
  return { ...addr, prefix: Number(m[2]), text: s };
}

/** `10.20.0.0/24`: an address and a prefix length, with no host bits set. */
export function parseCidr(s: string): Cidr | undefined {
  const cidr = addressAndPrefix(s);
  return cidr && networkOf(cidr) === cidr.value ? cidr : undefined;
}

/** What keeps `s` from being a network in CIDR notation: not the notation, or host bits set; undefined when it is one. */
export function cidrFault(s: string): "notation" | "host-bits" | undefined {
  if (!addressAndPrefix(s)) return "notation";
  return parseCidr(s) ? undefined : "host-bits";
}

function hostBits(c: Cidr): bigint {
  return BigInt(bits(c.family) - c.prefix);
}

function networkOf(c: Cidr): bigint {
  return (c.value >> hostBits(c)) << hostBits(c);
}

export function contains(c: Cidr, a: Address): boolean {
  return c.family === a.family && a.value >> hostBits(c) === c.value >> hostBits(c);
}

export function overlaps(a: Cidr, b: Cidr): boolean {
  if (a.family !== b.family) return false;
  const shift = BigInt(bits(a.family) - Math.min(a.prefix, b.prefix));
  return a.value >> shift === b.value >> shift;
}

/** An IPv4 range's network and broadcast addresses, which no host may take (none for /31, /32 or IPv6). */
export function reservedAddresses(c: Cidr): bigint[] {
  if (c.family !== 4 || c.prefix >= 31) return [];
  return [c.value, c.value + (1n << hostBits(c)) - 1n];
}

/** The first host address of an IPv4 range: the gateway Kube-OVN gives its pod subnet. */
export function firstHostV4(c: Cidr): string {
  const v = c.value + 1n;
  return [24n, 16n, 8n, 0n].map((sh) => String((v >> sh) & 255n)).join(".");
}
