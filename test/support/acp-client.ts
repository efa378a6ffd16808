/**
 * An editor's side of ACP, with the official SDK's client: spawns pion --mode acp (source or
 * dist/pion), records every session/update per session, and answers permission and file
 * requests the way a test sets up; terminal requests run the command for real. Elicitation
 * requests are recorded and answered as the test says (an editor offers them only when the
 * test's initialize sends `elicitation: { form: {} }`).
 */
import * as acp from "@agentclientprotocol/sdk";
import type { Subprocess } from "bun";
import { FakeTerminals } from "./acp-terminals.ts";
import { startFakeProvider, type FakeProvider } from "./fake-provider.ts";
import { entryCommand, tempDirs, writeFakeModels, writeSettings } from "./pion.ts";

export interface AcpTestClient {
  agent: acp.ClientContext;
  /** session/update payloads by session id, in arrival order. */
  updates: Map<string, acp.SessionUpdate[]>;
  /** pion's own notifications (`_pion/…`), in arrival order. */
  extNotifications: { method: string; params: unknown }[];
  /** fs requests the agent made. */
  fsCalls: { method: string; params: unknown }[];
  permissionRequests: acp.RequestPermissionRequest[];
  elicitationRequests: acp.CreateElicitationRequest[];
  /** The editor's terminals (used when the test's initialize offers `terminal: true`). */
  terminals: FakeTerminals;
  stderr: () => string;
  proc: Subprocess<"pipe", "pipe", "pipe">;
  close(): Promise<number>;
}

export interface AcpClientOptions {
  home: string;
  cwd: string;
  args?: string[];
  env?: Record<string, string>;
  /** Run dist/pion instead of the source entry (default: PION_E2E_BINARY=1 in the environment). */
  binary?: boolean;
  /** In-memory files the editor holds (path -> text), served over fs/* when set. */
  files?: Map<string, string>;
  /** How the editor answers session/request_permission (default: the first option). */
  permission?: (req: acp.RequestPermissionRequest) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;
  /** How the editor answers elicitation/create (default: cancel). */
  elicitation?: (req: acp.CreateElicitationRequest) => acp.CreateElicitationResponse | Promise<acp.CreateElicitationResponse>;
}

export function startAcp(o: AcpClientOptions): AcpTestClient {
  const proc = Bun.spawn([...entryCommand(o.binary), "--mode", "acp", ...(o.args ?? [])], {
    cwd: o.cwd,
    env: { ...process.env, PION_HOME: o.home, ...o.env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stderr = "";
  void (async () => {
    const dec = new TextDecoder();
    for await (const chunk of proc.stderr) stderr += dec.decode(chunk, { stream: true });
  })();
  const updates = new Map<string, acp.SessionUpdate[]>();
  const fsCalls: { method: string; params: unknown }[] = [];
  const permissionRequests: acp.RequestPermissionRequest[] = [];
  const elicitationRequests: acp.CreateElicitationRequest[] = [];
  const terminals = new FakeTerminals();
  const extNotifications: { method: string; params: unknown }[] = [];
  const app = acp
    .client({ name: "pion-test-editor" })
    .onNotification("session/update", ({ params }) => {
      const list = updates.get(params.sessionId) ?? [];
      list.push(params.update);
      updates.set(params.sessionId, list);
    })
    // Any other notification: pion's own (`_pion/…`) are kept.
    .onNotification("*", (n: { method: string; params?: unknown }) => {
      if (n.method.startsWith("_pion/")) extNotifications.push({ method: n.method, params: n.params });
    })
    .onRequest("session/request_permission", async ({ params }) => {
      permissionRequests.push(params);
      if (o.permission) return o.permission(params);
      return { outcome: { outcome: "selected", optionId: params.options[0]!.optionId } };
    })
    .onRequest("elicitation/create", async ({ params }) => {
      elicitationRequests.push(params);
      return o.elicitation ? o.elicitation(params) : { action: "cancel" };
    })
    .onRequest("fs/read_text_file", ({ params }) => {
      fsCalls.push({ method: "fs/read_text_file", params });
      const text = o.files?.get(params.path);
      if (text === undefined) throw acp.RequestError.resourceNotFound(params.path);
      return { content: text };
    })
    .onRequest("fs/write_text_file", ({ params }) => {
      fsCalls.push({ method: "fs/write_text_file", params });
      o.files?.set(params.path, params.content);
      return {};
    })
    .onRequest("terminal/create", ({ params }) => terminals.create(params))
    .onRequest("terminal/output", ({ params }) => terminals.output(params))
    .onRequest("terminal/wait_for_exit", ({ params }) => terminals.waitForExit(params))
    .onRequest("terminal/kill", ({ params }) => terminals.kill(params))
    .onRequest("terminal/release", ({ params }) => terminals.release(params));
  const input = new WritableStream<Uint8Array>({
    write(chunk) {
      proc.stdin.write(chunk);
      proc.stdin.flush();
    },
  });
  const conn = app.connect(acp.ndJsonStream(input, proc.stdout));
  return {
    agent: conn.agent,
    updates,
    extNotifications,
    fsCalls,
    permissionRequests,
    elicitationRequests,
    terminals,
    stderr: () => stderr,
    proc,
    async close() {
      proc.stdin.end();
      const code = await proc.exited;
      conn.close();
      return code;
    },
  };
}

/** A fake provider as the default model of a new home, and pion --mode acp on it. */
export function setupAcp(o: Partial<AcpClientOptions> = {}): { fake: FakeProvider; dirs: { home: string; cwd: string }; c: AcpTestClient } {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  writeSettings(dirs.home, { defaultProvider: "fake", defaultModel: "fake-model" });
  const c = startAcp({ ...dirs, ...o });
  return { fake, dirs, c };
}

/** The JSON-RPC error a request was answered with; throws when it succeeded. */
export async function rpcErrorOf(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: number; message: string };
  }
  throw new Error("expected the request to fail");
}
