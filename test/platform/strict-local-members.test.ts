// Issue 47 item 2: the members whose volumes are strict-local (D5) are what their owner keeps on a
// node (`strictLocalMembers` of its holdings); moving them when the node's data is evicted is the
// storage's step (Longhorn's lifecycle), which names them from what the contributors hold (`held`).
import { describe, expect, it } from "vitest";
import type { NodeState } from "../../config/lifecycle";
import type { Role } from "../../config/roles";
import type { Holding, NodeTransition, NodeView } from "../../lifecycle/contributor";
import { OPENKEEL } from "../../openkeel/descriptor";
import { longhorn } from "../../platform/longhorn";
import { CREATE_DEFAULT_DISK_LABEL } from "../../platform/longhorn-names";

const view = (roles: Role[], state: NodeState, disk = true): NodeView => ({
  roles,
  state,
  kubernetesControlPlane: false,
  labels: disk ? { [CREATE_DEFAULT_DISK_LABEL]: "true" } : {},
  requests: [],
  registerTaints: [],
});
const retiring = (roles: Role[], disk = true): NodeTransition => ({ node: "n-1", before: view(roles, "active", disk), after: view(roles, "retiring", disk) });
const moves = (t: NodeTransition, held: readonly Holding[]) => longhorn.lifecycle!.steps(t, held).filter((s) => s.slot === "move-members");

describe("the move of the strict-local members, the storage's step for what others hold", () => {
  const held: Holding[] = [
    { role: "controlPlane", what: "the strict-local volumes of A and B", strictLocalMembers: "A and B" },
    { role: "storage", what: "Longhorn replicas", evicted: true },
    { role: "storage", what: "the strict-local volumes of C", strictLocalMembers: "C" },
  ];

  it("names the members of the node's roles from the holdings, in their order", () => {
    const [step] = moves(retiring(["controlPlane", "storage"]), held);
    expect(step.what).toBe("move the strict-local members");
    expect(step.command).toMatch(/nodeID=="n-1"/);
    // the PVs of every strict-local class: the capacity class's (prod-large's Swift devices) too
    expect(step.command).toContain("| grep -E '^(longhorn-local|longhorn-capacity) '");
    expect(step.command).toMatch(/kubectl delete pvc \(and its Pending pod\) of each A and B or C member whose volume is in both lists$/);
    expect(moves(retiring(["storage"]), held)[0].command).toMatch(/of each C member whose/);
  });

  it("no step without a strict-local holding of its roles, without a Longhorn disk, or into a state that evicts nothing", () => {
    expect(
      moves(
        retiring(["controlPlane"]),
        held.filter((h) => h.strictLocalMembers === undefined),
      ),
    ).toEqual([]);
    expect(moves(retiring(["compute"]), held)).toEqual([]);
    expect(moves(retiring(["controlPlane"], false), held)).toEqual([]);
    const maintenance: NodeTransition = { node: "n-1", before: view(["controlPlane"], "active"), after: view(["controlPlane"], "maintenance") };
    expect(moves(maintenance, held)).toEqual([]);
  });

  it("OpenKeel's holdings name its members on strict-local volumes; it takes no step of its own for them", () => {
    const members = (OPENKEEL.lifecycle!.holds ?? []).filter((h) => h.strictLocalMembers !== undefined);
    expect(members.map((h) => [h.role, h.strictLocalMembers])).toEqual([
      ["controlPlane", "Galera, RabbitMQ and OVN central"],
      ["storage", "Swift storage"],
    ]);
    expect(OPENKEEL.lifecycle!.steps(retiring(["controlPlane", "storage"]), OPENKEEL.lifecycle!.holds ?? [])).toEqual([]);
    expect(moves(retiring(["controlPlane"]), OPENKEEL.lifecycle!.holds ?? [])[0].command).toMatch(/of each Galera, RabbitMQ and OVN central member whose/);
  });
});
