// `openkeel:talos`: what the Talos machine-config patches and Image Factory schematics need that
// the inventory does not say (nodes/talos.ts builds them). Production only: the kind lab's
// nodes are kindest/node containers, configured by rendered/lab/kind/cluster.yaml.
//
// Its keys are Talos' own (install disk, resolvers, time, mirrors, the hypervisors' reservation) and
// the ones platform components declare, what their pods need of the machines (a disk, the watchdog
// module): a TalosDeclaration on the descriptor, composed here as the openkeel:platform blocks are.
// Required where no default fits every machine; defaults only where Talos or Kubernetes already has one.
import { z } from "zod";
import type { ConfigIssue } from "./problems";
import { parseAddress } from "./cidr";

/**
 * Watchdog drivers the Talos kernel builds as modules (siderolabs/talos hack/modules-amd64.txt
 * @v1.13.9). No softdog: `CONFIG_SOFT_WATCHDOG` is not set, so Medik8s SNR needs one of these.
 */
export const WATCHDOG_MODULES = ["iTCO_wdt", "sp5100_tco", "ipmi_watchdog", "wdat_wdt", "i6300esb", "xen_wdt", "f71808e_wdt"] as const;

/** Page sizes as KubeVirt and the kubelet spell them (`hugepages-1Gi`), with the kernel's spelling. */
export const HUGEPAGE_SIZES = { "1Gi": "1G", "2Mi": "2M" } as const;
type HugepageSize = keyof typeof HUGEPAGE_SIZES;

/** Kernel arguments written by compute.hugepages; setting them by hand would contradict it. */
const HUGEPAGE_KERNEL_ARGS = ["hugepagesz", "hugepages", "default_hugepagesz"];

/**
 * A kernel argument this repository can put in a schematic: `name` or `name=value`, starting with
 * a letter, without spaces, quotes or colons. Such a string is a plain YAML scalar for Image
 * Factory's encoder too, which keeps the schematic ID computed here equal to the factory's.
 */
const KERNEL_ARG = /^[A-Za-z_][A-Za-z0-9_.-]*(=[A-Za-z0-9_.,/=+-]+)?$/;
const MAX_KERNEL_ARG_LENGTH = 64;

const QUANTITY = /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;
/** Talos byte sizes (go-humanize): `100GB`, `1.5TiB`, `500000000`. */
const BYTE_SIZE = /^\d+(\.\d+)?\s?([kKMGTPE]i?B|B)?$/;
/** A maximum may also be a share of the disk: `80%`. */
const BYTE_SIZE_OR_PERCENT = /^(\d+(\.\d+)?\s?([kKMGTPE]i?B|B)?|(100|[1-9]?\d)%)$/;
/** A message of this block's rules: what is wrong, then how to fix it. */
export const fix = (what: string, how: string) => `${what}. Fix: ${how}`;

/** A Linux cpuset list: `0-3`, `0,1,32,33`, `0-1,32-33`; ranges ascending. */
export function isCpuList(value: string): boolean {
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(value)) return false;
  return value.split(",").every((part) => {
    const [a, b] = part.split("-").map(Number);
    return b === undefined || a <= b;
  });
}

const quantity = z.string().refine((s) => QUANTITY.test(s), {
  message: "is not a Kubernetes quantity. Fix: write it like 8Gi, 512Mi or 1G",
});

const kernelArg = z.string().superRefine((arg, ctx) => {
  if (!KERNEL_ARG.test(arg) || arg.length > MAX_KERNEL_ARG_LENGTH) {
    ctx.addIssue({
      code: "custom",
      message: fix(
        `is not a kernel argument this repository writes ('name' or 'name=value', at most ${MAX_KERNEL_ARG_LENGTH} characters, no spaces, quotes or colons)`,
        "write one argument per list entry, e.g. intel_iommu=on",
      ),
    });
  } else if (HUGEPAGE_KERNEL_ARGS.includes(arg.split("=")[0])) {
    ctx.addIssue({
      code: "custom",
      message: fix("sets hugepages, which compute.hugepages already writes", "remove it and set compute.hugepages: {pageSize, count}"),
    });
  }
});

