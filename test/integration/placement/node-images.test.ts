// Every image a production node pulls comes from a registry NODE_IMAGE_REGISTRIES names, so that a
// stack whose mirrors cover that list (openkeel:talos.registries) pulls nothing from the internet:
// the images of every platform chart of the production renders at its pin (rendered by the pinned
// Helm from ../shared/mirror, with the render's values, as the chart placement test renders them),
// of every pinned release manifest the production stacks apply, and the image pins of
// platform/versions.ts. An image of a registry the list lacks names the chart or file it is in.
import { describe, expect, it } from "vitest";
import { NODE_IMAGE_REGISTRIES } from "../../../environments/talos-production";
import { ENVIRONMENTS } from "../../../environments/registry";
import * as VERSIONS from "../../../platform/versions";
import { chartArchive, chartCases, releaseInputs, renderRelease } from "../../../tools/chart-placement";
import { defaultMirrorDir } from "../../../e2e/harness/driver";
import { pinnedManifest } from "../../helpers/upstream";
import { PRODUCTION_STACKS, REPO } from "../../helpers/stacks";

const MIRROR = defaultMirrorDir(REPO);

/** The registry of an image reference, as containerd resolves it (no host part: docker.io). */
function registryOf(image: string): string {
  const first = image.split("/")[0];
  return image.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost") ? first : "docker.io";
}

/** The `image:` values of a YAML text. */
const imagesOf = (text: string) => [...text.matchAll(/^\s*(?:-\s+)?image:\s*["']?([^"'\s#]+)/gm)].map((m) => m[1]);

const outside = (images: Iterable<string>) => [...new Set(images)].filter((i) => !(NODE_IMAGE_REGISTRIES as readonly string[]).includes(registryOf(i))).sort();

describe("the images of production nodes come from NODE_IMAGE_REGISTRIES", () => {
  it("reads registries as containerd does", () => {
    expect(
      ["kubeovn/kube-ovn:v1.16.2", "quay.io/jetstack/cert-manager-controller:v1.19.1", "registry:5000/x", "ghcr.io/a/b@sha256:00"].map(registryOf),
    ).toEqual(["docker.io", "quay.io", "registry:5000", "ghcr.io"]);
  });

  it("every platform chart of the production renders, at its pin", () => {
    const cases = chartCases().filter((c) => PRODUCTION_STACKS.includes(c.stack));
    expect(cases.length).toBeGreaterThan(3);
    const byChart = new Map<string, string[]>();
    for (const c of cases) {
      const images = imagesOf(renderRelease({ unit: c.unit, ...releaseInputs(c), chart: chartArchive(c.unit.chart, MIRROR) }));
      byChart.set(`${c.unit.chart.chart} ${c.unit.chart.version}`, [...(byChart.get(`${c.unit.chart.chart} ${c.unit.chart.version}`) ?? []), ...images]);
    }
    for (const [chart, images] of byChart) {
      expect(images.length, chart).toBeGreaterThan(0);
      expect(outside(images), chart).toEqual([]);
    }
  });

  it("every pinned release manifest of the production platform, and the image pins", async () => {
    const pins = new Set(ENVIRONMENTS["talos-production"].platform.flatMap((c) => c.pins ?? []));
    const manifests = [...pins].flatMap((p) => ("url" in p && typeof p.url === "string" ? [p.url] : []));
    expect(manifests.length).toBeGreaterThan(3);
    for (const url of manifests) expect(outside(imagesOf(await pinnedManifest(url))), url).toEqual([]);
    const imagePins = Object.values(VERSIONS).filter(
      (v): v is { repository: string; tag: string } => typeof v === "object" && v !== null && "tag" in v && "repository" in v,
    );
    expect(outside(imagePins.filter((p) => p !== VERSIONS.KIND_NODE_IMAGE).map((p) => `${p.repository}:${p.tag}`))).toEqual([]);
  });
});
