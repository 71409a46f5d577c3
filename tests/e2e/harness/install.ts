/**
 * pi-jobs installed the ways a user installs it, each by Pi's own `pi install` into a fresh agent dir, and a way to
 * see which copy of the workers a Pi then runs.
 *
 * `pi install` runs with the machine's PATH minus every node_modules/.bin: npm is the system's (whatever Node that
 * brings, often older than Pi's), as on a user's machine. Pi itself runs on the repository's Node 22.
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { makeTempDir, NODE22, PI_CLI, piEnv, REPO_ROOT } from "./paths.ts";

const INSTALL_TIMEOUT_MS = 240_000;

/** PATH without the node_modules/.bin entries npm and npx put in front: the machine's own npm and node. */
export function systemPath(path = process.env.PATH ?? ""): string {
  return path
    .split(delimiter)
    .filter((entry) => entry !== "" && !`${entry}${sep}`.includes(`${sep}node_modules${sep}`))
    .join(delimiter);
}

export interface InstallOptions {
  /** Where `pi install` runs (a relative local path is resolved from here); default: the agent dir. */
  cwd?: string;
  env?: Record<string, string>;
}

/** `pi install <source>` into `agentDir` (user scope), with Pi's own npm and git steps. Returns Pi's output. */
export function piInstall(source: string, agentDir: string, options: InstallOptions = {}): Promise<string> {
  return new Promise((resolveRun, reject) => {
    execFile(
      NODE22,
      [PI_CLI, "install", source],
      {
        cwd: options.cwd ?? agentDir,
        env: { ...piEnv(agentDir), PATH: systemPath(), CI: "true", npm_config_update_notifier: "false", ...options.env },
        timeout: INSTALL_TIMEOUT_MS,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`pi install ${source} failed: ${error.message}\n${stderr}\n${stdout}`));
        else resolveRun(`${stdout}${stderr}`);
      },
    );
  });
}

function git(args: string[], cwd: string): Promise<string> {
  return new Promise((resolveRun, reject) => {
    execFile("git", args, { cwd, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      error ? reject(new Error(`git ${args.join(" ")} failed in ${cwd}: ${error.message}\n${stderr}`)) : resolveRun(stdout),
    );
  });
}

export interface GitRemote {
  /** What a user types: `pi install <source>`. */
  source: string;
  /** Environment under which git fetches `source` from the local repository instead of the network. */
  env: Record<string, string>;
}

/**
 * A local git repository holding what a commit of the working tree would hold (tracked and untracked files that
 * .gitignore does not exclude; no dist/, no node_modules), served as `git:github.com/pi-jobs-e2e/pi-jobs`. git's
 * `url.<base>.insteadOf` (given through GIT_CONFIG_* variables) sends Pi's `git clone https://github.com/...` to it,
 * so the whole of Pi's git install runs, offline.
 */
export async function gitRemoteOfWorkingTree(dir: string): Promise<GitRemote> {
  const repo = join(dir, "remote", "pi-jobs");
  mkdirSync(repo, { recursive: true });
  const listed = await git(["ls-files", "-z", "--cached", "--others", "--exclude-standard"], REPO_ROOT);
  for (const file of listed.split("\0")) {
    // A tracked file deleted in the working tree would not be in the commit either.
    if (file === "" || !existsSync(join(REPO_ROOT, file))) continue;
    mkdirSync(dirname(join(repo, file)), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(repo, file));
  }
  await git(["init", "--quiet", "--initial-branch=main"], repo);
  await git(["add", "--all"], repo);
  await git(["-c", "user.name=pi-jobs tests", "-c", "user.email=tests@pi-jobs.invalid", "commit", "--quiet", "--no-gpg-sign", "-m", "snapshot"], repo);
  return {
    source: "git:github.com/pi-jobs-e2e/pi-jobs",
    env: {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: `url.${pathToFileURL(repo).href}.insteadOf`,
      GIT_CONFIG_VALUE_0: "https://github.com/pi-jobs-e2e/pi-jobs",
    },
  };
}

/** Where `pi install` put a package: the path Pi loads it from. */
export function gitInstallPath(agentDir: string, hostAndPath: string): string {
  return join(agentDir, "git", ...hostAndPath.split("/"));
}

export function npmInstallPath(agentDir: string, name: string): string {
  return join(agentDir, "npm", "node_modules", ...name.split("/"));
}

export interface WorkerLoads {
  /** Environment for the Pi run: preloads the recorder (tests/fixtures/worker-loads.ts) into every thread. */
  env: Record<string, string>;
  /** Absolute paths of the files worker threads loaded so far, in load order, once each. */
  files(): string[];
}

/** Records which files worker threads load in a Pi run; the log lives in `dir`. */
export function recordWorkerLoads(dir: string): WorkerLoads {
  const log = join(dir, "worker-loads.log");
  const recorder = join(REPO_ROOT, "tests", "fixtures", "worker-loads.ts");
  return {
    env: { NODE_OPTIONS: `--import=${pathToFileURL(recorder).href}`, PI_JOBS_TEST_WORKER_LOADS: log },
    files: () => {
      if (!existsSync(log)) return [];
      const urls = readFileSync(log, "utf8")
        .split("\n")
        .map((line) => line.slice(line.indexOf(" ") + 1))
        .filter((url) => url.startsWith("file:"));
      return [...new Set(urls.map((url) => fileURLToPath(url)))];
    },
  };
}

/** `file` relative to `dir` when it lies inside it; undefined otherwise. */
export function inside(dir: string, file: string): string | undefined {
  const rel = relative(dir, file);
  return rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel) ? undefined : rel;
}