const talosComputeSchema = z.strictObject({
  /** CPUs kept for the host and kubelet (kubelet `reservedSystemCPUs`); never given to pinned VMs. */
  reservedSystemCPUs: z.string().refine(isCpuList, {
    message: "is not a CPU list. Fix: write it like 0-3 or 0,1,32,33 (ranges ascending), ideally whole cores with their hyperthread siblings",
  }),
  /** kubelet `systemReserved`; Talos replaces its whole default map with this one, so it is written complete. */
  systemReserved: z
    .strictObject({
      memory: quantity,
      "ephemeral-storage": quantity.default("256Mi"),
      pid: z.number().int().min(1).default(100),
      /** Accepted only to reject it with a reason (reservedSystemCPUs sets it). */
      cpu: z.unknown().optional(),
    })
    .superRefine((r, ctx) => {
      if (r.cpu !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["cpu"],
          message: fix(
            "is overwritten by the kubelet, which sets systemReserved.cpu to the number of reservedSystemCPUs",
            "remove it and size reservedSystemCPUs instead",
          ),
        });
      }
    }),
  /** Pages reserved at boot (kernel arguments in the Image Factory schematic); none when absent. */
  hugepages: z
    .strictObject({
      pageSize: z.enum(Object.keys(HUGEPAGE_SIZES) as [HugepageSize, ...HugepageSize[]]),
      count: z.number().int().min(1),
    })
    .optional(),
  /** More kernel arguments for hypervisors, e.g. IOMMU for PCI passthrough. */
  extraKernelArgs: z.array(kernelArg).default([]),
});

/**
 * A disk Talos formats as a user volume (UserVolumeConfig `provisioning`), mounted at
 * /var/mnt/<name>: the keys of `openkeel:talos` that give a component a disk (its TalosDeclaration).
 */
export const userVolumeSchema = z.strictObject({
  /** CEL expression choosing the disk (Talos `provisioning.diskSelector.match`). */
  diskSelector: z.string().min(1),
  minSize: z.string().refine((s) => BYTE_SIZE.test(s), { message: "is not a size. Fix: write it like 500GB or 1TiB" }),
  maxSize: z
    .string()
    .refine((s) => BYTE_SIZE_OR_PERCENT.test(s), { message: "is not a size or a percentage. Fix: write it like 2TB or 80%" })
    .optional(),
  /** Grow the volume to the whole free disk. */
  grow: z.boolean().optional(),
});

/**
 * go-humanize's ParseBytes, which Talos uses for sizes (install diskSelector.size, volume minSize):
 * `500GB` = 500·10⁹, `1TiB` = 2⁴⁰, `1T` = 10¹², a bare number is bytes. Undefined when it is none.
 */
export function parseByteSize(text: string): bigint | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgtpe]?)(i?)(b?)$/i.exec(text.trim());
  if (!m) return undefined;
  const [, num, prefix, binary] = m;
  const power = prefix === "" ? 0 : "kmgtpe".indexOf(prefix.toLowerCase()) + 1;
  if (prefix === "" && binary !== "") return undefined;
  const base = binary ? 1024n : 1000n;
  const [whole, frac = ""] = num.split(".");
  const scale = 10n ** BigInt(frac.length);
  return (BigInt(whole + frac) * base ** BigInt(power)) / scale;
}

/** Talos' disk types of an install disk selector (v1alpha1 InstallDiskType). */
export const INSTALL_DISK_TYPES = ["ssd", "hdd", "nvme", "sd"] as const;
/** `>= 100GB`, `<500GB`, `4GB` (Talos InstallDiskSizeMatcher: an operator, then a size). */
const SIZE_MATCHER = /^(>=|<=|>|<|==)?\s*(.+)$/;

export function parseSizeMatcher(text: string): { op: ">=" | "<=" | ">" | "<" | "=="; bytes: bigint } | undefined {
  const m = SIZE_MATCHER.exec(text.trim());
  const bytes = m ? parseByteSize(m[2]) : undefined;
  return m && bytes !== undefined ? { op: (m[1] ?? "==") as ">=" | "<=" | ">" | "<" | "==", bytes } : undefined;
}

