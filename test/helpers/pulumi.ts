// Runs the Pulumi program under @pulumi/pulumi's runtime mocks and records every registration
// with the options the mocks themselves drop (parent, dependsOn, protect…). PULUMI-FACTS.md § 3.
import * as pulumi from "@pulumi/pulumi";

export interface Registered {
  type: string;
  name: string;
  urn: string;
  parent: string;
  dependencies: string[];
  protect: boolean;
  retainOnDelete: boolean;
  custom: boolean;
  inputs: Record<string, any>;
}

export interface ProgramRun {
  resources: Registered[];
  outputs: Record<string, any>;
  byName(name: string): Registered;
  ofType(type: string): Registered[];
}

const FAKE_SECRET = "mock-generated-secret-value-0123456789";
export const MOCK_SECRET_VALUE = FAKE_SECRET;

export async function runProgram(
  stack: string,
  config: Record<string, string>,
  program: () => Promise<any>,
): Promise<ProgramRun> {
  const resources: Registered[] = [];
  const inputsByUrn = new Map<string, Record<string, any>>();
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
    "openkeel",
    stack,
    false,
  );
  const mon: any = pulumi.runtime.getMonitor();
  const orig = mon.registerResource.bind(mon);
  mon.registerResource = (req: any, cb: any) => {
    const rec: Registered = {
      type: req.getType(),
      name: req.getName(),
      urn: "",
      parent: req.getParent(),
      dependencies: req.getDependenciesList(),
      protect: req.getProtect(),
      retainOnDelete: req.getRetainondelete(),
      custom: req.getCustom(),
      inputs: req.getObject()?.toJavaScript() ?? {},
    };
    resources.push(rec);
    return orig(req, (err: any, resp: any) => {
      if (resp) {
        rec.urn = resp.getUrn();
        inputsByUrn.set(rec.urn, rec.inputs);
      }
      cb(err, resp);
    });
  };
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
  await pulumi.runtime.setMocks({ newResource: (a) => ({ id: a.name, state: a.inputs }), call: (a) => a.inputs }, "openkeel", stack, false);
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

/** Whether a registration's dependencies include the unit (its component or any of its children). */
export function dependsOnUnit(dependencies: string[], unit: string): boolean {
  return dependencies.some((urn) => {
    const name = urn.slice(urn.lastIndexOf("::") + 2);
    return name === unit || name.startsWith(`${unit}:`);
  });
}
