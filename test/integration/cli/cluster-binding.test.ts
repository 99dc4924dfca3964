// Stacks bound to their clusters (issue 15, item 3): openkeel:cluster in the config, the explicit
// Kubernetes provider, and the program stopping on another cluster before any unit registers —
// under the runtime mocks, with the cluster's facts mocked: a kubeconfig file and the read of
// kube-system answered by the mocks.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { stringify } from "yaml";
import { afterEach, describe, expect, it } from "vitest";
import program from "../../../index";
import { liveClusterFacts, setClusterFactsUnderMocks } from "../../../components/cluster";
import { kubeconfigFiles, serverOfContext } from "../../../config/kubeconfig";
import { planStack } from "../../../environments";
import { renderPlan } from "../../../render/rendered";
import { capture } from "../../../cli/cli";
import { runProgram, withoutTraces } from "../../../offline-engine/mock-run";
import { tsCommand } from "../../../cli/ts-command";
import { clusterCommand } from "../../../pipeline/cluster-command";
import { previewStack } from "../../../review/preview";
import { planOf } from "../../helpers/plans";
import { configProblems, mutatedConfig, pulumiConfigOf, shippedRaw } from "../../helpers/stacks";

const UID = "4c1e0d52-7b0a-4f3e-9a55-2b1d3c4e5f60";
const OTHER_UID = "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a";

/** A kubeconfig file with these contexts (name → server). */
function kubeconfig(contexts: Record<string, string>): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-kubeconfig-")), "config");
  const names = Object.keys(contexts);
  fs.writeFileSync(
    file,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: names.map((n) => ({ name: `cluster-${n}`, cluster: { server: contexts[n] } })),
      contexts: names.map((n) => ({ name: n, context: { cluster: `cluster-${n}`, user: "admin" } })),
      users: [{ name: "admin", user: { token: "not-a-secret" } }],
      "current-context": names[0],
    }),
  );
  return file;
}

interface Registration {
  type: string;
  name: string;
  provider?: string;
  id?: string;
}

/**
 * The program under the mocks with the live facts (the kubeconfig in `KUBECONFIG`, the read of
 * kube-system answered with `uid`): the error it stops with, or none, and every registration.
 */
