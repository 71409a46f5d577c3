import { describe, expect, it } from "vitest";
import { validateExec, validateKill, validateListSessions, validateSetOnExit, validateWriteStdin } from "../../host/shell/validate.ts";

function error(r: { ok: boolean; error?: string }): string {
  expect(r.ok).toBe(false);
  return r.error ?? "";
}

describe("exec_command parameters", () => {
  it("applies the defaults", () => {
    expect(validateExec({ cmd: "true" })).toEqual({
      ok: true,
      value: { cmd: "true", workdir: null, tty: false, yieldTimeMs: undefined, timeoutMs: 1_800_000, onExit: "none", shell: null, ready: null, stallMs: null, onStall: "none", limits: null, persist: false, raw: false },
    });
  });
  it("persist: a boolean, 8 hours by default and at most 24, refused with a terminal, which a keeper cannot hold", () => {
    expect(validateExec({ cmd: "x", persist: true })).toMatchObject({ ok: true, value: { persist: true, timeoutMs: 28_800_000 } });
    expect(validateExec({ cmd: "x", persist: true, timeout_seconds: 86_400 })).toMatchObject({ ok: true, value: { timeoutMs: 86_400_000 } });
    expect(error(validateExec({ cmd: "x", persist: true, timeout_seconds: 86_401 }))).toContain("timeout_seconds");
    expect(error(validateExec({ cmd: "x", persist: 1 }))).toContain("persist must be true or false");
    expect(error(validateExec({ cmd: "x", persist: true, tty: true }))).toMatch(/persist: true cannot be used with tty: true/);
    // Its processes carry a tag of their own: the port and the limits follow them.
    expect(validateExec({ cmd: "x", persist: true, ready: { port: 3000 } })).toMatchObject({ ok: true, value: { ready: { port: 3000 } } });
    expect(validateExec({ cmd: "x", persist: true, limits: { processes: 10 } })).toMatchObject({ ok: true, value: { limits: { processes: 10 } } });
    expect(validateExec({ cmd: "x", persist: true, ready: { pattern: "listening" } })).toMatchObject({ ok: true });
  });
  it("requires cmd", () => {
    expect(error(validateExec({}))).toContain("cmd");
    expect(error(validateExec({ cmd: "  " }))).toContain("cmd");
  });
  it("accepts timeout_seconds only as a positive value of at most 86400", () => {
    expect(validateExec({ cmd: "x", timeout_seconds: 86_400 })).toMatchObject({ ok: true, value: { timeoutMs: 86_400_000 } });
    expect(validateExec({ cmd: "x", timeout_seconds: 0.5 })).toMatchObject({ ok: true, value: { timeoutMs: 500 } });
    expect(error(validateExec({ cmd: "x", timeout_seconds: 0 }))).toContain("timeout_seconds");
    expect(error(validateExec({ cmd: "x", timeout_seconds: -1 }))).toContain("timeout_seconds");
    expect(error(validateExec({ cmd: "x", timeout_seconds: 86_401 }))).toContain("timeout_seconds");
  });
  it("accepts on_exit none or wake only", () => {
    expect(validateExec({ cmd: "x", on_exit: "wake" })).toMatchObject({ ok: true, value: { onExit: "wake" } });
    expect(error(validateExec({ cmd: "x", on_exit: "always" }))).toContain("on_exit");
  });
  it("rejects unknown fields by name", () => {
    expect(error(validateExec({ cmd: "x", timeout: 5 }))).toMatch(/unknown field timeout\b/);
  });
  it("takes raw as a boolean on both reading tools, naming the field otherwise", () => {
    expect(validateExec({ cmd: "x", raw: true })).toMatchObject({ ok: true, value: { raw: true } });
    expect(validateWriteStdin({ session_id: 1, raw: true })).toMatchObject({ ok: true, value: { raw: true } });
    expect(validateWriteStdin({ session_id: 1 })).toMatchObject({ ok: true, value: { raw: false } });
    expect(error(validateExec({ cmd: "x", raw: "yes" }))).toContain("raw");
    expect(error(validateWriteStdin({ session_id: 1, raw: 1 }))).toContain("raw");
  });
  it("rejects EOF and resize outside write_stdin, naming where they belong", () => {
    const e = error(validateExec({ cmd: "x", end_stdin: true, cols: 80, rows: 24 }));
    expect(e).toContain("end_stdin, cols, rows");
    expect(e).toContain("end_stdin belongs to write_stdin");
  });
  it("treats null like an omitted optional field", () => {
    expect(validateExec({ cmd: "x", workdir: null, tty: null })).toMatchObject({ ok: true, value: { workdir: null, tty: false } });
  });
});

