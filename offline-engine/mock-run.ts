// Runs the Pulumi program under @pulumi/pulumi's runtime mocks and reports every registration with
// the options the mocks themselves drop (parent, dependsOn, protect…), in the wire form the engine
// sees (secrets as signature objects). Two ways: `runProgram` records every resource as plain data
// (the tests), `streamProgram` hands each one to a sink as it registers, properties still in their
// wire Struct, and keeps nothing (`npm run policy`: the pack judges while the program runs).
// PULUMI-FACTS.md § 3.
import { createRequire } from "node:module";
import * as pulumi from "@pulumi/pulumi";
import { RegisterResourceResponse, type RegisterResourceOutputsRequest, type RegisterResourceRequest } from "@pulumi/pulumi/proto/resource_pb";
import { Struct, type StructMessage } from "./wire";

/** What the engine knows of a registration besides its properties. */
export interface ResourceHeader {
  /** Registration order (the order the engine's AnalyzeStack lists resources). */
  index: number;
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
  /**
   * Its aliases as the engine receives them (specs: what differs from the resource's own name,
   * type and parent; or whole URNs). Absent when it has none.
   */
  aliases?: AliasSpec[];
  /** How many resource transforms it registered (they run in the engine, on it and its children). Absent when none. */
  transforms?: number;
  /** The input properties whose change makes the engine replace it (`replaceOnChanges`). Absent when none. */
  replaceOnChanges?: string[];
  /** Replaced by deleting it first (`deleteBeforeReplace`). Absent when not. */
  deleteBeforeReplace?: true;
}

/** One alias of a registration: a URN, or a spec whose empty fields are the resource's own. */
export interface AliasSpec {
  urn?: string;
  name?: string;
  type?: string;
  stack?: string;
  project?: string;
  /** The alias' parent URN (as the SDK sends it: a mock URN when it is the resource's own parent). */
  parentUrn?: string;
  /** The alias had no parent (a root-level resource before). */
  noParent?: boolean;
}

/** One registration as plain data; `Props` is how the reader types the properties (the suites read them by key path). */
export interface Registered<Props = Record<string, unknown>> extends Omit<ResourceHeader, "index"> {
  /** Inputs as serialized on the wire: secrets are `{<sig>: <secret sig>, value}` objects. */
  inputs: Props;
  /** Outputs: the mock provider's state for custom resources (the `inputs` object itself when it echoes them), registerOutputs for components. */
  outputs: Props;
}

export interface ProgramRun<Props = Record<string, unknown>> {
  resources: Registered<Props>[];
  /** The program's stack outputs. */
  outputs: Record<string, unknown>;
  byName(name: string): Registered<Props>;
  ofType(type: string): Registered<Props>[];
}

/** A Pulumi program: what index.ts exports, the suites' inline programs. */
export type Program = () => Promise<unknown>;

/** Receives a program's registrations as they happen. */
export interface RegistrationSink {
  /** The engine has a URN for it: its header and inputs. */
  registered(r: ResourceHeader, inputs: StructMessage): void;
  /** Its outputs (custom resources: right after `registered`; components: when they register them). */
  outputs(r: ResourceHeader, outputs: StructMessage): void;
}

const FAKE_SECRET = "mock-generated-secret-value-0123456789";
export const MOCK_SECRET_VALUE = FAKE_SECRET;
/** Signature key and value of a secret in the wire form (`@pulumi/pulumi/runtime/rpc`). */
export const SPECIAL_SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
const PROJECT_NAME = "openkeel";
const RANDOM_PASSWORD = "random:index/randomPassword:RandomPassword";

/**
 * The mock provider's outputs: its inputs echoed, like Check/Create would, plus what a provider
 * computes (random's `result`, which it marks secret although the program does not).
 */
function providerOutputs(type: string, inputs: StructMessage): StructMessage {
  if (type !== RANDOM_PASSWORD) return inputs;
  return Struct.fromJavaScript({ ...inputs.toJavaScript(), result: { [SPECIAL_SIG_KEY]: SECRET_SIG, value: FAKE_SECRET } });
}

/** The runtime's promise bookkeeping (@pulumi/pulumi@3.276.0 runtime/debuggable.js), replaced for offline runs. */
const debuggable = createRequire(__filename)("@pulumi/pulumi/runtime/debuggable") as { debuggablePromise: <T>(p: Promise<T>, ctx: unknown) => Promise<T> };

