// What OpenKeel's own workloads need of the hosts of their nodes (the host contract, plan/host.ts):
// each running service's needs, as its descriptor says them (the Ironic conductor's provisioning
// VLAN, the OVN chassis' external NIC and datapath, the Kata runtime of Zun's containers, Swift's
// capacity disk).
import type { HostContract } from "../plan/host";
import type { StackContext } from "../platform/context";
import { OPENKEEL_SERVICES } from "./services";

export function openkeelHostContract(ctx: StackContext): HostContract {
  return { needs: OPENKEEL_SERVICES.flatMap((s) => (s.host && ctx.serviceOn(s.name) ? s.host(ctx) : [])), installs: [] };
}