/**
 * The disk Talos installs itself on (machine.install.diskSelector): Talos turns it into a CEL
 * expression over its Disk resources and installs on the first disk it matches
 * (siderolabs/talos@v1.13.9 pkg/machinery/config/types/v1alpha1/v1alpha1_provider.go:1323-1490,
 * internal/app/machined/pkg/runtime/v1alpha1/v1alpha1_sequencer_tasks.go:1517-1538). Without one,
 * `talosctl gen config` leaves `disk: /dev/sda` (cmd/talosctl/cmd/mgmt/gen/config.go:430): absent
 * on NVMe-only machines, a data disk where /dev/sda is one.
 */
export const installDiskSchema = z
  .strictObject({
    /** `>= 200GB`, `<= 1TB`, `480GB`: go-humanize sizes, with an optional comparison. */
    size: z
      .string()
      .refine((s) => parseSizeMatcher(s) !== undefined, {
        message: "is not a size condition. Fix: write an optional comparison and a size, e.g. '<= 1TB' or '>= 200GB'",
      })
      .optional(),
    /** Globs (`*`) over the disk's attributes as Talos reads them (`talosctl get disks`). */
    model: z.string().min(1).optional(),
    serial: z.string().min(1).optional(),
    wwid: z.string().min(1).optional(),
    uuid: z.string().min(1).optional(),
    modalias: z.string().min(1).optional(),
    busPath: z.string().min(1).optional(),
    /** ssd: not rotational (NVMe included); hdd: rotational; nvme: NVMe transport; sd: MMC. */
    type: z.enum(INSTALL_DISK_TYPES).optional(),
    /** Accepted only to refuse it with Talos' reason. */
    name: z.unknown().optional(),
  })
  .superRefine((sel, ctx) => {
    if (sel.name !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["name"],
        message: fix(
          "selects by name, which Talos v1.13.9 refuses ('selector on name is not supported', v1alpha1_provider.go:1383-1386)",
          "select by serial, wwid, model, busPath, size or type",
        ),
      });
    }
    if (Object.values(sel).every((v) => v === undefined)) {
      ctx.addIssue({
        code: "custom",
        message: fix(
          "selects nothing in particular, so Talos would take the first disk it lists",
          "name the disk: its serial or wwid, or its busPath, model, type and size",
        ),
      });
    }
  });
export type InstallDiskSelector = Omit<z.infer<typeof installDiskSchema>, "name">;

const nameserver = z.string().refine((s) => parseAddress(s) !== undefined, {
  message: "is not an IP address. Fix: write the resolver's address, e.g. 10.30.0.2 (Talos' ResolverConfig takes addresses, not names)",
});
const timeServer = z.string().regex(/^[A-Za-z0-9]([A-Za-z0-9.:-]*[A-Za-z0-9])?$/, {
  message: "is not a host name or address. Fix: write the NTP server, e.g. ntp1.example.net or 10.30.0.3",
});
/** A registry as images name it (`docker.io`, `registry.k8s.io`, `registry:5000`), or `*` for every registry. */
const registryName = z.string().regex(/^(\*|[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:\d+)?)$/, {
  message: "is not a registry name. Fix: write the registry as images name it, e.g. ghcr.io or registry.k8s.io, or '*' for every registry",
});
const mirrorSchema = z.strictObject({
  endpoints: z
    .array(
      z.string().regex(/^https?:\/\/[^\s?#]+$/, {
        message: "is not a mirror endpoint URL. Fix: write http(s)://host[:port][/path], e.g. https://harbor.example.net/v2/proxy-ghcr.io",
      }),
    )
    .min(1),
  /** Use the endpoint's path as written, without Talos adding `/v2/` (Harbor's proxy projects need it). */
  overridePath: z.boolean().optional(),
  /** Never fall back to the registry itself when the mirrors fail (an air-gapped site). */
  skipFallback: z.boolean().optional(),
});

