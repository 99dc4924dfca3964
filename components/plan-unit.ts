// One deployable unit of the Plan as a Pulumi ComponentResource, typed by the unit
// (`openkeel:<area>:<Name>`): a Helm release, the objects this repository writes, or a pinned
// upstream manifest, each child with `{ parent: this }`.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { APPLY_AS_PATCH_ANNOTATION, OBJECT_PATCH_FIELD_MANAGER, type HelmReleaseUnit, type K8sObject, type PatchedFields, type Unit } from "../plan/plan";
import { componentRenameOptions, renameOptions } from "./renames";
import { postRenderExecutable, postRenderRecord } from "./post-render";
import { resolveSecrets } from "./stack-secrets";
import { isPriorityClass, PRIORITY_CLASS_IMMUTABLE } from "../platform/priority-classes";

/** Field manager of the role-label patches: stable, so later runs update rather than conflict. */
const NODE_PATCH_FIELD_MANAGER = "openkeel-node-roles";

/** The arguments of a PlanUnit: the unit of the Plan it applies, and the stack's generated secrets. */
export interface UnitArgs {
  /** The unit (a Helm release, objects, or a pinned upstream manifest); its kind decides the children. */
  unit: Unit;
  /** The stack's generated secrets by name (StackSecrets.values): each SecretRef in the unit's values resolves to one. */
  secrets: Record<string, pulumi.Output<string>>;
}

/** Pulumi resource name of an object inside its unit. */
function objectResourceName(unitName: string, o: K8sObject): string {
  const ns = o.metadata.namespace ? `${o.metadata.namespace}/` : "";
  return `${unitName}:${o.kind.toLowerCase()}:${ns}${o.metadata.name}`;
}

function helmRelease(unit: HelmReleaseUnit, secrets: UnitArgs["secrets"], opts: pulumi.CustomResourceOptions) {
  const oci = unit.chart.repository.startsWith("oci://");
  // the design's requirements the chart reads no value for (plan/post-render.ts)
  const postrender = postRenderExecutable(unit);
  return new k8s.helm.v3.Release(
    unit.name,
    {
      name: unit.release,
      namespace: unit.namespace,
      chart: oci ? `${unit.chart.repository.replace(/\/$/, "")}/${unit.chart.chart}` : unit.chart.chart,
      version: unit.chart.version,
      ...(oci ? {} : { repositoryOpts: { repo: unit.chart.repository } }),
      values: resolveSecrets(unit.values, secrets) as pulumi.Input<Record<string, unknown>>,
      skipCrds: unit.skipCrds ?? false,
      // Namespaces are objects of the plan (with their pod-security labels), never created by Helm.
      createNamespace: false,
      atomic: false,
      ...(postrender ? { postrender } : {}),
    },
    opts,
  );
}

function manifestObject(unitName: string, o: K8sObject, secrets: UnitArgs["secrets"], opts: pulumi.CustomResourceOptions) {
  const name = objectResourceName(unitName, o);
  if (o.apiVersion === "v1" && o.kind === "Node") {
    // Nodes are never created or deleted here: a server-side-apply patch owns only our labels
    // (and spec.unschedulable of a node that is not active), and deleting the patch hands them
    // back (relinquish), leaving the Node in place.
    return new k8s.core.v1.NodePatch(
      name,
      {
        metadata: {
          name: o.metadata.name,
          labels: o.metadata.labels,
          annotations: { ...o.metadata.annotations, "pulumi.com/patchFieldManager": NODE_PATCH_FIELD_MANAGER },
        },
        ...(o.spec !== undefined ? { spec: o.spec as k8s.types.input.core.v1.NodeSpecPatch } : {}),
      },
      opts,
    );
  }
  if (o.metadata.annotations?.[APPLY_AS_PATCH_ANNOTATION] === "patch") {
    const { [APPLY_AS_PATCH_ANNOTATION]: _marker, ...annotations } = o.metadata.annotations;
    const patch = { ...o, metadata: { ...o.metadata, annotations: { ...annotations, "pulumi.com/patchFieldManager": OBJECT_PATCH_FIELD_MANAGER } } };
    return new k8s.apiextensions.CustomResourcePatch(name, resolveSecrets(patch, secrets) as k8s.apiextensions.CustomResourcePatchArgs, opts);
  }
  const body = resolveSecrets(o, secrets) as Record<string, pulumi.Input<unknown>>;
  if (o.apiVersion === "v1") {
    // Core kinds keep their own type tokens (kubernetes:core/v1:<Kind>).
    switch (o.kind) {
      case "Namespace":
        return new k8s.core.v1.Namespace(name, body as k8s.core.v1.NamespaceArgs, opts);
      case "Secret":
        return new k8s.core.v1.Secret(name, body as k8s.core.v1.SecretArgs, opts);
      case "ConfigMap":
        return new k8s.core.v1.ConfigMap(name, body as k8s.core.v1.ConfigMapArgs, opts);
      case "Service":
        return new k8s.core.v1.Service(name, body as k8s.core.v1.ServiceArgs, opts);
      case "ServiceAccount":
        return new k8s.core.v1.ServiceAccount(name, body as k8s.core.v1.ServiceAccountArgs, opts);
      default:
        throw new Error(`no Pulumi type for core kind ${o.kind} (object ${o.metadata.name})`);
    }
  }
  // For every grouped API the generic resource's token `kubernetes:<group>/<version>:<Kind>` is the
  // provider's own, so policies and diffs see StorageClasses, CRs… as what they are.
  return new k8s.apiextensions.CustomResource(name, body as k8s.apiextensions.CustomResourceArgs, { ...opts, ...replaceOptions(o) });
}

