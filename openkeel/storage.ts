// The volumes of the OpenKeel releases that replicate their own data (D5, § 2.1, § 2.2): Galera,
// RabbitMQ's quorum queues, and every service component whose descriptor says so (OVN central's
// RAFT, Swift's rings). Each asks for the environment's strict-local class (ReleaseStorage), and
// the plan checks (environments/storage.ts) hold each to one replica on its pod's node in production.
import type { DesignRoles } from "../placement/workloads";
import { designOf } from "./components";
import { INFRASTRUCTURE_UNIT } from "./infrastructure";
import { releaseName } from "./names";
import { OPENKEEL_SERVICES } from "./services";

export interface StrictLocalVolume {
  /** As the design names it. */
  what: string;
  release: string;
  /** Key path of its storageClassName inside the release's values. */
  path: string[];
  /** The roles of the nodes its members run on: its design row's. */
  roles: DesignRoles;
}

export const STRICT_LOCAL_VOLUMES: readonly StrictLocalVolume[] = [
  { what: "Galera", release: INFRASTRUCTURE_UNIT, path: ["infrastructure", "mariadb", "storage", "storageClassName"], roles: ["controlPlane"] },
  { what: "RabbitMQ", release: INFRASTRUCTURE_UNIT, path: ["infrastructure", "rabbitmq", "storage", "storageClassName"], roles: ["controlPlane"] },
  ...OPENKEEL_SERVICES.flatMap((s) =>
    Object.values(s.components).flatMap((c) =>
      c.strictLocalVolume
        ? [{ what: c.strictLocalVolume.what, release: releaseName(s.name), path: [...c.strictLocalVolume.path], roles: designOf(c).roles }]
        : [],
    ),
  ),
];
