import * as v from "valibot";
import { defineParams } from "./params.ts";
import { READ_ONLY, type Tool } from "./tool.ts";

export type TodoStatus = "pending" | "in_progress" | "completed" | "abandoned";
export interface TodoTask {
  id: string;
  content: string;
  status: TodoStatus;
}
export interface TodoPhase {
  id: string;
  name: string;
  tasks: TodoTask[];
}
export interface TodoInput {
  id?: string;
  name: string;
  tasks: { id?: string; content: string; status?: TodoStatus }[];
}

/** Fill in missing ids (phase-N, task-N) and statuses (pending). */
export function normalizeTodos(phases: readonly TodoInput[]): TodoPhase[] {
  let task = 0;
  return phases.map((p, i) => ({
    id: p.id ?? `phase-${i + 1}`,
    name: p.name,
    tasks: p.tasks.map((t) => ({ id: t.id ?? `task-${++task}`, content: t.content, status: t.status ?? "pending" })),
  }));
}

const Status = v.picklist(["pending", "in_progress", "completed", "abandoned"]);
const Params = v.object({
  phases: v.pipe(
    v.array(
      v.object({
        id: v.optional(v.string()),
        name: v.pipe(v.string(), v.description("Phase name")),
        tasks: v.array(v.object({ id: v.optional(v.string()), content: v.string(), status: v.optional(Status) })),
      }),
    ),
    v.description("The whole plan: every phase with all its tasks (replaces the previous plan)"),
  ),
});

const DESCRIPTION = `Keep the plan for the current work up to date: phases with tasks, each task pending, in_progress, completed or abandoned.
Send the whole plan each time (it replaces the previous one). Mark a task in_progress when you start it and completed when it is done; keep one task in progress at a time.`;

/** The model's view of the session's todo list; `get`/`set` are owned by the session. */
export function createTodoTool(store: { get(): TodoPhase[]; set(phases: TodoPhase[]): void }): Tool<v.InferOutput<typeof Params>> {
  const { parameters, parse } = defineParams(Params);
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
