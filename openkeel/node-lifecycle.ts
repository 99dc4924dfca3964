// What a node's life asks of OpenKeel (docs/node-lifecycle.md): the constraints of its control plane
// and of every service (./feasibility.ts), the strict-local members a retirement moves
// (./strict-local-members.ts), and each service's own part, in its descriptor (Nova's compute
// service disabled before a hypervisor's drain, enabled when it is back, deleted when it leaves:
// ./services/nova.ts).
import type { NodeLifecycle } from "../lifecycle/contributor";
import { OPENKEEL_CONSTRAINTS } from "./feasibility";
import { OPENKEEL_SERVICES } from "./services";
import { strictLocalMemberSteps } from "./strict-local-members";

const lifecycles = OPENKEEL_SERVICES.flatMap((s) => (s.lifecycle ? [s.lifecycle] : []));

export const openkeelLifecycle: NodeLifecycle = {
  constraints: OPENKEEL_CONSTRAINTS,
  stateTaints: (n) => lifecycles.flatMap((l) => l.stateTaints?.(n) ?? []),
  steps: (t) => [...strictLocalMemberSteps(t), ...lifecycles.flatMap((l) => l.steps(t))],
};
