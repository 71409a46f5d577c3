import { describe, expect, it } from "vitest";
import { parseListening } from "../../shared/process-table/proc-ports.ts";

describe("parseListening", () => {
  it("keeps listening sockets (state 0A) with their ports, by inode, from tcp and tcp6", () => {
    const tcp = [
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
      "   0: 0100007F:1435 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 81234 1 0000000000000000 100 0 0 10 0",
      "   1: 0100007F:1435 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 81299 1 0000000000000000 20 4 30 10 -1",
    ].join("\n");
    const tcp6 = [
      "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
      "   0: 00000000000000000000000000000000:5E46 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 90001 1 0000000000000000 100 0 0 10 0",
    ].join("\n");
    const inodes = parseListening(tcp6, parseListening(tcp));
    expect([...inodes.entries()]).toEqual([
      ["81234", 5173],
      ["90001", 24134],
    ]);
  });
});
