// The stack configuration: one zod schema, two sources (Pulumi config in index.ts, the stack YAML
// file in the offline scripts). Unknown keys are errors everywhere: a misspelt key that is silently
// ignored is exactly the quiet misconfiguration this repository exists to prevent. The OpenKeel
// services are not known here: the schema is built for the services the loader is given (the
// registry's, openkeel/services/; ./services.ts), their blocks and their charts' versions.
import { z } from "zod";
// zod compiles a fast path (new Function) for each schema on its first parse: a cost that only pays
// off over many parses of one schema, while a render parses each contract a few times (npm run bench).
z.config({ jitless: true });
import { BRIDGE_MAPPINGS_ANNOTATION, chassisLabelKey, LABEL_PROFILES, ROLES, roleOfLabelKey, ZONE_LABEL } from "./roles";
import { installDiskSchema, talosConfigSchema, type TalosConfig, type TalosDeclaration } from "./talos";
import { platformConfigSchema, type PlatformConfig, type SettingsDeclaration, type SettingsNeeds } from "./platform";
import { networkConfigSchema } from "./network";
import { hostNetworkSchema } from "./host-network";
import { clusterSchema } from "./cluster";
import { DEFAULT_STATE, NODE_STATES } from "./lifecycle";
import { DNS_SUBDOMAIN, isLabelKey } from "./k8s";
import { closest } from "./suggest";
import type { MachineFacts } from "./facts";
import { servicesSchema, type ServiceConfig, type ServiceDeclaration, type ServiceNeeds } from "./services";

