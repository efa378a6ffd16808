import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeBlock } from "../support/fake-provider.ts";
import { runPion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

/**
 * The approval gate tried as someone getting around it would: each line tries to delete
 * (under a deny rule) or create (under allow rules in ask mode, with nobody to approve) a
 * file of its own, and the test looks at the disk. All lines go to one pion run as one
 * model reply of parallel bash calls.
 */
const SLOW = { timeout: 90000 };

/** `F` is the line's own file. Each of these deletes it when it runs. */
const DELETES = [
  "rm F",
  "{ rm F; }",
  "if true; then rm F; fi",
  "\\rm F",
  "FOO=1 rm F",
  "env rm F",
  "env -i PATHX=1 rm F",
  "sh -c 'rm F'",
  'eval "rm F"',
  "/bin/rm F",
  '"rm" F',
  "'rm' F",
  "x=rm; $x F",
  "# don't worry\nrm F",
  "cat <<EOF\ndon't\nEOF\nrm F",
  "true && rm F",
  "false || rm F",
  "echo a | rm F",
  "(rm F)",
  "for i in 1; do rm F; done",
  "until rm F; do break; done",
  "case x in x) rm F;; esac",
  "f() { rm F; }; f",
  "! rm F",
  "time rm F",
  "echo $(rm F)",
  "echo `rm F`",
  "x=$(rm F) true",
  "cat <(rm F)",
  "echo ${x:-$(rm F)}",
  "echo hi > $(rm F; echo /dev/null)",
  "cat <<EOF\n$(rm F)\nEOF",
  "[[ -n $(rm F) ]]",
  "command rm F",
  "builtin command rm F",
  "exec rm F",
  "nice rm F",
  "nice -n 5 rm F",
  "nohup rm F",
  "timeout 5 rm F",
  "timeout -s KILL 5 rm F",
  "stdbuf -oL rm F",
  "echo F | xargs rm",
  "echo F | xargs -I{} rm {}",
  "echo 'rm F' | xargs -I{} sh -c '{}'",
  "bash -c 'rm F'",
  'bash -lc "rm F"',
  "sh -c \"sh -c 'rm F'\"",
  "r''m F",
  "$'\\x72m' F",
  "$'rm' F",
  "'r'\\m F",
  "r\\\nm F",
  "$(echo rm) F",
  "`echo rm` F",
  '"$(printf rm)" F',
  "source <(echo rm F)",
  '. /dev/stdin <<< "rm F"',
  "echo 'rm F' | sh",
  "echo 'rm F' | bash -s",
  "find . -name F -exec rm {} \\;",
  "trap 'rm F' EXIT",
  "PATH=/bin rm F",
  "/bin/r[m] F",
  "x() { \"$@\"; }; x rm F",
  'arr=(rm F); "${arr[@]}"',
  "echo x; rm F # done",
  "cd . && rm F",
  "rm -f -- F",
  "RM=rm; eval $RM F",
  "time { rm F; }",
  "! { rm F; }",
  "coproc { rm F; }",
  "time if true; then rm F; fi",
];

/** `F` again: each of these creates it when it runs (an allowed command, then a write or a command no rule allows). */
const CREATES = [
  "echo hi > F",
  "echo hi >> F",
  "echo hi &> F",
  "echo hi 2> F",
  "echo hi >| F",
  "echo hi | tee F",
  "echo hi | tee -a F",
  "git status > F",
  "git status $'\\'' ; touch F ; #'",
  "echo hi && touch F",
  "echo $(touch F)",
  "echo `touch F`",
  "ls; touch F",
  "ls | sh -c 'touch F'",
  'echo "$(touch F)"',
  "echo ${x:-$(touch F)}",
  "ls <(touch F)",
  "echo hi > >(cat > F)",
  "echo touch F | sh",
  'echo x; eval "touch F"',
  "echo hi; x=touch; $x F",
  "echo hi\ntouch F",
  "echo 'a' # it's fine\ntouch F",
  "ls -la `touch F`",
  "echo a; { touch F; }",
  "echo $( (touch F) )",
  "env touch F",
  "ls && env echo x > F",
  "echo F | xargs touch",
  "echo 'touch F' | bash",
  "echo > ./out/../F",
  "cd out && echo > ../F",
  'echo hi > "$(echo F)"',
  "git status; touch F",
  "git status && git status > F",
  "ls $(touch F)",
  "git status --porcelain | sh -c 'cat > F'",
  "echo hi > out/../F",
];

const bashCall = (id: string, command: string): FakeBlock => ({ type: "toolCall", id, name: "bash", arguments: { command } });
const fileName = (prefix: string, i: number) => `${prefix}${String(i).padStart(3, "0")}`;

async function runLines(lines: string[], prefix: string, args: string[], prepare: (cwd: string) => void) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  prepare(dirs.cwd);
  const calls = lines.map((line, i) => bashCall(`c${i}`, line.replaceAll("F", fileName(prefix, i))));
  fake.enqueue({ blocks: calls });
  fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
  const r = await runPion(["--mode", "json", "--model", "fake/fake-model", ...args, "go"], dirs);
  await fake.stop();
  const records: Rec[] = r.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const results = new Map<string, Rec>();
  for (const rec of records) if (rec.type === "message_end" && rec.message.role === "toolResult") results.set(rec.message.toolCallId, rec.message);
  return { dirs, records, results, r };
}

