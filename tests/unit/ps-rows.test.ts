/**
 * What `ps` and `lsof` print, parsed for the portable process table: the forms procps (Linux) prints, seen here, and
 * the forms BSD `ps` (macOS) prints according to its manual page, which no Linux run can show.
 */
import { describe, expect, it } from "vitest";
import { parseCpuTime, parseLsofPorts, parsePs, parsePsLine, parseStart, tagInArgs } from "../../shared/process-table/ps-rows.ts";

describe("CPU time", () => {
  it("reads procps [DD-]HH:MM:SS and BSD MMM:SS.ss alike", () => {
    expect(parseCpuTime("00:00:00")).toBe(0);
    expect(parseCpuTime("00:01:02")).toBe(62_000);
    expect(parseCpuTime("2-03:00:01")).toBe((2 * 86_400 + 3 * 3600 + 1) * 1000);
    expect(parseCpuTime("0:00.35")).toBe(350);
    expect(parseCpuTime("125:03.10")).toBe((125 * 60 + 3.1) * 1000);
    expect(parseCpuTime("abc")).toBeNull();
    expect(parseCpuTime("1:2:3:4")).toBeNull();
  });
});

describe("a row", () => {
  const start = (text: string) => parseStart(text.split(/\s+/));

  it("reads lstart in the C locale as local time", () => {
    expect(start("Mon Dec  7 05:05:57 2026")).toBe(new Date(2026, 11, 7, 5, 5, 57).getTime() / 1000);
    expect(start("Mon Dez  7 05:05:57 2026")).toBeNull();
  });

  it("reads a procps line, its tag from the environment after the command", () => {
    const line = "10901 10899 10897 S     1820 00:00:03 Mon Dec  7 05:05:57 2026 sleep 30 FOO=1 PI_JOBS_JOB=abc/job_1 SHELL=/bin/sh";
    expect(parsePsLine(line)).toEqual({
      pid: 10901,
      ppid: 10899,
      pgid: 10897,
      state: "S",
      rssBytes: 1820 * 1024,
      cpuMs: 3000,
      cpuStepMs: 1000,
      startedAt: new Date(2026, 11, 7, 5, 5, 57).getTime() / 1000,
      tag: "abc/job_1",
    });
  });

  it("reads a BSD line: state letters with flags, hundredths of a second", () => {
    const row = parsePsLine("  501   1   501 Ss+    5400   0:01.25 Tue Dec  8 10:00:00 2026 -zsh PI_JOBS_JOB=ab/job_2");
    expect(row).toMatchObject({ pid: 501, ppid: 1, pgid: 501, state: "S", cpuMs: 1250, cpuStepMs: 10, tag: "ab/job_2" });
  });

  it("takes a zombie without environment for one without a tag, and skips what is not a row", () => {
    const rows = parsePs("  PID\n42 1 42 Z 0 00:00:00 Mon Dec  7 05:05:57 2026 [sh] <defunct>\n\n");
    expect(rows).toEqual([expect.objectContaining({ pid: 42, state: "Z", tag: null })]);
  });
});

describe("the tag in what ps prints after the command", () => {
  it("is the environment's entry, after any argument that looks like one", () => {
    expect(tagInArgs("env PI_JOBS_JOB=fake/job_9 sleep 1 PI_JOBS_JOB=real/job_1 HOME=/root")).toBe("real/job_1");
    expect(tagInArgs("grep PI_JOBS_JOB HOME=/root")).toBeNull();
    expect(tagInArgs("sleep 1 PI_JOBS_JOB=")).toBeNull();
  });
});

describe("lsof -F pn", () => {
  it("reads the ports of IPv4, IPv6 and wildcard listeners, sorted and distinct", () => {
    const output = ["p123", "f5", "n*:8080", "f6", "n127.0.0.1:3000", "p124", "f7", "n[::1]:3000", "f8", "n[::]:9229", ""].join("\n");
    expect(parseLsofPorts(output)).toEqual([3000, 8080, 9229]);
    expect(parseLsofPorts("")).toEqual([]);
  });
});