describe("write_stdin parameters", () => {
  it("decodes chars with C escapes into input", () => {
    const r = validateWriteStdin({ session_id: 1, chars: "print(1)\\r" });
    expect(r.ok && [...(r.value.input ?? [])].at(-1)).toBe(13);
    expect(r.ok && r.value.waitKind).toBe("input");
  });
  it("decodes chars_b64 as raw bytes", () => {
    const r = validateWriteStdin({ session_id: 1, chars_b64: Buffer.from([0, 255, 3]).toString("base64") });
    expect(r.ok && [...(r.value.input ?? [])]).toEqual([0, 255, 3]);
    expect(error(validateWriteStdin({ session_id: 1, chars_b64: "%%%" }))).toContain("chars_b64");
  });
  it("rejects chars together with chars_b64", () => {
    const e = error(validateWriteStdin({ session_id: 1, chars: "a", chars_b64: "YQ==" }));
    expect(e).toContain("chars and chars_b64");
  });
  it("requires cols and rows together and in range", () => {
    expect(error(validateWriteStdin({ session_id: 1, cols: 80 }))).toContain("cols and rows");
    expect(error(validateWriteStdin({ session_id: 1, cols: 19, rows: 10 }))).toContain("cols");
    expect(error(validateWriteStdin({ session_id: 1, cols: 501, rows: 10 }))).toContain("cols");
    expect(error(validateWriteStdin({ session_id: 1, cols: 80, rows: 4 }))).toContain("rows");
    expect(error(validateWriteStdin({ session_id: 1, cols: 80, rows: 301 }))).toContain("rows");
    expect(validateWriteStdin({ session_id: 1, cols: 20, rows: 5 })).toMatchObject({ ok: true, value: { resize: { cols: 20, rows: 5 }, waitKind: "input" } });
    expect(validateWriteStdin({ session_id: 1, cols: 500, rows: 300 }).ok).toBe(true);
  });
  it("rejects yield_until with yield_time_ms or with input, naming the fields", () => {
    expect(error(validateWriteStdin({ session_id: 1, yield_until: "2030-01-01T00:00:00Z", yield_time_ms: 5 }))).toContain(
      "yield_until and yield_time_ms",
    );
    expect(error(validateWriteStdin({ session_id: 1, yield_until: "2030-01-01T00:00:00Z", chars: "x" }))).toMatch(/yield_until.*chars/);
    expect(error(validateWriteStdin({ session_id: 1, yield_until: "2030-01-01T00:00:00Z", end_stdin: true }))).toMatch(/yield_until.*end_stdin/);
  });
  it("classifies an empty call as a poll", () => {
    expect(validateWriteStdin({ session_id: 2 })).toMatchObject({ ok: true, value: { input: null, waitKind: "empty", endStdin: false } });
    expect(validateWriteStdin({ session_id: 2, chars: "" })).toMatchObject({ ok: true, value: { input: null, waitKind: "empty" } });
  });
  it("requires a positive integer session_id", () => {
    expect(error(validateWriteStdin({}))).toContain("session_id");
    expect(error(validateWriteStdin({ session_id: 0 }))).toContain("session_id");
    expect(error(validateWriteStdin({ session_id: 1.5 }))).toContain("session_id");
  });
  it("refuses input larger than the write queue", () => {
    expect(error(validateWriteStdin({ session_id: 1, chars: "x".repeat(1024 * 1024 + 1) }))).toContain("write queue");
  });
  it("rejects unknown fields", () => {
    expect(error(validateWriteStdin({ session_id: 1, input: "x" }))).toMatch(/unknown field input\b/);
  });
});

describe("the small tools", () => {
  it("list_sessions takes no fields", () => {
    expect(validateListSessions({}).ok).toBe(true);
    expect(validateListSessions(undefined).ok).toBe(true);
    expect(error(validateListSessions({ all: true }))).toContain("all");
  });
  it("set_on_exit accepts only session_id and on_exit", () => {
    expect(validateSetOnExit({ session_id: 3, on_exit: "wake" })).toEqual({ ok: true, value: { sessionId: 3, onExit: "wake" } });
    expect(error(validateSetOnExit({ session_id: 3 }))).toContain("on_exit");
    expect(error(validateSetOnExit({ session_id: 3, on_exit: "wake", signal: "SIGTERM" }))).toContain("signal");
  });
  it("kill_session defaults to SIGTERM and normalizes signal names", () => {
    expect(validateKill({ session_id: 1 })).toEqual({ ok: true, value: { sessionId: 1, signal: "SIGTERM" } });
    expect(validateKill({ session_id: 1, signal: "kill" })).toEqual({ ok: true, value: { sessionId: 1, signal: "SIGKILL" } });
    expect(error(validateKill({ session_id: 1, signal: "SIGUSR1" }))).toContain("signal");
    expect(error(validateKill({ session_id: 1, chars: "x" }))).toContain("chars belongs to write_stdin");
  });
});
