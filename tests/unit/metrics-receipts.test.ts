import { describe, expect, it } from "vitest";
import { ENTRY_RECEIPT } from "../../host/metrics/constants.ts";
import { summarizeReceipts, validateReceipt } from "../../host/metrics/receipts.ts";

const usage = (over: Record<string, unknown> = {}) => ({
  input: 100,
  output: 50,
  cacheRead: 10,
  cacheWrite: 0,
  totalTokens: 160,
  cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 },
  ...over,
});

const receipt = (over: Record<string, unknown> = {}) => ({
  version: 1,
  requestId: "tr-1",
  provider: "openai",
  model: "gpt-x",
  usage: usage(),
  status: "ok",
  direction: "output",
  nativeAccounting: false,
  ...over,
});

const entry = (data: unknown) => ({ type: "custom", customType: ENTRY_RECEIPT, data });

describe("Translator receipt contract v1", () => {
  it("accepts a complete receipt and explicit null usage", () => {
    expect(validateReceipt(receipt())).not.toBeNull();
    expect(validateReceipt(receipt({ usage: null }))).not.toBeNull();
    expect(validateReceipt(receipt({ usage: usage({ reasoning: 20, cacheWrite: 5, cacheWrite1h: 5 }) }))).not.toBeNull();
  });

  it.each([
    ["unknown field", receipt({ prompt: "x" })],
    ["missing field", (() => { const { status: _s, ...r } = receipt(); return r; })()],
    ["version", receipt({ version: 2 })],
    ["native accounting", receipt({ nativeAccounting: true })],
    ["direction", receipt({ direction: "sideways" })],
    ["blank string", receipt({ status: "  " })],
    ["control character", receipt({ model: "gpt\u0007" })],
    ["line separator", receipt({ provider: "a\u2028b" })],
    ["format character", receipt({ provider: "a\u200bb" })],
    ["too long", receipt({ requestId: "x".repeat(257) })],
    ["string number", receipt({ usage: usage({ input: "100" }) })],
    ["missing usage field", receipt({ usage: (() => { const { cacheRead: _c, ...u } = usage(); return u; })() })],
    ["unsafe integer", receipt({ usage: usage({ output: 2 ** 53 }) })],
    ["reasoning exceeds output", receipt({ usage: usage({ reasoning: 51 }) })],
    ["cacheWrite1h exceeds cacheWrite", receipt({ usage: usage({ cacheWrite1h: 1 }) })],
    ["negative cost", receipt({ usage: usage({ cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: -1 } }) })],
    ["unknown usage field", receipt({ usage: usage({ raw: {} }) })],
  ])("rejects %s", (_name, r) => {
    expect(validateReceipt(r)).toBeNull();
  });
});

describe("Translator receipt summary", () => {
  it("shows unavailable-equivalent zero attempts when there are none", () => {
    expect(summarizeReceipts([]).attempts).toBe(0);
  });

  it("dedups by requestId across the session, excludes conflicting ids, counts malformed without reserving ids", () => {
    const s = summarizeReceipts([
      entry(receipt()),
      entry(receipt()), // exact duplicate
      entry(receipt({ requestId: "tr-2", usage: null, status: "failed", direction: "input" })),
      entry(receipt({ requestId: "tr-3" })),
      entry(receipt({ requestId: "tr-3", usage: usage({ output: 51, totalTokens: 161 }) })), // conflict
      entry({ ...receipt({ requestId: "tr-4" }), junk: 1 }), // malformed
      entry(receipt({ requestId: "tr-4", direction: "subagent", usage: usage({ reasoning: 10 }) })), // still usable
      { type: "message", customType: undefined, data: { role: "assistant", usage: usage() } },
    ]);
    expect(s).toMatchObject({ attempts: 3, reported: 2, unreported: 1, malformed: 1, duplicates: 1, conflictingIds: 1 });
    expect(s.subtotal).toMatchObject({ input: 200, output: 100, reasoning: 10, totalTokens: 320 });
    expect(s.subtotal.cost).toBeCloseTo(0.006, 9);
    expect(s.byDirection.map((g) => [g.key, g.attempts, g.reported])).toEqual([
      ["output", 1, 1],
      ["input", 1, 0],
      ["subagent", 1, 1],
    ]);
    expect(s.byStatus.map((g) => g.key)).toEqual(["ok", "failed"]);
    expect(s.byModel).toHaveLength(1);
  });

  it("an unsafe subtotal is unavailable, never an unsafe number", () => {
    const big = Number.MAX_SAFE_INTEGER - 1;
    const s = summarizeReceipts([
      entry(receipt({ usage: usage({ input: big, totalTokens: big }) })),
      entry(receipt({ requestId: "tr-2", usage: usage({ input: big, totalTokens: big }) })),
    ]);
    expect(s.subtotal.input).toBeNull();
    expect(s.subtotal.output).toBe(100);
  });
});
