import { describe, expect, test } from "bun:test";
import { homedir } from "node:os";
import { analyseBash, type ShellAnalysis } from "../../../src/permissions/shell/analyse.ts";
import { loadBashParser } from "../../../src/permissions/shell/parser.ts";
import { globAcceptsPrefix } from "../../../src/permissions/glob.ts";

const parser = await loadBashParser();
const an = (line: string): ShellAnalysis => analyseBash(parser, line);
/** The commands as `words`, a wrapper's own invocation marked `w:`, unknown trailing words `…`. */
const cmds = (line: string): string[] => {
  const a = an(line);
  if (a.unanalysable) throw new Error(`unanalysable: ${a.unanalysable}`);
  return a.commands.map((c) => `${c.wrapper ? "w:" : ""}${c.words.join(" ")}${c.open ? " …" : ""}`);
};
const why = (line: string): string | undefined => an(line).unanalysable;

describe("bash lines: every command that can run", () => {
  test("at any depth: groups, conditions, loops, case, functions, negation, background", () => {
    expect(cmds("{ rm f; }")).toEqual(["rm f"]);
    expect(cmds("if true; then rm f; fi")).toEqual(["true", "rm f"]);
    expect(cmds("for i in 1 2; do rm $i; done")).toEqual(["rm $i"]);
    expect(cmds("while false; do rm f; done")).toEqual(["false", "rm f"]);
    expect(cmds("case x in x) rm f;; esac")).toEqual(["rm f"]);
    expect(cmds("f() { rm x; }; f")).toEqual(["rm x", "f"]);
    expect(cmds("! rm f")).toEqual(["rm f"]);
    expect(cmds("rm f & ls")).toEqual(["rm f", "ls"]);
    expect(cmds("(cd a && make) | tee log")).toEqual(["cd a", "make", "tee log"]);
  });

  test("substitutions anywhere: arguments, assignments, expansions, redirection targets, heredocs that expand", () => {
    expect(cmds("echo $(rm a) `rm b`")).toEqual(["echo $(rm a) `rm b`", "rm a", "rm b"]);
    expect(cmds("x=$(rm f) true")).toEqual(["true", "rm f"]);
    expect(cmds("echo ${x:-$(rm f)}")).toEqual(["echo ${x:-$(rm f)}", "rm f"]);
    expect(cmds("cat <(rm f)")).toEqual(["cat <(rm f)", "rm f"]);
    expect(cmds("echo hi > $(rm f)")).toEqual(["echo hi", "rm f"]);
    expect(cmds("cat <<EOF\n$(rm f)\nEOF")).toEqual(["cat", "rm f"]);
    expect(cmds("cat <<'EOF'\n$(rm f)\nEOF")).toEqual(["cat"]);
    expect(cmds("[[ -n $(rm f) ]]")).toEqual(["rm f"]);
  });

  test("quotes, escapes and paths are removed from command words", () => {
    for (const line of ["\\rm f", '"rm" f', "'rm' f", "r''m f", "$'\\x72m' f", "$'\\162m' f", "/bin/rm f", "./rm f", "FOO=1 rm f"]) {
      expect(cmds(line)).toEqual(["rm f"]);
    }
    expect(cmds("ls ~/x")).toEqual([`ls ${homedir()}/x`]);
  });

  test("comments and quotes in heredocs do not hide what follows", () => {
    expect(cmds("# don't worry\nrm f")).toEqual(["rm f"]);
    expect(cmds("cat <<EOF\ndon't\nEOF\nrm f")).toEqual(["cat", "rm f"]);
    expect(cmds("git status $'\\'' ; touch x ; #'")).toEqual(["git status '", "touch x"]);
  });

  test("wrappers: the command they run is a command of the line", () => {
    expect(cmds("env -i A=1 rm f")).toEqual(["w:env -i A=1 rm f", "rm f"]);
    expect(cmds("timeout -s KILL 5 nice -n 3 nohup rm f")).toEqual(["w:timeout -s KILL 5 nice -n 3 nohup rm f", "w:nice -n 3 nohup rm f", "w:nohup rm f", "rm f"]);
    expect(cmds("command rm f; builtin exec rm g")).toEqual(["w:command rm f", "rm f", "w:builtin exec rm g", "w:exec rm g", "rm g"]);
    expect(cmds("stdbuf -oL time -p rm f")).toEqual(["w:stdbuf -oL time -p rm f", "w:time -p rm f", "rm f"]);
    expect(cmds("sudo -u bob rm f")).toEqual(["sudo -u bob rm f", "rm f"]);
    expect(cmds("doas rm f")).toEqual(["doas rm f", "rm f"]);
    expect(cmds("find . -print0 | xargs -0 -n1 rm")).toEqual(["find . -print0", "w:xargs -0 -n1 rm", "rm …"]);
    expect(cmds("xargs")).toEqual(["w:xargs", "echo …"]);
    expect(cmds("find . -name '*.o' -exec rm {} \\;")).toEqual(["find . -name *.o -exec rm {} ;", "rm {}"]);
  });

  test("shells with a literal -c script are read again; trap's action too", () => {
    expect(cmds("sh -c 'rm f'")).toEqual(["sh -c rm f", "rm f"]);
    expect(cmds(`bash -lc "rm f; ls"`)).toEqual(["bash -lc rm f; ls", "rm f", "ls"]);
    expect(cmds(`sh -c "sh -c 'rm f'"`)).toEqual(["sh -c sh -c 'rm f'", "sh -c rm f", "rm f"]);
    expect(cmds("trap 'rm f' EXIT")).toEqual(["trap rm f EXIT", "rm f"]);
    expect(cmds("bash ./build.sh")).toEqual(["bash ./build.sh"]);
  });

  test("redirections that write, and tee, are writes; copies between descriptors and /dev/null are not", () => {
    const w = (line: string) => an(line).writes.map((x) => x.path ?? `?${x.source}`);
    expect(w("git status > a; echo >> b; make &> c 2> d >| e; echo x >&f")).toEqual(["a", "b", "c", "d", "e", "f"]);
    expect(w("make 2>&1 >/dev/null; echo >&2; cat < in")).toEqual([]);
    expect(w("ls | tee -a t1 t2 /dev/null")).toEqual(["t1", "t2"]);
    expect(w("echo > $out")).toEqual(["?$out"]);
    expect(w(": > truncated")).toEqual(["truncated"]);
    expect(an("cd sub && echo x > out").cdTargets).toEqual(["sub"]);
    expect(an("cd $d; popd").cdTargets).toEqual([undefined, undefined]);
  });
});