/** The keys of the block that are Talos' own: the machines' install disk, site services and hypervisor settings. */
const talosShape = {
  /** The disk every node installs Talos on, unless the node names its own (openkeel:nodes[].installDisk). */
  installDisk: installDiskSchema.optional(),
  /** The resolvers every node uses once its static address replaces DHCP (Talos' ResolverConfig). */
  nameservers: z.array(nameserver).min(1).optional(),
  /** The NTP servers every node syncs with (Talos' TimeSyncConfig). */
  timeServers: z.array(timeServer).min(1).optional(),
  /** Registry mirrors the nodes pull every image through, Talos' installer included (RegistryMirrorConfig). */
  registries: z.strictObject({ mirrors: z.record(registryName, mirrorSchema) }).optional(),
  /** Kubelet and boot settings of compute nodes; required when the stack has compute nodes. */
  compute: talosComputeSchema.optional(),
};

/** `openkeel:talos` as loaded: Talos' own keys, and the declared ones as their components' schemas gave them (read with talosKeysOf). */
export type TalosConfig = z.output<z.ZodObject<typeof talosShape>> & { readonly [key: string]: unknown };

/** What the stack's nodes are, as the block's rules read it. */
export type HasRole = (role: string) => boolean;

/**
 * A platform component's keys of `openkeel:talos`, declared by its module (its descriptor's
 * `talos`), as a component declares its block of `openkeel:platform`: what its pods need of the
 * Talos machines that the inventory does not say (a disk, a kernel module).
 */
export interface TalosDeclaration {
  /** Its keys, each with its schema (`.optional()` where a stack may leave it out). */
  keys: Readonly<Record<string, z.ZodType>>;
  /** The keys every production stack gives, with what each is, for the fix of a stack without the block. */
  required: readonly { key: string; what: string }[];
  /** Its rules against the roles of the stack's nodes (a key required where a role is), in production. */
  issues?: (talos: TalosConfig, has: HasRole) => ConfigIssue[];
  /**
   * Its keys that are disks Talos formats as user volumes (userVolumeSchema), with the volume's name
   * (Talos mounts it at /var/mnt/<name>) and the roles whose nodes get it, in order: the Talos
   * patches build them so (nodes/talos.ts).
   * @default none
   */
  volumes?: readonly { key: string; name: string; roles: readonly string[] }[];
}

/** Where Talos mounts a user volume (UserVolumeConfig: /var/mnt/<name>). */
export const userVolumePath = (name: string) => `/var/mnt/${name}`;

/** `openkeel:talos`: Talos' own keys and the declared ones; any other key is refused. */
export function talosConfigSchema(declarations: readonly TalosDeclaration[]) {
  return z.strictObject({ ...talosShape, ...Object.fromEntries(declarations.flatMap((d) => Object.entries(d.keys))) });
}

/** A component's keys of a stack's `openkeel:talos`, as the loader gave them (their schemas'). */
export function talosKeysOf<K extends Readonly<Record<string, z.ZodType>>>(talos: TalosConfig, declaration: { keys: K }): { [P in keyof K]: z.output<K[P]> } {
  return Object.fromEntries(Object.keys(declaration.keys).map((k) => [k, talos[k]])) as { [P in keyof K]: z.output<K[P]> };
}

/** The parts of the stack config the block's rules read (kept structural: no import cycle). */
interface StackShape {
  talos?: TalosConfig | undefined;
  nodes: { name: string; roles: readonly string[]; installDisk?: InstallDiskSelector | undefined }[];
}

/** `a`, `a and b`, `a, b and c`. */
const listed = (items: readonly string[]) => (items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);

/**
 * The rules of a stack whose nodes are Talos machines (its environment applies them, with the
 * declarations of the components it installs): the block is required; compute is required when
 * nodes carry the role that uses it, the declared keys where their components' rules say.
 */
