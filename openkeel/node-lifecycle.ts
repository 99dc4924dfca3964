// What a node's life asks of OpenKeel (docs/node-lifecycle.md): the constraints of its control plane
// and of every service (./feasibility.ts), what its releases keep on nodes (the strict-local members'
// volumes, ./strict-local-members.ts, which the storage's step moves; and what each service's
// descriptor `holds`), and each service's own part, in its descriptor (Nova's compute
// service disabled before a hypervisor's drain, enabled when it is back, deleted when it leaves:
// ./services/nova.ts).
import type { NodeLifecycle } from "../lifecycle/contributor";
import { OPENKEEL_CONSTRAINTS } from "./feasibility";
import { OPENKEEL_SERVICES } from "./services";
import { STRICT_LOCAL_HOLDINGS } from "./strict-local-members";

const lifecycles = OPENKEEL_SERVICES.flatMap((s) => (s.lifecycle ? [s.lifecycle] : []));

export const openkeelLifecycle: NodeLifecycle = {
  constraints: OPENKEEL_CONSTRAINTS,
  holds: [...STRICT_LOCAL_HOLDINGS, ...OPENKEEL_SERVICES.flatMap((s) => s.holds ?? [])],
  stateTaints: (n) => lifecycles.flatMap((l) => l.stateTaints?.(n) ?? []),
  steps: (t, held) => lifecycles.flatMap((l) => l.steps(t, held)),
};