/**
 * Offline runs go without the runtime's debugging aids, which change no value a program registers:
 * - the stack traces it takes: one on every promise it creates and an unbounded one per resource
 *   (its source position), each mapped through source maps;
 * - its promise bookkeeping (`debuggablePromise`): each promise given three properties, two more
 *   promises and a place in a set, for the report of promises still pending when the process exits.
 *   About a third of a prod-medium run's CPU (216 → 150 ms, median of six rounds of eight runs).
 * A run that fails is run again with both (`again`), so an error still comes with its stack. The
 * suites that answer the registrations with mocks of their own run the program through it too.
 */
export async function withoutTraces<T>(run: () => Promise<T>, again: (failure: unknown) => Promise<T>): Promise<T> {
  const limit = Error.stackTraceLimit;
  const prepare = Error.prepareStackTrace;
  const wrap = debuggable.debuggablePromise;
  const restore = () => {
    Error.stackTraceLimit = limit;
    Error.prepareStackTrace = prepare;
    debuggable.debuggablePromise = wrap;
  };
  Error.stackTraceLimit = 0;
  // Resource.callsites() lifts the limit for its own trace: an empty formatter makes that one empty too
  Error.prepareStackTrace = () => "";
  debuggable.debuggablePromise = (p) => p;
  try {
    return await run();
  } catch (e) {
    restore();
    return await again(e);
  } finally {
    restore();
  }
}

/** Run the program, recording every registration as plain data. */
export async function runProgram(stack: string, config: Record<string, string>, program: Program): Promise<ProgramRun> {
  const once = async (): Promise<ProgramRun> => {
    const resources: Registered[] = [];
    // a custom resource's outputs are most often its inputs' very Struct: decoded once, one object for both
    let last: { struct: StructMessage; js: Record<string, unknown> } | undefined;
    const decode = (s: StructMessage) => (last?.struct === s ? last.js : (last = { struct: s, js: s.toJavaScript() }).js);
    const outputs = await runWithSink(stack, config, program, {
      registered(r, inputs) {
        const { index, ...header } = r;
        resources[index] = { ...header, inputs: decode(inputs), outputs: {} };
      },
      outputs(r, outputs) {
        resources[r.index].outputs = decode(outputs);
      },
    });
    const recorded = resources.filter((r) => r !== undefined);
    return {
      resources: recorded,
      outputs: outputs ?? {},
      byName(name) {
        const r = recorded.find((x) => x.name === name);
        if (!r) throw new Error(`no resource named ${name}; have ${recorded.map((x) => x.name).join(", ")}`);
        return r;
      },
      ofType(type) {
        return recorded.filter((x) => x.type === type);
      },
    };
  };
  return withoutTraces(once, once);
}

/**
 * Run the program, handing every registration to `sink` as it happens and keeping none. A run that
 * fails is repeated without the sink, for its error's stack trace.
 */
export async function streamProgram(stack: string, config: Record<string, string>, program: Program, sink: RegistrationSink): Promise<void> {
  await withoutTraces(
    () => runWithSink(stack, config, program, sink),
    async (failure) => {
      await runWithSink(stack, config, program, { registered() {}, outputs() {} });
      // the sink saw part of a run: never a verdict on it
      throw new Error(`the program of ${stack} failed, then ran when repeated: ${(failure as Error)?.message ?? String(failure)}`);
    },
  );
}

/** Registrations let through per turn of the event loop. */
const REGISTRATIONS_PER_TURN = 16;

/**
 * A program creates its resources in one go, and the mocks answer through promises only, so
 * without this a whole program would run as one burst of microtasks, and nothing the sink sends
 * (the pack's Analyze requests) would be answered before it ends. The gate lets a few registrations
 * through per turn of the event loop, so I/O is served in between, as with the engine's monitor.
 */
function ioGate(): (f: () => void) => void {
  const waiting: (() => void)[] = [];
  let next = 0;
  let scheduled = false;
  const turn = () => {
    for (let i = 0; i < REGISTRATIONS_PER_TURN && next < waiting.length; i++) waiting[next++]();
    if (next < waiting.length) setImmediate(turn);
    else {
      waiting.length = 0;
      next = 0;
      scheduled = false;
    }
  };
  return (f) => {
    waiting.push(f);
    if (!scheduled) {
      scheduled = true;
      setImmediate(turn);
    }
  };
}

type Reply<T> = (err: Error | null, resp?: T) => void;

/** The mock monitor's calls that answerRegistrations replaces (the SDK declares them with `any`; these are the proto messages it is handed), and the URN scheme it keeps. */
interface MockMonitorCalls {
  registerResource(req: RegisterResourceRequest, reply: Reply<RegisterResourceResponse>): unknown;
  registerResourceOutputs(req: RegisterResourceOutputsRequest, reply: Reply<unknown>): unknown;
  newUrn(parent: string, type: string, name: string): string;
}

