// Artifacts from a mirror (openkeel:mirror): air-gapped clouds install from an internal mirror, so
// every Helm chart, whatever its repository (an https Helm repository or an oci:// registry), comes
// from the mirror's one Helm repository `<url>/charts` (its index lists every chart by name and
// version), and every upstream manifest `https://<host>/<path>` from `<url>/files/<host>/<path>`
// (the layout `wget --mirror` or a proxy cache writes). Applied to the whole Plan, so the render shows
// exactly what `pulumi up` fetches.
import type { Plan, Unit } from "./plan";

export interface Mirror {
  url: string;
}

function mirroredChartRepository(mirror: Mirror): string {
  return `${mirror.url}/charts`;
}

/** `https://github.com/a/b/x.yaml` → `<url>/files/github.com/a/b/x.yaml`. */
function mirroredFileUrl(mirror: Mirror, url: string): string {
  const m = /^[a-z]+:\/\/(.+)$/i.exec(url);
  if (!m) throw new Error(`mirror: ${url} is not an absolute URL`);
  return `${mirror.url}/files/${m[1]}`;
}

function mirrored(unit: Unit, mirror: Mirror): Unit {
  switch (unit.kind) {
    case "HelmRelease":
      return { ...unit, chart: { ...unit.chart, repository: mirroredChartRepository(mirror) } };
    case "RemoteManifest":
      return { ...unit, urls: unit.urls.map((u) => mirroredFileUrl(mirror, u)) };
    case "Manifests":
      return unit;
  }
}

/** The Plan with every artifact fetched from the mirror. */
export function withMirror(plan: Plan, mirror: Mirror | undefined): Plan {
  if (!mirror) return plan;
  return { ...plan, phases: plan.phases.map((p) => ({ ...p, units: p.units.map((u) => mirrored(u, mirror)) })) };
}