export const PROJECT = "openkeel";
/** The environments' names: environments/registry.ts says what each one is, and nothing below it tells them apart. */
const ENVIRONMENT_NAMES = ["kind-lab", "talos-production"] as const;
export type Environment = (typeof ENVIRONMENT_NAMES)[number];
const TOPOLOGIES = ["lab", "small", "medium", "large"] as const;
export type Topology = (typeof TOPOLOGIES)[number];

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^(([0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}|(([0-9a-fA-F]{1,4}:){0,6}[0-9a-fA-F]{1,4})?::(([0-9a-fA-F]{1,4}:){0,6}[0-9a-fA-F]{1,4})?)$/;
/** Exact versions only: `1.2.3`, `v1.2.3`, `1.2.3-rc.1`. No ranges, no `latest`. */
export const PINNED_VERSION = /^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

function isLabelValue(value: string): boolean {
  return value.length <= 63 && LABEL_VALUE.test(value);
}

function isIP(value: string): boolean {
  return IPV4.test(value) || IPV6.test(value);
}

/** What is wrong with openkeel:taints: the role a list misspells, by name, with the nearest role. */
function taintsProblem(value: unknown): string {
  const bad = Array.isArray(value) ? value.find((r) => !(ROLES as readonly unknown[]).includes(r)) : undefined;
  if (bad !== undefined) {
    const near = typeof bad === "string" ? closest(bad, ROLES) : undefined;
    return `its entry ${JSON.stringify(bad)} is not a role (${ROLES.join(", ")}). Fix: ${near ? `did you mean '${near}'? ` : ""}write only roles, e.g. taints: [compute, network]`;
  }
  return `must be true, false or a list of roles (${ROLES.join(", ")}). Fix: write taints: true, taints: false or taints: [compute, network]`;
}

/** What is wrong with an address that is none: a prefix length, or a number out of range. */
function ipProblem(value: string): string {
  if (value.includes("/")) return "is not an IPv4 or IPv6 address. Fix: write the node's address alone, without a prefix length, e.g. 10.20.0.11";
  if (/^\d+(\.\d+){3}$/.test(value))
    return "is not an IPv4 address: each of its four numbers is 0 to 255. Fix: correct the number out of range, e.g. 10.20.0.11";
  return "is not an IPv4 or IPv6 address. Fix: write the node's address, e.g. 10.20.0.11";
}

const labelValue = z.string().refine(isLabelValue, {
  message:
    "is not a valid label value (at most 63 characters: letters, digits, '-', '_', '.', starting and ending with a letter or digit). Fix: write it like zone-a or bond1, quoted if it could read as a number",
});

const pinnedVersion = z.string().regex(PINNED_VERSION, {
  message: "is not a pinned version (no 'latest', no ranges). Fix: write an exact version such as 1.12.1 or v1.16.2",
});

/** One `physnet:bridge` pair: a physnet name, and an OVS bridge name (a Linux interface name, at most 15 characters). */
const BRIDGE_MAPPING = /^([A-Za-z0-9_.-]+):([A-Za-z0-9_.-]{1,15})$/;

/**
 * `physnet:bridge[,physnet:bridge]`, each physnet and each bridge once: Neutron parses bridge
 * mappings with unique keys and unique values (neutron-lib neutron_lib/utils/helpers.py
 * parse_mappings, whose defaults are unique_keys=True, unique_values=True).
 */
const bridgeMappingsSchema = z.string().superRefine((value, ctx) => {
  const pairs = value.split(",").map((entry) => BRIDGE_MAPPING.exec(entry));
  if (pairs.some((m) => m === null)) {
    ctx.addIssue({
      code: "custom",
      message:
        "is not a list of physnet:bridge pairs. Fix: write physnet1:br-ex, or physnet1:br-ex,physnet2:br-vlan (letters, digits, '-', '_' and '.', no spaces; a bridge name has at most 15 characters)",
    });
    return;
  }
  const seen = { physnet: new Set<string>(), bridge: new Set<string>() };
  for (const [, physnet, bridge] of pairs as RegExpExecArray[]) {
    if (seen.physnet.has(physnet)) {
      ctx.addIssue({
        code: "custom",
        message: `maps physnet '${physnet}' twice, and OpenStack's parser of bridge mappings refuses a repeated physnet. Fix: map each physnet to one bridge`,
      });
    }
    if (seen.bridge.has(bridge)) {
      ctx.addIssue({
        code: "custom",
        message: `maps bridge '${bridge}' to two physnets, and OpenStack's parser of bridge mappings refuses a repeated bridge. Fix: give each physnet a bridge of its own`,
      });
    }
    seen.physnet.add(physnet);
    seen.bridge.add(bridge);
  }
});

const nodeSchema = z.strictObject({
  name: z.string().max(253).regex(DNS_SUBDOMAIN, {
    message: "is not a valid node name (lower-case DNS subdomain: a-z, 0-9, '-', '.')",
  }),
  roles: z.array(z.enum(ROLES)).default([]),
  /** The node also runs etcd and kube-apiserver (Talos controlplane machine type). */
  kubernetesControlPlane: z.boolean().default(false),
  zone: labelValue.optional(),
  internalIP: z
    .string()
    .refine(isIP, { error: (issue) => ipProblem(String(issue.input)) })
    .optional(),
  /** Extra labels applied with the role labels (e.g. network.openkeel.io/external-nic). */
  labels: z.record(z.string(), labelValue).default({}),
  /** The physnet bridge mappings of the node's OVN chassis (§ 3.2, D3): a Node annotation. */
  bridgeMappings: bridgeMappingsSchema.optional(),
  /** Where the node is in its life (config/lifecycle.ts, docs/node-lifecycle.md). */
  state: z.enum(NODE_STATES).default(DEFAULT_STATE),
  /** The entry of openkeel:hostNetworks that declares its host's links. */
  hostNetwork: z.string().optional(),
  /** The disk this node installs Talos on, instead of openkeel:talos.installDisk (e.g. by its serial). */
  installDisk: installDiskSchema.optional(),
  /** The machine this node is: its hardware facts, stacks/facts/<stack>/<machine>.yaml (npm run facts). */
  machine: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, {
      message:
        "is not a machine name (letters, digits, '.', '_', '-'; at most 63). Fix: write the name its facts file has, stacks/facts/<stack>/<machine>.yaml",
    })
    .optional(),
});
export type NodeConfig = z.infer<typeof nodeSchema>;

/** What `openkeel:charts.versions` pins: the infrastructure chart (openkeel-chart) and each service's chart, by its name. */
const INFRASTRUCTURE_CHART_KEY = "infrastructure";

/** An internal mirror of every artifact (air-gapped clouds): a base URL without query or trailing slash. */
const mirrorSchema = z.strictObject({
  // credentials in it are refused by the loader, like in any URL of the config (config/load.ts)
  url: z.string().regex(/^https?:\/\/[A-Za-z0-9.-]+(:\d+)?(\/[A-Za-z0-9._~%-]+)*$/, {
    message:
      "is not a mirror base URL. Fix: write http(s)://host[:port][/path], without a trailing slash, query or fragment, e.g. https://mirror.example.internal/openkeel",
  }),
});

