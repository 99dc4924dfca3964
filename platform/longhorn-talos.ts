// Longhorn's keys of `openkeel:talos` (stacks/README.md): the disks Talos formats for it as user
// volumes, declared to the stack loader by its descriptor (platform/longhorn.ts) with the rules
// that tie them to the nodes' roles, and read back by its module and the Talos patches (nodes/talos.ts).
import type { ConfigIssue } from "../config/problems";
import { fix, talosKeysOf, userVolumeSchema, type TalosConfig, type TalosDeclaration } from "../config/talos";
import { LONGHORN_DISK_ROLES } from "./longhorn-names";

/** Talos UserVolumeConfig names: 1-34 characters, letters, digits and '-'. */
export const LONGHORN_VOLUME_NAME = "longhorn";
/** The Talos user volume of the capacity disk (openkeel:talos.capacityDisk). */
export const CAPACITY_VOLUME_NAME = "longhorn-capacity";

const keys = {
  /** The disk Talos formats for Longhorn on storage and controlPlane nodes; required when the stack has them. */
  longhornDisk: userVolumeSchema.optional(),
  /**
   * A second disk of the storage nodes, the HDD capacity tier of Swift (§ 6.3): a second Longhorn
   * disk, tagged `capacity`, which only Swift's devices use (StorageClass longhorn-capacity).
   */
  capacityDisk: userVolumeSchema.optional(),
};

export const LONGHORN_TALOS = {
  keys,
  required: [{ key: "longhornDisk", what: "the Longhorn disk" }],
  issues: (talos, has) => {
    const { longhornDisk, capacityDisk } = talosKeysOf(talos, { keys });
    const issues: ConfigIssue[] = [];
    if (LONGHORN_DISK_ROLES.some(has) && longhornDisk === undefined) {
      issues.push({
        path: ["talos", "longhornDisk"],
        message: fix(
          "is required: storage nodes keep Longhorn replicas, and controlPlane nodes their Galera, RabbitMQ and OVN central volumes (D5), on a Talos user volume, and only you know which disk to give it",
          "add longhornDisk: {diskSelector: \"disk.transport == 'nvme' && !system_disk\", minSize: 500GB}",
        ),
      });
    }
    if (capacityDisk !== undefined && !has("storage")) {
      issues.push({
        path: ["talos", "capacityDisk"],
        message: fix(
          "is the capacity disk of the storage nodes (the HDD capacity tier, § 6.3), and no node has the storage role",
          "remove capacityDisk, or give the storage role to the nodes that hold the disks",
        ),
      });
    }
    return issues;
  },
  volumes: [
    { key: "longhornDisk", name: LONGHORN_VOLUME_NAME, roles: LONGHORN_DISK_ROLES },
    { key: "capacityDisk", name: CAPACITY_VOLUME_NAME, roles: ["storage"] },
  ],
} as const satisfies TalosDeclaration;

/** The stack's Longhorn disks (the keys are checked by their rules: longhornDisk is there where disk nodes are). */
export const longhornDisks = (talos: TalosConfig) => talosKeysOf(talos, LONGHORN_TALOS);
