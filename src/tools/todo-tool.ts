import * as v from "valibot";
import { defineParams } from "./params.ts";
import { READ_ONLY, type Tool } from "./tool.ts";
import { normalizeTodos, type TodoPhase, type TodoStatus } from "./todo.ts";

/** Built with the tool (on the first model request), not when the module loads. */
const params = () =>
  v.object({
    phases: v.pipe(
      v.array(
        v.object({
          id: v.optional(v.string()),
          name: v.pipe(v.string(), v.description("Phase name")),
          tasks: v.array(v.object({ id: v.optional(v.string()), content: v.string(), status: v.optional(v.picklist(["pending", "in_progress", "completed", "abandoned"])) })),
        }),
      ),
      v.description("The whole plan: every phase with all its tasks (replaces the previous plan)"),
    ),
  });

const DESCRIPTION = `Keep the plan for the current work up to date: phases with tasks, each task pending, in_progress, completed or abandoned.
Send the whole plan each time (it replaces the previous one). Mark a task in_progress when you start it and completed when it is done; keep one task in progress at a time.`;

/** The model's view of the session's todo list; `get`/`set` are owned by the session. */
export function createTodoTool(store: { get(): TodoPhase[]; set(phases: TodoPhase[]): void }): Tool<v.InferOutput<ReturnType<typeof params>>> {
  const { parameters, parse } = defineParams(params());
  return {
    name: "todo",
    // It changes the session's plan only, nothing in the workspace or beyond: no approval needed.
    annotations: READ_ONLY,
    label: "Todo",
    description: DESCRIPTION,
    parameters,
    parse,
    async execute(args) {
      const phases = normalizeTodos(args.phases);
      store.set(phases);
      const lines = phases.flatMap((p) => [`${p.name}:`, ...p.tasks.map((t) => `  [${mark(t.status)}] ${t.content}`)]);
      return { content: [{ type: "text", text: `Plan updated.\n${lines.join("\n")}` }], details: { phases } };
    },
  };
}

const mark = (s: TodoStatus) => (s === "completed" ? "x" : s === "in_progress" ? ">" : s === "abandoned" ? "-" : " ");
