/**
 * The folders' import rules (docs/architecture.md, "Folders"): code that runs on a worker thread never reaches
 * Pi, the host or the UI; the spawner process loads nothing but its protocol; the UI takes only types from the host and the host's
 * model-facing code no values from the UI; the tests never import the benchmarks (the
 * benchmarks share the tests' fixtures instead).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../..", import.meta.url));

function sourcesUnder(folder: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".ts")) out.push(relative(root, path));
    }
  };
  walk(join(root, folder));
  return out;
}

interface Import {
  file: string;
  /** A repository path for a relative import, else the package specifier. */
  target: string;
  typeOnly: boolean;
}

function importsOf(file: string): Import[] {
  const source = readFileSync(join(root, file), "utf8");
  const found: Import[] = [];
  for (const match of source.matchAll(/^\s*(import|export)\s+(type\s+)?[^;]*?from\s+"([^"]+)"/gm)) {
    const specifier = match[3] as string;
    const target = specifier.startsWith(".") ? relative(root, join(dirname(join(root, file)), specifier)) : specifier;
    found.push({ file, target, typeOnly: match[2] !== undefined });
  }
  for (const match of source.matchAll(/import\(\s*"([^"]+)"\s*\)/g)) {
    const specifier = match[1] as string;
    const target = specifier.startsWith(".") ? relative(root, join(dirname(join(root, file)), specifier)) : specifier;
    found.push({ file, target, typeOnly: false });
  }
  return found;
}

const PI = /^@earendil-works\//;
const describeImport = (entry: Import): string => `${entry.file} → ${entry.target}`;

describe("import rules", () => {
  it("worker-thread code (actors/, mailbox/, shared/) imports neither Pi nor host/ nor ui/", () => {
    const broken = ["actors", "mailbox", "shared"]
      .flatMap(sourcesUnder)
      .flatMap(importsOf)
      .filter((entry) => PI.test(entry.target) || /^(host|ui)\//.test(entry.target) || entry.target === "index.ts");
    expect(broken.map(describeImport)).toEqual([]);
  });

  it("Pi's thread (host/, ui/, demo/, index.ts) imports nothing from actors/: what both sides run lives in shared/ or mailbox/", () => {
    const broken = ["host", "ui", "demo"]
      .flatMap(sourcesUnder)
      .concat("index.ts")
      .flatMap(importsOf)
      .filter((entry) => entry.target.startsWith("actors/"));
    expect(broken.map(describeImport)).toEqual([]);
  });

  it("shared/ imports only Node, comlink, mailbox/ and itself", () => {
    const broken = sourcesUnder("shared")
      .flatMap(importsOf)
      .filter((entry) => !(entry.target.startsWith("node:") || entry.target === "comlink" || /^(mailbox|shared)\//.test(entry.target)));
    expect(broken.map(describeImport)).toEqual([]);
  });

  it("the spawner process (spawner/) imports only the protocol it speaks, its scheduling group and Node", () => {
    const allowed = new Set(["mailbox/spawner-protocol.ts", "shared/process-table/autogroup.ts"]);
    const broken = sourcesUnder("spawner")
      .flatMap(importsOf)
      .filter((entry) => !entry.target.startsWith("node:") && !allowed.has(entry.target) && !entry.target.startsWith("spawner/"));
    expect(broken.map(describeImport)).toEqual([]);
  });

  it("ui/ takes only types from host/", () => {
    const broken = sourcesUnder("ui")
      .flatMap(importsOf)
      .filter((entry) => entry.target.startsWith("host/") && !entry.typeOnly);
    expect(broken.map(describeImport)).toEqual([]);
  });

  it("host/ takes values from ui/ only where it draws (host/console/, install files): what the model reads says no UI's words", () => {
    const broken = sourcesUnder("host")
      .filter((file) => !file.startsWith("host/console/") && !file.endsWith("/install.ts") && file !== "host/install.ts")
      .flatMap(importsOf)
      .filter((entry) => entry.target.startsWith("ui/") && !entry.typeOnly);
    expect(broken.map(describeImport)).toEqual([]);
  });

  it("tests/ never imports bench/", () => {
    const broken = sourcesUnder("tests")
      .flatMap(importsOf)
      .filter((entry) => entry.target.startsWith("bench/"));
    expect(broken.map(describeImport)).toEqual([]);
  });

  it("reads static, re-exported and dynamic imports", () => {
    const imports = importsOf("actors/job/output.ts");
    expect(imports.some((entry) => entry.target === "actors/monitor/engine.ts" && !entry.typeOnly)).toBe(true);
    expect(importsOf("bench/shared.ts").some((entry) => entry.target === "tests/fixtures/jobs.ts")).toBe(true);
  });
});
