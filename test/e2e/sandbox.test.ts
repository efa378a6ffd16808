import { expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeProvider, type FakeBlock } from "../support/fake-provider.ts";
import { Pion, runPion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";
import { describeWith } from "../support/requires.ts";

/**
 * The sandbox through the binary: each test runs the model's bash calls (from the fake
 * provider) under `--sandbox` and looks at the disk and at what the commands printed. The
 * process gets a HOME of its own, so writes there and its ~/.ssh are the test's.
 */
const SLOW = 90_000;
const missing = existsSync("/usr/bin/bwrap") || Bun.which("bwrap") ? (Bun.which("python3") ? (Bun.which("git") ? undefined : "git") : "python3") : "bubblewrap (apt install bubblewrap)";

const OUTSIDE_TMP = "/var/tmp";
const bash = (id: string, command: string): FakeBlock => ({ type: "toolCall", id, name: "bash", arguments: { command } });

function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  // Outside /tmp, which is private inside the sandbox: these stay visible there, read-only.
  const home = mkdtempSync(join(OUTSIDE_TMP, "pion-sbx-home-"));
  mkdirSync(join(home, ".ssh"));
  writeFileSync(join(home, ".ssh", "id_test"), "PRIVATE-KEY\n");
  writeFakeModels(dirs.home, fake.url);
  return { fake, dirs, home, env: { HOME: home } };
}

/** One JSON-mode run of `calls` (one model reply), then "done"; the tool results' texts by call id. */
async function run(s: ReturnType<typeof setup>, calls: FakeBlock[], args: string[] = ["--sandbox", "workspace-write"]) {
  s.fake.enqueue({ blocks: calls });
  s.fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
  const r = await runPion(["--mode", "json", "--model", "fake/fake-model", ...args, "go"], { ...s.dirs, env: s.env });
  const out = new Map<string, { text: string; isError: boolean }>();
  for (const line of r.stdout.split("\n").filter(Boolean)) {
    const rec = JSON.parse(line) as Rec;
    if (rec.type === "message_end" && rec.message.role === "toolResult") {
      out.set(rec.message.toolCallId, { text: rec.message.content.map((c: Rec) => c.text ?? "").join(""), isError: rec.message.isError });
    }
  }
  return { ...r, out };
}

