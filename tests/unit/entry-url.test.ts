/**
 * Where a copy's worker entries live, from the URL of the module that asks: TypeScript source in a checkout, the
 * build's output under dist/, and the actor thread's CommonJS bundle, which inlines this code two folders below dist/.
 */
import { describe, expect, it } from "vitest";
import { packageRootOf } from "../../shared/entry-url.ts";

describe("packageRootOf", () => {
  it("takes the source module's parent folder as the root", () => {
    expect(packageRootOf("file:///home/u/pi-jobs/shared/entry-url.ts")).toEqual({
      root: new URL("file:///home/u/pi-jobs/"),
      compiled: false,
    });
  });

  it("finds the root above dist/ from the build's output and from the bundle alike", () => {
    const expected = { root: new URL("file:///p/node_modules/pi-jobs/"), compiled: true };
    expect(packageRootOf("file:///p/node_modules/pi-jobs/dist/shared/entry-url.js")).toEqual(expected);
    expect(packageRootOf("file:///p/node_modules/pi-jobs/dist/actors/thread/actor-thread.cjs")).toEqual(expected);
  });

  it("is not misled by a folder named dist above the package", () => {
    expect(packageRootOf("file:///srv/dist/pi-jobs/shared/entry-url.ts").root.href).toBe("file:///srv/dist/pi-jobs/");
    expect(packageRootOf("file:///srv/dist/pi-jobs/dist/actors/thread/actor-thread.cjs").root.href).toBe("file:///srv/dist/pi-jobs/");
  });

  it("refuses compiled code that lies under no dist/ folder", () => {
    expect(() => packageRootOf("file:///p/pi-jobs/actor-thread.js")).toThrow(/not under a dist\/ folder/);
    expect(() => packageRootOf("file:///p/pi-jobs/actor-thread.cjs")).toThrow(/not under a dist\/ folder/);
  });
});
