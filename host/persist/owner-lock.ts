/**
 * Which Pi owns a project's persisted jobs: the one holding an flock on the project folder's `owner.lock`. Node cannot
 * flock, so a tiny perl process holds the lock for Pi and exits when its stdin closes, which happens when Pi releases
 * it or dies however it dies (SIGKILL included): the lock dies with its holder, and no stale owner is ever guessed at.
 * The holder writes Pi's pid into `owner`, so that another Pi can say who owns the jobs.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeAtomic } from "./registry.ts";

/** How long taking the lock may take (perl's start). */
const TAKE_WAIT_MS = 10_000;

const HOLDER = `
use strict; use Fcntl qw(:flock);
open(my $lock, '>>', $ARGV[0]) or die "lock: $!\\n";
if (!flock($lock, LOCK_EX | LOCK_NB)) { print "busy\\n"; exit 0 }
$| = 1; print "owned\\n";
1 while sysread(STDIN, my $buffer, 512);
`;

export type Ownership = { owned: true; release(): void } | { owned: false; ownerPid: number | null };

/** Takes the project's lock if no other Pi holds it; `perl` missing or failing counts as not owned, owner unknown. */
export function takeOwnership(projectFolder: string, perl = "perl"): Promise<Ownership> {
  const lockPath = join(projectFolder, "owner.lock");
  return new Promise((resolveOwnership) => {
    let settled = false;
    const settle = (ownership: Ownership): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolveOwnership(ownership);
    };
    const elsewhere = (): Ownership => ({ owned: false, ownerPid: ownerPidIn(projectFolder) });
    const child = spawn(perl, ["-e", HOLDER, lockPath], { stdio: ["pipe", "pipe", "ignore"], env: { LC_ALL: "C", PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    // It must not keep Pi alive, nor take Pi down with an error on one of its pipes.
    child.unref();
    child.on("error", () => settle(elsewhere()));
    child.stdin.on("error", () => {});
    (child.stdin as unknown as { unref?(): void }).unref?.();
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      settle(elsewhere());
    }, TAKE_WAIT_MS);
    timer.unref();
    let seen = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      seen += chunk;
      if (seen.startsWith("owned\n")) {
        child.stdout.destroy();
        writeAtomic(join(projectFolder, "owner"), `${process.pid}\n`);
        settle({ owned: true, release: () => child.stdin.end() });
      } else if (seen.startsWith("busy\n")) settle(elsewhere());
    });
    child.on("close", () => settle(elsewhere()));
  });
}

function ownerPidIn(projectFolder: string): number | null {
  try {
    const pid = Number(readFileSync(join(projectFolder, "owner"), "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 1 ? pid : null;
  } catch {
    return null;
  }
}