/**
 * A PriorityClass whose value or preemption policy changes is replaced, the old one deleted first:
 * the API refuses to update those fields, the provider would try (platform/priority-classes.ts),
 * and the new class has the same name. The engine replaces only the class: the units that use it
 * name it by a literal, not an output of it, so no dependent is replaced with it (pulumi/pulumi
 * pkg/resource/deploy/step_generator.go, calculateDependentReplacements: property dependencies only).
 */
function replaceOptions(o: K8sObject): pulumi.CustomResourceOptions {
  return isPriorityClass(o) ? { replaceOnChanges: [...PRIORITY_CLASS_IMMUTABLE], deleteBeforeReplace: true } : {};
}

/** The id of an object as RemoteManifestUnit.forceConflicts names it: `<Kind> [<namespace>/]<name>`. */
function objectId(props: unknown): string {
  const o = (props ?? {}) as { kind?: string; metadata?: { name?: string; namespace?: string } };
  return `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata?.name}`;
}

/** The objects of a remote manifest named in `ids` get `pulumi.com/patchForce`: server-side apply then takes fields another manager holds. */
export function forceConflicts(ids: readonly string[]): pulumi.ResourceTransform {
  return (args) => {
    if (!args.custom || !ids.includes(objectId(args.props))) return undefined;
    const props = args.props as { metadata?: { annotations?: Record<string, string> } };
    const metadata = { ...props.metadata, annotations: { ...props.metadata?.annotations, "pulumi.com/patchForce": "true" } };
    return { props: { ...args.props, metadata }, opts: args.opts };
  };
}

/** `o` without the value at `path` (dotted), copied along the path only; `o` itself when nothing is there. */
function without(o: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  const [head, ...rest] = path;
  if (!(head in o)) return o;
  if (rest.length === 0) {
    const { [head]: _gone, ...kept } = o;
    return kept;
  }
  const inner = o[head];
  if (inner === null || typeof inner !== "object" || Array.isArray(inner)) return o;
  return { ...o, [head]: without(inner as Record<string, unknown>, rest) };
}

/**
 * The objects of a remote manifest named in `patched` are applied without the fields a patch unit
 * of this repository sets (RemoteManifestUnit.patchedFields). Server-side apply refuses a field
 * that another manager owns with a different value: once the forced patch has taken such a field
 * (the MetalLB speaker's tolerations, an atomic list), the manifest's next apply with the shipped
 * value would fail with a conflict (409) and stop `pulumi up`. Left out, the manifest's manager
 * never sets the field again, and the patch keeps it across every re-apply of a newer manifest.
 */
export function leaveToPatches(patched: readonly PatchedFields[]): pulumi.ResourceTransform {
  return (args) => {
    if (!args.custom) return undefined;
    const entry = patched.find((p) => p.object === objectId(args.props));
    if (!entry) return undefined;
    const props = entry.fields.reduce((o, f) => without(o, f.split(".")), args.props as Record<string, unknown>);
    return { props, opts: args.opts };
  };
}

/** The kinds of a pinned manifest that own data: a CRD every object of its kind, a Namespace every object in it. */
const DATA_OWNING_TYPES = ["kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", "kubernetes:core/v1:Namespace"];

/**
 * In a protected pinned manifest, only the objects that own data are protected: its CRDs and its
 * Namespaces. Every object stays retained on delete (the unit's childOpts), so nothing of it ever
 * leaves the cluster through Pulumi. A newer release that drops other objects (OLM v0.38.0 drops
 * v0.37.0's cert-manager Certificate and Issuer) then applies in one `pulumi up`: the dropped
 * objects leave the state and stay in the cluster, as `kubectl apply` of the new release (the
 * upgrade upstream documents) leaves them. Protected as a whole, the unit made that `pulumi up`
 * refuse ("cannot be deleted because it is protected"; found by npm run e2e --from-predecessors).
 */
export function protectDataOnly(): pulumi.ResourceTransform {
  return (args) => (args.custom ? { props: args.props, opts: { ...args.opts, protect: DATA_OWNING_TYPES.includes(args.type) } } : undefined);
}

