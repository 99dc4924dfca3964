// Runs the Pulumi program under @pulumi/pulumi's runtime mocks and records every registration
// with the options the mocks themselves drop (parent, dependsOn, protect…), in the wire form the
// engine sees (secrets as signature objects). Shared by the tests and `npm run policy`.
// PULUMI-FACTS.md § 3.
import * as pulumi from "@pulumi/pulumi";

export interface Registered {
  type: string;
  name: string;
  urn: string;
  parent: string;
  dependencies: string[];
  /** Per input property, the URNs it depends on (what the engine hands AnalyzeStack). */
  propertyDependencies: Record<string, string[]>;
  protect: boolean;
  retainOnDelete: boolean;
  custom: boolean;
  /** Inputs as serialized on the wire: secrets are `{<sig>: <secret sig>, value}` objects. */
  inputs: Record<string, any>;
  /** Outputs: the mock provider's state for custom resources, registerOutputs for components. */
  outputs: Record<string, any>;
}

export interface ProgramRun {
  resources: Registered[];
  outputs: Record<string, any>;
  byName(name: string): Registered;
  ofType(type: string): Registered[];
}

const FAKE_SECRET = "mock-generated-secret-value-0123456789";
export const MOCK_SECRET_VALUE = FAKE_SECRET;
/** Signature key and value of a secret in the wire form (`@pulumi/pulumi/runtime/rpc`). */
export const SPECIAL_SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
const PROJECT_NAME = "openkeel";

/** Outputs a provider marks secret although the program does not (random's `result`). */
const SECRET_OUTPUTS: Record<string, string[]> = {
  "random:index/randomPassword:RandomPassword": ["result"],
};

/**
 * The runtime records a stack trace on every promise it creates (for its leak report), and under
 * tsx each trace is mapped through source maps: most of a large program's time under the mocks
 * (npm run bench). Offline runs go without traces; a run that fails is run again with them, so
 * an error still comes with its stack.
 */
export async function runProgram(stack: string, config: Record<string, string>, program: () => Promise<any>): Promise<ProgramRun> {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return await runProgramOnce(stack, config, program);
  } catch {
    Error.stackTraceLimit = limit;
    return await runProgramOnce(stack, config, program);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

async function runProgramOnce(
  stack: string,
  config: Record<string, string>,
  program: () => Promise<any>,
): Promise<ProgramRun> {
  const resources: Registered[] = [];
  const byUrn = new Map<string, Registered>();
  await pulumi.runtime.setMocks(
    {
      newResource(a) {
        const state = { ...a.inputs };
        if (a.type === "random:index/randomPassword:RandomPassword") state.result = FAKE_SECRET;
        return { id: `${a.name}-id`, state };
      },
      call(a) {
        return a.inputs;
      },
    },
    PROJECT_NAME,
    stack,
    false,
  );
  const mon: any = pulumi.runtime.getMonitor();
  const origRegister = mon.registerResource.bind(mon);
  mon.registerResource = (req: any, cb: any) => {
    const propertyDependencies: Record<string, string[]> = {};
    req.getPropertydependenciesMap().forEach((v: any, k: string) => {
      const urns: string[] = v.getUrnsList();
      if (urns.length > 0) propertyDependencies[k] = urns;
    });
    const inputs = req.getObject()?.toJavaScript() ?? {};
    const rec: Registered = {
      type: req.getType(),
      name: req.getName(),
      urn: "",
      parent: req.getParent(),
      dependencies: req.getDependenciesList(),
      propertyDependencies,
      protect: req.getProtect(),
      retainOnDelete: req.getRetainondelete(),
      custom: req.getCustom(),
      inputs,
      outputs: {},
    };
    if (rec.custom) {
      // The mock provider echoes its inputs (plus what newResource adds), like Check/Create would.
      const outputs: Record<string, any> = { ...inputs };
      if (rec.type === "random:index/randomPassword:RandomPassword") outputs.result = FAKE_SECRET;
      for (const key of SECRET_OUTPUTS[rec.type] ?? []) {
        if (key in outputs) outputs[key] = { [SPECIAL_SIG_KEY]: SECRET_SIG, value: outputs[key] };
      }
      rec.outputs = outputs;
    }
    resources.push(rec);
    return origRegister(req, (err: any, resp: any) => {
      if (resp) {
        rec.urn = resp.getUrn();
        byUrn.set(rec.urn, rec);
      }
      cb(err, resp);
    });
  };
  const origOutputs = mon.registerResourceOutputs?.bind(mon);
  if (origOutputs) {
    mon.registerResourceOutputs = (req: any, cb: any) => {
      const rec = byUrn.get(req.getUrn());
      if (rec && !rec.custom) rec.outputs = req.getOutputs()?.toJavaScript() ?? {};
      return origOutputs(req, cb);
    };
  }
  pulumi.runtime.setAllConfig(config, []);
  try {
    const outputs = await pulumi.runtime.runInPulumiStack(program);
    return {
      resources,
      outputs: outputs ?? {},
      byName(name) {
        const r = resources.find((x) => x.name === name);
        if (!r) throw new Error(`no resource named ${name}; have ${resources.map((x) => x.name).join(", ")}`);
        return r;
      },
      ofType(type) {
        return resources.filter((x) => x.type === type);
      },
    };
  } finally {
    await pulumi.runtime.disconnect();
  }
}

/**
 * Call the program function the way the language host does, but outside a Stack resource, for
 * programs expected to fail before registering anything (the Stack wrapper would also report the
 * failure as an unhandled rejection).
 */
export async function programError(stack: string, config: Record<string, string>, program: () => Promise<any>): Promise<Error> {
  await pulumi.runtime.setMocks({ newResource: (a) => ({ id: a.name, state: a.inputs }), call: (a) => a.inputs }, PROJECT_NAME, stack, false);
  pulumi.runtime.setAllConfig(config, []);
  try {
    await program();
  } catch (e) {
    return e as Error;
  } finally {
    await pulumi.runtime.disconnect();
  }
  throw new Error("the program did not fail");
}
