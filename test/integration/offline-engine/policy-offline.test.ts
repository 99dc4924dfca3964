// The engine side of `npm run policy`, the parts that need no pack: how the pack (and the runner,
// to share one pack among stacks) reads the environment from a stack config, the program's
// registrations streamed as they happen, the Analyzer requests encoded with their properties
// appended (against the encoding the proto classes make themselves), and the cache of the pack's
// transpiled files.
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import * as A from "@pulumi/pulumi/proto/analyzer_pb";
import type { JavaScriptValue } from "google-protobuf/google/protobuf/struct_pb";
import { describe, expect, it } from "vitest";
import { environmentFromProcess, environmentOf } from "../../../policy/environment";
import { encodeAnalyzeRequest, encodeAnalyzeStack, encodeStackResource } from "../../../offline-engine/analyzer";
import program from "../../../index";
import { runProgram, streamProgram, type ResourceHeader } from "../../../offline-engine/mock-run";
import { environmentKey, pulumiConfigMap } from "../../../offline-engine/policy-run";
import { Struct, withField } from "../../../offline-engine/wire";
import { SHIPPED_STACKS, shippedRaw } from "../../helpers/stacks";

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS preload hook without type declarations (it runs under `node -r`)
const { cachedCompile } = require("../../../offline-engine/pack-transpile-cache.cjs");

describe("the environment a stack config puts the pack in", () => {
  it("kind-lab is a lab; any other environment, and none, is production (fail closed)", () => {
    expect(environmentOf({ "openkeel:environment": "kind-lab" })).toMatchObject({
      environment: "kind-lab",
      production: false,
      reason: "openkeel:environment is kind-lab",
    });
    expect(environmentOf({ "openkeel:environment": "talos-production" })).toMatchObject({ environment: "talos-production", production: true });
    expect(environmentOf({ "openkeel:config:environment": "kind-lab" }).production).toBe(false);
    const none = environmentOf({ "openkeel:topology": "lab" });
    expect(none).toMatchObject({ environment: undefined, production: true });
    expect(none.reason).toMatch(/no openkeel:environment .* judged as production/);
    expect(environmentOf({ "openkeel:environment": 7 }).production).toBe(true);
  });

  it("reads PULUMI_CONFIG as the Pulumi CLI sets it for a pack, one stack's map; unreadable is production", () => {
    for (const stack of SHIPPED_STACKS) {
      const config = pulumiConfigMap(shippedRaw(stack));
      const env = environmentFromProcess({ PULUMI_CONFIG: JSON.stringify(config), PULUMI_STACK: stack });
      expect(env.production, stack).toBe(config["openkeel:environment"] !== "kind-lab");
      // nothing of the stack it was started for: one pack serves every stack of its environment
      expect(env).toEqual(environmentOf(config));
      expect(env.reason).toBe(`openkeel:environment is ${config["openkeel:environment"]}`);
    }
    expect(environmentFromProcess({ PULUMI_CONFIG: "{not json" }).production).toBe(true);
    expect(environmentFromProcess({ PULUMI_CONFIG: "[]" }).production).toBe(true);
    expect(environmentFromProcess({}).production).toBe(true);
  });

  it("npm run policy groups the shipped stacks by what the pack decides: the lab alone, production together", () => {
    const groups = new Map<string, string[]>();
    for (const s of SHIPPED_STACKS) {
      const key = environmentKey(pulumiConfigMap(shippedRaw(s)));
      groups.set(key, [...(groups.get(key) ?? []), s]);
    }
    expect([...groups.values()]).toEqual([["lab"], SHIPPED_STACKS.filter((s) => s !== "lab")]);
    expect(environmentKey({})).toBe(environmentKey({ "openkeel:config:environment": "" }));
  });
});

describe("the program's registrations, streamed", () => {
  it("are every registration a recorded run holds, in its order, with the same inputs and outputs", async () => {
    const config = pulumiConfigMap(shippedRaw("prod-small"));
    const recorded = await runProgram("prod-small", config, program);
    const inputs: unknown[] = [];
    const outputs: unknown[] = [];
    const headers: ResourceHeader[] = [];
    await streamProgram("prod-small", config, program, {
      registered(r, i) {
        headers[r.index] = r;
        inputs[r.index] = i.toJavaScript();
      },
      outputs(r, o) {
        expect(headers[r.index]).toBe(r);
        outputs[r.index] = o.toJavaScript();
      },
    });
    expect(headers.map(({ index: _index, ...h }) => h)).toEqual(recorded.resources.map(({ inputs: _i, outputs: _o, ...h }) => h));
    expect(inputs).toEqual(recorded.resources.map((r) => r.inputs));
    // every custom resource's outputs at once; a component's when it registers them, and a remote
    // component (yaml/v2 ConfigFile, ConfigGroup) never does here: the judgement lists it with none, as a
    // recorded run keeps {}
    const silent = recorded.resources.filter((r, i) => outputs[i] === undefined);
    expect(silent.length).toBeGreaterThan(0);
    for (const r of silent) {
      expect([r.custom, r.outputs]).toEqual([false, {}]);
      expect(["kubernetes:yaml/v2:ConfigFile", "kubernetes:yaml/v2:ConfigGroup"]).toContain(r.type);
    }
    expect(recorded.resources.map((_r, i) => outputs[i] ?? {})).toEqual(recorded.resources.map((r) => r.outputs));
    expect(recorded.ofType("random:index/randomPassword:RandomPassword")[0].outputs.result).toMatchObject({ value: expect.any(String) });
    // a custom resource's echoed outputs are its inputs' own object (decoded once); random adds its result
    const echoed = recorded.resources.find((r) => r.custom && r.type !== "random:index/randomPassword:RandomPassword")!;
    expect(echoed.outputs).toBe(echoed.inputs);
    const password = recorded.ofType("random:index/randomPassword:RandomPassword")[0];
    expect(password.outputs).not.toBe(password.inputs);
  });
});