/** A request's aliases as plain data, leaving out what the spec leaves empty. */
function aliasesOf(req: RegisterResourceRequest): AliasSpec[] {
  return req.getAliasesList().map((a) => {
    const spec = a.getSpec();
    if (!spec) return { urn: a.getUrn() };
    const out: AliasSpec = {};
    if (spec.getName()) out.name = spec.getName();
    if (spec.getType()) out.type = spec.getType();
    if (spec.getStack()) out.stack = spec.getStack();
    if (spec.getProject()) out.project = spec.getProject();
    if (spec.getParenturn()) out.parentUrn = spec.getParenturn();
    if (spec.getNoparent()) out.noParent = true;
    return out;
  });
}

/** What the engine knows of a registration, from the monitor's request and answer. */
function headerOf(index: number, req: RegisterResourceRequest, resp: RegisterResourceResponse): ResourceHeader {
  const propertyDependencies: Record<string, string[]> = {};
  req.getPropertydependenciesMap().forEach((v, k) => {
    const urns = v.getUrnsList();
    if (urns.length > 0) propertyDependencies[k] = urns;
  });
  const aliases = aliasesOf(req);
  return {
    index,
    type: req.getType(),
    name: req.getName(),
    urn: resp.getUrn(),
    parent: req.getParent(),
    dependencies: req.getDependenciesList(),
    propertyDependencies,
    protect: req.getProtect() ?? false,
    retainOnDelete: req.getRetainondelete() ?? false,
    custom: req.getCustom(),
    ...(aliases.length ? { aliases } : {}),
    ...(req.getTransformsList().length ? { transforms: req.getTransformsList().length } : {}),
    ...(req.getReplaceonchangesList().length ? { replaceOnChanges: req.getReplaceonchangesList() } : {}),
    ...(req.getDeletebeforereplace() ? { deleteBeforeReplace: true as const } : {}),
  };
}

/**
 * Answers the SDK's registrations in place of the mock monitor's own `registerResource`, and shows
 * `sink` every registration (through the I/O gate) and every component's outputs. The SDK's monitor
 * decodes each request's properties, hands them to the mocks, encodes what they return and keeps
 * it for `getResource` invokes: for mocks that echo their inputs, as these do, it answers with the
 * request's own Struct, and keeps nothing (the programs invoke no `getResource`). That round trip
 * cost about a fifth of the 5000-node policy run's CPU (11.3 → 8.6 s, median of three) and a
 * tenth of eight prod-medium runs'.
 */
function answerRegistrations(sink: RegistrationSink): void {
  const mon = pulumi.runtime.getMonitor() as unknown as MockMonitorCalls;
  const byUrn = new Map<string, ResourceHeader>();
  let registrations = 0;
  const gate = ioGate();
  mon.registerResource = (req, reply) => {
    const index = registrations++;
    gate(() => {
      const resp = new RegisterResourceResponse();
      resp.setUrn(mon.newUrn(req.getParent(), req.getType(), req.getName()));
      resp.setId(`${req.getName()}-id`);
      const inputs: StructMessage = req.getObject() ?? new Struct();
      const header = headerOf(index, req, resp);
      const outputs = header.custom ? providerOutputs(header.type, inputs) : inputs;
      resp.setObject(outputs);
      sink.registered(header, inputs);
      if (header.custom) sink.outputs(header, outputs);
      else byUrn.set(header.urn, header);
      reply(null, resp);
    });
  };
  mon.registerResourceOutputs = (req, reply) => {
    const header = byUrn.get(req.getUrn());
    if (header) {
      byUrn.delete(header.urn);
      sink.outputs(header, req.getOutputs() ?? new Struct());
    }
    reply(null, {});
  };
}

async function runWithSink(
  stack: string,
  config: Record<string, string>,
  program: Program,
  sink: RegistrationSink,
): Promise<Record<string, unknown> | undefined> {
  await pulumi.runtime.setMocks(
    {
      // registrations are answered by answerRegistrations, in the same way
      newResource(a) {
        return { id: `${a.name}-id`, state: a.inputs };
      },
      call(a) {
        return a.inputs;
      },
    },
    PROJECT_NAME,
    stack,
    false,
  );
  answerRegistrations(sink);
  pulumi.runtime.setAllConfig(config, []);
  try {
    return await pulumi.runtime.runInPulumiStack(program);
  } finally {
    await pulumi.runtime.disconnect();
  }
}

/**
 * Call the program function the way the language host does, but outside a Stack resource, for
 * programs expected to fail before registering anything (the Stack wrapper would also report the
 * failure as an unhandled rejection).
 */
export async function programError(stack: string, config: Record<string, string>, program: Program): Promise<Error> {
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