export function talosBlockIssues(cfg: StackShape, declarations: readonly TalosDeclaration[]): ConfigIssue[] {
  if (cfg.talos === undefined) {
    const needs = [{ key: "compute", what: "the compute nodes' host reservation" }, ...declarations.flatMap((d) => d.required)];
    return [
      {
        path: ["talos"],
        message: fix(
          `is required in production: the Talos patches need ${listed(needs.map((n) => n.what))}`,
          `add openkeel:talos (${needs.map((n) => n.key).join(", ")}); stacks/README.md describes it`,
        ),
      },
    ];
  }
  const issues: ConfigIssue[] = [];
  const has: HasRole = (role) => cfg.nodes.some((n) => n.roles.includes(role));
  if (has("compute") && cfg.talos.compute === undefined) {
    issues.push({
      path: ["talos", "compute"],
      message: fix(
        "is required: compute nodes get the static CPU manager, which needs the CPUs and memory kept for the host",
        "add compute: {reservedSystemCPUs: '0-3', systemReserved: {memory: 8Gi}} sized for the hypervisors",
      ),
    });
  }
  const talos = cfg.talos;
  issues.push(...declarations.flatMap((d) => d.issues?.(talos, has) ?? []));
  issues.push(...siteIssues(talos, cfg.nodes));
  return issues;
}

/** Every node's install disk, names and time: what `gen config` would otherwise take from defaults and the internet. */
function siteIssues(talos: TalosConfig, nodes: StackShape["nodes"]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const undecided = nodes.filter((n) => n.installDisk === undefined);
  if (talos.installDisk === undefined && undecided.length > 0) {
    issues.push({
      path: ["talos", "installDisk"],
      message: fix(
        `is required: ${undecided.map((n) => n.name).join(", ")} name no install disk of their own, and without one \`talosctl gen config\` installs on /dev/sda (cmd/talosctl/cmd/mgmt/gen/config.go:430 at v1.13.9), which NVMe-only machines lack and which may be a data disk`,
        "add installDisk: {type: nvme, size: '<= 1TB'} (or the boot disk's model or busPath) for every node, or installDisk: {serial: …} on each node entry",
      ),
    });
  }
  if (talos.nameservers === undefined) {
    issues.push({
      path: ["talos", "nameservers"],
      message: fix(
        "is required in production: once a node's static address replaces DHCP, Talos resolves through 1.1.1.1 and 8.8.8.8 (pkg/machinery/constants/constants.go:960-966 at v1.13.9), which a datacenter may not reach",
        "add nameservers: [<your resolvers' addresses>]",
      ),
    });
  }
  if (talos.timeServers === undefined) {
    issues.push({
      path: ["talos", "timeServers"],
      message: fix(
        "is required in production: without it Talos syncs with time.cloudflare.com (constants.go:960-966 at v1.13.9), and a node that never syncs never finishes booting (TimeSyncConfig bootTimeout defaults to waiting forever)",
        "add timeServers: [<your NTP servers>]",
      ),
    });
  }
  return issues;
}

/**
 * The registries the nodes pull from that the mirrors leave out: none when the stack mirrors
 * every one of `pulledFrom` (or `*`). Required in production: a site that cannot reach them fails
 * at the first pull, and Talos' own installer is among them.
 */
export function registryMirrorIssues(cfg: Pick<StackShape, "talos">, pulledFrom: readonly string[]): ConfigIssue[] {
  const mirrors = cfg.talos?.registries?.mirrors;
  if (mirrors === undefined) {
    return [
      {
        path: ["talos", "registries"],
        message: fix(
          `is required in production: the nodes pull Talos' installer, the kubelet, the control plane and the platform's images from ${pulledFrom.join(", ")}, and a site that does not reach them fails at apply-config`,
          `add registries: {mirrors: {'*': {endpoints: [https://<your registry mirror>]}}}, or one mirror per registry (${pulledFrom.join(", ")})`,
        ),
      },
    ];
  }
  const missing = Object.hasOwn(mirrors, "*") ? [] : pulledFrom.filter((r) => !Object.hasOwn(mirrors, r));
  if (missing.length === 0) return [];
  return [
    {
      path: ["talos", "registries", "mirrors"],
      message: fix(
        `mirrors no ${missing.join(", ")}, which the nodes pull from: those pulls would go to the internet`,
        `add a mirror for ${missing.join(", ")}, or one for '*'`,
      ),
    },
  ];
}
