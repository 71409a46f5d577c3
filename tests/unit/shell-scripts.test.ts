import { describe, expect, it } from "vitest";
import { outerCallOf, touchScript } from "../../host/shell/scripts.ts";

describe("codemode scripts", () => {
  it("a nested call's outermost call is the part before the first slash; a direct call has none", () => {
    expect(outerCallOf("toolu_1")).toBeNull();
    expect(outerCallOf("toolu_1/3")).toBe("toolu_1");
    expect(outerCallOf("toolu_1/3/2")).toBe("toolu_1");
  });

  it("remembers the sessions each script touched, and nothing for direct calls", () => {
    const scripts = new Map<string, Set<number>>();
    touchScript(scripts, "direct", 1);
    expect(scripts.size).toBe(0);
    touchScript(scripts, "outer/1", 2);
    touchScript(scripts, "outer/2", 3);
    touchScript(scripts, "outer/3", 2);
    touchScript(scripts, "other/1", 2);
    expect(scripts).toEqual(new Map([["outer", new Set([2, 3])], ["other", new Set([2])]]));
  });
});