describeWith("the sandbox around the model's commands", missing, () => {
  test.concurrent("writes inside the cwd work; a sibling folder, $HOME, /etc and a link out of the cwd are out of reach; ~/.ssh is empty", async () => {
    const s = setup();
    const sibling = mkdtempSync(join(OUTSIDE_TMP, "pion-sbx-sibling-"));
    symlinkSync(sibling, join(s.dirs.cwd, "out-link"));
    const r = await run(s, [
      bash("in", "echo inside > in.txt && mkdir -p deep/er && echo x > deep/er/y.txt && cat in.txt"),
      bash("sib", `echo no > ${sibling}/a.txt`),
      bash("home", "echo no > $HOME/a.txt"),
      bash("etc", "echo no > /etc/pion-sandbox-test"),
      bash("link", "echo no > out-link/b.txt"),
      bash("ssh", "ls -A ~/.ssh | wc -l; cat ~/.ssh/id_test"),
      bash("env", 'echo "$PION_SANDBOX $PION_SANDBOX_NETWORK $TMPDIR"'),
      bash("pion", "echo '{}' > .pion/settings.json"),
    ]);
    expect(r.code).toBe(0);
    expect(r.out.get("in")).toEqual({ text: "inside\n", isError: false });
    expect(readFileSync(join(s.dirs.cwd, "deep/er/y.txt"), "utf8")).toBe("x\n");
    for (const id of ["sib", "home", "etc", "link"]) {
      expect(r.out.get(id)?.isError).toBe(true);
      expect(r.out.get(id)?.text).toContain("Read-only file system");
      // the model reads where it ran and what is out of reach
      expect(r.out.get(id)?.text).toContain("[sandbox] This command ran in pion's workspace-write sandbox");
    }
    expect(existsSync(join(sibling, "a.txt"))).toBe(false);
    expect(existsSync(join(s.home, "a.txt"))).toBe(false);
    expect(existsSync("/etc/pion-sandbox-test")).toBe(false);
    expect(existsSync(join(sibling, "b.txt"))).toBe(false);
    expect(r.out.get("ssh")?.text).not.toContain("PRIVATE-KEY");
    expect(r.out.get("ssh")?.text.startsWith("0\n")).toBe(true);
    expect(r.out.get("env")?.text).toBe("workspace-write off /tmp\n");
    expect(r.out.get("pion")?.isError).toBe(true);
    expect(existsSync(join(s.dirs.cwd, ".pion/settings.json"))).toBe(false);
    await s.fake.stop();
  }, SLOW);

  test.concurrent("the file tools keep the same boundary: a write outside the cwd and a read of ~/.ssh are refused, naming the sandbox", async () => {
    const s = setup();
    const sibling = mkdtempSync(join(OUTSIDE_TMP, "pion-sbx-sibling-"));
    const r = await run(s, [
      { type: "toolCall", id: "w-in", name: "write", arguments: { path: "ok.txt", content: "ok\n" } },
      { type: "toolCall", id: "w-out", name: "write", arguments: { path: join(sibling, "no.txt"), content: "no\n" } },
      { type: "toolCall", id: "w-git", name: "write", arguments: { path: ".pion/settings.json", content: "{}" } },
      { type: "toolCall", id: "r-ssh", name: "read", arguments: { path: join(s.home, ".ssh/id_test") } },
    ]);
    expect(r.out.get("w-in")?.isError).toBe(false);
    expect(readFileSync(join(s.dirs.cwd, "ok.txt"), "utf8")).toBe("ok\n");
    expect(r.out.get("w-out")).toMatchObject({ isError: true, text: expect.stringContaining("workspace-write sandbox refuses the write") });
    expect(existsSync(join(sibling, "no.txt"))).toBe(false);
    expect(r.out.get("w-git")).toMatchObject({ isError: true, text: expect.stringContaining(".pion read-only") });
    expect(existsSync(join(s.dirs.cwd, ".pion/settings.json"))).toBe(false);
    const ssh = r.out.get("r-ssh")!;
    expect([ssh.isError, ssh.text.includes("sandbox hides"), ssh.text.includes("PRIVATE-KEY")]).toEqual([true, true, false]);
    await s.fake.stop();
  }, SLOW);

  test.concurrent("git: .git/hooks and .git/config stay read-only while git add and git commit work", async () => {
    const s = setup();
    const git = (...a: string[]) => Bun.spawnSync(["git", ...a], { cwd: s.dirs.cwd, env: { ...process.env, HOME: s.home } });
    git("init", "-q");
    const r = await run(s, [
      bash("commit", "echo a > a.txt && git add a.txt && git -c user.name=t -c user.email=t@t commit -qm one && git log --oneline | wc -l"),
      bash("hook", "echo 'touch /tmp/pwned' > .git/hooks/post-commit"),
      bash("config", "git config core.hooksPath /tmp/evil"),
    ]);
    expect(r.out.get("commit")).toEqual({ text: "1\n", isError: false });
    expect(r.out.get("hook")?.isError).toBe(true);
    expect(existsSync(join(s.dirs.cwd, ".git/hooks/post-commit"))).toBe(false);
    expect(r.out.get("config")?.isError).toBe(true);
    expect(readFileSync(join(s.dirs.cwd, ".git/config"), "utf8")).not.toContain("hooksPath");
    await s.fake.stop();
  }, SLOW);

  test.concurrent("network off: the host's loopback server is out of reach, one started inside works; a host Unix socket and new user namespaces are refused", async () => {
    const s = setup();
    const host = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("host-server") });
    const sockDir = mkdtempSync(join(tmpdir(), "pion-sbx-sock-"));
    const sockPath = join(sockDir, "host.sock");
    const unix = createServer(() => {}).listen(sockPath);
    const py = (code: string) => `python3 - <<'PY'\n${code}\nPY`;
    const r = await run(s, [
      bash("host", py(`import urllib.request\ntry:\n  print(urllib.request.urlopen("http://127.0.0.1:${host.port}", timeout=3).read().decode())\nexcept Exception as e:\n  print("unreachable", type(e).__name__)`)),
      bash(
        "inside",
        `python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 &\nfor i in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:8765/ && echo inside-ok && break; sleep 0.1; done\nkill %1`,
      ),
      bash("unix", py(`import socket\ntry:\n  s = socket.socket(socket.AF_UNIX); s.connect(${JSON.stringify(sockPath)}); print("connected")\nexcept OSError as e:\n  print("errno", e.errno)`)),
      bash("userns", "unshare -U true && echo made || echo refused"),
    ]);
    expect(r.out.get("host")?.text).toStartWith("unreachable");
    expect(r.out.get("inside")?.text).toContain("inside-ok");
    expect(r.out.get("unix")?.text).toBe("errno 1\n");
    expect(r.out.get("userns")?.text).toContain("refused");

    // with sandbox.network the host's server is reachable
    writeSettings(s.dirs.home, { sandbox: { network: true } });
    const open = await run(s, [bash("host", py(`import urllib.request\nprint(urllib.request.urlopen("http://127.0.0.1:${host.port}", timeout=3).read().decode())`))]);
    expect(open.out.get("host")?.text).toBe("host-server\n");
    host.stop(true);
    unix.close();
    await s.fake.stop();
  }, SLOW);

  test.concurrent("a private /tmp kept between the session's calls; a timeout kills the whole tree", async () => {
    const s = setup();
    const marker = `pion-sbx-${Math.random().toString(36).slice(2)}`;
    s.fake.enqueue({ blocks: [bash("t1", `echo kept > /tmp/${marker}`)] });
    s.fake.enqueue({ blocks: [bash("t2", `cat /tmp/${marker}`), { type: "toolCall", id: "t3", name: "bash", arguments: { command: `(sleep 30; echo ${marker}) & sleep 30`, timeout: 1 } }] });
    s.fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    const p = new Pion({ ...s.dirs, env: s.env, args: ["--mode", "rpc", "--model", "fake/fake-model", "--sandbox", "workspace-write"] });
    expect((await p.request({ type: "get_state" })).data).toMatchObject({ sandboxMode: "workspace-write", sandboxNetwork: false });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    const results = p.records.filter((r) => r.type === "message_end" && r.message.role === "toolResult").map((r) => r.message);
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["t1", false],
      ["t2", false],
      ["t3", true],
    ]);
    expect(results[1].content[0].text).toBe("kept\n");
    expect(existsSync(join("/tmp", marker))).toBe(false);
    expect(results[2].content[0].text).toContain("timed out");
    const left = Bun.spawnSync(["pgrep", "-f", `sleep 30`]).stdout.toString();
    const mine = left.split("\n").filter(Boolean).filter((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker));
    expect(mine).toEqual([]);
    await p.close();
    await s.fake.stop();
  }, SLOW);

  test.concurrent("a sandbox that cannot start: JSON mode exits 3 before any command; RPC mode announces it and asks before each bash call", async () => {
    const s = setup();
    writeSettings(s.dirs.home, { sandbox: { bwrapPath: "/nonexistent/bwrap" } });
    const r = await runPion(["--mode", "json", "--model", "fake/fake-model", "--sandbox", "workspace-write", "go"], { ...s.dirs, env: s.env });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("sandbox cannot start here: bubblewrap (bwrap) is not installed");
    expect(r.stderr).toContain("apt install bubblewrap");
    expect(s.fake.requests).toHaveLength(0);

    const p = new Pion({ ...s.dirs, env: s.env, args: ["--mode", "rpc", "--model", "fake/fake-model", "--sandbox", "workspace-write"] });
    s.fake.enqueue({ blocks: [bash("b1", "touch denied.txt")] });
    s.fake.enqueue({ blocks: [bash("b2", "touch allowed.txt")] });
    s.fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    await p.request({ type: "prompt", message: "go" });
    const status = await p.waitFor("sandbox_status");
    expect(status).toMatchObject({ mode: "workspace-write", available: false, reason: expect.stringContaining("not installed") });
    const first = await p.waitFor("tool_approval_request");
    expect(first.reason).toStartWith("sandbox: pion's workspace-write sandbox cannot start here");
    expect(first.options).toEqual(["allow", "deny"]);
    p.send({ type: "tool_approval_response", id: first.id, decision: "deny" });
    const second = await p.waitFor((x) => x.type === "tool_approval_request" && x.toolCallId === "b2");
    p.send({ type: "tool_approval_response", id: second.id, decision: "allow" });
    await p.waitFor("agent_settled");
    expect(existsSync(join(s.dirs.cwd, "denied.txt"))).toBe(false);
    expect(existsSync(join(s.dirs.cwd, "allowed.txt"))).toBe(true);
    await p.close();
    await s.fake.stop();
  }, SLOW);
});

