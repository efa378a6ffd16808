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
