// What earlier programs registered under other URNs, and which resource of this one takes it over:
// a renamed or merged unit carries Pulumi aliases, so that a stack deployed by an earlier program
// updates what it has instead of deleting it and creating it again (a delete of a protected resource
// is refused; one of an unprotected object that another URN has just applied deletes the live object,
// since a server-side-apply create takes over an existing object). review/urn-graph.ts proves, for
// the last release and for the commit before each rename, that no resource is lost.
//
// How the engine resolves aliases (pulumi/pulumi pkg/resource/deploy/step_generator.go, v3.276.0):
// a resource takes over the first of its URN and its aliases found in the old state, one old resource
// per new one (a second claim is an error); its children inherit only the alias their parent matched
// (generateAliases: the child's name with the parent's name prefix replaced). A unit that merges two
// earlier resources therefore aliases its child to one of them (the protected one: its delete would
// be refused), and gives the children of a remote manifest (ConfigFile, ConfigGroup, whose objects
// the provider registers) the others through a transform, which the engine runs on those children
// too (pkg/resource/deploy/source_eval.go: transforms of every parent up the chain).
//
// An entry stays as long as a stack deployed before its rename may exist: an alias no state holds
// costs nothing.
import * as pulumi from "@pulumi/pulumi";

/** A resource of an earlier program: its type and name, under a root-level unit's ComponentResource. */
export interface FormerResource {
  /** The earlier unit's ComponentResource (`openkeel:platform:OlmCrds`, `olm-crds`). */
  unit: { type: string; name: string };
  type: string;
  name: string;
}

export interface UnitRename {
  /** The unit (of this program) whose child resource, named as the unit, takes the former resources over. */
  unit: string;
  /** The change that renamed it, for the reader. */
  why: string;
  /**
   * The unit's own ComponentResource before, when the unit itself was renamed or retyped: its
   * alias, which every child inherits (a child named `<unit>:…` with the prefix replaced).
   * @default none: the unit's ComponentResource kept its type and name
   */
  component?: { type: string; name: string };
  /**
   * Former resources its child takes over, the protected one first (the one the engine lets it claim
   * when the state holds several); the objects of a remote manifest reach the others through a transform.
   * @default none: only the component moved
   */
  was?: readonly [FormerResource, ...FormerResource[]];
}

export const UNIT_RENAMES: readonly UnitRename[] = [
  {
    unit: "olm",
    why: "64876b9 (FINDINGS F3): OLM's crds.yaml and olm.yaml are one group of the unit olm; before, the unit olm-crds applied crds.yaml (protected) and the unit olm olm.yaml",
    was: [
      { unit: { type: "openkeel:platform:OlmCrds", name: "olm-crds" }, type: "kubernetes:yaml/v2:ConfigFile", name: "olm-crds" },
      { unit: { type: "openkeel:platform:Olm", name: "olm" }, type: "kubernetes:yaml/v2:ConfigFile", name: "olm" },
    ],
  },
];

/** The URN a former resource had (units are root-level: their parent is the stack). */
function formerUrn(f: FormerResource): pulumi.Output<string> {
  return pulumi.createUrn(f.name, f.type, pulumi.createUrn(f.unit.name, f.unit.type));
}

/**
 * The options the unit's child resource gets from the rename history: an alias to every former
 * resource (the engine takes over the first one the stack's state holds), and, for a remote
 * manifest, a transform giving each object it applies the inherited form of every one of them (the
 * object's name with the child's name prefix replaced, under that former resource), since the engine
 * lets the objects inherit only the alias their parent matched. review/urn-graph.ts reads the
 * aliases and the transform this way.
 */
export function renameOptions(unitName: string, remote: boolean): Pick<pulumi.CustomResourceOptions, "aliases" | "transforms"> {
  const was = UNIT_RENAMES.find((r) => r.unit === unitName)?.was;
  if (!was) return {};
  const aliases = was.map((f) => ({ name: f.name, type: f.type, parent: pulumi.createUrn(f.unit.name, f.unit.type) }));
  if (!remote || was.length === 1) return { aliases };
  const inherited = (child: string, f: FormerResource) => (child.startsWith(unitName) ? f.name + child.slice(unitName.length) : child);
  const transform: pulumi.ResourceTransform = (args) => {
    if (args.name === unitName) return undefined;
    const extra = was.map((f) => ({ name: inherited(args.name, f), parent: formerUrn(f) }));
    return { props: args.props, opts: pulumi.mergeOptions(args.opts, { aliases: extra }) };
  };
  return { aliases, transforms: [transform] };
}

/** The alias of a unit's ComponentResource renamed or retyped since an earlier program (its children follow). */
export function componentRenameOptions(unitName: string): Pick<pulumi.ComponentResourceOptions, "aliases"> {
  const former = UNIT_RENAMES.find((r) => r.unit === unitName)?.component;
  return former ? { aliases: [{ name: former.name, type: former.type }] } : {};
}
