/** 8 lowercase hex chars, not in `taken`. */
export function shortId(taken?: { has(id: string): boolean }): string {
  for (;;) {
    const id = crypto.getRandomValues(new Uint32Array(1))[0]!.toString(16).padStart(8, "0");
    if (!taken?.has(id)) return id;
  }
}

export const uuid = (): string => crypto.randomUUID();