/** [toolCallId, isError] of each tool result a JSON-mode run printed, in order. */
const resultFlags = (stdout: string): [string, boolean][] =>
  stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((x) => x.type === "message_end" && x.message.role === "toolResult")
    .map((x) => [x.message.toolCallId, x.message.isError]);

const resultText = (m: Rec | undefined): string => (m?.content ?? []).map((c: Rec) => c.text ?? "").join("");

describe("the approval gate holds (through the binary)", () => {
  test("a deny rule on rm stops every line that can delete: each file is still there; lines it does not cover run", async () => {
    expect(DELETES.length).toBeGreaterThanOrEqual(60);
    const controls = ["mv K0 K0.moved", "echo rm K1", "ls K2 > listing.txt"];
    const { dirs, results } = await runLines([...DELETES, ...controls], "d", ["--deny", "bash(rm *)"], (cwd) => {
      DELETES.forEach((_, i) => writeFileSync(join(cwd, fileName("d", i)), "keep\n"));
      for (const k of ["K0", "K1", "K2"]) writeFileSync(join(cwd, k), "k\n");
    });
    const deleted = DELETES.filter((_, i) => !existsSync(join(dirs.cwd, fileName("d", i))));
    expect(deleted).toEqual([]);
    const notRefused = DELETES.filter((_, i) => !resultText(results.get(`c${i}`)).startsWith("Tool call denied"));
    expect(notRefused).toEqual([]);
    // a line that cannot be checked says so
    const dollarX = resultText(results.get(`c${DELETES.indexOf("x=rm; $x F")}`));
    expect(dollarX).toContain("could not be checked (the command name `$x` is known only when the line runs)");
    // the controls ran
    const n = DELETES.length;
    expect([results.get(`c${n}`)?.isError, results.get(`c${n + 1}`)?.isError, results.get(`c${n + 2}`)?.isError]).toEqual([false, false, false]);
    expect(existsSync(join(dirs.cwd, "K0.moved"))).toBe(true);
    expect(resultText(results.get(`c${n + 1}`))).toContain("rm K1");
    expect(readFileSync(join(dirs.cwd, "listing.txt"), "utf8")).toBe("K2\n");
  }, SLOW);

  test("allow rules in ask mode let through only what they cover: no line creates its file; covered lines and writes run", async () => {
    expect(DELETES.length + CREATES.length).toBeGreaterThanOrEqual(100);
    const controls = ["echo fine", "ls > out/ls.txt", "echo ok | tee out/tee.txt"];
    const allow = ["--allow", "bash(echo *)", "--allow", "bash(git status*)", "--allow", "bash(ls*)", "--allow", "bash(tee *)", "--allow", "write(out/**)"];
    const { dirs, results } = await runLines([...CREATES, ...controls], "c", ["--permission-mode", "ask", ...allow], (cwd) => {
      mkdirSync(join(cwd, "out"));
    });
    const created = CREATES.filter((_, i) => existsSync(join(dirs.cwd, fileName("c", i))));
    expect(created).toEqual([]);
    const ran = CREATES.filter((_, i) => !resultText(results.get(`c${i}`)).startsWith("Tool call denied"));
    expect(ran).toEqual([]);
    const n = CREATES.length;
    expect([0, 1, 2].map((k) => results.get(`c${n + k}`)?.isError)).toEqual([false, false, false]);
    expect(existsSync(join(dirs.cwd, "out/ls.txt"))).toBe(true);
    expect(readFileSync(join(dirs.cwd, "out/tee.txt"), "utf8")).toBe("ok\n");
    // the refusal says why a covered command still needed approval
    expect(resultText(results.get("c0"))).toContain("which only write or edit rules can allow");
  }, SLOW);

  test("path rules resolve symlinks like the kernel: a link into a denied folder, a folder not made yet, a link out of an allowed one", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    const outside = tempDirs().cwd;
    writeFakeModels(dirs.home, fake.url);
    mkdirSync(join(dirs.cwd, "src"));
    writeFileSync(join(dirs.cwd, "src/a.txt"), "alpha\n");
    symlinkSync("src", join(dirs.cwd, "lnk"));
    symlinkSync(outside, join(dirs.cwd, "out"));
    const write = (id: string, path: string): FakeBlock => ({ type: "toolCall", id, name: "write", arguments: { path, content: "x\n" } });
    const edit = (id: string, path: string): FakeBlock => ({ type: "toolCall", id, name: "edit", arguments: { path, edits: [{ oldText: "alpha", newText: "beta" }] } });
    fake.enqueue({ blocks: [write("w1", "lnk/newdir/a.txt"), edit("e1", "lnk/a.txt"), bashCall("b1", "echo x > lnk/b.txt"), write("w2", "top.txt")] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    const r = await runPion(["--mode", "json", "--model", "fake/fake-model", "--deny", "write(src/**)", "--deny", "edit(src/**)", "go"], dirs);
    const results = resultFlags(r.stdout);
    expect(results).toEqual([
      ["w1", true],
      ["e1", true],
      ["b1", true],
      ["w2", false],
    ]);
    expect(existsSync(join(dirs.cwd, "src/newdir"))).toBe(false);
    expect(readFileSync(join(dirs.cwd, "src/a.txt"), "utf8")).toBe("alpha\n");
    expect(existsSync(join(dirs.cwd, "src/b.txt"))).toBe(false);

    // an allow rule on a folder does not reach through a symlink out of it, existing or made by an earlier call
    symlinkSync(outside, join(dirs.cwd, "src/out"));
    fake.enqueue({ blocks: [write("a1", "src/out/new/a.txt"), write("a2", "src/ok.txt")] });
    fake.enqueue({ blocks: [bashCall("l1", `ln -s ${outside} src/later`)] });
    fake.enqueue({ blocks: [write("a3", "src/later/x.txt"), edit("a4", "src/later/../a.txt")] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    const r2 = await runPion(["--mode", "json", "--model", "fake/fake-model", "--permission-mode", "ask", "--allow", "write(src/**)", "--allow", "edit(src/**)", "--allow", "bash(ln *)", "go"], dirs);
    const res2 = resultFlags(r2.stdout);
    expect(res2).toEqual([
      ["a1", true],
      ["a2", false],
      ["l1", false],
      ["a3", true],
      ["a4", true],
    ]);
    expect(existsSync(join(outside, "new"))).toBe(false);
    expect(existsSync(join(outside, "x.txt"))).toBe(false);
    expect(readFileSync(join(dirs.cwd, "src/ok.txt"), "utf8")).toBe("x\n");
    // src/later/.. is the outside folder's parent as the kernel resolves it, not src: a4 is not allowed
    expect(readFileSync(join(dirs.cwd, "src/a.txt"), "utf8")).toBe("alpha\n");
    await fake.stop();
  }, SLOW);
});
