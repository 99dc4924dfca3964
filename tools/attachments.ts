// The rendered Multus attachments as the CNI check runs them (tools/cni-sandbox.ts): each
// NetworkAttachmentDefinition of a render, its CNI config, the Kube-OVN Subnet that hands out its
// addresses, and what the Talos patches render for its master interface. Plain data, read through
// the render reader.
import type { RenderedStack } from "../render/rendered";

export interface Attachment {
  /** `<namespace>/<name>`. */
  id: string;
  /** The object's file in the render. */
  file: string;
  /** spec.config, parsed. */
  config: Record<string, unknown> & { type: string; master?: string | undefined; ipam?: Record<string, unknown> | undefined };
  /** The Subnet whose spec.provider is the config's ipam.provider (Kube-OVN's IPAM). */
  subnet?: { name: string; cidrBlock: string; gateway?: string | undefined; excludeIps: string[] } | undefined;
}

/** A Talos link document that names an interface: its kind, and what the check needs of it. */
export interface RenderedLink {
  kind: string;
  file: string;
  mtu?: number;
  parent?: string;
  vlanID?: number;
}

type Obj = { kind?: string; metadata?: { name?: string; namespace?: string }; spec?: Record<string, unknown> };

function objectsOf(stack: RenderedStack): { file: string; obj: Obj }[] {
  return stack
    .units()
    .flatMap((u) => (u.kind === "Manifests" ? u.objects : []))
    .flatMap((file) => stack.documents(file).map((obj) => ({ file, obj: obj as Obj })));
}

/** Every NetworkAttachmentDefinition of the render, with its Subnet when its IPAM is Kube-OVN. */
export function renderedAttachments(stack: RenderedStack): Attachment[] {
  const objects = objectsOf(stack);
  const subnets = objects.filter((o) => o.obj.kind === "Subnet");
  return objects
    .filter((o) => o.obj.kind === "NetworkAttachmentDefinition")
    .map(({ file, obj }) => {
      const config = JSON.parse(String(obj.spec?.config)) as Attachment["config"];
      const provider = config.ipam?.type === "kube-ovn" ? config.ipam.provider : undefined;
      const s = subnets.find((o) => provider !== undefined && o.obj.spec?.provider === provider);
      const spec = s?.obj.spec as { cidrBlock: string; gateway?: string; excludeIps?: string[] } | undefined;
      const subnet =
        s && spec ? { name: s.obj.metadata?.name ?? "", cidrBlock: spec.cidrBlock, gateway: spec.gateway, excludeIps: spec.excludeIps ?? [] } : undefined;
      return { id: `${obj.metadata?.namespace}/${obj.metadata?.name}`, file, config, ...(subnet ? { subnet } : {}) };
    });
}

/** The Talos link documents of the render (patches and node patches) named `name`. */
export function renderedLinks(stack: RenderedStack, name: string): RenderedLink[] {
  return [...stack.files.keys()]
    .filter((f) => f.startsWith("talos/patches/") || f.startsWith("talos/nodes/"))
    .flatMap((file) =>
      stack.documents(file).flatMap((d) => {
        const doc = d as { kind?: string; name?: string; mtu?: number; parent?: string; vlanID?: number };
        if (typeof doc?.kind !== "string" || doc.name !== name) return [];
        return [{ kind: doc.kind, file, ...(doc.mtu ? { mtu: doc.mtu } : {}), ...(doc.parent ? { parent: doc.parent, vlanID: doc.vlanID } : {}) }];
      }),
    );
}

const toInt = (ip: string) => ip.split(".").reduce((n, o) => n * 256 + Number(o), 0);
const toIp = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");

/** `a`, or `a..b` of Kube-OVN's excludeIps, as a range. */
const rangeOf = (x: string): [number, number] => {
  const [a, b = a] = x.split("..");
  return [toInt(a), toInt(b)];
};

/**
 * The first address of the Subnet Kube-OVN could hand out: neither the network, the broadcast, the
 * gateway nor an excluded address (IPv4: the stack schema refuses IPv6 attachment networks).
 */
export function firstFreeAddress(subnet: NonNullable<Attachment["subnet"]>): { address: string; prefix: number } {
  const [net, bits] = subnet.cidrBlock.split("/");
  const prefix = Number(bits);
  const size = 2 ** (32 - prefix);
  const base = toInt(net);
  const taken = [...(subnet.gateway ? [subnet.gateway] : []), ...subnet.excludeIps].map(rangeOf);
  for (let n = base + 1; n < base + size - 1; n++) {
    if (!taken.some(([a, b]) => n >= a && n <= b)) return { address: toIp(n), prefix };
  }
  throw new Error(`Subnet ${subnet.name} (${subnet.cidrBlock}): no address left to hand out`);
}