/**
 * Objects of one unit whose registrations are under way at once, at most. The SDK serializes a
 * resource's inputs as a tree of pending promises that lives until the monitor has answered, and all
 * the resources created in one go progress together: the 5000 Node patches of a 5000-node stack's
 * node-roles unit held about 80 KB each at once (a heap snapshot: closures, promises, their contexts),
 * and `npm run policy` of that stack peaked near 800 MiB. Past this many, a unit creates its objects
 * in batches, each once the previous one is registered (64: a peak of 395–454 MiB, the same CPU time;
 * 256: about 500 MiB). No shipped stack has a unit this large (prod-large's largest, node-roles, has
 * 32 objects), so what the engine sees of them is unchanged.
 */
export const REGISTRATION_BATCH = 64;

/** Resolves once every resource of `resources` is registered (its URN known; URNs are known in previews too). */
function registered(resources: readonly pulumi.Resource[]): Promise<void> {
  return new Promise((resolve) => pulumi.all(resources.map((r) => r.urn)).apply(() => resolve()));
}

/** One deployable unit of the Plan. */
export class PlanUnit extends pulumi.ComponentResource {
  readonly children: pulumi.Resource[] = [];
  /** Its children all created (the later batches of a large unit: REGISTRATION_BATCH). */
  private created: Promise<void> = Promise.resolve();
  constructor(name: string, args: UnitArgs, opts?: pulumi.ComponentResourceOptions) {
    super(args.unit.type, name, {}, { ...opts, ...componentRenameOptions(name) });
    const { unit, secrets } = args;
    const childOpts: pulumi.CustomResourceOptions = {
      parent: this,
      ...(unit.protect ? { protect: true, retainOnDelete: true } : {}),
    };
    switch (unit.kind) {
      case "HelmRelease": {
        // its patches as the policy pack judges them (./post-render.ts), neither protected nor retained,
        // whatever the release is: the provider replaces a ConfigMap whose data changes
        // (enableConfigMapMutable is unset: review/replace-rules.ts). A protected one cannot be replaced,
        // and a retained one's replacement skips the delete, so the new one then conflicts with the old
        // one's field manager (server-side apply): either way a change of a protected release's patches
        // (zones added: Swift's spread) failed `pulumi up` (e2e step 11f, both found on its runs). Not
        // retained, it is deleted and created again: the provider deletes a named object before its
        // replacement (pulumi-kubernetes provider/pkg/provider/provider.go, Diff's deleteBeforeReplace)
        const record = postRenderRecord(unit);
        if (record) this.children.push(manifestObject(unit.name, record, secrets, { parent: this }));
        this.children.push(helmRelease(unit, secrets, { ...childOpts, ...renameOptions(unit.name, false) }));
        break;
      }
      case "Manifests": {
        const make = (o: K8sObject) => manifestObject(unit.name, o, secrets, childOpts);
        // the first batch now, as any unit (an error in it is thrown here), the rest once it is registered
        this.children.push(...unit.objects.slice(0, REGISTRATION_BATCH).map(make));
        if (unit.objects.length > REGISTRATION_BATCH) this.created = this.inBatches(unit.objects.slice(REGISTRATION_BATCH), make);
        break;
      }
      case "RemoteManifest": {
        // The provider fetches the pinned URL at apply time; offline renders list it by URL only.
        // One file keeps its ConfigFile (the URNs of what it applied stay put); several are one group,
        // so that a later file's objects may be of kinds an earlier file's CRDs define.
        // A unit renamed or merged since an earlier program keeps what that program applied (./renames.ts).
        const renamed = renameOptions(unit.name, true);
        const transforms = [
          ...(renamed.transforms ?? []),
          ...(unit.forceConflicts ? [forceConflicts(unit.forceConflicts)] : []),
          ...(unit.patchedFields ? [leaveToPatches(unit.patchedFields)] : []),
          ...(unit.protect ? [protectDataOnly()] : []),
        ];
        const opts = { ...childOpts, ...renamed, ...(transforms.length ? { transforms } : {}) };
        this.children.push(
          unit.urls.length === 1
            ? new k8s.yaml.v2.ConfigFile(unit.name, { file: unit.urls[0] }, opts)
            : new k8s.yaml.v2.ConfigGroup(unit.name, { files: unit.urls }, opts),
        );
        break;
      }
    }
    // outputs registered once the last batch is created: the promise also keeps the program running until then
    this.registerOutputs(unit.kind === "Manifests" && unit.objects.length > REGISTRATION_BATCH ? this.created.then(() => ({})) : {});
  }

  /**
   * What a unit that depends on this one waits for before it registers: the SDK collects a
   * component's children for `dependsOn` once its `initialize` has resolved, so a later phase
   * depends on every batch, as on a unit created in one go.
   */
  protected override async initialize(): Promise<void> {
    // initialize runs inside super(): the constructor's body, which sets `created`, has run one turn later
    await null;
    await this.created;
  }

  private async inBatches(rest: readonly K8sObject[], make: (o: K8sObject) => pulumi.Resource): Promise<void> {
    for (let i = 0; i < rest.length; i += REGISTRATION_BATCH) {
      await registered(this.children.slice(-REGISTRATION_BATCH));
      this.children.push(...rest.slice(i, i + REGISTRATION_BATCH).map(make));
    }
  }
}
