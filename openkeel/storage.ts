// The volumes of the OpenKeel releases that replicate their own data (D5, § 2.1, § 2.2): Galera,
// RabbitMQ's quorum queues, OVN central's RAFT and Swift's rings. Each asks for the environment's
// strict-local class (ReleaseStorage), and the plan checks (environments/storage.ts) hold each to
// one replica on its pod's node in production.
import { releaseName } from "./names";

export interface StrictLocalVolume {
  /** As the design names it. */
  what: string;
  release: string;
  /** Key path of its storageClassName inside the release's values. */
  path: string[];
}

export const STRICT_LOCAL_VOLUMES: readonly StrictLocalVolume[] = [
  { what: "Galera", release: "openkeel-chart", path: ["infrastructure", "mariadb", "storage", "storageClassName"] },
  { what: "RabbitMQ", release: "openkeel-chart", path: ["infrastructure", "rabbitmq", "storage", "storageClassName"] },
  { what: "OVN central", release: releaseName("neutron"), path: ["ovnCentral", "storage", "storageClassName"] },
  { what: "Swift storage", release: releaseName("swift"), path: ["storage", "devices", "storageClassName"] },
];
