// The OpenKeel services as a stack file sees them: `openkeel:services.<service>`, one block per
// service (enabled, replicas, placement, values, and the service's own keys), and what a service
// needs to run. This layer knows no service by name: each is declared by its own module above it
// (openkeel/services/), and the program hands the registry's declarations to the loader
// (config/load.ts), which reads a stack against them. The config it loads carries what the layers
// below openkeel/ read of them (`serviceCatalog`: topology/services.ts tells from it whether a
// service runs).
import { z } from "zod";
import type { Role } from "./roles";
import { stackPlacementSchema } from "./placement";

/** The keys every service's block has. */
export const serviceSchema = z.strictObject({
  enabled: z.boolean().optional(),
  /** Replica counts per component, e.g. `{conductor: 1}`. */
  replicas: z.record(z.string(), z.number().int().min(0)).default({}),
  /** Per-component placement overrides; raw fields win over roles (§ 5.1 precedence). */
  placement: z.record(z.string(), stackPlacementSchema).default({}),
  /** Raw chart values merged last. */
  values: z.record(z.string(), z.unknown()).default({}),
});

/** A service's block as loaded: the common keys, and its own (typed by its module). */
export type ServiceConfig = z.infer<typeof serviceSchema> & { readonly [key: string]: unknown };

/** What a service needs to run: the layers below openkeel/ read it from the loaded config. */
export interface ServiceNeeds {
  /** `openkeel:services.<name>`, `openkeel:charts.versions.<name>`; its release is `openkeel-<name>`. */
  name: string;
  /**
   * The role it cannot run without (§ 1.2): on by default where a node has it, an error turned on without one.
   * @default none: it runs on the control plane, which every stack has
   */
  requiredRole?: Role;
  /**
   * The service it extends (the Neutron extensions): on by default with it, an error turned on without it.
   * @default none
   */
  extends?: string;
  /**
   * Its own stack keys that are secondary networks of pods (attachmentNetworkSchema, config/network.ts),
   * with what each is: the address checks hold them apart from the cluster's ranges (topology/addresses.ts).
   * @default none
   */
  attachmentNetworks?: readonly { key: string; what: string }[];
  /**
   * Roles whose nodes it makes OVN chassis while it runs, beside the hypervisors and gateways (§ 1.2,
   * § 3.1 mode B): the nodes where its pods have Neutron ports (Zun's containers, § 2.2).
   * @default none
   */
  chassisRoles?: readonly Role[];
}

/** A service as the loader reads a stack against it. */
export interface ServiceDeclaration extends ServiceNeeds {
  /**
   * What an operator may write for a node's `state:` that is no state but an act of this service,
   * with what to do instead: the loader's fix for that value (config/load.ts).
   * @default none
   */
  notStates?: Readonly<Record<string, string>>;
  /**
   * Its own keys of `openkeel:services.<name>`, beside enabled, replicas, placement and values.
   * @default none
   */
  stackKeys?: z.ZodRawShape;
}

/** The plain facts of the declarations, which the loaded config carries (a stack's config is plain data). */
export function serviceCatalog(services: readonly ServiceDeclaration[]): ServiceNeeds[] {
  return services.map((s) => ({
    name: s.name,
    ...(s.requiredRole ? { requiredRole: s.requiredRole } : {}),
    ...(s.extends ? { extends: s.extends } : {}),
    ...(s.attachmentNetworks ? { attachmentNetworks: s.attachmentNetworks } : {}),
    ...(s.chassisRoles ? { chassisRoles: s.chassisRoles } : {}),
  }));
}

/** `openkeel:services`: a block per declared service, each with its own keys; any other name is refused. */
export function servicesSchema(services: readonly ServiceDeclaration[]) {
  const block = (s: ServiceDeclaration) => (s.stackKeys ? serviceSchema.extend(s.stackKeys) : serviceSchema).optional();
  return z.strictObject(Object.fromEntries(services.map((s) => [s.name, block(s)]))).default({});
}