describeWith("pion sandbox check", missing, () => {
  test.concurrent("says whether the sandbox starts here (exit 0) or not and why (exit 3); a bad --sandbox is a usage error", async () => {
    const dirs = tempDirs();
    const ok = await runPion(["sandbox", "check"], dirs);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^sandbox workspace-write: available \(.*bwrap, bubblewrap \d+\.\d+/);
    writeSettings(dirs.home, { sandbox: { bwrapPath: "/nonexistent/bwrap" } });
    const no = await runPion(["sandbox", "check", "--json"], dirs);
    expect(no.code).toBe(3);
    expect(JSON.parse(no.stdout)).toMatchObject({ mode: "workspace-write", ok: false, why: expect.stringContaining("not installed") });
    expect((await runPion(["--help"], dirs)).stdout).toContain("pion sandbox check");
    const bad = await runPion(["-p", "--sandbox", "sometimes", "hi"], dirs);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown sandbox mode "sometimes"');
  }, SLOW);
});

describeWith("the sandbox, refused and unavailable", missing, () => {
  test.concurrent("ask mode: a command the sandbox refused may run again outside it when the host allows (reason sandbox); JSON mode never asks", async () => {
    const s = setup();
    const target = join(s.home, "outside.txt");
    s.fake.enqueue({ blocks: [bash("b1", `echo hi > ${target}`)] });
    s.fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    const p = new Pion({ ...s.dirs, env: s.env, args: ["--mode", "rpc", "--model", "fake/fake-model", "--sandbox", "workspace-write", "--permission-mode", "ask", "--allow", "bash"] });
    await p.request({ type: "prompt", message: "go" });
    const req = await p.waitFor("tool_approval_request");
    expect(req).toMatchObject({ toolCallId: "b1", reason: "sandbox", options: ["allow", "deny"] });
    expect(existsSync(target)).toBe(false);
    p.send({ type: "tool_approval_response", id: req.id, decision: "allow" });
    await p.waitFor("agent_settled");
    expect(readFileSync(target, "utf8")).toBe("hi\n");
    const result = p.records.find((r) => r.type === "message_end" && r.message.role === "toolResult")!.message;
    expect(result.content[0].text).toStartWith("[ran again outside the sandbox, as the user allowed]");
    await p.close();

    const json = await run(s, [bash("b2", `echo again > ${join(s.home, "json.txt")}`)], ["--sandbox", "workspace-write", "--permission-mode", "ask", "--allow", "bash"]);
    expect(json.out.get("b2")?.isError).toBe(true);
    expect(json.stdout).not.toContain("tool_approval_request");
    expect(existsSync(join(s.home, "json.txt"))).toBe(false);
    await s.fake.stop();
  }, SLOW);

  test.concurrent("inside a container without user namespaces (bwrap --unshare-user --disable-userns): JSON mode exits 3 naming the cause", async () => {
    const s = setup();
    const cmd = process.env.PION_E2E_BINARY ? [join(import.meta.dir, "../../dist/pion")] : [process.execPath, join(import.meta.dir, "../../src/cli.ts")];
    const outer = ["bwrap", "--unshare-user", "--disable-userns", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", "/tmp", "/tmp", "--bind", OUTSIDE_TMP, OUTSIDE_TMP, "--"];
    const proc = Bun.spawn([...outer, ...cmd, "--mode", "json", "--model", "fake/fake-model", "--sandbox", "workspace-write", "go"], {
      cwd: s.dirs.cwd,
      env: { ...process.env, PION_HOME: s.dirs.home, HOME: s.home },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(3);
    expect(stderr).toContain("sandbox cannot start here: bwrap could not create its namespaces");
    expect(s.fake.requests).toHaveLength(0);
    await s.fake.stop();
  }, SLOW);
});