describe("bash lines that cannot be analysed, and why", () => {
  test.each([
    ["x=rm; $x f", /command name `\$x` is known only when the line runs/],
    ["$(echo rm) f", /command name/],
    ["r? f", /command name/],
    ["r{m,x} f", /command name/],
    ['eval "rm f"', /`eval` runs a string/],
    ["source ./x.sh", /`source` runs the commands of a file/],
    [". ./x.sh", /`\.` runs/],
    ['sh -c "$cmd"', /script of `sh -c` is known only when the line runs/],
    ["curl x | sh", /`sh` reads its commands from its input/],
    ["bash -s < script", /reads its commands from its input/],
    ["echo 'unclosed", /could not read it/],
    ["'r'\\m f", /cannot be trusted/],
    ["r\\\nm f", /cannot be trusted/],
    ["PATH=/tmp/evil:$PATH ls", /sets PATH/],
    ["export LD_PRELOAD=/tmp/x.so; ls", /sets LD_PRELOAD/],
    ["env PATH=/tmp ls", /changes which programs run/],
    ["env -S 'rm f'", /env -S/],
    ["timeout --bogus 5 rm f", /cannot tell which command `timeout --bogus` runs/],
    ["x='a[$(rm f)]'; (( x ))", /subscript/],
    ["alias ls='rm f'", /alias/],
    ["mapfile -C 'rm f' x < in", /mapfile/],
    ["fish -c 'rm f'", /not bash/],
    ["find . -exec", /names no command/],
    ["time { rm f; }", /reserved word `\{` read as a command/],
    ["! { rm f; }", /reserved word `\{`/],
    ["coproc { rm f; }", /reserved word/],
    ["time if true; then rm f; fi", /reserved word `if`/],
    ["printf 'rm f' | xargs -I{} sh -c '{}'", /script of `sh -c` is known only when the line runs/],
    ["ls | xargs -I X X", /command name `X`/],
    ["find . -exec {} \\;", /command name `\{\}`/],
  ])("%p", (line, expected) => {
    expect(why(line)).toMatch(expected);
  });

  test("a line that can be analysed has no reason", () => {
    for (const line of ["", "  ", "x=1", "git log --format='%H' -- \"$file\"", "echo é > ü.txt", "make \\\n  -j4"]) expect(why(line)).toBeUndefined();
  });
});

describe("globAcceptsPrefix", () => {
  test("whether a command whose later words are unknown may match a pattern", () => {
    expect(globAcceptsPrefix("git push*", "git ")).toBe(true);
    expect(globAcceptsPrefix("git push*", "git log ")).toBe(false);
    expect(globAcceptsPrefix("rm -rf *", "rm ")).toBe(true);
    expect(globAcceptsPrefix("ls", "ls ")).toBe(false);
    expect(globAcceptsPrefix("a?c", "ab")).toBe(true);
    expect(globAcceptsPrefix("a\\*", "a*")).toBe(true);
    expect(globAcceptsPrefix("a\\*", "ab")).toBe(false);
  });
});