async function run(stack: string, raw: Record<string, unknown>, file: string, uid = UID): Promise<{ error?: Error; registered: Registration[] }> {
  let registered: Registration[] = [];
  const attempt = async () => {
    registered = [];
    const saved = process.env.KUBECONFIG;
    process.env.KUBECONFIG = file;
    setClusterFactsUnderMocks(liveClusterFacts);
    await pulumi.runtime.setMocks(
      {
        newResource(a) {
          registered.push({ type: a.type, name: a.name, ...(a.provider ? { provider: a.provider } : {}), ...(a.id ? { id: a.id } : {}) });
          if (a.type === "kubernetes:core/v1:Namespace" && a.id === "kube-system")
            return { id: "kube-system", state: { metadata: { name: "kube-system", uid } } };
          return { id: `${a.name}-id`, state: { ...a.inputs } };
        },
        call: (a) => a.inputs,
      },
      "openkeel",
      stack,
      false,
    );
    pulumi.runtime.setAllConfig(pulumiConfigOf(raw), []);
    try {
      // called as the language host does, outside a Stack resource: a failure is this promise's
      await program();
    } finally {
      await pulumi.runtime.disconnect();
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  };
  try {
    await withoutTraces(attempt, attempt);
    return { registered };
  } catch (e) {
    return { error: e as Error, registered };
  }
}

const medium = shippedRaw("prod-medium") as any;
const pinned = { ...medium, cluster: { ...medium.cluster, kubeSystemUID: UID } };
const STACK_FILE = "stacks/Pulumi.prod-medium.yaml";

afterEach(() => setClusterFactsUnderMocks(undefined));

describe("openkeel:cluster in the stack config", () => {
  it("a production stack must name its context and its API server", () => {
    expect(configProblems("prod-medium", (r) => delete r.cluster).map((p) => [p.path, p.message])).toEqual([
      ["openkeel:cluster", expect.stringMatching(/^is required in production: without it pulumi up would talk to whatever kubeconfig context is current$/)],
    ]);
    expect(configProblems("prod-medium", (r) => delete r.cluster.apiServer).map((p) => p.path)).toEqual(["openkeel:cluster.apiServer"]);
    expect(configProblems("prod-medium", (r) => (r.cluster.apiServer = "http://10.30.0.11:6443")).map((p) => p.path)).toEqual(["openkeel:cluster.apiServer"]);
    expect(configProblems("prod-medium", (r) => (r.cluster.kubeSystemUID = "kube-system")).map((p) => p.path)).toEqual(["openkeel:cluster.kubeSystemUID"]);
    expect(configProblems("prod-medium", (r) => (r.cluster.contxt = "x")).map((p) => p.fix)).toEqual([expect.stringContaining("did you mean 'context'")]);
  });

  it("the lab binds to kind's context by default, and index.yaml records the binding", () => {
    expect(planOf(mutatedConfig("lab", (r) => delete r.cluster)).cluster).toEqual({ context: "kind-openkeel-lab" });
    expect(planOf("lab").cluster).toEqual({ context: "kind-openkeel-lab" });
    expect(planOf("prod-medium").cluster).toEqual({ context: "admin@openkeel-prod-medium", apiServer: "https://10.30.0.11:6443" });
  });
});

describe("the kubeconfig as the provider reads it", () => {
  it("KUBECONFIG is a list of files; the first to name a context or a cluster wins; else ~/.kube/config", () => {
    expect(kubeconfigFiles({ KUBECONFIG: `/a${path.delimiter}${path.delimiter}/b` })).toEqual(["/a", "/b"]);
    expect(kubeconfigFiles({})).toEqual([path.join(os.homedir(), ".kube", "config")]);
    const first = kubeconfig({ x: "https://first:6443" });
    const second = kubeconfig({ x: "https://second:6443", y: "https://y:6443" });
    const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8") : undefined);
    expect(serverOfContext([first, second], "x", read)).toBe("https://first:6443");
    expect(serverOfContext(["/nowhere", first, second], "y", read)).toBe("https://y:6443");
    expect(serverOfContext([first], "y", read)).toBeUndefined();
  });
});

describe("a stack bound to another cluster stops the program before any unit registers", () => {
  it("the kubeconfig lacks the stack's context: nothing registers at all", async () => {
    const file = kubeconfig({ "kind-openkeel-lab": "https://127.0.0.1:41234" });
    const r = await run("prod-medium", medium, file);
    expect(pulumi.RunError.isInstance(r.error)).toBe(true);
    expect(r.error!.message).toBe(
      `${STACK_FILE}: openkeel:cluster.context: the kubeconfig (${file}) has no context 'admin@openkeel-prod-medium', so this stack's cluster cannot be reached. ` +
        "Fix: point KUBECONFIG at the administrator's kubeconfig of this stack's cluster (kubectl config get-contexts lists its contexts; kind create cluster writes kind-<cluster>), or correct openkeel:cluster.context",
    );
    expect(r.registered).toEqual([]);
  });

  it("the context points at another API server: the expected and the found one, and the fix", async () => {
    const file = kubeconfig({ "admin@openkeel-prod-medium": "https://10.40.0.11:6443/" });
    const r = await run("prod-medium", medium, file);
    expect(r.error!.message).toBe(
      `${STACK_FILE}: openkeel:cluster.apiServer: context 'admin@openkeel-prod-medium' points at https://10.40.0.11:6443/, but this stack is bound to https://10.30.0.11:6443: the kubeconfig reaches another cluster. ` +
        "Fix: use the kubeconfig of this stack's cluster; if the cluster's endpoint really moved, set openkeel:cluster.apiServer to https://10.40.0.11:6443/ in a reviewed change",
    );
    expect(r.registered).toEqual([]);
  });

  it("the live cluster's kube-system UID is another: only the provider and the read registered, no unit", async () => {
    const file = kubeconfig({ "admin@openkeel-prod-medium": "https://10.30.0.11:6443" });
    const r = await run("prod-medium", pinned, file, OTHER_UID);
    expect(r.error!.message).toBe(
      `${STACK_FILE}: openkeel:cluster.kubeSystemUID: the cluster behind context 'admin@openkeel-prod-medium' has kube-system UID ${OTHER_UID}, but this stack is bound to ${UID}: it is another cluster (or this one was rebuilt). ` +
        "Fix: use the kubeconfig of this stack's cluster; if the cluster was rebuilt on purpose, set openkeel:cluster.kubeSystemUID to the new UID in a reviewed change",
    );
    expect(r.registered.map((x) => x.type)).toEqual(["pulumi:providers:kubernetes", "kubernetes:core/v1:Namespace"]);
    // the read went through the stack's provider
    const read = r.registered.find((x) => x.id === "kube-system")!;
    expect(read.provider).toMatch(/pulumi:providers:kubernetes::cluster::/);
  });

  it("the stack's own cluster: every Kubernetes resource goes through the provider of the stack's context", async () => {
    const file = kubeconfig({ other: "https://10.99.0.1:6443", "admin@openkeel-prod-medium": "https://10.30.0.11:6443" });
    const r = await run("prod-medium", pinned, file, UID);
    expect(r.error).toBeUndefined();
    const k8s = r.registered.filter((x) => x.type.startsWith("kubernetes:") && x.id !== "kube-system");
    expect(k8s.length).toBeGreaterThan(50);
    for (const x of k8s) expect(x.provider, `${x.type} ${x.name}`).toMatch(/pulumi:providers:kubernetes::cluster::/);
    expect(r.registered.filter((x) => x.type === "pulumi:providers:kubernetes").map((x) => x.name)).toEqual(["cluster"]);
  });

  it("its provider names the context and a stable cluster identifier, not the kubeconfig's current context", async () => {
    const run = await runProgram("prod-medium", pulumiConfigOf(medium), program);
    const inputs = run.ofType("pulumi:providers:kubernetes").map((r) => r.inputs);
    // no facts under the mocks: the offline run checks nothing, but the provider is the stack's
    // and it creates by upsert: an upgrade adopts what the releases of an earlier program created
    // (provider inputs reach the engine as strings)
    expect(inputs).toEqual([
      expect.objectContaining({ context: "admin@openkeel-prod-medium", clusterIdentifier: "openkeel-prod-medium", upsertExistingObjects: "true" }),
    ]);
  });
});

describe("npm run cluster: the deploy workflow's check of its kubeconfig, offline", () => {
  const argv = (stacks: string[]) => stacks.flatMap((s) => ["--stack", s]);
  /** The real CLI: once, for the process' own exit code and streams. */
  const cli = (file: string, ...stacks: string[]) => {
    const r = spawnSync(...tsCommand(path.join(__dirname, "../../../scripts/cluster.ts"), argv(stacks)), {
      cwd: path.join(__dirname, "../../.."),
      encoding: "utf8",
      env: { ...process.env, KUBECONFIG: file },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  /** The same command in-process (pipeline/cluster-command.ts), with KUBECONFIG=file. */
  const command = (file: string, ...stacks: string[]) => capture((a, io) => clusterCommand(a, io, { ...process.env, KUBECONFIG: file }), argv(stacks));

  it("exit 0 when the context is there and points at the stack's API server", async () => {
    const r = await command(
      kubeconfig({ "admin@openkeel-prod-medium": "https://10.30.0.11:6443", "kind-openkeel-lab": "https://127.0.0.1:40001" }),
      "prod-medium",
      "lab",
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("prod-medium: context admin@openkeel-prod-medium, apiServer https://10.30.0.11:6443, kube-system UID (not pinned)");
    expect(r.stdout).toContain("lab: context kind-openkeel-lab, apiServer (any: bound by context only)");
  });

  it("exit 1 with the key, what was found and the fix when the kubeconfig is another cluster's", async () => {
    const file = kubeconfig({ "admin@openkeel-prod-medium": "https://10.40.0.11:6443" });
    const r = cli(file, "prod-medium");
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      "stacks/Pulumi.prod-medium.yaml: openkeel:cluster.apiServer: context 'admin@openkeel-prod-medium' points at https://10.40.0.11:6443, but this stack is bound to https://10.30.0.11:6443. " +
        "Fix: use the kubeconfig of this stack's cluster; if its endpoint really moved, change openkeel:cluster.apiServer in a reviewed change",
    );
    expect((await command(file, "lab")).stderr).toContain(`openkeel:cluster.context: the kubeconfig (${file}) has no context 'kind-openkeel-lab'`);
  });

  it("exit 1 saying so when the kubeconfig file does not exist (issue 21)", async () => {
    const file = path.join(os.tmpdir(), `openkeel-no-kubeconfig-${process.pid}`);
    const r = await command(file, "prod-medium");
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `stacks/Pulumi.prod-medium.yaml: openkeel:cluster.context: the kubeconfig file ${file} does not exist ($KUBECONFIG), so no context 'admin@openkeel-prod-medium' can be found. ` +
        "Fix: set KUBECONFIG to the administrator's kubeconfig of this stack's cluster, or write it to ~/.kube/config",
    );
  });
});

describe("the preview of a change of binding", () => {
  const render = (cfg: ReturnType<typeof mutatedConfig>) => {
    const r = planStack(cfg);
    return new Map(renderPlan(r.plan!, r.placement).map((f) => [f.path, f.content]));
  };
  const base = render(mutatedConfig("prod-medium", () => {}));

  it("a warning naming what moved; pinning the UID for the first time is no move", () => {
    const moved = previewStack("prod-medium", base, render(mutatedConfig("prod-medium", (r) => (r.cluster.apiServer = "https://10.30.0.10:6443"))));
    expect(moved.findings).toEqual([
      expect.objectContaining({
        level: "warning",
        code: "cluster-binding",
        message: "the stack is bound to another cluster: openkeel:cluster.apiServer https://10.30.0.11:6443 → https://10.30.0.10:6443",
      }),
    ]);
    const pinnedUid = previewStack("prod-medium", base, render(mutatedConfig("prod-medium", (r) => (r.cluster.kubeSystemUID = UID))));
    expect(pinnedUid.findings).toEqual([]);
    expect(pinnedUid.settings.map((c) => c.path.join("."))).toEqual(["cluster.kubeSystemUID"]);
  });
});