describe("a program run offline", () => {
  it("goes without the runtime's stack traces and promise bookkeeping, which change no registration, and gives both back", async () => {
    const debuggable = createRequire(__filename)("@pulumi/pulumi/runtime/debuggable");
    const wrap = debuggable.debuggablePromise;
    const limit = Error.stackTraceLimit;
    let inside: unknown;
    await runProgram("lab", {}, async () => {
      const p = Promise.resolve(1);
      inside = { limit: Error.stackTraceLimit, trace: new Error("x").stack, wrapped: debuggable.debuggablePromise(p, "ctx") !== p };
    });
    expect(inside).toEqual({ limit: 0, trace: "", wrapped: false });
    expect(debuggable.debuggablePromise).toBe(wrap);
    expect(Error.stackTraceLimit).toBe(limit);
    expect(new Error("x").stack).toMatch(/policy-offline\.test\.ts/);
  });
});

describe("Analyzer requests with their properties encoded once", () => {
  const header: ResourceHeader = {
    index: 0,
    type: "kubernetes:helm.sh/v3:Release",
    name: "openkeel-neutron",
    urn: "urn:pulumi:prod::openkeel::openkeel:openkeel:Release$kubernetes:helm.sh/v3:Release::openkeel-neutron",
    parent: "urn:pulumi:prod::openkeel::openkeel:openkeel:Release::openkeel-neutron",
    dependencies: Array.from({ length: 300 }, (_, i) => `urn:pulumi:prod::openkeel::kubernetes:core/v1:NodePatch::node-roles:node:n${i}`),
    propertyDependencies: { values: ["urn:pulumi:prod::openkeel::random:index/randomPassword:RandomPassword::metadata"] },
    protect: true,
    retainOnDelete: true,
    custom: true,
  };
  // small, over 127 bytes (a two-byte length) and over 16 KiB (three bytes)
  const bodies: Record<string, JavaScriptValue>[] = [
    { a: 1 },
    { values: { s: "x".repeat(200) } },
    { values: { list: Array.from({ length: 2000 }, (_, i) => `item-${i}`) } },
  ];

  it("decode as the messages the proto classes build", () => {
    for (const props of bodies) {
      const struct = Struct.fromJavaScript(props);
      const whole = new A.AnalyzeRequest();
      whole.setType(header.type);
      whole.setName(header.name);
      whole.setUrn(header.urn);
      const o = new A.AnalyzerResourceOptions();
      o.setProtect(true);
      o.setParent(header.parent);
      whole.setOptions(o);
      whole.setProperties(struct);
      expect(A.AnalyzeRequest.deserializeBinary(encodeAnalyzeRequest(header, struct.serializeBinary())).toObject()).toEqual(whole.toObject());

      const listed = new A.AnalyzerResource();
      listed.setType(header.type);
      listed.setName(header.name);
      listed.setUrn(header.urn);
      listed.setOptions(o);
      listed.setParent(header.parent);
      listed.setDependenciesList(header.dependencies);
      const pd = new A.AnalyzerPropertyDependencies();
      pd.setUrnsList(header.propertyDependencies.values);
      listed.getPropertydependenciesMap().set("values", pd);
      listed.setProperties(struct);
      const encoded = encodeStackResource(header, struct.serializeBinary());
      expect(A.AnalyzerResource.deserializeBinary(encoded).toObject()).toEqual(listed.toObject());

      const stack = new A.AnalyzeStackRequest();
      stack.setResourcesList([listed, listed]);
      expect(A.AnalyzeStackRequest.deserializeBinary(encodeAnalyzeStack([encoded, encoded])).toObject()).toEqual(stack.toObject());
    }
  });

  it("appends length-delimited fields 1 to 15 only (one-byte tags)", () => {
    expect([...withField(new Uint8Array([8, 1]), 2, new Uint8Array([7]))]).toEqual([8, 1, 0x12, 1, 7]);
    expect(() => withField(new Uint8Array(), 16, new Uint8Array())).toThrow(/fields 1–15/);
  });
});

describe("the pack's transpile cache", () => {
  it("transpiles each source once per set of inputs, and hands back exactly the first output", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-transpile-"));
    let compiled = 0;
    const transpile = (code: string, fileName: string) => `// ${++compiled}\n${fileName}\n${code}`;
    const a = cachedCompile(dir, "options-1", transpile);
    const first = a("export const x = 1;", "/p/index.ts");
    expect(a("export const x = 1;", "/p/index.ts")).toBe(first);
    expect(compiled).toBe(1);
    // another process (another cache object on the same folder) finds it too
    expect(cachedCompile(dir, "options-1", transpile)("export const x = 1;", "/p/index.ts")).toBe(first);
    expect(compiled).toBe(1);
    // any input changed: transpiled again
    a("export const x = 2;", "/p/index.ts");
    a("export const x = 1;", "/p/other.ts");
    cachedCompile(dir, "options-2", transpile)("export const x = 1;", "/p/index.ts");
    expect(compiled).toBe(4);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