/** Where the OpenKeel charts come from; unset keys fall back to platform/versions.ts. */
function chartsSchema(services: readonly ServiceDeclaration[]) {
  const keys = [INFRASTRUCTURE_CHART_KEY, ...services.map((s) => s.name)];
  return z.strictObject({
    repository: z
      .string()
      .regex(/^(oci|https):\/\/[^\s/]+(\/[^\s/]+)*$/, {
        message:
          "is not a chart source. Fix: write an OCI registry path such as oci://registry.example.org/openkeel/charts or a Helm repository URL https://…, without a trailing slash",
      })
      .optional(),
    /** Version of every OpenKeel chart that `versions` does not name. */
    version: pinnedVersion.optional(),
    versions: z.strictObject(Object.fromEntries(keys.map((k) => [k, pinnedVersion.optional()]))).default({}),
  });
}

const HOST_NETWORK_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const HOST_NETWORK_NAME_MESSAGE = "is not a host network name (lower-case letters, digits and '-'). Fix: name it after the kind of machine, e.g. hypervisor";

/** The node's host network is one the stack declares. */
function hostNetworkRule(node: NodeConfig, i: number, ctx: z.RefinementCtx, declared: Record<string, unknown> | undefined): void {
  if (node.hostNetwork === undefined || (declared !== undefined && Object.hasOwn(declared, node.hostNetwork))) return;
  const names = Object.keys(declared ?? {});
  const near = closest(node.hostNetwork, names);
  ctx.addIssue({
    code: "custom",
    path: ["nodes", i, "hostNetwork"],
    message:
      names.length === 0
        ? `names host network '${node.hostNetwork}', and the stack declares none. Fix: declare it under openkeel:hostNetworks (its bonds, VLANs and nodeAddress; stacks/README.md)`
        : `names host network '${node.hostNetwork}', which openkeel:hostNetworks does not declare. Fix: ${near ? `did you mean '${near}'? ` : ""}name one of ${names.join(", ")}, or declare it`,
  });
}

/** Rules across a node's keys: each role once, no label this repository writes from other keys, a declared host network. */
function nodeRules(node: NodeConfig, i: number, ctx: z.RefinementCtx, hostNetworks?: Record<string, unknown>): void {
  hostNetworkRule(node, i, ctx, hostNetworks);
  const seen = new Set<string>();
  node.roles.forEach((role, j) => {
    if (seen.has(role)) {
      ctx.addIssue({
        code: "custom",
        path: ["nodes", i, "roles", j],
        message: `role '${role}' is listed twice. Fix: list each role once`,
      });
    }
    seen.add(role);
  });
  for (const key of Object.keys(node.labels)) {
    const path = ["nodes", i, "labels", key];
    if (!isLabelKey(key)) {
      ctx.addIssue({
        code: "custom",
        path,
        message:
          "is not a valid label key ([prefix/]name: a DNS subdomain prefix and a name of at most 63 characters). Fix: use letters, digits, '-', '_' and '.' only, e.g. network.openkeel.io/external-nic",
      });
    } else if (roleOfLabelKey(key)) {
      ctx.addIssue({
        code: "custom",
        path,
        message: `is a role label, which this repository writes from roles. Fix: remove it and add '${roleOfLabelKey(key)!.role}' to the node's roles`,
      });
    } else if (key === ZONE_LABEL) {
      ctx.addIssue({
        code: "custom",
        path,
        message: "is the zone label. Fix: remove it and set the node's zone: key instead",
      });
    } else if (key === BRIDGE_MAPPINGS_ANNOTATION) {
      ctx.addIssue({
        code: "custom",
        path,
        message: `holds the node's bridge mappings, which are a Node annotation here (a label value cannot hold ':'). Fix: remove it and set the node's bridgeMappings: key instead, e.g. bridgeMappings: physnet1:br-ex`,
      });
    } else if (LABEL_PROFILES.some((p) => chassisLabelKey(p) === key)) {
      ctx.addIssue({
        code: "custom",
        path,
        message:
          "is the OVN chassis label, which this repository writes on every compute and network node (and on containers nodes while their service runs). Fix: remove it; give the node one of those roles instead",
      });
    }
  }
}

/**
 * HorizontalPodAutoscalers of the public APIs (§ 6.3: "APIs scaled by HPA"). Three replicas at
 * least: the APIs' PodDisruptionBudgets keep 2 available (§ 2), so fewer would block every drain.
 */
const autoscalingSchema = z.strictObject({
  apis: z.strictObject({
    minReplicas: z.number().int().min(1),
    maxReplicas: z.number().int().min(1),
    /** Average CPU use, in percent of the pods' requests, that the HPA keeps them at. */
    targetCPUUtilizationPercentage: z.number().int().min(1).max(100).default(70),
  }),
});
export type AutoscalingConfig = z.infer<typeof autoscalingSchema>;

