import PAGE_SCRIPT from "../../src/export/page-script.js" with { type: "text" };
import { withoutOwnScripts } from "../unit/export/sessions.ts";
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels } from "../support/pion.ts";

describe("export_html", () => {
  test.concurrent("writes one escaped, self-contained file; default name in the cwd; outputPath honoured", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    expect((await p.request({ type: "export_html" })).error).toBe("Nothing to export yet - start a conversation first");
    fake.enqueue({ blocks: [{ type: "text", text: "Here is `code` and <script>alert(1)</script>" }] });
    await p.request({ type: "prompt", message: '<img src=x onerror="alert(2)">' });
    await p.waitFor("agent_settled");
    await p.request({ type: "bash", command: "echo from-bash" });
    const def = (await p.request({ type: "export_html" })).data.path as string;
    expect(def.startsWith(dirs.cwd)).toBe(true);
    expect(def.endsWith(".html")).toBe(true);
    const html = readFileSync(def, "utf8");
    expect(html).not.toContain("<script>alert(1)");
    expect(html).not.toContain('<img src=x onerror="alert(2)">');
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("from-bash");
    expect(withoutOwnScripts(html, PAGE_SCRIPT)).not.toMatch(/<(script|link)\b/);
    const custom = join(dirs.cwd, "out", "nested", "s.html");
    const r = await p.request({ type: "export_html", outputPath: "out/nested/s.html" });
    expect(r.data).toEqual({ path: custom });
    expect(existsSync(custom)).toBe(true);
    expect(statSync(custom).mode & 0o777).toBe(0o600);
    await p.close();
    await fake.stop();
  });
});
