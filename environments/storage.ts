// Plan checks of the StorageClasses the Plan asks for (issue 14, items 1 and 6): every class a
// release's values or an object names exists in the stack, created by a unit of the Plan or
// provided by the environment; and in production the volumes that replicate their own data (D5)
// name a class that keeps one replica on the pod's node. A class the stack file wrote is the
// stack's mistake (a check naming the key); one this repository wrote is a bug (a plain Error).
import { formatPath, valueAt, type Check } from "../config/problems";
import { type LoadedConfig } from "../config/schema";
import { STRICT_LOCAL_VOLUMES } from "../openkeel/storage";
import { LONGHORN_DRIVER, STRICT_LOCAL_PARAMETERS } from "../platform/longhorn-names";
import { allUnits, type K8sObject, type Plan } from "../plan/plan";
import type { StackStorage } from "../platform/context";
import { serviceOfRelease } from "../openkeel/registry";

const CLASS_KEY = /^storageClass(Name)?$/;

/** Where a class is asked for: the unit (and object), and the key path inside its values or object. */
interface ClassUse {
  unit: string;
  object?: string;
  path: (string | number)[];
  className: string;
}

function classUses(value: unknown, base: Omit<ClassUse, "path" | "className">, path: (string | number)[] = []): ClassUse[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => classUses(v, base, [...path, i]));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) =>
    CLASS_KEY.test(k) && typeof v === "string" ? [{ ...base, path: [...path, k], className: v }] : classUses(v, base, [...path, k]),
  );
}

/** Every storage class the Plan's releases and objects ask for. */
function planClassUses(plan: Plan): ClassUse[] {
  return allUnits(plan).flatMap((u) => {
    if (u.kind === "HelmRelease") return classUses(u.values, { unit: u.name });
    if (u.kind === "Manifests")
      return u.objects.filter((o) => o.kind !== "StorageClass").flatMap((o) => classUses(o, { unit: u.name, object: `${o.kind} ${o.metadata.name}` }));
    return [];
  });
}

function createdClasses(plan: Plan): Map<string, K8sObject> {
  const out = new Map<string, K8sObject>();
  for (const u of allUnits(plan)) if (u.kind === "Manifests") for (const o of u.objects) if (o.kind === "StorageClass") out.set(o.metadata.name, o);
  return out;
}

/** The stack key that set a release's value (its raw values override), or undefined when this repository wrote it. */
export function stackKey(cfg: LoadedConfig, unit: string, path: (string | number)[]): string | undefined {
  const service = serviceOfRelease(unit);
  const values = service ? cfg.services[service]?.values : undefined;
  if (!service || valueAt(values, path) === undefined) return undefined;
  return formatPath([`openkeel:services`, service, "values", ...path]);
}

function where(use: Pick<ClassUse, "unit" | "object" | "path">): string {
  return `${use.object ? `${use.unit} ${use.object}` : `release ${use.unit}`}, ${use.object ? "key" : "values key"} ${formatPath(use.path)}`;
}

/** What the class of a strict-local volume lacks (D5), or nothing. */
function strictLocalFaults(sc: K8sObject | undefined): string[] {
  if (!sc) return ["it is not a class this stack creates"];
  const params = (sc.parameters ?? {}) as Record<string, unknown>;
  const faults = Object.entries(STRICT_LOCAL_PARAMETERS)
    .filter(([k, want]) => params[k] !== want)
    .map(([k, want]) => `parameters.${k} is ${JSON.stringify(params[k]) ?? "unset"}, not "${want}"`);
  if (sc.provisioner !== LONGHORN_DRIVER) faults.push(`its provisioner is ${JSON.stringify(sc.provisioner)}, not ${LONGHORN_DRIVER}`);
  return faults;
}

export function storageClassChecks(plan: Plan, cfg: LoadedConfig, storage: StackStorage): Check[] {
  const created = createdClasses(plan);
  const provided = new Map(storage.provided.map((p) => [p.name, p]));
  const known = [...[...created.keys()].map((n) => `${n} (created here)`), ...storage.provided.map((p) => `${p.name} (provided by ${cfg.environment})`)];
  const checks: Check[] = [];
  const blame = (use: Pick<ClassUse, "unit" | "object" | "path">, code: string, message: string, fix: string) => {
    const key = use.object ? undefined : stackKey(cfg, use.unit, use.path);
    // nothing the stack file wrote explains it: this repository asked for it
    if (key === undefined) throw new Error(`storage classes of stack ${cfg.stack}: ${where(use)}: ${message}`);
    checks.push({ level: "error", code, message: `${where(use)}: ${message}`, fix, path: key });
  };
  for (const use of planClassUses(plan)) {
    if (created.has(use.className) || provided.has(use.className)) continue;
    blame(
      use,
      "storage-class-missing",
      `StorageClass ${use.className} does not exist in this stack: its volumes would stay Pending`,
      `name one of ${known.join(", ")}`,
    );
  }
  if (!storage.strictLocalEnforced) return checks;
  for (const volume of STRICT_LOCAL_VOLUMES) {
    const unit = allUnits(plan).find((u) => u.name === volume.release);
    if (unit?.kind !== "HelmRelease") continue; // the service is off
    const className = valueAt(unit.values, volume.path);
    if (typeof className !== "string" || !(created.has(className) || provided.has(className))) continue; // reported above, or the contract's
    const faults = strictLocalFaults(created.get(className));
    if (faults.length === 0) continue;
    blame(
      { unit: volume.release, path: volume.path },
      "d5-strict-local",
      `${volume.what} replicates its own data, but StorageClass ${className} is not one strict-local replica (${faults.join("; ")}): D5 never stacks Longhorn replicas under it`,
      `remove the override, so that it uses ${storage.strictLocalClass} (numberOfReplicas "1", dataLocality strict-local)`,
    );
  }
  return checks;
}