/**
 * What a stack is read against, declared by the modules above this layer: the OpenKeel services
 * (the registry's, in install order: openkeel/services/) and the platform components that have
 * settings or keys of `openkeel:talos` (each environment's: environments/registry.ts).
 */
export interface StackDeclarations {
  services: readonly ServiceDeclaration[];
  platform: readonly SettingsDeclaration[];
  talos: readonly TalosDeclaration[];
}

/**
 * The schema of a stack read against the declarations given: the services' blocks of
 * `openkeel:services`, their charts' `openkeel:charts.versions`, the components' blocks of
 * `openkeel:platform`, their keys of `openkeel:talos`. Built once per declarations.
 */
export function configSchemaOf(declarations: StackDeclarations) {
  let schema = schemas.get(declarations);
  if (!schema) schemas.set(declarations, (schema = buildConfigSchema(declarations)));
  return schema;
}

const schemas = new WeakMap<StackDeclarations, ReturnType<typeof buildConfigSchema>>();

function buildConfigSchema({ services, platform, talos }: StackDeclarations) {
  return z
    .strictObject({
      environment: z.enum(ENVIRONMENT_NAMES),
      topology: z.enum(TOPOLOGIES),
      labelProfile: z.enum(LABEL_PROFILES).optional(),
      /** true: every role taints its nodes; a list: only those roles do; false: no taints (§ 1.4). */
      taints: z.union([z.boolean(), z.array(z.enum(ROLES))], { error: (issue) => taintsProblem(issue.input) }).default(false),
      nodes: z.array(nodeSchema).min(1),
      services: servicesSchema(services),
      /** The fabric speaks BGP: Neutron's ovn-bgp-agent announces FIPs and provider networks (§ 3.1, D3). */
      bgp: z.boolean().default(false),
      /** HorizontalPodAutoscalers of the public APIs, with these bounds (§ 6.3, the large topology). */
      autoscaling: autoscalingSchema.optional(),
      charts: chartsSchema(services).default({ versions: {} }),
      /** Fetch every chart and upstream manifest from this mirror instead of the internet (plan/mirror.ts). */
      mirror: mirrorSchema.optional(),
      talos: talosConfigSchema(talos).optional(),
      platform: platformConfigSchema(platform),
      /** The node subnet and the cluster's pod, service and join ranges, where the stack owns them (its environment's rules). */
      network: networkConfigSchema.optional(),
      /** The cluster the stack deploys to: kube context and identity (config/cluster.ts). */
      cluster: clusterSchema.optional(),
      /** The hosts' links, per kind of machine, named by the nodes (config/host-network.ts). */
      hostNetworks: z.record(z.string().regex(HOST_NETWORK_NAME, { message: HOST_NETWORK_NAME_MESSAGE }), hostNetworkSchema).optional(),
      /**
       * Protected units (they own data) whose removal this stack allows: the one reviewed way to let
       * one go with deploy-on-merge (docs/operating.md, "Removing a unit that owns data").
       */
      allowRemoval: z.array(z.string().min(1)).default([]),
    })
    .superRefine((cfg, ctx) => cfg.nodes.forEach((node, i) => nodeRules(node, i, ctx, cfg.hostNetworks)));
}

/**
 * A stack config as the schema gives it, and what it was read against; its environment's config
 * rules apply on top (environments/).
 */
export type Config = Omit<z.infer<ReturnType<typeof buildConfigSchema>>, "services" | "charts" | "platform" | "talos"> & {
  services: Partial<Record<string, ServiceConfig>>;
  talos?: TalosConfig | undefined;
  platform: PlatformConfig;
  /** The platform components' blocks of `openkeel:platform`, with what the layers below platform/ read of them. */
  platformCatalog: readonly SettingsNeeds[];
  charts: { repository?: string | undefined; version?: string | undefined; versions: Partial<Record<string, string>> };
  /** The OpenKeel services of the registry, in install order, with what each needs to run (config/services.ts). */
  serviceCatalog: readonly ServiceNeeds[];
};

/** Where a raw config came from, for error messages. */
export interface ConfigSource {
  /** Stack name, e.g. `prod-medium`. */
  stack: string;
  /** File to name in errors, e.g. `stacks/Pulumi.prod-medium.yaml`. */
  file: string;
}

export interface LoadedConfig extends Config {
  stack: string;
  file: string;
  /** The hardware facts of its machines, by machine (stacks/facts/<stack>/, config/facts.ts); none read: undefined. */
  facts?: Record<string, MachineFacts> | undefined;
}
