import { describe, expect, it } from "vitest";
import { Value } from "typebox/value";
import { clipCodePoints, deriveDescription } from "../../host/monitor/describe.ts";
import {
  DEFAULT_TIMEOUT_MS,
  MonitorStartOutput,
  MonitorStartParams,
  MonitorStopOutput,
  MonitorStopParams,
  validateMonitorStart,
  validateMonitorStop,
} from "../../host/monitor/schemas.ts";
import { convertsEach } from "../fixtures/converts-each.ts";

const minimal = { command: "make build", result_pattern: "^BUILD_OK$" };

function rejection(raw: unknown): string {
  const verdict = validateMonitorStart(raw);
  if (verdict.ok) throw new Error(`expected a rejection for ${JSON.stringify(raw)}`);
  return verdict.error;
}

describe("monitor_start parameters", () => {
  it("applies defaults and derives the label", () => {
    expect(validateMonitorStart(minimal)).toEqual({
      ok: true,
      value: {
        command: "make build",
        description: "make build",
        descriptionSource: "derived",
        resultPattern: "^BUILD_OK$",
        failurePattern: null,
        completion: "match",
        timeoutMs: DEFAULT_TIMEOUT_MS,
        compact: false,
        stallMs: null,
        limits: null,
      },
    });
  });

  it("keeps every field that is given", () => {
    const verdict = validateMonitorStart({
      ...minimal,
      description: " production build ",
      failure_pattern: "^FATAL: (?<error>.*)$",
      completion: "exit",
      timeout_ms: 2_147_483_647,
      compact: true,
    });
    expect(verdict).toEqual({
      ok: true,
      value: {
        command: "make build",
        description: "production build",
        descriptionSource: "explicit",
        resultPattern: "^BUILD_OK$",
        failurePattern: "^FATAL: (?<error>.*)$",
        completion: "exit",
        timeoutMs: 2_147_483_647,
        compact: true,
        stallMs: null,
        limits: null,
      },
    });
  });

  it("treats null and blank optional values as omitted", () => {
    const verdict = validateMonitorStart({ ...minimal, description: "  ", failure_pattern: null, timeout_ms: null, compact: null });
    expect(verdict.ok && verdict.value).toMatchObject({ descriptionSource: "derived", failurePattern: null, timeoutMs: DEFAULT_TIMEOUT_MS });
  });

  it("names the field in every rejection", () => {
    expect(rejection({ ...minimal, foo: 1 })).toBe('unknown field "foo"');
    expect(rejection({ result_pattern: "x" })).toBe("command: required");
    expect(rejection({ ...minimal, command: "   " })).toBe("command: must not be empty");
    expect(rejection({ ...minimal, command: ["ls"] })).toBe("command: expected a string");
    expect(rejection({ command: "ls" })).toBe("result_pattern: required");
    expect(rejection({ ...minimal, result_pattern: "" })).toBe("result_pattern: must not be empty");
    expect(rejection({ ...minimal, result_pattern: "(" })).toMatch(/^result_pattern: Invalid regular expression: \/\(\/: /);
    expect(rejection({ ...minimal, failure_pattern: "[z-a]" })).toMatch(/^failure_pattern: Invalid regular expression/);
    expect(rejection({ ...minimal, failure_pattern: "" })).toMatch(/^failure_pattern: must not be empty/);
    expect(rejection({ ...minimal, failure_pattern: 3 })).toBe("failure_pattern: expected a string");
    expect(rejection({ ...minimal, description: 5 })).toBe("description: expected a string");
    expect(rejection({ ...minimal, completion: "done" })).toBe('completion: expected "match" or "exit"');
    expect(rejection({ ...minimal, compact: "yes" })).toBe("compact: expected true or false");
    for (const timeout of [0, -1, 1.5, 2_147_483_648, "800", Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(rejection({ ...minimal, timeout_ms: timeout })).toBe("timeout_ms: expected an integer from 1 to 2147483647");
    }
    expect(rejection(null)).toBe("arguments: expected an object");
    expect(rejection(["make"])).toBe("arguments: expected an object");
  });

  it("accepts the bounds of timeout_ms", () => {
    for (const timeout of [1, 800, 2_147_483_647]) {
      const verdict = validateMonitorStart({ ...minimal, timeout_ms: timeout });
      expect(verdict.ok && verdict.value.timeoutMs).toBe(timeout);
    }
  });

  it("uses the pattern check it is given, so the tool rejects what the matcher cannot run", () => {
    const verdict = validateMonitorStart(minimal, (source) =>
      source.startsWith("^") ? { ok: false, error: "anchors not allowed here" } : { ok: true },
    );
    expect(verdict).toEqual({ ok: false, error: "result_pattern: anchors not allowed here" });
  });

  it("declares a closed object schema that accepts what the validator accepts", () => {
    const declared = JSON.parse(JSON.stringify(MonitorStartParams)) as { additionalProperties: unknown; required: unknown };
    expect(declared.additionalProperties).toBe(false);
    expect(declared.required).toEqual(["command", "result_pattern"]);
    const full = { ...minimal, description: "d", failure_pattern: "F", completion: "exit", timeout_ms: 800, compact: true };
    expect(Value.Check(MonitorStartParams, full)).toBe(true);
    expect(Value.Check(MonitorStartParams, { ...minimal, extra: true })).toBe(false);
    expect(Value.Check(MonitorStartParams, { ...minimal, completion: "done" })).toBe(false);
    expect(Value.Check(MonitorStartParams, { ...minimal, timeout_ms: 1.5 })).toBe(false);
    // Providers get a plain string enum, not anyOf/const.
    expect(JSON.parse(JSON.stringify(MonitorStartParams)).properties.completion).toMatchObject({
      type: "string",
      enum: ["match", "exit"],
      default: "match",
    });
  });
});

describe("monitor_stop parameters", () => {
  it("stops one monitor or all of them", () => {
    expect(validateMonitorStop({ monitor_id: "monitor_3" })).toEqual({ ok: true, value: { monitorId: "monitor_3" } });
    expect(validateMonitorStop({})).toEqual({ ok: true, value: { monitorId: null } });
    expect(validateMonitorStop(undefined)).toEqual({ ok: true, value: { monitorId: null } });
  });

  it("names the field in every rejection", () => {
    expect(validateMonitorStop({ id: "x" })).toEqual({ ok: false, error: 'unknown field "id"' });
    expect(validateMonitorStop({ monitor_id: 3 })).toEqual({ ok: false, error: "monitor_id: expected a string" });
    expect(validateMonitorStop({ monitor_id: "" })).toMatchObject({ ok: false, error: expect.stringMatching(/^monitor_id: /) });
    expect(validateMonitorStop("all")).toEqual({ ok: false, error: "arguments: expected an object" });
  });

  it("declares closed schemas for parameters and output", () => {
    expect(Value.Check(MonitorStopParams, {})).toBe(true);
    expect(Value.Check(MonitorStopParams, { monitor_id: "m", all: true })).toBe(false);
    expect(Value.Check(MonitorStopOutput, { stopped: 2 })).toBe(true);
    expect(Value.Check(MonitorStopOutput, { stopped: -1 })).toBe(false);
  });
});

describe("monitor_start output schema", () => {
  it("is a union of the running and the terminal shapes", () => {
    expect(Value.Check(MonitorStartOutput, { monitorId: "m", description: "d", status: "running" })).toBe(true);
    expect(Value.Check(MonitorStartOutput, { monitorId: "m", description: "d", status: "success" })).toBe(false);
    expect(Value.Check(MonitorStartOutput, { monitorId: "m", description: "d", status: "done", result: {} })).toBe(false);
  });
});

describe("deriveDescription", () => {
  it("collapses whitespace onto one line", () => {
    expect(deriveDescription("  npm   run\n build \t--silent ")).toBe("npm run build --silent");
  });

  it("drops a leading shell wrapper and unquotes its script", convertsEach(deriveDescription, [
    ["sh -c 'make test && echo DONE'", "make test && echo DONE"],
    ['bash -c "npm test \\"--ci\\""', 'npm test "--ci"'],
    ["/bin/sh -c 'bun test'", "bun test"],
    ["zsh -c 'ls'", "ls"],
    ["bash -lc 'cargo build'", "cargo build"],
    ["/usr/bin/env bash -c 'go test ./...'", "go test ./..."],
    // The POSIX '\'' idiom: close, escaped quote, reopen.
    ["sh -c 'printf '\\''DONE\\n'\\'''", "printf 'DONE\\n'"],
    ["sh -c '\n  if bun test; then\n    echo ok\n  fi\n'", "if bun test; then echo ok fi"],
  ]));

  it("keeps commands that only look like a wrapper", convertsEach(deriveDescription, [
    ["shellcheck -c x", "shellcheck -c x"],
    ["bash script.sh", "bash script.sh"],
    ["sh -c ''", "sh -c ''"],
    // An unterminated quote cannot be unquoted reliably: show what follows the wrapper as written.
    ["sh -c 'oops", "'oops"],
  ]));

  it("cuts at 60 code points and marks the cut", () => {
    const long = `echo ${"x".repeat(100)}`;
    const label = deriveDescription(long);
    expect(Array.from(label)).toHaveLength(60);
    expect(label.endsWith("…")).toBe(true);
    expect(deriveDescription("y".repeat(60))).toBe("y".repeat(60));
    const emoji = deriveDescription("😀".repeat(61));
    expect(Array.from(emoji)).toHaveLength(60);
    expect(emoji).toBe(`${"😀".repeat(59)}…`);
  });

  it("clips by code points without leaving a dangling space", () => {
    expect(clipCodePoints("abc def", 5)).toBe("abc…");
    expect(clipCodePoints("abc", 3)).toBe("abc");
  });
});
