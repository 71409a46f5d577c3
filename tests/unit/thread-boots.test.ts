import { describe, expect, it } from "vitest";
import { startsToAdmit } from "../../host/runtime/thread-boots.ts";

describe("startsToAdmit", () => {
  it("gives idle loaded threads first, then boots up to the limit", () => {
    expect(startsToAdmit({ free: 3, booting: 0, limit: 2 }, 10)).toBe(5);
    expect(startsToAdmit({ free: 0, booting: 1, limit: 2 }, 10)).toBe(1);
  });

  it("admits no more than wait", () => {
    expect(startsToAdmit({ free: 4, booting: 0, limit: 2 }, 3)).toBe(3);
    expect(startsToAdmit({ free: 0, booting: 0, limit: 2 }, 0)).toBe(0);
  });

  it("holds every start while the limit's threads boot and none is idle", () => {
    expect(startsToAdmit({ free: 0, booting: 2, limit: 2 }, 64)).toBe(0);
    // More tasks than ready threads (some queued for booting threads): none is idle.
    expect(startsToAdmit({ free: -3, booting: 2, limit: 2 }, 64)).toBe(0);
    // Past the limit (threads made with the pool, a thread counted late): no further boot, idle threads still used.
    expect(startsToAdmit({ free: 1, booting: 5, limit: 2 }, 64)).toBe(1);
  });
});
