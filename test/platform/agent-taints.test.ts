// A platform component declares the taint its own act puts on a node that every node agent must
// tolerate (NodeLifecycle.agentTaints: Medik8s' NMO drain), and every stack's node agents get the
// tolerations of those of every component of the registry, installed or not (issue 47 item 2:
// config/ no longer names the component behind the drain taint).
import { describe, expect, it } from "vitest";
import { nodeAgentTolerations, NODE_STATE_TAINTS } from "../../config/lifecycle";
import { resolveStack } from "../../environments";
import { environmentComponents } from "../../environments/registry";
import { nodeAgentTaints } from "../../environments/resolve";
import type { PlatformComponent } from "../../platform/component";
import { medik8s } from "../../platform/medik8s";
import { shippedConfig } from "../helpers/stacks";

const DRAIN = { key: "medik8s.io/drain", operator: "Exists", effect: "NoSchedule" };

describe("node agents tolerate the taints the components declare (agentTaints)", () => {
  it("the registry's list: the repository's own taints, then Medik8s' drain, from its lifecycle", () => {
    expect(medik8s.lifecycle?.agentTaints?.map((t) => t.taint)).toEqual([{ key: "medik8s.io/drain", effect: "NoSchedule" }]);
    expect(nodeAgentTaints()).toEqual([...NODE_STATE_TAINTS, ...medik8s.lifecycle!.agentTaints!]);
  });

  it("a stack that does not install Medik8s (the lab) still tolerates its drain: one toleration set for every stack", () => {
    const lab = resolveStack(shippedConfig("lab"));
    expect(lab.components).not.toContain(medik8s);
    expect(lab.ctx.agentTolerations).toContainEqual(DRAIN);
    expect(resolveStack(shippedConfig("prod-medium")).ctx.agentTolerations).toEqual(lab.ctx.agentTolerations);
  });

  it("without Medik8s' declaration, nothing tolerates its drain", () => {
    const { agentTaints: _dropped, ...bare } = medik8s.lifecycle!;
    const registry = environmentComponents().map((c): PlatformComponent => (c === medik8s ? { ...c, lifecycle: bare } : c));
    expect(nodeAgentTolerations(nodeAgentTaints(registry))).not.toContainEqual(DRAIN);
    expect(nodeAgentTolerations(nodeAgentTaints())).toContainEqual(DRAIN);
  });
});
