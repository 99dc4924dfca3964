// What OpenKeel's own workloads need of the hosts of their nodes (the host contract, plan/host.ts):
// the Ironic conductor's provisioning VLAN, the OVN chassis' external NIC and datapath, and the
// Kata runtime of Zun's containers.
import { EXTERNAL_NIC_LABEL } from "../config/roles";
import type { ComponentHostNeeds, HostContract } from "../plan/host";
import type { StackContext } from "../platform/context";
import { ironicProvisioningNetwork } from "./ironic";
import { releaseName } from "./services";
import { KATA_RUNTIME_CLASS_UNIT } from "./zun";
import { TALOS_CAPACITY_PATH } from "../platform/longhorn";

function ironicNeeds(ctx: StackContext): ComponentHostNeeds[] {
  const ref = ironicProvisioningNetwork(ctx.cfg);
  if (!ctx.serviceOn("ironic") || !ref) return [];
  return [
    {
      component: `${releaseName("ironic")}/conductor`,
      needs: [
        {
          attachment: { namespace: ref.namespace, name: ref.name },
          configPath: "openkeel:services.ironic.provisioningNetwork",
          why: "§ 2.2 (D7): the conductor's dnsmasq serves PXE on the provisioning VLAN through its Multus interface",
        },
      ],
    },
  ];
}

/**
 * § 3.1 mode B (D2): the OpenKeel chassis' ovs-vswitchd uses the kernel's openvswitch datapath, and
 * § 3.2: its init step adds the node's external NIC (the network.openkeel.io/external-nic label) to
 * the physnet bridge, so that NIC must exist on the host.
 */
function chassisNeeds(ctx: StackContext): ComponentHostNeeds[] {
  if (!ctx.serviceOn("neutron")) return [];
  return [
    {
      component: `${releaseName("neutron")}/chassis`,
      needs: [
        {
          kind: "kernelModule",
          anyOf: ["openvswitch"],
          why: "§ 3.1: ovs-vswitchd's kernel datapath (the openvswitch module)",
          fix: "load the openvswitch module on these nodes (Talos builds it in)",
        },
        {
          nodeLabel: EXTERNAL_NIC_LABEL,
          kind: "interface",
          takes: "the OVN chassis' physnet bridge",
          why: "§ 3.2: the chassis adds the node's external NIC to its physnet bridge (br-ex)",
          fix: "declare that NIC in the node's host network (openkeel:hostNetworks), or correct the label to a NIC the node has",
        },
      ],
    },
  ];
}

/**
 * § 1.2: Zun's containers run in Kata VMs: the containerd handler `kata` (the Talos
 * kata-containers extension registers it: siderolabs/extensions container-runtime/kata-containers)
 * and /dev/kvm for the VM.
 */
function kataNeeds(ctx: StackContext): ComponentHostNeeds[] {
  if (!ctx.serviceOn("zun")) return [];
  return [
    {
      component: `${KATA_RUNTIME_CLASS_UNIT}/kata`,
      needs: [
        {
          kind: "runtimeHandler",
          anyOf: ["kata"],
          why: "§ 1.2: the kata RuntimeClass's handler, which runs each Pod in a lightweight VM",
          fix: "give the containers role only to nodes whose OS has the Kata runtime (on Talos: the siderolabs/kata-containers extension, which the containers nodes' schematic carries)",
        },
        {
          kind: "device",
          anyOf: ["/dev/kvm"],
          why: "§ 1.2: a Kata container is a VM, started through /dev/kvm",
          fix: "give the containers role only to nodes with hardware virtualization (/dev/kvm)",
        },
      ],
    },
  ];
}

/**
 * § 6.3: Swift's devices on the capacity class are strict-local Longhorn volumes on the disk tagged
 * `capacity` of the pod's own node: the capacity user volume, which Talos mounts at its path.
 */
function swiftNeeds(ctx: StackContext): ComponentHostNeeds[] {
  if (!ctx.serviceOn("swift") || ctx.storage.capacityClass === undefined) return [];
  return [
    {
      component: `${releaseName("swift")}/storage`,
      needs: [
        {
          kind: "mount",
          anyOf: [TALOS_CAPACITY_PATH],
          why: `§ 6.3: its devices are ${ctx.storage.capacityClass} volumes, strict-local on the capacity disk of the pod's node`,
          fix: "give the capacity disk to every node Swift's storage pods may run on (openkeel:talos.capacityDisk: the storage nodes)",
        },
      ],
    },
  ];
}

export function openkeelHostContract(ctx: StackContext): HostContract {
  return { needs: [...ironicNeeds(ctx), ...chassisNeeds(ctx), ...kataNeeds(ctx), ...swiftNeeds(ctx)], installs: [] };
}
