/** The environment switches (host/config.ts): one name each, older names read as aliases, and every one documented. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readEmptyPollCap, steerInterruptEnabled, SWITCHES } from "../../host/config.ts";
import { readSwitch } from "../../shared/config.ts";

describe("aliases", () => {
  it("read the current name, else the alias; the current name wins when both are set", () => {
    const names = ["PI_JOBS_NEW", "PI_OLD"] as const;
    expect(readSwitch({}, names)).toBeNull();
    expect(readSwitch({ PI_OLD: "1" }, names)).toEqual({ variable: "PI_OLD", raw: "1" });
    expect(readSwitch({ PI_JOBS_NEW: "2" }, names)).toEqual({ variable: "PI_JOBS_NEW", raw: "2" });
    expect(readSwitch({ PI_JOBS_NEW: "2", PI_OLD: "1" }, names)).toEqual({ variable: "PI_JOBS_NEW", raw: "2" });
  });

  it("cap empty polls under either name of the switch, the current one first", () => {
    expect(readEmptyPollCap({ PI_JOBS_MAX_EMPTY_POLL_MS: "7000" })).toEqual({ ok: true, capMs: 7000 });
    expect(readEmptyPollCap({ PI_SHELL_JOBS_MAX_EMPTY_POLL_MS: "8000" })).toEqual({ ok: true, capMs: 8000 });
    expect(readEmptyPollCap({ PI_JOBS_MAX_EMPTY_POLL_MS: "7000", PI_SHELL_JOBS_MAX_EMPTY_POLL_MS: "8000" })).toEqual({ ok: true, capMs: 7000 });
  });

  it("name the variable the user set in an error", () => {
    const current = readEmptyPollCap({ PI_JOBS_MAX_EMPTY_POLL_MS: "soon" });
    expect(current).toEqual({ ok: false, error: 'PI_JOBS_MAX_EMPTY_POLL_MS="soon" is not a positive whole number of milliseconds' });
    const alias = readEmptyPollCap({ PI_SHELL_JOBS_MAX_EMPTY_POLL_MS: "soon" });
    expect(alias).toEqual({ ok: false, error: 'PI_SHELL_JOBS_MAX_EMPTY_POLL_MS="soon" is not a positive whole number of milliseconds' });
    // A valid current name hides an invalid alias.
    expect(readEmptyPollCap({ PI_JOBS_MAX_EMPTY_POLL_MS: "6000", PI_SHELL_JOBS_MAX_EMPTY_POLL_MS: "soon" })).toEqual({ ok: true, capMs: 6000 });
  });

  it("turn steering's interrupt off under either name, the current one first", () => {
    expect(steerInterruptEnabled({ PI_JOBS_STEER_INTERRUPT: "0" })).toBe(false);
    expect(steerInterruptEnabled({ PI_SHELL_JOBS_STEER_INTERRUPT: "0" })).toBe(false);
    expect(steerInterruptEnabled({ PI_JOBS_STEER_INTERRUPT: "1", PI_SHELL_JOBS_STEER_INTERRUPT: "0" })).toBe(true);
    expect(steerInterruptEnabled({ PI_JOBS_STEER_INTERRUPT: "0", PI_SHELL_JOBS_STEER_INTERRUPT: "1" })).toBe(false);
  });
});

describe("switches", () => {
  const names = Object.values(SWITCHES).flat();

  it("are all named PI_JOBS_*, apart from the aliases", () => {
    for (const [name] of Object.values(SWITCHES)) expect(name).toMatch(/^PI_JOBS_[A-Z_]+$/);
    expect(new Set(names).size).toBe(names.length);
  });

  it("are each listed, aliases too, in README.md's Settings table", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const settings = readme.slice(readme.indexOf("\n## Settings\n"), readme.indexOf("\n## ", readme.indexOf("\n## Settings\n") + 1));
    expect(settings.length).toBeGreaterThan(0);
    for (const [name, ...aliases] of Object.values(SWITCHES)) {
      expect(settings).toContain(`| \`${name}\` |`);
      for (const alias of aliases) expect(settings).toContain(`Alias: \`${alias}\``);
    }
  });
});
