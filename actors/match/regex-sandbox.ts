/**
 * The regex sandbox: a worker that runs contract patterns which V8's linear-time engine cannot take
 * (backreferences, lookahead). It owns nothing but two compiled regexes: no process, no PTY, no file, no timer,
 * so once loaded the engine can `terminate()` it at any moment — which is exactly what it does when a batch overruns
 * its deadline. Lines arrive in small batches and only the matches travel back.
 */
import { parentPort, workerData } from "node:worker_threads";
import { compilePattern, matchLine, type Pattern } from "./pattern.ts";
import type { IndexedMatch, SandboxInit, SandboxReply, SandboxRequest } from "./sandbox-matcher.ts";

const port = parentPort;
if (port === null) throw new Error("regex-sandbox runs as a worker thread");

const send = (reply: SandboxReply): void => port.postMessage(reply);

const init = workerData as SandboxInit;
let result: Pattern;
let failure: Pattern | null;
try {
  result = compilePattern(init.resultPattern, "");
  failure = init.failurePattern === null ? null : compilePattern(init.failurePattern, "");
  // Ready only once this module has finished loading: until then the engine must not end this thread.
  setImmediate(() => send({ type: "ready" }));
} catch (error) {
  send({ type: "error", id: null, message: (error as Error).message });
  throw error;
}

port.on("message", (request: SandboxRequest) => {
  const matches: IndexedMatch[] = [];
  try {
    for (let index = 0; index < request.texts.length; index++) {
      const match = matchLine(result, failure, request.texts[index] as string, request.wantSuccess);
      if (match !== null) {
        // The groups object has a null prototype; a plain copy is what crosses the port.
        matches.push({ index, match: { ...match, groups: match.groups === null ? null : { ...match.groups } } });
      }
    }
  } catch (error) {
    // Deep recursion on a huge line surfaces as a RangeError: a matcher error, not a crash of the sandbox.
    send({ type: "error", id: request.id, message: (error as Error).message });
    return;
  }
  send({ type: "matches", id: request.id, matches });
});
